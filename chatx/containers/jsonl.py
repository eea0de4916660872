"""JSON lines: one JSON value per line, blank lines skipped."""

from __future__ import annotations

from typing import Any

import orjson

from chatx.containers.sse import BOM, LineSplitter, bad_payload
from chatx.record import DONE, Record


class JSONLReader:
    """Incremental JSON-lines reader: one record per non-blank line.

    Lines end at LF, CRLF or CR, as in SSE. A ``[DONE]`` line is tolerated as the
    sentinel (payload-only captures sometimes keep it).
    """

    __slots__ = ("_line", "_lines")

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._line = 0

    def feed(self, chunk: bytes) -> list[Record]:
        """Read the next bytes; return the records of the lines they complete."""
        lines = self._lines.split(chunk)
        return self._parse(lines) if lines else []

    def finish(self) -> list[Record]:
        """End of input: return the record of a last line without line end (drain)."""
        return self._parse(self._lines.finish())

    def _parse(self, lines: list[bytes]) -> list[Record]:
        out: list[Record] = []
        append = out.append
        loads = orjson.loads
        n = self._line
        for line in lines:
            n += 1
            if not line:
                continue
            try:
                append(Record(loads(line), None, n))
            except ValueError as exc:
                if not line.isspace():
                    append(bad_payload(line, exc, None, n))
        self._line = n
        return out


class JSONLWriter:
    """Write one compact JSON value per line; ``DONE`` is dropped (JSONL has no sentinel)."""

    __slots__ = ()

    def __init__(self, event_names: bool = False) -> None:
        """``event_names`` is accepted for a uniform writer call and ignored."""

    def write(self, payloads: list[Any]) -> bytes:
        """Return the bytes for these payloads (JSON values or ``DONE``)."""
        dumps = orjson.dumps
        newline = orjson.OPT_APPEND_NEWLINE
        return b"".join([dumps(p, option=newline) for p in payloads if p is not DONE])

    def finish(self) -> bytes:
        """End of output: nothing to close."""
        return b""


def probe(head: bytes) -> int:
    """Score 0..100 that ``head`` (the first bytes) starts JSON lines."""
    return 100 if head.removeprefix(BOM).lstrip()[:1] == b"{" else 0

"""Containers: framing only. Bytes become records and records become bytes.

Nothing here knows what a payload means; that is the codecs' job (``chatx.codecs``),
and the two meet only at :class:`chatx.record.Record`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from chatx.containers.lines import BOM
from chatx.errors import InputError, UsageError
from chatx.limits import MAX_LINE, size

if TYPE_CHECKING:  # the contract, for the type checker
    from chatx.containers.base import Reader, Writer

__all__ = [
    "CONTAINERS",
    "Container",
    "Head",
    "detect",
    "get",
    "ready",
    "sniffed",
]

EXPECTED = "SSE (data: lines), JSON lines or a JSON array"


@dataclass(frozen=True, slots=True)
class Container:
    """One framing: its name, how to recognise it, and how to read and write it."""

    name: str
    description: str
    reader: Callable[[], Reader]
    writer: Callable[..., Writer]  # (event_names=bool): SSE writes event names when asked
    # 0..100: how sure we are that a stream whose first bytes are these is ours.
    probe: Callable[[bytes], int]


class _Made:
    """A reader or writer class of a container's module, the module imported when the
    first one is made: a stream read as SSE loads nothing of JSON lines or arrays."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(self.module), self.name)(*args, **kwargs)


_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


def _sse(head: bytes) -> int:
    """Score 0..100 that ``head`` (the first bytes) starts an event stream."""
    return 100 if head.removeprefix(BOM).lstrip().startswith(_SSE_FIELDS) else 0


def _jsonl(head: bytes) -> int:
    """Score 0..100 that ``head`` (the first bytes) starts JSON lines."""
    text = head.removeprefix(BOM).lstrip()
    # A lone "{" line is no JSON line: one object printed over several lines (json).
    return 100 if text[:1] == b"{" and not _lone_brace(text) else 0


def _json_array(head: bytes) -> int:
    """Score 0..100 that ``head`` (the first bytes) starts a JSON array, or one object
    printed over several lines (its first line a lone ``{``)."""
    text = head.removeprefix(BOM).lstrip()
    return 100 if text[:1] == b"[" or _lone_brace(text) else 0


def _lone_brace(text: bytes) -> bool:
    """Whether ``text`` (blanks stripped) starts with a line that is only ``{``: no JSON
    line is, every pretty-printer begins an object so."""
    return text[:1] == b"{" and text[1:].lstrip(b" \t")[:1] in (b"\n", b"\r")


def _container(name: str, description: str, module: str, kind: str, probe: Any) -> Container:
    module = f"chatx.containers.{module}"
    return Container(name, description, _Made(module, f"{kind}Reader"),
                     _Made(module, f"{kind}Writer"), probe)  # fmt: skip


CONTAINERS: dict[str, Container] = {
    c.name: c
    for c in (
        _container("sse", "server-sent events (data: lines)", "sse", "SSE", _sse),
        _container("jsonl", "JSON lines, one payload per line", "jsonl", "JSONL", _jsonl),
        _container("json", "one JSON array of payloads", "jsonarray", "JSONArray", _json_array),
    )
}


def get(name: str) -> Container:
    """The container called ``name``; a UsageError listing the known ones otherwise."""
    try:
        return CONTAINERS[name]
    except KeyError:
        known = ", ".join(CONTAINERS)
        raise UsageError(f"unknown container {name!r} (known: {known})") from None


def detect(head: bytes) -> str:
    """Name the container of a stream from its first bytes (about 4 KiB, or all of it).

    The errors say where: line 1 for an empty input, else the first line with content.
    """
    text = head.removeprefix(BOM).lstrip()
    if not text:
        raise InputError("empty input", line=1, expected=EXPECTED)
    scores = {name: c.probe(head) for name, c in CONTAINERS.items()}
    best = max(scores, key=scores.__getitem__)  # ties go to the first registered
    if scores[best] <= 0:
        blank = head[: len(head) - len(text)]
        line = 1 + blank.count(b"\n") + blank.count(b"\r") - blank.count(b"\r\n")
        raise InputError(
            f"not a stream: starts with {_first_line(text)!r}",
            line=line,
            offset=len(blank) or None,
            expected=EXPECTED,
        )
    return best


def sniffed(head: bytes) -> int:
    """How many bytes of ``head`` detection needs: leading blanks, then 4 KiB of content.

    Blank lines before the first event do not count, so a stream that starts with more
    than 4 KiB of them is still detected.
    """
    start = len(BOM) if head.startswith(BOM) else 0
    return _BLANK.match(head, start).end() + SNIFF_BYTES  # type: ignore[union-attr]


def ready(head: bytes) -> bool:
    """True when ``head`` is enough to detect the container: a line with content, 4 KiB
    of content, or (the caller knows) the end of the input."""
    start = len(BOM) if head.startswith(BOM) else 0
    start = _BLANK.match(head, start).end()  # type: ignore[union-attr]
    return len(head) - start >= SNIFF_BYTES or head.find(b"\n", start) >= 0


SNIFF_BYTES = 4096
_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what bytes.strip() strips


class Head:
    """The first bytes of a stream, gathered until they are enough to detect its
    container (as :func:`ready` says), each byte looked at once however many pieces
    they come in: blank lines before the first event cost time in proportion (they
    were scanned again at every piece, 48 MiB of them took 54 s).

    More than :data:`~chatx.limits.MAX_LINE` bytes with no content is an InputError: the
    blank lines before a stream's first event are held until it is found.
    """

    __slots__ = ("_data", "_newline", "_scanned", "_start")

    def __init__(self) -> None:
        self._data = bytearray()
        self._scanned = 0  # every byte before this is blank (or the BOM)
        self._start: int | None = None  # the first byte of content, once found
        self._newline = 0  # no line end after the content before this

    def add(self, chunk: bytes) -> bool:
        """Take the next bytes; True once the head is enough to detect the container."""
        data = self._data
        data += chunk
        if self._start is None:
            begin = self._scanned or (len(BOM) if data.startswith(BOM) else 0)
            end = _BLANK.match(data, begin).end()  # type: ignore[union-attr]
            if end == len(data):
                self._scanned = end
                if end > MAX_LINE:
                    raise InputError(
                        f"no event in the first {size(MAX_LINE)}, only blank lines: reading"
                        " stopped",
                        line=1,
                        expected=EXPECTED,
                    )
                return False
            self._start = self._newline = end
        start = self._start
        if len(data) - start >= SNIFF_BYTES:
            return True
        found = data.find(b"\n", self._newline)
        self._newline = len(data)
        return found >= 0

    @property
    def size(self) -> int:
        return len(self._data)

    def take(self) -> bytes:
        """The bytes gathered (the head is empty after)."""
        data = bytes(self._data)
        self._data = bytearray()
        self._scanned, self._start, self._newline = 0, None, 0
        return data


def pieces(data: bytes, size: int = 1 << 16) -> Iterator[bytes]:
    """``data`` in pieces of ``size`` bytes, made as they are read, for a reader: many
    blank lines fed whole would make a list of them all at once (64 MiB of them, 512 MB)."""
    if len(data) <= size:
        yield data
        return
    for at in range(0, len(data), size):
        yield data[at : at + size]


def _first_line(text: bytes, limit: int = 40) -> str:
    line = text.split(b"\n", 1)[0].split(b"\r", 1)[0].decode("utf-8", "replace")
    return line if len(line) <= limit else line[: limit - 1] + "…"

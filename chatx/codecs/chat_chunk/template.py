"""Chunks known by their bytes: a long stream repeats one chunk but for its text.

A :class:`ChunkTemplate` is made from a chunk the fast path decoded: the JSON text
orjson writes for it, cut at its text and its ``obfuscation`` (the two values that
change from chunk to chunk). A later payload that is those literal bytes around two
JSON strings parses to the same chunk with other strings in those places, so it means
the same events with another text, and is decoded without parsing the rest of it.

Why that holds: each hole must parse, alone, as one JSON string. A string literal ends
at its first unescaped quote, so the hole cannot reach into the bytes after it, and the
payload has the same tokens as the template's own JSON text but for those strings.
Providers that write JSON with other spacing or key order never match and take the
parsing path; nothing depends on a match but speed.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import orjson

from chatx import ir
from chatx.record import Record
from chatx.residue import NullResidue

# Stand-ins for the two holes while the template's bytes are made: no chunk has them.
_TEXT = "\x00chatx text\x00"
_OBFUSCATION = "\x00chatx obfuscation\x00"


class ChunkTemplate:
    """The bytes of a text chunk around its holes, and the events it decodes to."""

    __slots__ = ("after", "before", "head", "lane", "mid", "tail", "text_first")

    def __init__(self, pieces: list[bytes], text_first: bool, lane: int) -> None:
        self.head = pieces[0]
        self.mid = pieces[1] if len(pieces) == 3 else None
        self.tail = pieces[-1]
        self.text_first = text_first
        self.lane = lane
        self.before: ir.Meta | None = None  # the chunk's shared residue event
        self.after: ir.Meta | None = None  # the choice's shared residue event

    @classmethod
    def make(cls, data: dict[str, Any], events: list[ir.Event]) -> ChunkTemplate | None:
        """The template of a chunk the fast path decoded into ``events``, or ``None``
        when those events are not all shared residue around one plain text delta."""
        before = after = None
        delta = None
        for event in events:
            if type(event) is ir.TextDelta:
                delta = event
            elif type(event) is not ir.Meta:
                return None  # usage: not worth a template
            elif delta is None:
                before = event
            elif type(event.extra) is NullResidue:
                after = event
            else:
                return None  # the choice's residue is its own event each time
        if delta is None or delta.logprobs is not None or delta.extra:
            return None
        choice = dict(data["choices"][0])
        choice["delta"] = {"content": _TEXT}
        chunk = dict(data)
        chunk["choices"] = [choice]
        holes = [orjson.dumps(_TEXT)]
        if delta.obfuscation is not None:
            chunk["obfuscation"] = _OBFUSCATION
            holes.append(orjson.dumps(_OBFUSCATION))
        try:
            blob = orjson.dumps(chunk)
        except (TypeError, ValueError):
            return None
        at = [blob.find(hole) for hole in holes]
        if any(blob.count(hole) != 1 for hole in holes):
            return None
        order = sorted(range(len(holes)), key=at.__getitem__)
        pieces, pos = [], 0
        for i in order:
            pieces.append(blob[pos : at[i]])
            pos = at[i] + len(holes[i])
        pieces.append(blob[pos:])
        template = cls(pieces, order[0] == 0, delta.lane)
        template.before, template.after = before, after
        return template

    def match(self, raw: bytes) -> list[ir.Event] | None:
        """The events of ``raw`` when it is this template with other strings in its
        holes; ``None`` when it is not (then it must be parsed)."""
        holes = self._holes(raw)
        if holes is None:
            return None
        delta = ir.TextDelta(self.lane, holes[0], None, {}, holes[1])
        before, after = self.before, self.after
        if before is None:
            return [delta] if after is None else [delta, after]
        return [before, delta] if after is None else [before, delta, after]

    def run(self, records: list[Record], start: int) -> ir.TextRun | None:
        """The records from ``start`` on that this template knows, as one run (``None``
        when the first is not one of them)."""
        texts: list[str] = []
        obfuscations: list[str | None] = []
        lines: list[int] = []
        holes = self._holes
        for record in islice(records, start, None):
            raw = record.raw
            found = holes(raw) if raw is not None else None
            if found is None:
                break
            texts.append(found[0])
            obfuscations.append(found[1])
            lines.append(record.line)
        if not texts:
            return None
        return ir.TextRun(self.lane, texts, obfuscations, lines, self.before, self.after)

    def _holes(self, raw: bytes) -> tuple[str, str | None] | None:
        """The text and obfuscation in ``raw``'s holes, or ``None`` when it does not fit."""
        head, tail = self.head, self.tail
        if not raw.startswith(head) or not raw.endswith(tail):
            return None
        start, end = len(head), len(raw) - len(tail)
        mid = self.mid
        try:
            if mid is None:
                text = orjson.loads(raw[start:end])
                obfuscation = None
            else:
                cut = raw.find(mid, start, end)
                if cut < 0:
                    return None
                first = orjson.loads(raw[start:cut])
                second = orjson.loads(raw[cut + len(mid) : end])
                text, obfuscation = (first, second) if self.text_first else (second, first)
                if type(obfuscation) is not str:
                    return None
        except ValueError:
            return None
        if type(text) is not str or not text:
            return None
        return text, obfuscation

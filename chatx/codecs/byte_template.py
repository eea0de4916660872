"""Byte templates: a payload's JSON text as orjson writes it, cut at the values that
change from record to record (its *holes*: a text, an obfuscation, a sequence number).

Reading, a :class:`ByteTemplate` knows the records that are its literal bytes around
other values in the holes (:mod:`chatx.codecs.template` says why such a record means
the template's payload but for them), one at a time, or a block at a time with its
:class:`~chatx.codecs.block_reader.BlockReader`. Writing, a :class:`PayloadTemplate`
makes an encoder's record for another text with one ``%`` format, where a dict would be
built and dumped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from chatx.codecs.block_reader import BlockReader
from chatx.containers import exact
from chatx.record import Dumped, RawRegion, Record

_loads = orjson.loads
# A record for a text, an obfuscation and a sequence number (each stand-in when a
# template is made: NUMBER for the number), for the holes a template has.
Make = Callable[[str, str | None, Any], dict[str, Any]]
_LOW, _HIGH = exact.INT64  # the integers orjson reads as they are, without a note

NUMBER = "\x00chatx number\x00"
"""Stand-in for the hole of an integer the decoder expects (a sequence number)."""


def hole(name: str) -> str:
    """A stand-in for a string hole while a template's bytes are made: no payload has it."""
    return f"\x00chatx {name}\x00"


TEXT = hole("text")
OBFUSCATION = hole("obfuscation")


class ByteTemplate:
    """The literal bytes of a payload around its holes.

    ``match(raw, number)`` returns the holes' values in the order they come in the bytes
    (``at[i]`` is where the value of ``stand_ins[i]`` is; the ``NUMBER`` hole gives
    ``number`` back), or ``None`` when ``raw`` does not fit."""

    __slots__ = ("at", "block", "head", "rest")

    def __init__(self, head: bytes, rest: list[tuple[bool, bytes, bool]], order: list[int]) -> None:
        self.head = head
        # For each hole in byte order: is it the number hole, the bytes after it, is it
        # last. A tuple unpacked in match()'s loop: the fastest read of the three.
        self.rest = rest
        self.at = order  # where each stand-in's value is in what match() returns
        self.block = BlockReader.of(head, rest)

    @classmethod
    def make(cls, payload: dict[str, Any], stand_ins: list[str]) -> ByteTemplate | None:
        """The template of ``payload``, which holds each of ``stand_ins`` once in place of
        a value; ``None`` when orjson cannot write it or a stand-in is not found once."""
        try:
            blob = orjson.dumps(payload)
        except (TypeError, ValueError):
            return None
        quoted = [orjson.dumps(stand_in) for stand_in in stand_ins]
        if any(blob.count(q) != 1 for q in quoted):
            return None
        at = [blob.find(q) for q in quoted]
        by_place = sorted(range(len(quoted)), key=at.__getitem__)
        ends = [at[i] + len(quoted[i]) for i in by_place]
        starts = [at[i] for i in by_place[1:]] + [len(blob)]
        rest = [
            (stand_ins[i] == NUMBER, blob[end:start], start == len(blob))
            for i, end, start in zip(by_place, ends, starts, strict=True)
        ]
        return cls(blob[: at[by_place[0]]], rest, [by_place.index(i) for i in range(len(quoted))])

    def read(
        self,
        records: Sequence[Record],
        start: int,
        text_at: int,
        obfuscation_at: int | None = None,
        number: int | None = None,
        named: str | None = None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """The text (hole ``text_at``), obfuscation (hole ``obfuscation_at``) and line of
        each raw record from ``start`` on, up to the first that does not fit or whose
        text is empty (no delta: a record of its own kind). The ``NUMBER`` hole must be
        ``number`` in the first record and one more in each after it. With ``named``,
        a record whose SSE event name is another ends the run too: a decoder that says
        a name differing from the payload's type (Anthropic's) reads such a one itself."""
        block = self.block
        if block is not None:
            if type(records) is RawRegion and block.number is None:
                return block.region(self, records, start, text_at, obfuscation_at)
            return block.read(self, records, start, text_at, obfuscation_at, number, named)
        return self.read_each(records, start, None, text_at, obfuscation_at, number, named)

    def read_each(
        self,
        records: Sequence[Record],
        start: int,
        stop: int | None,
        text_at: int,
        obfuscation_at: int | None = None,
        number: int | None = None,
        named: str | None = None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """:meth:`read` record by record (of the records before ``stop``, when given)."""
        texts: list[str] = []
        obfuscations: list[str | None] = []
        lines: list[int] = []
        match = self.match
        # (by position: a RawRegion makes only the records asked for)
        stop = len(records) if stop is None else min(stop, len(records))
        for record in map(records.__getitem__, range(start, stop)):
            if named is not None and record.event != named and record.event is not None:
                break
            raw = record.raw
            found = match(raw, number) if raw is not None else None
            if found is None or not found[text_at]:
                break
            texts.append(found[text_at])
            obfuscations.append(found[obfuscation_at] if obfuscation_at is not None else None)
            lines.append(record.line)
            if number is not None:
                number += 1
        return texts, obfuscations, lines

    def match(self, raw: bytes, number: int | None = None) -> list[Any] | None:
        """The values in ``raw``'s holes, in byte order (see ``at``); ``None`` when
        ``raw`` is not this template with other values in its holes."""
        if not raw.startswith(self.head):
            return None
        pos = len(self.head)
        found: list[Any] = []
        for is_number, after, is_last in self.rest:
            if is_number:
                # Beyond 64 bits parsing says a note (RunDecoder._say_big_ints): no run.
                if type(number) is not int or not _LOW <= number < _HIGH:
                    return None
                cut = pos + len(digits := b"%d" % number)
                if not raw.startswith(digits, pos) or not raw.startswith(after, cut):
                    return None
                found.append(number)
            else:
                # Most strings have no escaped quote: the next quote closes them. A long
                # needle costs find() more than the search, so it is only the fallback.
                cut = raw.find(b'"', pos + 1) + 1
                if not cut or raw[cut - 2] == 0x5C or not raw.startswith(after, cut):
                    if is_last:  # the bytes after the last hole end the payload
                        cut = len(raw) - len(after) if raw.endswith(after) else -1
                    else:  # after a string comes , } or ]: a quote in it is not escaped
                        cut = raw.find(after, pos)
                    if cut < pos:
                        return None
                try:
                    value = _loads(raw[pos:cut])
                except ValueError:
                    return None
                if type(value) is not str:
                    return None
                found.append(value)
            pos = cut + len(after)
        return found if pos == len(raw) else None


class PayloadTemplate:
    """An encoder's record as bytes with a hole for its text (and one for its
    obfuscation, one for its sequence number): ``orjson.dumps`` of the record ``make``
    builds with stand-ins, cut at the stand-ins' JSON strings. orjson writes a dict's
    strings each on its own and an integer as its digits, so the bytes of the record
    with any text are these around ``orjson.dumps(text)``: each record of a run is one
    ``%`` format, and the run's records one :class:`~chatx.record.Dumped` the writers
    (SSE, JSON lines, the JSON array) frame as they are, where a dict would be built and
    dumped each time. ``name``: the records' type, an SSE event's name. Nothing reads a
    run's encoder output as values (collect and show read its batches)."""

    __slots__ = ("format", "name", "numbered", "obfuscated")

    def __init__(self, format: bytes, obfuscated: bool, numbered: bool, name: str | None) -> None:
        self.format = format
        self.obfuscated = obfuscated
        self.numbered = numbered
        self.name = name

    @classmethod
    def of(
        cls, make: Make, obfuscated: bool, numbered: bool = False, name: str | None = None
    ) -> PayloadTemplate | None:
        """The template of ``make``'s record, or ``None`` where its bytes are not one
        dumps cut at the stand-ins (orjson refuses the record: its residue has an integer
        beyond 64 bits or a key that is no string; a stand-in is written elsewhere too,
        or the holes do not come as text, obfuscation, number)."""
        try:
            whole = orjson.dumps(
                make(TEXT, OBFUSCATION if obfuscated else None, NUMBER if numbered else None)
            )
        except TypeError:
            return None
        stand_ins = [orjson.dumps(TEXT)]
        if obfuscated:
            stand_ins.append(orjson.dumps(OBFUSCATION))
        quoted_number = orjson.dumps(NUMBER)
        if numbered:
            stand_ins.append(quoted_number)
        if any(whole.count(stand_in) != 1 for stand_in in stand_ins):
            return None
        at = [whole.index(stand_in) for stand_in in stand_ins]
        if at != sorted(at):
            return None  # the holes are filled in order
        whole = whole.replace(b"%", b"%%")
        for stand_in in stand_ins:  # a string's quotes stay: see write()
            whole = whole.replace(stand_in, b"%d" if stand_in == quoted_number else b'"%s"')
        return cls(whole, obfuscated, numbered, name)

    def write(
        self, texts: list[str], obfuscations: list[str | None], make: Make, first: int = 0
    ) -> list[Any]:
        """The records of ``texts`` (and ``obfuscations``; numbered from ``first``): one
        :class:`~chatx.record.Dumped` of them made from the template, or ``make``'s
        dicts where orjson refuses a text (a lone surrogate) or a record has no
        obfuscation where the template has a hole for one (or the reverse)."""
        if not texts:
            return []
        numbers = range(first, first + len(texts))
        values: Iterable[Any]
        try:
            strings = _strings(texts)
            if not self.obfuscated and obfuscations.count(None) == len(obfuscations):
                values = zip(strings, numbers, strict=True) if self.numbered else strings
            elif self.obfuscated and None not in obfuscations:
                hidden = _strings(obfuscations)  # type: ignore[arg-type]
                values = (
                    zip(strings, hidden, numbers, strict=True)
                    if self.numbered
                    else zip(strings, hidden, strict=True)
                )
            else:
                return list(map(make, texts, obfuscations, numbers))
            out = list(map(self.format.__mod__, values))
        except (TypeError, ValueError):  # a lone surrogate; cut otherwise than expected
            return list(map(make, texts, obfuscations, numbers))
        return [Dumped(self.name, out)]


class Kept:
    """An encoder's last byte template, kept while its runs write the same records but
    for the holes (a reader's block cuts a long run in runs of a few hundred records, a
    small read in fewer): made once ``KEEP_AFTER`` such records have gone by, since a
    template costs about what ten records built as dicts do. ``key`` says what the
    records are but for the holes; a new one forgets the last template."""

    __slots__ = ("key", "seen", "template", "tried")

    def __init__(self) -> None:
        self.key: tuple[Any, ...] = ()
        self.template: PayloadTemplate | None = None
        self.seen = 0  # records of this key written so far
        self.tried = False  # PayloadTemplate.of said None: the dicts, every time

    def records(
        self,
        key: tuple[Any, ...],
        make: Make,
        texts: list[str],
        obfuscations: list[str | None] | None = None,
        first: int = 0,
        numbered: bool = False,
        name: str | None = None,
    ) -> list[Any]:
        """``make``'s records of ``texts`` (with ``obfuscations``, numbered from ``first``
        when ``numbered``): from the template of ``key`` once there is one, else as
        dicts."""
        if obfuscations is None:
            obfuscations = [None] * len(texts)
        obfuscated = bool(obfuscations) and obfuscations[0] is not None
        template = self._template((*key, obfuscated), len(texts), make, numbered, name)
        if template is None:
            return list(map(make, texts, obfuscations, range(first, first + len(texts))))
        return template.write(texts, obfuscations, make, first)

    def _template(
        self, key: tuple[Any, ...], records: int, make: Make, numbered: bool, name: str | None
    ) -> PayloadTemplate | None:
        """The template for ``records`` more records of ``key`` (its last part says
        whether they are obfuscated), or None while writing them as dicts costs less, or
        for good when it cannot be made."""
        if key != self.key:
            self.key, self.template, self.seen, self.tried = key, None, 0, False
        elif self.template is not None or self.tried:
            return self.template
        self.seen += records
        if self.seen >= KEEP_AFTER:
            self.template = PayloadTemplate.of(make, key[-1], numbered, name)
            self.tried = True
        return self.template


KEEP_AFTER = 16


def _strings(values: list[str]) -> list[bytes]:
    """The JSON strings orjson writes for ``values``, each without its quotes: one dumps
    of the list, cut at each ``","``. Within a string orjson writes a quote as ``\\"``,
    so a ``","`` that is no such cut starts with an escaped quote: where the bytes hold
    a backslash before one, each string is written on its own. (A string orjson refuses,
    a lone surrogate, raises TypeError.)"""
    if not values:
        return []
    blob = orjson.dumps(values)
    if b'\\","' in blob:
        return [orjson.dumps(value)[1:-1] for value in values]
    return blob[2:-2].split(b'","')

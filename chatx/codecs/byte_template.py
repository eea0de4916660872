"""Byte templates: a payload's JSON text as orjson writes it, cut at the values that
change from record to record (its *holes*: a text, an obfuscation, a sequence number).

Reading, a :class:`ByteTemplate` knows the records that are its literal bytes around
other values in the holes (:mod:`chatx.codecs.template` says why such a record means
the template's payload but for them), one at a time or a block at a time
(:class:`BlockReader`). Writing, a :class:`PayloadTemplate` makes an encoder's record
for another text with one ``%`` format, where a dict would be built and dumped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache
from itertools import repeat, takewhile
from operator import eq, getitem
from typing import Any, cast

import orjson

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


# The bytes that stand for a template's separators while a block is read (BlockReader): no
# byte of a template's own is one (orjson writes none), and one in a payload (a raw
# control character: not JSON) leaves the markers out of order or too many of them, so
# the block is read record by record, which refuses it.
_part = cast(Callable[[bytes, slice], bytes], getitem)  # a slice of each record, in a map()
_RECORDS = 0x03  # between two records: the last hole's bytes after, "\n", the head
_HOLES = 0x04  # the first of the bytes between two holes of one record (0x04, 0x05, ...)


@cache
def _others(separators: int) -> bytes:
    """Every byte but the markers of a template of ``separators`` separators: what
    ``translate`` deletes to leave the markers."""
    markers = bytes([_RECORDS, *range(_HOLES, _HOLES + separators)])
    return bytes(b for b in range(256) if b not in markers)


@lru_cache(maxsize=64)
def _replacer(separator: bytes) -> Callable[[bytes, bytes], bytes]:
    """What puts a marker for each ``separator`` in a block's bytes: a compiled pattern's
    ``sub``. ``bytes.replace`` sets its search up again at every match it makes, which
    costs about the separator's length each time (0.12 µs a record for the 57 bytes
    between a chat chunk's text and its obfuscation, 0.22 for 118); a pattern's search
    is set up once. (A separator holds no backslash for ``sub`` to read as an escape in
    the marker, which is one control byte.)"""
    return re.compile(re.escape(separator)).sub


class BlockReader:
    """A template read over many raw records at once: every record's head and end
    compared in one comparison each, the string holes and the literal bytes between them
    cut out and joined, those bytes found in C, and every string hole's value read by one
    ``orjson.loads`` of a JSON array made of them. That is the template's
    :meth:`ByteTemplate.match` over each record, without a Python step a record:

    - each record starts with the head and the first string hole's quote, and ends with
      the last string hole's quote and the bytes after it;
    - the separators (``"`` + the bytes between two string holes + ``"``) come in the
      template's order, record after record, and nothing else lies between the holes'
      bytes: each is found where its marker is, and the length left says that no record
      holds a marker byte of its own (a raw control character, no JSON);
    - each hole's bytes are then one string of the array, and the array holds as many
      strings as there are holes: a hole's bytes ending in a backslash could escape the
      quote after them and join two strings into one, so a block with one is read
      record by record; a quote left unescaped in a hole's bytes (no JSON string's)
      makes more strings, never fewer. Each value is then what :meth:`ByteTemplate.match`
      reads from the record, whatever escapes its bytes use.

    A number hole (a sequence number) first or last is part of the head or of the end:
    the very digits each record must have there, one more each record, are written into
    what the heads (or ends) are compared with, over a stretch of numbers of one width
    (heads and ends are cut at one place in each record). A template whose number hole
    lies between two string holes has no block reader: it is read record by record.
    """

    __slots__ = (
        "begin",
        "end",
        "holes",
        "number",
        "order",
        "others",
        "separators",
        "shrink",
    )

    def __init__(
        self,
        begin: bytes,
        end: bytes,
        separators: list[bytes],
        number: tuple[bool, bytes, bytes] | None = None,
    ) -> None:
        self.begin = begin  # the head and the first string hole's opening quote
        self.end = end  # the last string hole's closing quote and the bytes after it
        # A number hole: whether it ends the head (else starts the end), the bytes there
        # (which then stand for ``begin``, or ``end``) as a %-format of its digits, and
        # their length but the digits'.
        self.number = None
        if number is not None:
            in_head, before, after = number
            pattern = before.replace(b"%", b"%%") + b"%d" + after.replace(b"%", b"%%")
            self.number = (in_head, pattern, len(before) + len(after))
        self.holes = len(separators) + 1  # the string holes
        self.separators = [
            (separator, bytes([_HOLES + i])) for i, separator in enumerate(separators)
        ]
        # What replacing every separator of a record by its marker takes from its length.
        self.shrink = sum(len(separator) - 1 for separator in separators)
        self.others = _others(len(separators))
        # The markers a record's separators leave, in order, then the record's own.
        self.order = bytes(range(_HOLES, _HOLES + len(separators))) + bytes([_RECORDS])

    @classmethod
    def of(cls, head: bytes, rest: list[tuple[bool, bytes, bool]]) -> BlockReader | None:
        """The block reader of a template (``head`` and ``rest`` as ByteTemplate has
        them), or None when its number hole lies between two string holes."""
        afters = [after for _, after, _ in rest]
        numbers = [k for k, (is_number, _, _) in enumerate(rest) if is_number]
        number = None
        if numbers == [0] and len(rest) > 1:  # the head ends with the number
            number = (True, head, afters.pop(0) + b'"')
        elif numbers == [len(rest) - 1] and len(rest) > 1:  # the end starts with it
            number = (False, b'"' + afters[-2], afters.pop())
            afters[-1] = b""
        elif numbers:
            return None
        separators = [b'"' + after + b'"' for after in afters[:-1]]
        return cls(head + b'"', b'"' + afters[-1], separators, number)

    def expected(self, count: int, number: int) -> tuple[slice, slice, bytes, bytes]:
        """Where a record's head and its end are, and the heads and the ends of
        ``count`` records, joined: the first numbered ``number``, the others one more,
        all of one width (when the template has a number hole)."""
        begins, ends = self.begin * count, self.end * count
        head, end = len(self.begin), len(self.end)
        if self.number is not None:
            in_head, pattern, fixed = self.number
            numbered = pattern * count % tuple(range(number, number + count))
            if in_head:
                begins, head = numbered, fixed + len(b"%d" % number)
            else:
                ends, end = numbered, fixed + len(b"%d" % number)
        return slice(0, head), slice(-end, None), begins, ends

    def inner(self, number: int) -> slice:
        """Where a record numbered ``number`` has its string holes and what lies
        between them: all but its head and its end."""
        head, end = len(self.begin), len(self.end)
        if self.number is not None:
            in_head, _, fixed = self.number
            if in_head:
                head = fixed + len(b"%d" % number)
            else:
                end = fixed + len(b"%d" % number)
        return slice(head, -end)

    def values(self, raws: list[bytes], number: int = 0) -> list[str] | None:
        """The string holes' values of ``raws`` (numbered from ``number`` on, as
        :meth:`expected` says), record after record, each record's in byte order; None
        when one of them is not the template (or is not read at once)."""
        return self.strings(raws, number) if self.fitting(raws, number) == len(raws) else None

    def fitting(self, raws: list[bytes], number: int = 0) -> int:
        """How many records of ``raws`` (numbered from ``number`` on) come before the
        first whose head or end is not the template's, or that is too short to hold
        both. Every head, then every end, is compared at once (a search for the long
        head in the records' bytes costs more: replace() and split() set it up again
        at every record); only where they differ are they compared one by one, in C,
        where a run ends in these records."""
        heads, ends, begins, finals = self.expected(len(raws), number)
        head, end = heads.stop, -ends.start
        number_in = self.number[0] if self.number is not None else None
        one = self.begin if number_in is not True else None  # the head of every record
        known = _leading(list(map(_part, raws, repeat(heads))), begins, head, one)
        if known < len(raws):
            raws, finals = raws[:known], finals[: known * end]
        if known:
            one = self.end if number_in is not False else None
            known = _leading(list(map(_part, raws, repeat(ends))), finals, end, one)
        if known and min(map(len, raws)) < head + end:
            # A head and an end overlapping: the records before the first so short.
            known = next(k for k, raw in enumerate(raws) if len(raw) < head + end)
        return known

    def strings(self, raws: list[bytes], number: int = 0) -> list[str] | None:
        """:meth:`values` of records whose heads and ends are the template's
        (:meth:`fitting`)."""
        count = len(raws)
        inner = b"\x03".join(map(_part, raws, repeat(self.inner(number))))
        size = len(inner)
        for separator, marker in self.separators:
            inner = _replacer(separator)(marker, inner)
        # A marker byte of a record's own standing where a separator is missing leaves
        # the markers in order but the length longer.
        if len(inner) != size - self.shrink * count:
            return None
        return self._marked(inner, count)

    def _marked(self, inner: bytes, count: int) -> list[str] | None:
        """The string holes' values of ``count`` records' holes and separators, the
        separators each its marker and the records joined by ``_RECORDS`` (no marker
        byte of the records' own in them)."""
        if inner.translate(None, self.others) != (self.order * count)[:-1]:
            return None
        if b"\\" in inner:
            # Without its escaped backslashes (paired from the left, as JSON reads them),
            # a backslash before a marker would escape the quote put there.
            odd = inner.replace(b"\\\\", b"")
            if (
                odd.endswith(b"\\")
                or b"\\\x03" in odd
                or any(b"\\" + marker in odd for _, marker in self.separators)
            ):
                return None
        array = inner.replace(b"\x03", b'","')
        for _, marker in self.separators:
            array = array.replace(marker, b'","')
        array = b'["' + array + b'"]'
        try:
            values = _loads(array)
        except ValueError:
            return None
        # A quote left unescaped in a hole's bytes would make more strings (no delimiter's
        # quote is escaped: no value ends in a backslash), never fewer.
        return values if len(values) == count * self.holes else None

    def region(
        self,
        template: ByteTemplate,
        records: RawRegion,
        start: int,
        text_at: int,
        obfuscation_at: int | None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """:meth:`read` of records a reader left as lines (:class:`~chatx.record.RawRegion`),
        read in the lines: no record is made, nor its payload cut out. The lines from
        ``start`` on are taken a few at a time, the next few twice as many: those that
        begin with the template's head and end with its end, one after the other (each
        line compared in C, up to the first that is not: a call that finds no run costs
        one comparison), are read at once as :meth:`strings` reads them; a few that
        cannot be are read record by record. (:meth:`ByteTemplate.match` takes no line
        that does not begin and end so: the first that does not ends the run.)"""
        texts: list[str] = []
        obfuscations: list[str | None] = []
        lines: list[int] = []
        cut, total = len(records.prefix), len(records)
        head, end = records.prefix + self.begin, self.end
        inner = slice(len(head), -len(end))
        index, size = start, 64
        while index < total:
            window = records.lines[index : index + size]
            fit = _leading_lines(window, head, end)
            if not fit:
                break
            values = self._lined(window[:fit], inner, cut)
            if values is None:
                got = template.read_each(records, index, index + fit, text_at, obfuscation_at)
            else:
                got = self._taken_in(values, records, index, text_at, obfuscation_at)
            texts += got[0]
            obfuscations += got[1]
            lines += got[2]
            index += len(got[0])
            if len(got[0]) < len(window):
                break
            size *= 2
        return texts, obfuscations, lines

    def _lined(self, lines: list[bytes], inner: slice, cut: int) -> list[str] | None:
        """:meth:`strings` of lines that begin with a prefix ``cut`` bytes long, then the
        template's head, and end with its end, their holes and separators at ``inner``."""
        # (A line shorter than the head and the end together leaves no bytes between
        # them: no text, which ends the run, or no separator, which _marked refuses.)
        count = len(lines)
        joined = b"\x03".join(map(_part, lines, repeat(inner)))
        size = len(joined)
        for separator, marker in self.separators:
            joined = _replacer(separator)(marker, joined)
        if len(joined) != size - self.shrink * count:  # see strings()
            return None
        return self._marked(joined, count)

    def _taken_in(
        self,
        values: list[str],
        records: RawRegion,
        index: int,
        text_at: int,
        obfuscation_at: int | None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """:meth:`_taken` of the records of ``records`` from ``index`` on whose
        ``values`` were read."""
        holes = self.holes
        texts = values[text_at::holes]
        if "" in texts:
            texts = texts[: texts.index("")]
        taken = len(texts)
        obfuscations: list[str | None]
        if obfuscation_at is None:
            obfuscations = [None] * taken
        else:
            obfuscations = values[obfuscation_at::holes][:taken]  # type: ignore[assignment]
        step = records.step
        first = records.line(index)
        return texts, obfuscations, list(range(first, first + step * taken, step))

    @staticmethod
    def _candidates(chunk: Sequence[Record], named: str | None) -> list[bytes]:
        """The raw payloads of the records of ``chunk`` up to the first that cannot be in
        a run: one the reader parsed, or (``named``) one of another SSE event name."""
        raws = [record.raw for record in chunk]
        if None in raws:
            raws = raws[: raws.index(None)]
        if named is not None:
            for k, record in enumerate(chunk[: len(raws)]):
                if record.event != named and record.event is not None:
                    return raws[:k]  # type: ignore[return-value]  # None is not in it
        return raws  # type: ignore[return-value]

    def _taken(
        self,
        values: list[str],
        chunk: Sequence[Record],
        text_at: int,
        obfuscation_at: int | None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """The texts, obfuscations and lines of the records whose ``values`` were read,
        up to the first whose text is empty (no delta: the run ends before it)."""
        # A number first is among match()'s values (in byte order), not the block's.
        holes, skip = self.holes, int(self.number is not None and self.number[0])
        texts = values[text_at - skip :: holes]
        if "" in texts:
            texts = texts[: texts.index("")]
        count = len(texts)
        obfuscations: list[str | None]
        if obfuscation_at is None:
            obfuscations = [None] * count
        else:
            obfuscations = values[obfuscation_at - skip :: holes][:count]  # type: ignore[assignment]
        return texts, obfuscations, [record.line for record in chunk[:count]]

    def _stretch(self, number: int | None, size: int) -> int:
        """How many records from the one numbered ``number`` on make the next block, at
        most ``size``: numbers of one width, each one that match() takes; 0 when the
        first is not such a number (negative ones are rare: read record by record)."""
        if self.number is None:
            return size
        if type(number) is not int or not 0 <= number < _HIGH:
            return 0
        return min(size, 10 ** len(b"%d" % number) - number, _HIGH - number)

    def read(
        self,
        template: ByteTemplate,
        records: Sequence[Record],
        start: int,
        text_at: int,
        obfuscation_at: int | None,
        number: int | None,
        named: str | None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """:meth:`ByteTemplate.read` a few records at a time, the next few twice as
        many (a stretch of numbers of one width at most); a few that are not all the
        template's are read record by record, which says where the run ends."""
        # The first record alone: where runs are short, most calls find none, and one
        # match() costs less than a block's setting up.
        texts, obfuscations, lines = template.read_each(
            records, start, start + 1, text_at, obfuscation_at, number, named
        )
        if not texts:
            return texts, obfuscations, lines
        start, number = start + 1, number + 1 if number is not None else None
        size, total = 64, len(records)
        while start < total:
            stretch = self._stretch(number, size)
            if stretch:
                chunk = records[start : start + stretch]
                got = self._chunk(template, chunk, text_at, obfuscation_at, number, named)
            else:
                got = template.read_each(
                    records, start, None, text_at, obfuscation_at, number, named
                )
            texts += got[0]
            obfuscations += got[1]
            lines += got[2]
            if len(got[0]) < stretch or not stretch:
                break
            start += stretch
            number = number + stretch if number is not None else None
            size = min(size * 2, 256)
        return texts, obfuscations, lines

    def _chunk(
        self,
        template: ByteTemplate,
        chunk: Sequence[Record],
        text_at: int,
        obfuscation_at: int | None,
        number: int | None,
        named: str | None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """:meth:`read` of the records of ``chunk``: at once, else record by record."""
        raws = self._candidates(chunk, named)
        at = number or 0  # a template without a number hole has no use for it
        # Most often a run ends in these records: the values of the records before the
        # first of another head or end are read at once still, the others' record by
        # record (match() may take one: a space before a hole).
        known = self.fitting(raws, at) if raws else 0
        values = self.strings(raws[:known] if known < len(raws) else raws, at) if known else None
        if values is None:
            return template.read_each(chunk, 0, len(raws), text_at, obfuscation_at, number, named)
        got = self._taken(values, chunk, text_at, obfuscation_at)
        if len(got[0]) == known < len(raws):
            after = number + known if number is not None else None
            more = template.read_each(
                chunk, known, len(raws), text_at, obfuscation_at, after, named
            )
            got = (got[0] + more[0], got[1] + more[1], got[2] + more[2])
        return got


def _leading_lines(lines: list[bytes], head: bytes, end: bytes) -> int:
    """How many of ``lines`` come before the first that does not begin with ``head`` and
    end with ``end``: each compared in C, none after that first."""
    heads = len(list(takewhile(bool, map(bytes.startswith, lines, repeat(head)))))
    return len(list(takewhile(bool, map(bytes.endswith, lines[:heads], repeat(end)))))


def _leading(parts: list[bytes], joined: bytes, width: int, one: bytes | None) -> int:
    """How many of ``parts`` come before the first that is not its ``width`` bytes of
    ``joined`` (the parts expected, one after the other; each ``one``, when given)."""
    if b"".join(parts) == joined:
        return len(parts)
    if one is not None:  # (a raw payload may be a bytearray or a memoryview: eq, no __eq__)
        return len(list(takewhile(bool, map(eq, parts, repeat(one)))))
    ends = range(width, len(joined) + width, width)
    expected = map(_part, repeat(joined), map(slice, range(0, len(joined), width), ends))
    return len(list(takewhile(bool, map(eq, parts, expected))))


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

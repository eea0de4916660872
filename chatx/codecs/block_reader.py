"""Reading a byte template over many records at once: a read's records in a list, or
its lines (:class:`~chatx.record.RawRegion`), compared with the template's head and end
in C and their holes read by one ``orjson.loads``, where
:meth:`~chatx.codecs.byte_template.ByteTemplate.match` reads one record at a time
(:mod:`chatx.codecs.template` says why a record of those bytes means the template's
payload but for its holes)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from itertools import repeat, takewhile
from operator import eq, getitem
from typing import Protocol, cast

import orjson

from chatx.containers import exact
from chatx.record import RawRegion, Record


class OneByOne(Protocol):
    """What reads the records a block cannot be read at once in: the template's own
    reading, record by record (:meth:`~chatx.codecs.byte_template.ByteTemplate.read_each`)."""

    def read_each(
        self,
        records: Sequence[Record],
        start: int,
        stop: int | None,
        text_at: int,
        obfuscation_at: int | None = None,
        number: int | None = None,
        named: str | None = None,
    ) -> tuple[list[str], list[str | None], list[int]]: ...


_loads = orjson.loads
_HIGH = exact.INT64[1]  # the integers orjson reads as they are, without a note


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
    :meth:`~chatx.codecs.byte_template.ByteTemplate.match` over each record, without a Python step a record:

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
      makes more strings, never fewer. Each value is then what :meth:`~chatx.codecs.byte_template.ByteTemplate.match`
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
        return self._between(raws, self.inner(number))

    def _between(self, raws: list[bytes], inner: slice) -> list[str] | None:
        """The string holes' values of records whose holes and separators are at
        ``inner`` in each: those bytes joined, the separators made markers (in C), read
        by :meth:`_marked`. (A record too short to hold its head and end leaves no bytes
        between: no text, which ends the run, or no separator, which _marked refuses.)"""
        count = len(raws)
        joined = b"\x03".join(map(_part, raws, repeat(inner)))
        size = len(joined)
        for separator, marker in self.separators:
            joined = _replacer(separator)(marker, joined)
        # A marker byte of a record's own standing where a separator is missing leaves
        # the markers in order but the length longer.
        if len(joined) != size - self.shrink * count:
            return None
        return self._marked(joined, count)

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
        template: OneByOne,
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
        cannot be are read record by record. (``ByteTemplate.match`` takes no line that
        does not begin and end so: the first that does not ends the run.)"""
        texts: list[str] = []
        obfuscations: list[str | None] = []
        lines: list[int] = []
        total = len(records)
        head, end = records.prefix + self.begin, self.end
        inner = slice(len(head), -len(end))
        index, size = start, 64
        while index < total:
            window = records.lines[index : index + size]
            fit = _leading_lines(window, head, end)
            if not fit:
                break
            values = self._between(window[:fit], inner)
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
        texts, obfuscations = self._holes(values, text_at, obfuscation_at)
        step = records.step
        first = records.line(index)
        return texts, obfuscations, list(range(first, first + step * len(texts), step))

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
        """The texts, obfuscations and lines of the records of ``chunk`` whose ``values``
        were read, up to the first whose text is empty (:meth:`_holes`)."""
        texts, obfuscations = self._holes(values, text_at, obfuscation_at)
        return texts, obfuscations, [record.line for record in chunk[: len(texts)]]

    def _holes(
        self, values: list[str], text_at: int, obfuscation_at: int | None
    ) -> tuple[list[str], list[str | None]]:
        """The texts (hole ``text_at``) and obfuscations (hole ``obfuscation_at``) of the
        records whose ``values`` were read, up to the first whose text is empty (no
        delta: the run ends before it)."""
        # A number first is among match()'s values (in byte order), not the block's.
        holes, skip = self.holes, int(self.number is not None and self.number[0])
        texts = values[text_at - skip :: holes]
        if "" in texts:
            texts = texts[: texts.index("")]
        if obfuscation_at is None:
            return texts, [None] * len(texts)
        return texts, values[obfuscation_at - skip :: holes][: len(texts)]  # type: ignore[return-value]

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
        template: OneByOne,
        records: Sequence[Record],
        start: int,
        text_at: int,
        obfuscation_at: int | None,
        number: int | None,
        named: str | None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """:meth:`~chatx.codecs.byte_template.ByteTemplate.read` a few records at a time, the next few twice as
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
        template: OneByOne,
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

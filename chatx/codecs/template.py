"""Payloads known by their bytes: a long stream repeats one record but for a few values.

A :class:`ByteTemplate` is the JSON text orjson writes for a payload a decoder has just
read, cut at the values that change from record to record (its *holes*: a text, an
obfuscation, a sequence number). A later payload that is those literal bytes around
other values in the holes parses to the same payload with those values, so a decoder
can take its meaning from the template and parse only the holes.

Why that holds: a string hole must parse, alone, as one JSON string, and a string
literal ends at its first unescaped quote, so the hole cannot reach into the bytes
after it; a number hole must be the very digits of the number expected. The payload
then has the same tokens as the template's own JSON text but for those values.
Providers that write JSON with other spacing, key order or escapes never match and
take the parsing path: nothing depends on a match but speed.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import orjson

from chatx.containers import exact
from chatx.containers.exact import Surrogates
from chatx.containers.payload import _DEEP_BYTES, checked, parse
from chatx.errors import InputError
from chatx.record import Record

_loads = orjson.loads

NUMBER = "\x00chatx number\x00"
"""Stand-in for the hole of an integer the decoder expects (a sequence number)."""


def hole(name: str) -> str:
    """A stand-in for a string hole while a template's bytes are made: no payload has it."""
    return f"\x00chatx {name}\x00"


def parsed(record: Record) -> Record:
    """The parsed record of a raw one a template did not know. A payload that is not JSON
    raises what the pipeline says of a record a reader could not parse."""
    record = parse(record.raw, record.event, record.line)  # type: ignore[arg-type]
    if record.error is not None:
        raise InputError(record.error)
    return record


class KnownRecords:
    """The raw-record half of a decoder whose codec ``reads_raw``: a record its template
    knows is decoded from the template (:meth:`run`), any other is parsed and decoded
    by :meth:`_decode_parsed`, which may make the next template.

    A payload orjson does not read as ``JSON.parse`` does is read exactly
    (:mod:`chatx.containers.exact`) and comes here raw, whatever the reader: integers
    beyond 64 bits are said once per field, lone surrogates mended record after
    record (:class:`~chatx.containers.exact.Surrogates`)."""

    made: int  # templates made
    used: int  # records they knew
    notes: Any
    # The record a run last stopped at: the pipeline feeds it next, and it is not tried
    # against the template a second time.
    missed: Record | None = None
    # Lone surrogates, once a record had one; ``carrying`` while half a pair waits for
    # the next record, which then takes the parsing path whatever it is.
    surrogates: Surrogates | None = None
    carrying = False
    big_said: set[str] | None = None  # fields whose integer beyond 64 bits was said

    def run(self, records: list[Record], start: int) -> Any:
        """The records from ``start`` on that the template knows, as one ``DeltaRun``
        (``None`` when the first is not one of them)."""
        if self.carrying:
            return None
        run = self._known_run(records, start)
        if run is None and start < len(records):
            self.missed = records[start]
        return run

    def _known_run(self, records: list[Record], start: int) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _decode_parsed(self, record: Record) -> list[Any]:  # pragma: no cover
        raise NotImplementedError

    def _general(self, record: Record) -> list[Any]:  # pragma: no cover
        raise NotImplementedError

    def _feed_raw(self, record: Record) -> list[Any]:
        if record is not self.missed and not self.carrying:
            run = self._known_run([record], 0)
            if run is not None:
                return run.batch(0)  # type: ignore[no-any-return]
        self.missed = None
        parsed = self._parse_raw(record)
        if parsed.raw is not None or self.carrying:
            parsed = self._read_exactly(parsed)
        record.data = parsed.data
        return self._decode_parsed(parsed)

    def _parse_raw(self, record: Record) -> Record:
        return parsed(record)

    def _read_exactly(self, record: Record) -> Record:
        """``record`` (a payload read exactly, or the one after half a pair) with its
        integers beyond 64 bits said and its lone surrogates mended."""
        data = record.data
        if record.raw is not None:
            self._say_big_ints(data, record.line)
        if self.surrogates is None:
            self.surrogates = Surrogates(self._say_surrogate)
        data = self.surrogates.read(data, record.line)
        self._carry(bool(self.surrogates.carried))
        return Record(data, record.event, record.line, record.done)

    def _say_big_ints(self, data: Any, line: int) -> None:
        for path, number in exact.big_ints(data):
            said = self.big_said if self.big_said is not None else set()
            self.big_said = said
            if path not in said:
                said.add(path)
                self.notes.add("warning", exact.big_int_note(path, number), line)

    def _say_surrogate(self, message: str, line: int | None) -> None:
        self.notes.add("repaired", message, line)

    def _carry(self, carrying: bool) -> None:
        """While half a pair waits, every record goes through :meth:`_read_exactly`:
        ``feed`` and ``finish`` are this instance's own for that time, so the decoders'
        hot paths pay nothing for the check the rest of the time."""
        if carrying == self.carrying:
            return
        self.carrying = carrying
        if carrying:
            self.feed = self._feed_carried
            self.finish = self._finish_carried
        else:
            del self.feed, self.finish

    def _feed_carried(self, record: Record) -> list[Any]:
        if record.raw is None and record.error is None:
            mended = self._read_exactly(record)
            record.data = mended.data
        return type(self).feed(self, record)  # type: ignore[attr-defined, no-any-return]

    def _finish_carried(self) -> list[Any]:
        self.surrogates.finish()  # type: ignore[union-attr]
        self._carry(False)
        return type(self).finish(self)  # type: ignore[attr-defined, no-any-return]


def parsed_around(record: Record, texts: list[str]) -> Record | None:
    """The parsed record of a raw payload that repeats some of ``texts`` (long texts a
    decoder holds already), parsed without them: each is put back, the very string
    held, in place of a stand-in. A payload that repeats a 5 MB text costs orjson about
    sixteen times that to parse, and the text would be held twice.

    Why that holds: a stand-in that parses as a whole string value is a string token
    where it stands, so the held text, a string token too, stands for a string there.
    ``None`` when any stand-in is not found as often as it was put in, as a value (not a
    key): then the payload is parsed as it is."""
    raw = record.raw
    assert raw is not None
    if exact.may_hold_big_int(raw):  # read exactly, the long way
        return None
    put: dict[str, tuple[str, int]] = {}
    for text in texts:
        encoded = _json_string(text)
        count = raw.count(encoded)
        if count:
            stand_in = hole(f"known text {len(put)}")
            quoted = orjson.dumps(stand_in)
            if quoted in raw:
                return None
            raw = raw.replace(encoded, quoted)
            put[stand_in] = (text, count)
    if not put:
        return None
    try:
        value = orjson.loads(raw)
    except ValueError:
        return None
    found: dict[str, int] = dict.fromkeys(put, 0)
    if not _put_back(value, put, found) or any(found[k] != put[k][1] for k in put):
        return None
    if len(raw) > _DEEP_BYTES:
        return checked(raw, value, record.event, record.line)
    return Record(value, record.event, record.line)


def _json_string(text: str, step: int = 1 << 16) -> bytearray:
    """``orjson.dumps(text)``, written a slice at a time: for the whole of a long text
    with wide characters in it, orjson reserves about fourteen bytes a character."""
    out = bytearray(b'"')
    for at in range(0, len(text), step):
        out += orjson.dumps(text[at : at + step])[1:-1]
    out += b'"'
    return out


def _put_back(node: Any, put: dict[str, tuple[str, int]], found: dict[str, int]) -> bool:
    """Replace each stand-in value under ``node`` by its text, counting them in ``found``;
    false when a stand-in is a key."""
    stack = [node]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if any(key in put for key in node):
                return False
            entries: Any = list(node.items())
        else:
            entries = enumerate(node)
        for place, value in entries:
            if type(value) is str:
                if value in put:
                    node[place] = put[value][0]
                    found[value] += 1
            elif type(value) is dict or type(value) is list:
                stack.append(value)
    return True


def worth_making(made: int, used: int) -> bool:
    """Whether a decoder that made ``made`` templates, which knew ``used`` records, should
    make another: a stream whose records never repeat (a new ``created`` each time)
    stops paying for them. Making one costs about what two records parsed do."""
    return made <= 16 + used // 4


class ByteTemplate:
    """The literal bytes of a payload around its holes.

    ``match(raw, number)`` returns the holes' values in the order they come in the bytes
    (``at[i]`` is where the value of ``stand_ins[i]`` is; the ``NUMBER`` hole gives
    ``number`` back), or ``None`` when ``raw`` does not fit."""

    __slots__ = ("at", "head", "rest")

    def __init__(self, head: bytes, rest: list[tuple[bool, bytes, bool]], order: list[int]) -> None:
        self.head = head
        # For each hole in byte order: is it the number hole, the bytes after it, is it last.
        self.rest = rest
        self.at = order  # where each stand-in's value is in what match() returns

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
        records: list[Record],
        start: int,
        text_at: int,
        obfuscation_at: int | None = None,
        number: int | None = None,
    ) -> tuple[list[str], list[str | None], list[int]]:
        """The text (hole ``text_at``), obfuscation (hole ``obfuscation_at``) and line of
        each raw record from ``start`` on, up to the first that does not fit or whose
        text is empty (no delta: a record of its own kind). The ``NUMBER`` hole must be
        ``number`` in the first record and one more in each after it."""
        texts: list[str] = []
        obfuscations: list[str | None] = []
        lines: list[int] = []
        match = self.match
        for record in islice(records, start, None):
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
                if type(number) is not int:
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

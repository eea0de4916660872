"""Runs: long stretches of records a codec knows by their bytes, decoded unparsed.

A long stream repeats one record but for a few values. A :class:`ByteTemplate` is the
JSON text orjson writes for a payload a decoder has just read, cut at the values that
change from record to record (its *holes*: a text, an obfuscation, a sequence number).
A later payload that is those literal bytes around other values in the holes parses to
the same payload with those values, so its meaning is the template's but for the holes,
and only the holes are parsed. Consecutive records one template knows are a *run*: they
reach the encoder as one :class:`DeltaRun`.

Why that holds: a string hole must parse, alone, as one JSON string, and a string
literal ends at its first unescaped quote, so the hole cannot reach into the bytes
after it; a number hole must be the very digits of the number expected. The payload
then has the same tokens as the template's own JSON text but for those values.
Providers that write JSON with other spacing, key order or escapes never match and
are parsed: nothing depends on a run but speed.

A codec that finds runs names its :class:`RunHook` in its descriptor
(``Codec.run_hook``): which template it holds now, and how a parsed record is decoded
(and may make the next one). :func:`chatx.codecs.base.open_decoder` wraps the decoder and the hook in a
:class:`RunDecoder`, which takes the records a reader left unparsed (``Record.raw``);
the decoder itself sees parsed records only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import islice, repeat
from operator import getitem
from typing import Any, Protocol, cast

import orjson

from chatx import ir
from chatx.containers import exact
from chatx.containers.exact import Surrogates
from chatx.containers.payload import parse
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record

_loads = orjson.loads
_LOW, _HIGH = exact.INT64  # the integers orjson reads as they are, without a note

NUMBER = "\x00chatx number\x00"
"""Stand-in for the hole of an integer the decoder expects (a sequence number)."""


def hole(name: str) -> str:
    """A stand-in for a string hole while a template's bytes are made: no payload has it."""
    return f"\x00chatx {name}\x00"


TEXT = hole("text")
OBFUSCATION = hole("obfuscation")

Delta = ir.TextDelta | ir.ReasoningDelta | ir.ToolArgsDelta


@dataclass(slots=True)
class DeltaRun:
    """Consecutive source records that each say one delta like ``proto`` (a
    :class:`~chatx.ir.TextDelta`, ``ReasoningDelta`` or ``ToolArgsDelta`` without residue
    or logprobs) but for its text and obfuscation, between the same shared residue
    events: record ``k`` is ``[before, proto with texts[k] and obfuscations[k], after]``
    (``None`` ones left out).

    Not a thing a stream says, so not an IR event: a pipeline batch, how a long run of
    records a decoder knew by their bytes reaches the encoder at once (one object
    instead of three events per record). An encoder's ``feed_run`` takes it;
    :meth:`replay` feeds the records' own batches to one without a loop of its own.
    """

    proto: Delta
    texts: list[str]  # the text, or the arguments fragment, of each record
    obfuscations: list[str | None]
    lines: list[int]  # each record's input line, for notes
    before: ir.Meta | None = None  # shared residue events: never mutated
    after: ir.Meta | None = None
    tail: ir.Meta | None = None
    # Each record's payload bytes, when the codec's hook keeps them (its own format's
    # encoder may write them as they came), and the bytes before and after the text's
    # JSON string in each: the same in all, the text being the template's one hole.
    raws: list[bytes] | None = None
    around: tuple[bytes, bytes] | None = None

    @property
    def lane(self) -> int:
        return self.proto.lane

    @property
    def shared(self) -> tuple[ir.Meta, ...]:
        """The shared residue events each record of the run has, in order."""
        return tuple(m for m in (self.before, self.after, self.tail) if m is not None)

    @property
    def laneless(self) -> list[ir.Event]:
        """The shared residue events of no lane (``before``, and a ``tail`` of none): what
        each record still says when its lane does not go on (``--choice`` another)."""
        out: list[ir.Event] = [self.before] if self.before is not None else []
        if self.tail is not None and self.tail.lane is None:
            out.append(self.tail)
        return out

    def batch(self, k: int) -> list[ir.Event]:
        """The batch the run's ``k``-th record decodes to on its own."""
        proto, text, obfuscation = self.proto, self.texts[k], self.obfuscations[k]
        delta: ir.Event
        if type(proto) is ir.ToolArgsDelta:
            delta = ir.ToolArgsDelta(proto.lane, proto.call, text, {}, obfuscation)
        elif type(proto) is ir.ReasoningDelta:
            delta = ir.ReasoningDelta(
                proto.lane, text, proto.kind, proto.part, {}, proto.source_field, obfuscation
            )
        else:
            delta = ir.TextDelta(proto.lane, text, None, {}, obfuscation)
        out: list[ir.Event] = [delta]
        if self.before is not None:
            out.insert(0, self.before)
        if self.after is not None:
            out.append(self.after)
        if self.tail is not None:
            out.append(self.tail)
        return out

    def batches(self) -> list[list[ir.Event]]:
        """The batch of each record of the run."""
        return [self.batch(k) for k in range(len(self.texts))]

    def replay(self, feed: Callable[[list[ir.Event]], list[Any]], notes: Notes) -> list[Any]:
        """What ``feed`` (an encoder's) makes of each record's batch in turn, notes said at
        the record's own line: the ``feed_run`` of an encoder without a loop of its own
        for runs, or for the runs its loop does not take."""
        out: list[Any] = []
        for line, batch in zip(self.lines, self.batches(), strict=True):
            notes.line = line
            out += feed(batch)
        return out

    def on_lane(self, lane: int) -> DeltaRun:
        """The same run said on ``lane`` (``--choice`` numbers the chosen choice 0)."""
        after, tail = self.after, self.tail
        if after is not None and after.lane is not None:
            after = replace(after, lane=lane)
        if tail is not None and tail.lane is not None:
            tail = replace(tail, lane=lane)
        return replace(self, proto=replace(self.proto, lane=lane), after=after, tail=tail)


class DeltaTemplate:
    """The bytes of a record that says one delta around its holes, and what it says:
    ``proto`` (the delta, its text aside) between the shared residue events ``before``
    and ``after`` (and ``tail``, see :class:`DeltaRun`). The text's hole is :data:`TEXT`, the obfuscation's
    :data:`OBFUSCATION` (when ``proto`` has one); a record may hold :data:`NUMBER` too."""

    __slots__ = ("after", "around", "before", "bytes", "obfuscation_at", "proto", "tail", "text_at")

    def __init__(
        self,
        template: ByteTemplate,
        proto: Delta,
        before: ir.Meta | None,
        after: ir.Meta | None,
        tail: ir.Meta | None = None,
    ) -> None:
        self.bytes = template
        self.text_at = template.at[0]  # see make(): [TEXT, OBFUSCATION?, NUMBER?]
        self.obfuscation_at = template.at[1] if proto.obfuscation is not None else None
        # The delta goes on to the encoder: the template keeps a copy of its own.
        self.proto: Delta = replace(proto, extra={})
        self.before = before
        self.after = after
        self.tail = tail
        rest = template.rest
        # The text's hole alone: its records differ only there (DeltaRun.around).
        self.around = (template.head, rest[0][1]) if len(rest) == 1 else None

    @classmethod
    def make(
        cls,
        payload: dict[str, Any],
        proto: Delta,
        before: ir.Meta | None = None,
        after: ir.Meta | None = None,
        numbered: bool = False,
        tail: ir.Meta | None = None,
    ) -> DeltaTemplate | None:
        """The template of ``payload``, a record that said ``proto`` with :data:`TEXT`
        in place of its text (and :data:`OBFUSCATION`, :data:`NUMBER` as above);
        ``None`` when orjson cannot write it or a stand-in is not found once."""
        stand_ins = [TEXT]
        if proto.obfuscation is not None:
            stand_ins.append(OBFUSCATION)
        if numbered:
            stand_ins.append(NUMBER)
        template = ByteTemplate.make(payload, stand_ins)
        return cls(template, proto, before, after, tail) if template is not None else None

    def run(
        self,
        records: Sequence[Record],
        start: int,
        number: int | None = None,
        named: str | None = None,
        raws: bool = False,
    ) -> DeltaRun | None:
        """The records from ``start`` on that this template knows (the first with
        ``number`` in its number hole; each named ``named`` or not named, when given),
        as one run; ``None`` when the first is not one. With ``raws``, the run keeps
        their bytes (when the text is the template's one hole)."""
        texts, obfuscations, lines = self.bytes.read(
            records, start, self.text_at, self.obfuscation_at, number, named
        )
        if not texts:
            return None
        run = DeltaRun(self.proto, texts, obfuscations, lines, self.before, self.after, self.tail)
        if raws and self.around is not None:
            # Every record of a run came raw: the template knew its bytes.
            run.raws = [record.raw for record in records[start : start + len(texts)]]  # type: ignore[misc]
            run.around = self.around
        return run


class RunHook(Protocol):
    """A codec's part of finding runs, named by its descriptor (``Codec.run_hook``) and
    made with the codec's decoder, whose state it reads and moves past the records of a
    run. :class:`RunDecoder` calls it; the decoder never does."""

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        """The raw records from ``start`` on that the hook's template of the moment
        knows, as one run; ``None`` when the first is not one."""

    def decode(self, record: Record, raw: bool) -> list[ir.Event]:
        """A parsed record in no run: the decoder's events for it. The template is
        dropped when decoding it may change what the template stands for, and the next
        one made of it when it came ``raw`` and is worth one (:func:`worth_making`): the
        records a reader parsed (before the format is known, or in a container read
        parsed) are in no run, and would spend the budget of templates for nothing."""

    def parse(self, record: Record) -> Record:
        """The parsed record of a raw one (:func:`parsed`, or a cheaper way the codec
        knows for some payloads)."""


def parsed(record: Record) -> Record:
    """The parsed record of a raw one a template did not know. A payload that is not JSON
    raises what the pipeline says of a record a reader could not parse."""
    assert record.raw is not None
    record = parse(record.raw, record.event, record.line)
    if record.error is not None:
        raise InputError(record.error)
    return record


def worth_making(made: int, used: int) -> bool:
    """Whether a hook that made ``made`` templates, which knew ``used`` records, should
    make another: a stream whose records never repeat (a new ``created`` each time)
    stops paying for them. Making one costs about what two records parsed do."""
    return made <= 16 + used // 4


class Lined(Protocol):
    """What a decoder shares of the record it read last: its input line."""

    line: int


class DeltaHook:
    """The run hook of a codec whose template stands for one delta of the content open
    when its record was decoded (Anthropic's, Llama Stack's, Gemini's). Any record
    decoded drops it; one the codec's ``plain`` says is a plain delta (given the events
    and whether the record was said without a note) makes the next with ``make`` (given
    the payload and those events). A run moves the
    decoder's ``read.line`` to its last record. ``named``: the SSE event name the records
    of a run have, when the decoder says a name that differs from a payload's type.
    ``raws``: its runs keep their records' bytes (:attr:`DeltaRun.raws`)."""

    __slots__ = (
        "feed",
        "made",
        "make",
        "named",
        "notes",
        "plain",
        "raws",
        "read",
        "template",
        "used",
    )

    parse = staticmethod(parsed)

    def __init__(
        self,
        feed: Callable[[Record], list[ir.Event]],
        notes: Notes,
        read: Lined,
        plain: Callable[[list[ir.Event], bool], bool],
        make: Callable[[Any, list[ir.Event]], DeltaTemplate | None],
        named: str | None = None,
        raws: bool = False,
    ) -> None:
        self.feed = feed  # the decoder's
        self.raws = raws  # runs keep their records' bytes (DeltaRun.raws)
        self.notes = notes
        self.read = read
        self.plain = plain
        self.make = make  # the template of a record's payload, given its events
        self.named = named
        self.template: DeltaTemplate | None = None
        self.made = self.used = 0  # delta templates made and records they knew

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template = self.template
        if template is None:
            return None
        run = template.run(records, start, None, self.named, self.raws)
        if run is None:
            return None
        self.read.line = run.lines[-1]
        self.used += len(run.texts)
        return run

    def decode(self, record: Record, raw: bool) -> list[ir.Event]:
        """Decoded, and a template made of the record when it was a plain delta."""
        self.template = None
        notes = self.notes.items
        said = len(notes)
        out = self.feed(record)
        if raw and self.plain(out, len(notes) == said) and worth_making(self.made, self.used):
            self.made += 1
            self.template = self.make(record.data, out)
        return out


class RunDecoder:
    """A codec's run hook and its decoder's ``finish``: what the pipeline feeds records
    to when the codec finds runs (:func:`chatx.codecs.base.open_decoder` makes it). :meth:`run` gives the records from a position on that the hook's
    template knows as one run; :meth:`feed` takes any other record, raw (parsed here,
    with ``hook.parse``) or parsed by the reader, and the hook hands it to the decoder.
    The decoder sees parsed records only.

    A payload orjson does not read as ``JSON.parse`` does is read exactly
    (:mod:`chatx.containers.exact`) and comes here raw, whatever the reader: integers
    beyond 64 bits are said once per field, lone surrogates mended record after
    record (:class:`~chatx.containers.exact.Surrogates`). While half a pair waits for
    the next record (``carrying``), no record is in a run."""

    __slots__ = (
        "big_said",
        "carrying",
        "drain",
        "hook",
        "missed",
        "notes",
        "parse",
        "surrogates",
    )

    def __init__(self, hook: RunHook, finish: Callable[[], list[ir.Event]], notes: Notes) -> None:
        self.hook = hook  # it holds the decoder, and feeds it every record in no run
        self.drain = finish
        self.notes = notes
        self.parse = hook.parse
        # The record a run last stopped at: the pipeline feeds it next, and it is not
        # tried against the template a second time.
        self.missed: Record | None = None
        self.surrogates: Surrogates | None = None  # once a record had a lone one
        self.carrying = False
        self.big_said: set[str] | None = None  # fields whose integer beyond 64 bits was said

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        """The records from ``start`` on that the template knows, as one run (``None``
        when the first is not one of them)."""
        if self.carrying:
            return None
        run = self.hook.run(records, start)
        if run is None and start < len(records):
            self.missed = records[start]
        return run

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one record, raw or parsed."""
        if record.raw is None:
            if self.carrying and record.error is None:  # mended here
                record.data = self._read_exactly(record).data
            return self.hook.decode(record, False)
        if record is not self.missed and not self.carrying:
            run = self.hook.run((record,), 0)
            if run is not None:
                return run.batch(0)
        self.missed = None
        parsed = self.parse(record)
        if parsed.raw is not None or self.carrying:
            parsed = self._read_exactly(parsed)
        record.data = parsed.data
        return self.hook.decode(parsed, True)

    def finish(self) -> list[ir.Event]:
        """End of input: the half pair still waiting is said, then the decoder drains."""
        if self.surrogates is not None and self.carrying:
            self.surrogates.finish()
            self.carrying = False
        return self.drain()

    def _read_exactly(self, record: Record) -> Record:
        """``record`` (a payload read exactly, or the one after half a pair) with its
        integers beyond 64 bits said and its lone surrogates mended."""
        data = record.data
        if record.raw is not None:
            self._say_big_ints(data, record.line)
        if self.surrogates is None:
            self.surrogates = Surrogates(self._say_surrogate)
        data = self.surrogates.read(data, record.line)
        self.carrying = bool(self.surrogates.carried)
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
        for record in islice(records, start, stop):
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

    __slots__ = ("begin", "end", "holes", "number", "order", "others", "separators", "shrink")

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

    def expected(self, count: int, number: int) -> tuple[slice, slice, slice, bytes, bytes]:
        """Where a record's head, its end, and its string holes with what lies between
        are, and the heads and the ends of ``count`` records, joined: the first numbered
        ``number``, the others one more, all of one width (when the template has a
        number hole)."""
        begins, ends = self.begin * count, self.end * count
        head, end = len(self.begin), len(self.end)
        if self.number is not None:
            in_head, pattern, fixed = self.number
            numbered = pattern * count % tuple(range(number, number + count))
            if in_head:
                begins, head = numbered, fixed + len(b"%d" % number)
            else:
                ends, end = numbered, fixed + len(b"%d" % number)
        return slice(0, head), slice(-end, None), slice(head, -end), begins, ends

    def values(self, raws: list[bytes], number: int = 0) -> list[str] | None:
        """The string holes' values of ``raws`` (numbered from ``number`` on, as
        :meth:`expected` says), record after record, each record's in byte order; None
        when one of them is not the template (or is not read at once)."""
        count = len(raws)
        heads, ends, cut, begins, finals = self.expected(count, number)
        if (
            min(map(len, raws)) < heads.stop - ends.start  # a head and an end overlapping
            # Every head, then every end, compared at once (a search for the long head
            # in the records' bytes costs more: replace() and split() set it up again at
            # every record).
            or b"".join(map(_part, raws, repeat(heads))) != begins
            or b"".join(map(_part, raws, repeat(ends))) != finals
        ):
            return None
        inner = b"\x03".join(map(_part, raws, repeat(cut)))
        size = len(inner)
        for separator, marker in self.separators:
            inner = inner.replace(separator, marker)
        if (
            # A marker byte of a record's own standing where a separator is missing
            # leaves the markers in order but the length longer.
            len(inner) != size - self.shrink * count
            or inner.translate(None, self.others) != (self.order * count)[:-1]
        ):
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

    def _heads_and_ends(self, raws: list[bytes], number: int) -> int:
        """How many records of ``raws`` come before the first whose head or end is not
        the template's."""
        heads, ends, _, begins, finals = self.expected(len(raws), number)
        head, end = heads.stop, -ends.start
        for k, raw in enumerate(raws):
            if (
                raw[heads] != begins[k * head : k * head + head]
                or raw[ends] != finals[k * end : k * end + end]
            ):
                return k
        return len(raws)

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
        values = self.values(raws, at) if raws else None
        known = len(raws)
        if values is None and raws:
            # Most often the run ends in these records: the values of the records
            # before the first of another head or end are read at once still, the
            # others' record by record (match() may take one: a space before a hole).
            known = self._heads_and_ends(raws, at)
            values = self.values(raws[:known], at) if 0 < known < len(raws) else None
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

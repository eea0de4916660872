"""Runs: long stretches of records a codec knows by their bytes, decoded unparsed.

A long stream repeats one record but for a few values. A
:class:`~chatx.codecs.byte_template.ByteTemplate` is the JSON text orjson writes for a
payload a decoder has just read, cut at the values that change from record to record
(its *holes*: a text, an obfuscation, a sequence number). A later payload that is those
literal bytes around other values in the holes parses to the same payload with those
values, so its meaning is the template's but for the holes, and only the holes are
parsed. Consecutive records one template knows are a *run*: they reach the encoder as
one :class:`DeltaRun`.

Why that holds: a string hole must parse, alone, as one JSON string, and a string
literal ends at its first unescaped quote, so the hole cannot reach into the bytes
after it; a number hole must be the very digits of the number expected. The payload
then has the same tokens as the template's own JSON text but for those values.
Providers that write JSON with other spacing, key order or escapes never match and
are parsed: nothing depends on a run but speed.

A codec that finds runs names its :class:`RunHook` in its descriptor
(``Codec.run_hook``): which template it holds now, and how a parsed record is decoded
(and may make the next one). :func:`chatx.codecs.base.open_decoder` wraps the decoder
and the hook in a :class:`RunDecoder`, which takes the records a reader left unparsed
(``Record.raw``); the decoder itself sees parsed records only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Protocol

from chatx import ir
from chatx.codecs.byte_template import NUMBER, OBFUSCATION, TEXT, ByteTemplate
from chatx.containers import exact
from chatx.containers.exact import Surrogates
from chatx.containers.payload import parse
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import RawRegion, Record

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
    # () -> each record's payload bytes, when the codec's hook keeps them (its own
    # format's encoder may write them as they came: see raws), and the bytes before and
    # after the text's JSON string in each: the same in all, the text being the
    # template's one hole.
    payloads: Callable[[], list[bytes]] | None = None
    around: tuple[bytes, bytes] | None = None

    @property
    def raws(self) -> list[bytes] | None:
        """Each record's payload bytes (see ``payloads``), made when asked for: a run
        into another format, which never asks, costs no slice a record."""
        return None if self.payloads is None else self.payloads()

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
            # Every record of a run came raw: the template knew its bytes. The encoder
            # takes the run before the records are read on.
            stop = start + len(texts)
            if type(records) is RawRegion:
                run.payloads = partial(records.payloads, start, stop)
            else:
                run.payloads = partial(_raw_payloads, records, start, stop)
            run.around = self.around
        return run


def _raw_payloads(records: Sequence[Record], start: int, stop: int) -> list[bytes]:
    return [record.raw for record in records[start:stop]]  # type: ignore[misc]


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

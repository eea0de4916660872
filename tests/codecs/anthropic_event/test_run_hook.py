"""The Anthropic run hook (anthropic_event/run_hook.py).

A raw ``content_block_delta`` that repeats the last one but for its text is decoded
from a template, and a long stretch of them reaches the encoder as one run. The rule
that makes this safe: a raw record decodes to exactly what its parsed record decodes to
(the same events, notes and error), whatever its bytes and its SSE event name.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx import codecs, ir
from chatx.codecs.anthropic_event.records import AnthropicOwn
from chatx.codecs.base import open_decoder
from chatx.codecs.template import RunDecoder
from chatx.containers.payload import parse
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.record import Record
from tests.builders.anthropic_event import (
    DELTA_KINDS,
    MESSAGE_STOP,
    block_delta,
    block_start,
    block_stop,
    message_delta,
    message_start,
)

SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=200)
EVENT = "content_block_delta"
# The delta type of each block type, and the field that holds its text.
KINDS = DELTA_KINDS


def delta(kind: str, text: Any, index: Any = 0) -> dict[str, Any]:
    _, dtype, field = KINDS[kind]
    return block_delta(index, {"type": dtype, field: text})


def sse(events: list[dict[str, Any]]) -> bytes:
    """SSE as the API writes it: compact JSON, an ``event:`` line naming the type."""
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )


def long_stream(kind: str, n: int, signature: bool = False) -> list[dict[str, Any]]:
    events = [message_start(), block_start(0, KINDS[kind][0])]
    events += [delta(kind, f'w{i} "q" é\\' if kind != "tool_use" else f'"a{i}",') for i in range(n)]
    if signature:
        events.append(block_delta(0, {"type": "signature_delta", "signature": "c2ln"}))
    return [*events, block_stop(0), message_delta(), MESSAGE_STOP]


def run_decoder(notes: Notes) -> Any:
    """The Anthropic decoder as the pipeline feeds it: with its run hook."""
    decoder = open_decoder(codecs.get("anthropic-event"), notes)
    assert type(decoder) is RunDecoder
    return decoder


def primed(kind: str = "text") -> tuple[RunDecoder, Notes]:
    """A decoder that has read a block's start and two deltas raw (the first made a
    template, which knew the second): it holds a template."""
    notes = Notes()
    decoder = run_decoder(notes)
    decoder.feed(Record(message_start(), "message_start", 1))
    decoder.feed(Record(block_start(0, KINDS[kind][0]), "content_block_start", 4))
    for line, text in ((7, "Hi"), (10, " there")):
        decoder.feed(Record(None, EVENT, line, raw=orjson.dumps(delta(kind, text))))
    assert decoder.hook.template is not None and decoder.hook.used == 1
    return decoder, notes


def outcome(decoder: RunDecoder, record: Record) -> Any:
    try:
        return decoder.feed(record)
    except InputError as exc:
        return ("InputError", exc.message)


def both(payload: bytes, event: str | None = EVENT, kind: str = "text") -> tuple[Any, Any, Any]:
    """What a primed decoder makes of ``payload`` raw and parsed, notes included."""
    results = []
    decoders = []
    for raw in (True, False):
        decoder, notes = primed(kind)
        record = Record(None, event, 13, raw=payload) if raw else parse(payload, event, 13)
        if record.error is not None:
            got = ("InputError", record.error)
        else:
            got = outcome(decoder, record)
        results.append((got, [(n.kind, n.message, n.line) for n in notes.items]))
        decoders.append(decoder)
    return results[0], results[1], decoders[0]


TRICKY = st.one_of(
    st.text(),
    st.text(alphabet='"\\/}]{[,: nu\x00\u2028é😀'),
    st.sampled_from(['"}}', '\\"', "\\", '"', '","x":"', ""]),
)


@SETTINGS
@given(text=TRICKY, kind=st.sampled_from(sorted(KINDS)))
def test_a_delta_with_any_text_decodes_raw_as_parsed(text, kind):
    raw, parsed, decoder = both(orjson.dumps(delta(kind, text)), kind=kind)
    assert raw == parsed
    if text:  # known by its bytes, not parsed
        assert decoder.hook.used == 2


@SETTINGS
@given(
    text=TRICKY,
    kind=st.sampled_from(sorted(KINDS)),
    event=st.sampled_from([EVENT, None, "content_block_start", "message_delta", "delta"]),
    edits=st.lists(
        st.tuples(st.integers(0, 120), st.integers(0, 3), st.binary(max_size=3)), max_size=4
    ),
)
def test_any_bytes_and_event_name_decode_as_parsed(text, kind, event, edits):
    """Edits of a matching payload (bytes cut, replaced or put in anywhere), under any
    SSE event name, give what the parsed record gives: events, notes or error."""
    payload = bytearray(orjson.dumps(delta(kind, text)))
    for at, cut, put in edits:
        at = min(at, len(payload))
        payload[at : at + cut] = put
    raw, parsed, _ = both(bytes(payload), event, kind)
    assert raw == parsed


def test_payloads_beside_the_template_keep_their_difference():
    """Values JSON.parse reads alike but anthropic output writes apart, fields beside
    the usual ones, other spacing: never known by the template, their residue kept."""
    base = orjson.dumps(delta("text", "a"))
    cases: dict[bytes, dict[str, Any]] = {
        base.replace(b'"index":0', b'"index":0.0'): {"index": 0.0},
        base.replace(b'"index":0', b'"index":false'): {"index": False},
        base[:-1] + b',"x":1}': {"x": 1},
        base.replace(b'"type":"content_block_delta",', b'"type": "content_block_delta", '): {},
    }
    for payload, extra in cases.items():
        raw, parsed, decoder = both(payload)
        assert raw == parsed and decoder.hook.used == 1
        assert raw[0] == [ir.TextDelta(0, "a", None, extra)]
    # A lone surrogate: read exactly, its half held for the next record.
    raw, parsed, decoder = both(base.replace(b'"a"', b'"\\ud800"'))
    assert raw == parsed and decoder.hook.used == 1 and decoder.carrying
    # An escape that spells the same string is the same value: the template knows it.
    raw, parsed, decoder = both(base.replace(b'"a"', b'"\\u0061"'))
    assert raw == parsed == ([ir.TextDelta(0, "a", None, {})], []) and decoder.hook.used == 2


def test_a_record_named_otherwise_is_parsed_and_said():
    raw, parsed, decoder = both(orjson.dumps(delta("text", "a")), "message_delta")
    assert raw == parsed and decoder.hook.used == 1
    assert raw[1] == [
        (
            "repaired",
            "SSE event name 'message_delta' differs from its type 'content_block_delta': "
            "written as the type",
            None,  # the pipeline gives notes their line
        )
    ]


def test_a_delta_that_makes_residue_or_a_note_makes_no_template():
    notes = Notes()
    decoder = run_decoder(notes)
    decoder.feed(Record(message_start(), "message_start", 1))
    decoder.feed(Record(block_start(0, KINDS["text"][0]), "content_block_start", 4))
    spaced = {**delta("text", "a"), "index": 0.0}
    decoder.feed(Record(None, EVENT, 7, raw=orjson.dumps(spaced)))
    assert decoder.hook.template is None
    decoder.feed(Record(None, "renamed", 10, raw=orjson.dumps(delta("text", "b"))))
    assert decoder.hook.template is None and len(notes.items) == 1
    decoder.feed(Record(None, "renamed", 13, raw=orjson.dumps(delta("text", "c"))))
    assert decoder.hook.template is not None  # said once already: nothing more to say


def test_a_run_stops_at_a_signature_a_stop_or_another_name():
    decoder, _ = primed("thinking")
    records = [
        Record(None, EVENT, 13 + 3 * n, raw=orjson.dumps(delta("thinking", t)))
        for n, t in enumerate(["a", 'b"', "c\\"])
    ]
    records.append(Record(None, None, 22, raw=orjson.dumps(delta("thinking", "d"))))
    signature = block_delta(0, {"type": "signature_delta", "signature": "c2ln"})
    records.append(Record(None, EVENT, 25, raw=orjson.dumps(signature)))
    run = decoder.run(records, 0)
    assert run is not None
    assert (run.texts, run.lines) == (["a", 'b"', "c\\", "d"], [13, 16, 19, 22])
    assert run.proto == ir.ReasoningDelta(0, "Hi", "text", 0, {})
    assert decoder.run(records, 4) is None
    assert decoder.feed(records[4]) == [ir.Meta(0, {}, None, None, AnthropicOwn(record=signature))]
    assert decoder.hook.template is None  # a signature closes the item: never a template
    other = Record(None, "ping", 28, raw=orjson.dumps(delta("thinking", "e")))
    assert decoder.run([other], 0) is None


def transcode(body: bytes, dst: str, step: int) -> tuple[bytes, list[Any], Transcoder]:
    notes = Notes()
    transcoder = Transcoder(dst, notes=notes)
    out = b"".join(transcoder.feed(body[i : i + step]) for i in range(0, len(body), step))
    out += transcoder.finish()
    return out, [(n.kind, n.message, n.line) for n in notes.summary()], transcoder


def test_a_long_stream_goes_to_the_encoder_in_runs_and_converts_as_parsed():
    """Read whole (every record parsed before the format is known: no template) and in
    64 KiB blocks (raw, in runs): the same bytes and notes in every direction, and
    anthropic output gives back the same JSON values."""
    for kind in sorted(KINDS):
        body = sse(long_stream(kind, 3000, signature=kind == "thinking"))
        for dst in ("anthropic-event", "chat-chunk", "responses-event", "llama-stack-event"):
            whole, whole_notes, plain = transcode(body, dst, len(body))
            assert plain.conversion is not None
            decoder: Any = plain.conversion.decoder
            assert decoder.hook.used == 0
            runs: list[int] = []
            notes = Notes()
            transcoder = Transcoder(dst, notes=notes)
            out = transcoder.feed(body[:300])  # the codecs are open by then
            assert transcoder.conversion is not None
            encoder: Any = transcoder.conversion.encoder
            feed_run = encoder.feed_run

            def counted(run: Any, feed_run: Any = feed_run, runs: list[int] = runs) -> list[Any]:
                runs.append(len(run.texts))
                return feed_run(run)

            encoder.feed_run = counted
            step = 1 << 16
            rest = body[300:]
            out += b"".join(transcoder.feed(rest[i : i + step]) for i in range(0, len(rest), step))
            out += transcoder.finish()
            assert out == whole, (kind, dst)
            assert [(n.kind, n.message, n.line) for n in notes.summary()] == whole_notes
            assert sum(runs) > 2900 and max(runs) > 200
            decoder = transcoder.conversion.decoder
            assert decoder.hook.used == sum(runs)
            if dst == "anthropic-event":
                assert _values(out) == _values(body)


def _values(body: bytes) -> list[Any]:
    return [orjson.loads(block.split(b"data: ", 1)[1]) for block in body.split(b"\n\n") if block]


def _damage_base() -> bytes:
    events = [message_start(), block_start(0, KINDS["thinking"][0])]
    events += [delta("thinking", f"t{n} ") for n in range(20)]
    events += [block_delta(0, {"type": "signature_delta", "signature": "c2ln"}), block_stop(0)]
    events.append(block_start(1, KINDS["text"][0]))
    events += [delta("text", f"w{n} ", 1) for n in range(30)]
    events.append(block_stop(1))
    events.append(block_start(2, KINDS["tool_use"][0]))
    events += [delta("tool_use", f'"a{n}",', 2) for n in range(20)]
    events += [block_stop(2), message_delta("tool_use"), MESSAGE_STOP]
    return sse(events)


DAMAGE_BASE = _damage_base()


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=150)
@given(
    dst=st.sampled_from(["anthropic-event", "chat-chunk", "responses-event"]),
    edits=st.lists(
        st.tuples(st.integers(0, len(DAMAGE_BASE)), st.integers(0, 4), st.binary(max_size=4)),
        max_size=4,
    ),
)
def test_damaged_streams_convert_the_same_raw_or_parsed(dst, edits):
    """A long stream of every templated kind with bytes cut or put in anywhere: read
    whole (parsed) and in two blocks (the second's records raw, in runs broken where the
    damage is) give the same bytes, notes and errors."""
    body = bytearray(DAMAGE_BASE)
    for at, cut, put in edits:
        body[at : at + cut] = put
    results = []
    for blocks in ([bytes(body)], [bytes(body[:700]), bytes(body[700:])]):
        notes = Notes()
        transcoder = Transcoder(dst, notes=notes, src="anthropic-event")
        try:
            out = b"".join(transcoder.feed(block) for block in blocks) + transcoder.finish()
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            out = repr(exc).encode()
        results.append((out, sorted((n.line or 0, n.kind, n.message) for n in notes.items)))
    assert results[0] == results[1]

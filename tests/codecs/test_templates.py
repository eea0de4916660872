"""Runs: payloads a codec's run hook knows by their bytes (codecs/template.py and the
hooks of chat, Responses and Llama Stack).

A raw payload that repeats the last one but for a few values is decoded without
parsing it. These tests hold it to the one rule that makes that safe: a raw record
decodes to exactly what its parsed record decodes to (the same events, the same notes,
the same error), whatever its bytes.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx import codecs, ir
from chatx.codecs.base import open_decoder
from chatx.codecs.byte_template import NUMBER, ByteTemplate, hole
from chatx.codecs.chat_chunk.run_hook import chunk_template
from chatx.codecs.template import RunDecoder
from chatx.containers.payload import parse
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.record import Record
from tests.paths import ROOT
from tests.streams import dumped, responses_delta

ENVELOPE = {
    "id": "chatcmpl-t",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "gpt-4o",
    "service_tier": "default",
    "system_fingerprint": "fp_1",
}
SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=300)


def run_decoder(name: str, notes: Notes) -> Any:
    """The decoder of format ``name`` as the pipeline feeds it: with its run hook."""
    decoder = open_decoder(codecs.get(name), notes)
    assert type(decoder) is RunDecoder
    return decoder


def text_chunk(text: Any, obfuscation: Any = "ab", **choice: Any) -> dict[str, Any]:
    body = {"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": None}
    body.update(choice)
    data = {**ENVELOPE, "choices": [body]}
    if obfuscation is not None:
        data["obfuscation"] = obfuscation
    return data


def role_chunk() -> dict[str, Any]:
    return text_chunk("", None, delta={"role": "assistant", "content": ""})


def primed() -> tuple[RunDecoder, Notes]:
    """A decoder that has read the role chunk and two text chunks raw (the first opens
    the message, the second a plain chunk, which makes it): it holds a template."""
    notes = Notes()
    decoder = run_decoder("chat-chunk", notes)
    decoder.feed(Record(role_chunk(), line=1))
    decoder.feed(Record(raw=orjson.dumps(text_chunk("Hi")), line=3))
    decoder.feed(Record(raw=orjson.dumps(text_chunk(" there")), line=5))
    assert decoder.hook.template is not None
    return decoder, notes


def outcome(decoder: RunDecoder, record: Record) -> Any:
    try:
        return decoder.feed(record)
    except InputError as exc:
        return ("InputError", exc.message)


def both(payload: bytes) -> tuple[Any, Any, RunDecoder]:
    """What a primed decoder makes of ``payload`` raw, and of it parsed by the reader."""
    raw_decoder, raw_notes = primed()
    parsed_decoder, parsed_notes = primed()
    record = parse(payload, None, 7)
    if record.error is not None:
        parsed = ("InputError", record.error)
    else:
        parsed = outcome(parsed_decoder, record)
    raw = outcome(raw_decoder, Record(raw=payload, line=7))
    assert [(n.kind, n.message) for n in raw_notes.items] == [
        (n.kind, n.message) for n in parsed_notes.items
    ]
    return raw, parsed, raw_decoder


TRICKY = st.one_of(
    st.text(),
    st.text(alphabet='"\\/}]{[,: nu\x00\u2028é😀'),
    st.sampled_from(['"},"logprobs":null', '\\"', "\\", '"', '","obfuscation":"x', "\ud800"[:0]]),
)


@SETTINGS
@given(text=TRICKY, obfuscation=st.one_of(st.none(), TRICKY, st.integers(-(2**63), 2**63 - 1)))
def test_a_chunk_with_other_strings_decodes_as_parsing_it_would(text, obfuscation):
    raw, parsed, decoder = both(orjson.dumps(text_chunk(text, obfuscation)))
    assert raw == parsed


@SETTINGS
@given(text=st.text(min_size=1))
def test_the_template_is_what_reads_them(text):
    raw, parsed, decoder = both(orjson.dumps(text_chunk(text, "xyz")))
    assert (
        raw
        == parsed
        == [
            ir.Meta(None, {"service_tier": "default", "system_fingerprint": "fp_1"}),
            ir.TextDelta(0, text, None, {}, "xyz"),
            ir.Meta(0, {"logprobs": None, "finish_reason": None}),
        ]
    )
    assert decoder.hook.used == 1  # not parsed


@SETTINGS
@given(
    text=TRICKY,
    edits=st.lists(
        st.tuples(st.integers(0, 400), st.integers(0, 3), st.binary(max_size=3)), max_size=4
    ),
)
def test_any_bytes_decode_as_parsing_them_would(text, edits):
    """Edits of a matching payload (bytes cut, replaced or put in anywhere, the holes'
    edges included) give what the parsed record gives: events, notes or error."""
    payload = bytearray(orjson.dumps(text_chunk(text, "q")))
    for at, cut, put in edits:
        at = min(at, len(payload))
        payload[at : at + cut] = put
    raw, parsed, _ = both(bytes(payload))
    assert raw == parsed


@pytest.mark.parametrize(
    "payload",
    [
        # Strings that spell the bytes after the hole, escaped as JSON must have them.
        orjson.dumps(text_chunk('x"},"logprobs":null,"finish_reason":null}],"obfuscation":"')),
        # The hole holds two strings, or a string and more.
        orjson.dumps(text_chunk("a")).replace(b'"a"', b'"a","b"'),
        orjson.dumps(text_chunk("a")).replace(b'"a"', b'"a" '),
        orjson.dumps(text_chunk("a")).replace(b'"a"', b"null"),
        orjson.dumps(text_chunk("a")).replace(b'"a"', b'""'),
        orjson.dumps(text_chunk("a")).replace(b'"ab"', b"7"),
        orjson.dumps(text_chunk("a")).replace(b'"ab"', b'"\\ud800"'),
        # Another choice, a finish, another envelope: the template does not apply.
        orjson.dumps(text_chunk("a", index=1)),
        orjson.dumps(text_chunk("a", finish_reason="stop")),
        orjson.dumps({**text_chunk("a"), "created": 1700000001}),
        b"[DONE]",
        b"{not json",
    ],
)
def test_payloads_beside_the_template_decode_as_parsed(payload):
    raw, parsed, _ = both(payload)
    assert raw == parsed


def test_json_written_with_other_spacing_is_parsed_not_matched():
    payload = json.dumps(text_chunk("a b")).encode()  # ", " and ": " separators
    raw, parsed, decoder = both(payload)
    assert raw == parsed and decoder.hook.used == 0


def test_no_template_for_a_chunk_whose_residue_is_its_own():
    notes = Notes()
    decoder = run_decoder("chat-chunk", notes)
    decoder.feed(Record(role_chunk(), line=1))
    nested = {**text_chunk("Hi"), "x_meta": {"a": 1}}  # nested residue is never shared
    decoder.feed(Record(raw=orjson.dumps(nested), line=3))
    decoder.feed(Record(raw=orjson.dumps(nested), line=5))
    assert decoder.hook.template is None
    logprobs = text_chunk("Hi", logprobs={"content": [], "x": 1})
    assert chunk_template(logprobs, decoder.feed(Record(logprobs, line=5))) is None


def test_a_stream_whose_chunks_never_repeat_stops_making_templates():
    notes = Notes()
    decoder = run_decoder("chat-chunk", notes)
    decoder.feed(Record(role_chunk(), line=1))
    for n in range(200):
        chunk = {**text_chunk("Hi"), "created": 1700000000 + n}
        decoder.feed(Record(raw=orjson.dumps(chunk), line=3 + n))
    assert decoder.hook.used == 0 and decoder.hook.made <= 17


def test_converting_raw_records_gives_the_bytes_parsed_records_give():
    """The pipeline hands chat decoders raw records once the format is known: feeding a
    long stream in small pieces (raw) and whole (parsed before detection) agree."""
    chunks = [role_chunk()] + [text_chunk(f'w{i} "q" \\ é', f"o{i}") for i in range(300)]
    chunks.append(text_chunk("", None, delta={}, finish_reason="stop"))
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    for dst in ("chat-chunk", "responses-event", "llama-stack-event"):
        whole = Transcoder(dst)
        expected = whole.feed(body) + whole.finish()
        assert whole.decoder.hook.used == 0
        pieces = Transcoder(dst)
        got = b"".join(pieces.feed(body[i : i + 512]) for i in range(0, len(body), 512))
        got += pieces.finish()
        assert got == expected
        assert pieces.decoder.hook.used > 250
        if dst == "chat-chunk":  # A→A: the same values
            assert values(got) == values(body)


def values(body: bytes) -> list[Any]:
    return [orjson.loads(b[6:]) if b[6:7] == b"{" else b for b in body.split(b"\n\n")]


# -- runs: many such records at once ----------------------------------------------------


def raw_records(texts: list[str], first_line: int = 7) -> list[Record]:
    return [
        Record(raw=orjson.dumps(text_chunk(text, f"o{n}")), line=first_line + 2 * n)
        for n, text in enumerate(texts)
    ]


def test_a_run_is_the_records_the_template_knows_and_stops_at_the_first_it_does_not():
    decoder, _ = primed()
    records = raw_records(["a", 'b"', "c\\"])
    records.append(Record(raw=orjson.dumps(text_chunk("d", finish_reason="stop")), line=13))
    records += raw_records(["e"], 15)
    run = decoder.run(records, 0)
    assert (run.texts, run.obfuscations, run.lines) == (
        ["a", 'b"', "c\\"],
        ["o0", "o1", "o2"],
        [7, 9, 11],
    )
    assert decoder.run(records, 3) is None  # the finish chunk: decoded the long way
    assert run.batches() == [primed()[0].feed(record) for record in records[:3]]


@pytest.mark.parametrize(
    "dst", ["responses-event", "chat-chunk", "llama-stack-event", "anthropic-event", "gemini-event"]
)
@pytest.mark.parametrize("source", ["chat-chunk", "responses-event"])
@pytest.mark.parametrize("field", ["content", "reasoning_content", "reasoning", "tool_calls"])
@pytest.mark.parametrize("reasoning", ["summary", "text"])
def test_an_encoder_writes_a_run_as_it_writes_its_batches(dst, source, field, reasoning):
    """An encoder's ``feed_run`` (its own loop, or the base's replay of the batches):
    the same payloads and the same lost fields as the run's batches fed one by one, for
    runs of message text, chat reasoning (into Responses as a summary or as reasoning
    text) and a tool call's arguments."""
    from chatx import codecs
    from chatx.codecs.base import EncodeOptions

    def delta(text: str) -> dict[str, Any]:
        if field != "tool_calls":
            return {field: text}
        return {"tool_calls": [{"index": 0, "function": {"arguments": text}}]}

    def chunk_of(text: str, n: int) -> Record:
        return Record(raw=orjson.dumps(text_chunk(text, f"o{n}", delta=delta(text))), line=n)

    decoder = run_decoder("chat-chunk", Notes())
    head = [decoder.feed(Record(role_chunk(), line=1))]
    if field == "tool_calls":
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}
        head.append(decoder.feed(Record(text_chunk("", delta={"tool_calls": [call]}), line=2)))
    head += [decoder.feed(chunk_of(text, 3 + n)) for n, text in enumerate(("x", "y"))]
    run = decoder.run([chunk_of(text, 9 + n) for n, text in enumerate("abc")], 0)
    assert run is not None and run.texts == ["a", "b", "c"]
    # The delta of the chunk the template was made of: the first plain chunk,
    # the second ("y") where the first ("x") opened the item.
    assert (
        run.proto
        == {
            "content": ir.TextDelta(0, "y", None, {}, "o4"),
            "reasoning_content": ir.ReasoningDelta(0, "y", "text", 0, {}, field, "o4"),
            "reasoning": ir.ReasoningDelta(0, "y", "text", 0, {}, field, "o4"),
            "tool_calls": ir.ToolArgsDelta(0, 0, "x", {}, "o3"),
        }[field]
    )
    results = []
    for whole in (True, False):
        notes = Notes()
        options = EncodeOptions(source_format=source, reasoning=reasoning)
        encoder = codecs.get(dst).encoder(notes, options)
        out = []
        for batch in head:
            out += encoder.feed(batch)
        if whole:
            out += encoder.feed_run(run)
            notes.line = run.lines[-1]  # as the pipeline leaves it after a run
        else:
            for line, batch in zip(run.lines, run.batches(), strict=True):
                notes.line = line  # as the pipeline says each record's line
                out += encoder.feed(batch)
        out += encoder.feed([ir.Finish(0, "stop"), ir.StreamEnd()]) + encoder.finish()
        written = dumped(out)  # as the writers write them: a run's chunks may be bytes
        results.append((written, sorted(notes.lost_fields.items()), notes.items))
    assert results[0] == results[1]


@SETTINGS
@given(text=TRICKY, field=st.sampled_from(["reasoning_content", "reasoning", "refusal"]))
def test_a_reasoning_chunk_decodes_raw_as_parsed(text, field):
    def primed_on_reasoning() -> tuple[RunDecoder, Notes]:
        notes = Notes()
        decoder = run_decoder("chat-chunk", notes)
        decoder.feed(Record(role_chunk(), line=1))
        for line, piece in ((3, "Let"), (5, " me")):
            chunk = text_chunk(piece, delta={"reasoning_content": piece})
            decoder.feed(Record(raw=orjson.dumps(chunk), line=line))
        return decoder, notes

    payload = orjson.dumps(text_chunk(text, delta={field: text}))
    results = []
    for raw in (True, False):
        decoder, notes = primed_on_reasoning()
        record = Record(raw=payload, line=7) if raw else parse(payload, None, 7)
        results.append((outcome(decoder, record), [(n.kind, n.message) for n in notes.items]))
    assert results[0] == results[1]


# -- the byte template itself ---------------------------------------------------------

DELTA = {
    "type": "response.output_text.delta",
    "sequence_number": NUMBER,
    "item_id": "msg_1",
    "output_index": 0,
    "content_index": 0,
    "delta": hole("text"),
    "logprobs": [],
    "obfuscation": hole("obfuscation"),
}
STAND_INS = [hole("obfuscation"), NUMBER, hole("text")]  # not in byte order


def filled(number: int, text: str, obfuscation: str) -> dict[str, Any]:
    return {**DELTA, "sequence_number": number, "delta": text, "obfuscation": obfuscation}


@SETTINGS
@given(number=st.integers(0, 2**40), text=TRICKY, obfuscation=TRICKY)
def test_a_template_gives_back_the_values_in_its_holes(number, text, obfuscation):
    template = ByteTemplate.make(DELTA, STAND_INS)
    raw = orjson.dumps(filled(number, text, obfuscation))
    found = template.match(raw, number)
    assert found == [number, text, obfuscation]  # in byte order
    assert [found[at] for at in template.at] == [obfuscation, number, text]
    assert template.match(raw, number + 1) is None  # not the number expected
    assert template.match(raw, None) is None


@SETTINGS
@given(
    number=st.integers(0, 10**6),
    text=TRICKY,
    edits=st.lists(
        st.tuples(st.integers(0, 300), st.integers(0, 3), st.binary(max_size=3)), max_size=4
    ),
)
def test_a_match_is_what_parsing_gives(number, text, edits):
    """Whatever the bytes, a match means the payload parses to the template's payload
    with the values found."""
    template = ByteTemplate.make(DELTA, STAND_INS)
    raw = bytearray(orjson.dumps(filled(number, text, "ob")))
    for at, cut, put in edits:
        raw[at : at + cut] = put
    found = template.match(bytes(raw), number)
    if found is not None:
        assert orjson.loads(bytes(raw)) == filled(*found)


def test_no_template_when_a_stand_in_is_not_there_once_or_orjson_cannot_write_it():
    assert ByteTemplate.make({"a": hole("x")}, [hole("x"), hole("y")]) is None
    assert ByteTemplate.make({"a": hole("x"), "b": hole("x")}, [hole("x")]) is None
    assert ByteTemplate.make({"a": hole("x"), "n": 1 << 70}, [hole("x")]) is None


# -- Responses deltas ------------------------------------------------------------------

RESPONSES_TEXT = (ROOT / "fixtures/responses-event/text.sse").read_bytes()


def responses_primed() -> tuple[RunDecoder, Notes, int]:
    """A decoder that has read a Responses stream up to its second text delta, the
    second raw: it holds a delta template. Returns the next sequence number too."""
    from chatx.containers.sse import SSEReader

    records = SSEReader().feed(RESPONSES_TEXT)
    deltas = [n for n, r in enumerate(records) if r.event == "response.output_text.delta"]
    notes = Notes()
    decoder = run_decoder("responses-event", notes)
    for record in records[: deltas[1]]:
        decoder.feed(record)
    second = records[deltas[1]]
    decoder.feed(Record(raw=orjson.dumps(second.data), line=second.line))
    assert decoder.hook.template is not None
    return decoder, notes, second.data["sequence_number"] + 1


def responses_with(texts: list[str], obfuscate: bool = True) -> bytes:
    """The fixture's Responses stream with more text deltas (one per text) before its
    ``output_text.done``; chatx renumbers them, the same way however it is read."""
    head, done = RESPONSES_TEXT.split(b"event: response.output_text.done")
    deltas = b"".join(
        b"event: response.output_text.delta\ndata: "
        + responses_delta(99, text, **({"obfuscation": f"o{n}"} if obfuscate else {}))
        + b"\n\n"
        for n, text in enumerate(texts)
    )
    return head + deltas + b"event: response.output_text.done" + done


def responses_both(payload: bytes) -> tuple[Any, Any, RunDecoder]:
    raw_decoder, raw_notes, _ = responses_primed()
    parsed_decoder, parsed_notes, _ = responses_primed()
    record = parse(payload, "response.output_text.delta", 40)
    parsed = ("InputError", record.error) if record.error else outcome(parsed_decoder, record)
    raw = outcome(raw_decoder, Record(raw=payload, event="response.output_text.delta", line=40))
    assert [(n.kind, n.message) for n in raw_notes.items] == [
        (n.kind, n.message) for n in parsed_notes.items
    ]
    # What the decoder kept of the part's text is the same too.
    assert raw_decoder.hook.read.items[0].parts[("output_text", 0)].texts.text() == (
        parsed_decoder.hook.read.items[0].parts[("output_text", 0)].texts.text()
    )
    return raw, parsed, raw_decoder


@SETTINGS
@given(
    text=TRICKY,
    seq=st.integers(-1, 12),
    edits=st.lists(
        st.tuples(st.integers(0, 200), st.integers(0, 3), st.binary(max_size=3)), max_size=3
    ),
)
def test_a_responses_delta_decodes_raw_as_parsed(text, seq, edits):
    _, _, expected = responses_primed()
    payload = bytearray(responses_delta(expected + seq % 3 - 1 if seq >= 0 else expected, text))
    for at, cut, put in edits:
        payload[at : at + cut] = put
    raw, parsed, _ = responses_both(bytes(payload))
    assert raw == parsed


def test_the_delta_template_reads_deltas_in_sequence_as_one_run():
    decoder, _, seq = responses_primed()
    records = [
        Record(raw=responses_delta(seq + n, text), line=50 + n)
        for n, text in enumerate(["a", 'q"', ""])
    ]
    records.append(Record(raw=responses_delta(seq + 5, "skipped a number"), line=60))
    run = decoder.run(records, 0)
    assert (run.texts, run.lines) == (["a", 'q"'], [50, 51])
    assert decoder.run(records, 2) is None  # no text: the long way, which says the same
    assert decoder.feed(records[2]) == [ir.TextDelta(0, "", None, {}, None)]
    assert decoder.run(records, 3) is None and decoder.hook.read.expected_seq == seq + 3
    assert decoder.hook.used == 2  # these two: the delta the template was made of was parsed


def test_converting_raw_responses_records_gives_the_bytes_parsed_records_give():
    body = responses_with([f'w{n} "q" \\ \u00e9' for n in range(200)])
    for dst in ("chat-chunk", "responses-event", "llama-stack-event"):
        notes_whole, notes_pieces = Notes(), Notes()
        whole = Transcoder(dst, notes=notes_whole)
        expected = whole.feed(body) + whole.finish()
        pieces = Transcoder(dst, notes=notes_pieces)
        got = b"".join(pieces.feed(body[i : i + 700]) for i in range(0, len(body), 700))
        got += pieces.finish()
        assert got == expected
        assert [(n.kind, n.message, n.line) for n in notes_pieces.items] == [
            (n.kind, n.message, n.line) for n in notes_whole.items
        ]


# -- Llama Stack text --------------------------------------------------------------------


def llama_text(text: Any, **event: Any) -> bytes:
    body = {
        "event_type": "progress",
        "delta": {"type": "text", "text": text},
        "logprobs": None,
        "stop_reason": None,
        **event,
    }
    return orjson.dumps({"event": body, "metrics": None})


def llama_primed() -> tuple[RunDecoder, Notes]:
    """A decoder past the start and two raw text events: it holds a text template."""
    notes = Notes()
    decoder = run_decoder("llama-stack-event", notes)
    start = {"event": {"event_type": "start", "delta": {"type": "text", "text": ""}}}
    decoder.feed(Record(start, line=1))
    for line, text in ((2, "Paris"), (3, " is")):
        decoder.feed(Record(raw=llama_text(text), line=line))
    assert decoder.hook.template is not None
    return decoder, notes


@SETTINGS
@given(
    text=TRICKY,
    stop=st.sampled_from([None, "end_of_turn"]),
    edits=st.lists(
        st.tuples(st.integers(0, 150), st.integers(0, 3), st.binary(max_size=3)), max_size=3
    ),
)
def test_a_llama_text_event_decodes_raw_as_parsed(text, stop, edits):
    payload = bytearray(llama_text(text, stop_reason=stop))
    for at, cut, put in edits:
        payload[at : at + cut] = put
    results = []
    for raw in (True, False):
        decoder, notes = llama_primed()
        record = Record(raw=bytes(payload), line=9)
        if not raw:
            record = parse(bytes(payload), None, 9)
        got = ("InputError", record.error) if record.error else outcome(decoder, record)
        results.append((got, [(n.kind, n.message) for n in notes.items], decoder.hook.read.line))
    assert results[0] == results[1]


def test_llama_text_after_the_template_a_tool_call_or_the_end_is_not_known():
    decoder, _ = llama_primed()
    records = [Record(raw=llama_text(t), line=n) for n, t in enumerate(["a", "b", ""], 4)]
    run = decoder.run(records, 0)
    assert (run.texts, run.lines, decoder.hook.read.line) == (["a", "b"], [4, 5], 5)
    assert decoder.run(records, 2) is None  # empty text: a record of its own kind


@SETTINGS
@given(
    text=TRICKY,
    index=st.sampled_from([0, 1]),
    edits=st.lists(
        st.tuples(st.integers(0, 400), st.integers(0, 3), st.binary(max_size=3)), max_size=3
    ),
)
def test_a_tool_call_arguments_chunk_decodes_raw_as_parsed(text, index, edits):
    def args(piece: str, call: int = 0) -> bytes:
        entry = {"index": call, "function": {"arguments": piece}}
        return orjson.dumps(text_chunk(piece, delta={"tool_calls": [entry]}))

    payload = bytearray(args(text, index))
    for at, cut, put in edits:
        payload[at : at + cut] = put
    results = []
    for raw in (True, False):
        notes = Notes()
        decoder = run_decoder("chat-chunk", notes)
        decoder.feed(Record(role_chunk(), line=1))
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}
        decoder.feed(Record(text_chunk("", delta={"tool_calls": [call]}), line=2))
        for line, piece in ((3, '{"a"'), (5, ": 1")):
            decoder.feed(Record(raw=args(piece), line=line))
        assert decoder.hook.template is not None
        record = Record(raw=bytes(payload), line=7)
        if not raw:
            record = parse(bytes(payload), None, 7)
        got = ("InputError", record.error) if record.error else outcome(decoder, record)
        results.append((got, [(n.kind, n.message) for n in notes.items]))
    assert results[0] == results[1]


def test_choosing_a_choice_gives_the_same_bytes_raw_or_parsed():
    """--choice renumbers the chosen lane's events to 0: the events a template gives
    afterwards are the template's own, not the renumbered ones."""
    chunks = [role_chunk(), text_chunk("", None, index=1, delta={"role": "assistant"})]
    chunks += [text_chunk(f"a{n}", f"o{n}") for n in range(5)]
    chunks += [text_chunk(f"b{n}", f"p{n}", index=1) for n in range(40)]
    chunks.append(text_chunk("", None, delta={}, finish_reason="stop"))
    chunks.append(text_chunk("", None, index=1, delta={}, finish_reason="stop"))
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    for choice in (0, 1):
        whole = Transcoder("responses-event", choice=choice)
        expected = whole.feed(body) + whole.finish()
        pieces = Transcoder("responses-event", choice=choice)
        got = b"".join(pieces.feed(body[i : i + 300]) for i in range(0, len(body), 300))
        assert got + pieces.finish() == expected
        assert pieces.decoder.hook.used > 20


def _long_streams() -> dict[str, bytes]:
    chat = [role_chunk()] + [text_chunk(f"w{n} ", f"o{n}") for n in range(60)]
    chat.append(text_chunk("", None, delta={}, finish_reason="stop"))
    chat_body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chat)
    llama = [{"event": {"event_type": "start", "delta": {"type": "text", "text": ""}}}]
    llama_body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in llama)
    llama_body += b"".join(b"data: " + llama_text(f"w{n} ") + b"\n\n" for n in range(60))
    return {
        "chat": chat_body + b"data: [DONE]\n\n",
        "llama": llama_body,
        "responses": responses_with([f"w{n} " for n in range(60)]),
    }


LONG = _long_streams()


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=150)
@given(
    source=st.sampled_from(sorted(LONG)),
    dst=st.sampled_from(["chat-chunk", "responses-event", "llama-stack-event"]),
    edits=st.lists(
        st.tuples(st.integers(0, 9000), st.integers(0, 4), st.binary(max_size=4)), max_size=4
    ),
)
def test_long_damaged_streams_convert_the_same_raw_or_parsed(source, dst, edits):
    """A long stream with bytes cut or put in anywhere: read whole (every record parsed
    before the format is known) and read in two blocks (the second block's records raw,
    in runs broken where the damage is) give the same bytes, notes and errors."""
    body = bytearray(LONG[source])
    for at, cut, put in edits:
        body[at : at + cut] = put
    results = []
    for blocks in ([bytes(body)], [bytes(body[:700]), bytes(body[700:])]):
        notes = Notes()
        transcoder = Transcoder(dst, notes=notes)
        try:
            out = b"".join(transcoder.feed(block) for block in blocks) + transcoder.finish()
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            out = repr(exc).encode()
        # Sorted: a reader says an ignored line when it reads it, and read whole, every
        # line is read before any record is decoded.
        results.append((out, sorted((n.line or 0, n.kind, n.message) for n in notes.items)))
    assert results[0] == results[1]


# -- long payloads parsed around the texts a decoder holds -------------------------------

LONG_TEXT = st.text(alphabet='ab "\\é😀\n}{,:', min_size=1, max_size=30)


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=500)
@given(
    text=LONG_TEXT,
    other=st.text(alphabet='ab "\\é😀', max_size=10),
    shape=st.sampled_from(["value", "twice", "key", "inside", "list", "absent"]),
    edits=st.lists(
        st.tuples(st.integers(0, 120), st.integers(0, 3), st.binary(max_size=3)), max_size=2
    ),
)
def test_a_payload_parsed_around_a_text_is_the_payload(text, other, shape, edits):
    """Wherever the text stands (a value, a key, inside another string), whatever the
    bytes around it: the record is the one parsing gives, or None (parsed as it is)."""
    payload: Any = {
        "value": {"type": "x", "text": text, "n": [1, other]},
        "twice": {"a": [text, {"b": text}], "c": other},
        "key": {text: 1, "t": text},
        "inside": {"t": other + text + other, "u": text},
        "list": [text, other, [text]],
        "absent": {"t": other},
    }[shape]
    raw = bytearray(orjson.dumps(payload))
    for at, cut, put in edits:
        raw[at : at + cut] = put
    from chatx.codecs.around import parsed_around

    got = parsed_around(Record(raw=bytes(raw), line=3), [text])
    if got is not None:
        assert got.error is None and got.data == orjson.loads(bytes(raw))
        if shape in ("value", "twice", "list") and not edits:
            assert any(v is text for v in _strings(got.data))  # the very string held


def _strings(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node]


def test_a_responses_stream_with_a_long_text_converts_the_same_raw_or_parsed(monkeypatch):
    """Done and terminal events over 1 MiB are parsed around the text the decoder holds."""
    from chatx.codecs.around import parsed_around
    from chatx.codecs.responses_event import run_hook

    around: list[bool] = []

    def counted(record: Record, texts: list[str]) -> Record | None:
        got = parsed_around(record, texts)
        around.append(got is not None)
        return got

    monkeypatch.setattr(run_hook, "parsed_around", counted)
    words = [f'w{n} é😀 "q" ' for n in range(60000)]
    text = "Hello! How can I help?" + "".join(words)  # the fixture's deltas, then these
    body = responses_with(words, obfuscate=False).replace(
        b'"Hello! How can I help?"', orjson.dumps(text)
    )
    assert body.count(orjson.dumps(text)) == 4 and len(orjson.dumps(text)) > 1 << 20
    for dst in ("chat-chunk", "responses-event"):
        whole_notes, raw_notes = Notes(), Notes()
        whole = Transcoder(dst, notes=whole_notes)
        expected = whole.feed(body) + whole.finish()
        pieces = Transcoder(dst, notes=raw_notes)
        got = b"".join(pieces.feed(body[i : i + 65536]) for i in range(0, len(body), 65536))
        assert got + pieces.finish() == expected
        assert [(n.kind, n.message) for n in raw_notes.items] == [
            (n.kind, n.message) for n in whole_notes.items
        ]
    # Read in blocks, the four events that repeat the text were parsed around it.
    assert around == [True] * 8


# -- runs read a block of records at once (template.Block) ----------------------------


def template_of(decoder: RunDecoder) -> ByteTemplate:
    return decoder.hook.template.bytes


def each_and_block(records: list[Record]) -> tuple[Any, Any]:
    """A run read record by record, and read by the block reader (what runs use)."""
    template = template_of(primed()[0])
    assert template.block is not None
    return template.read_each(records, 0, None, 0, 1), template.read(records, 0, 0, 1)


BLOCK_TEXTS = st.one_of(
    TRICKY,
    st.sampled_from(["a\\", "\\\\", 'q"', "é", "😀", "\x7f", "\u2028", "\x03", "\x04", "x\n"]),
)


@SETTINGS
@given(
    texts=st.lists(BLOCK_TEXTS, min_size=1, max_size=40),
    edits=st.lists(
        st.tuples(
            st.integers(0, 39), st.integers(0, 400), st.integers(0, 3), st.binary(max_size=3)
        ),
        max_size=3,
    ),
)
def test_a_block_of_records_reads_as_each_record_would(texts, edits):
    """Many records read at once give the texts, obfuscations and lines that reading them
    one by one gives, and stop where it stops: whatever the texts hold (quotes,
    backslashes, a backslash last, non-ASCII, control bytes) and whatever bytes were
    cut, replaced or put in any record."""
    records = raw_records(texts)
    for k, at, cut, put in edits:
        if k < len(records):
            payload = bytearray(records[k].raw)
            at = min(at, len(payload))
            payload[at : at + cut] = put
            records[k] = Record(raw=bytes(payload), line=records[k].line)
    each, block = each_and_block(records)
    assert block == each


SEPARATOR = b'"},"logprobs":null,"finish_reason":null}],"obfuscation":"'
assert SEPARATOR in orjson.dumps(text_chunk("d"))


@pytest.mark.parametrize("at", [0, 1, 7, 8, 9, 23, 24, 25, 100, 299])
@pytest.mark.parametrize(
    ("other", "known"),
    [
        (orjson.dumps(text_chunk("d", finish_reason="stop")), None),
        (orjson.dumps(text_chunk("")), None),  # an empty text: no delta
        # Escaped otherwise than orjson writes: still the template's, in the run.
        (orjson.dumps(text_chunk("d")).replace(b'"d"', b'"\\u0064"'), "d"),
        (orjson.dumps(text_chunk("d")).replace(b'"d"', b'"d\\/"'), "d/"),
        (orjson.dumps(text_chunk("d")).replace(b'"d"', b'"\\ud800"'), None),  # lone surrogate
        (orjson.dumps(text_chunk("d")) + b"\n" + orjson.dumps(text_chunk("e")), None),
        (orjson.dumps(text_chunk("d")).replace(b'"d"', b'"d\x03"'), None),
        (orjson.dumps(text_chunk("d")).replace(b'"ab"', b'"\x04ab"'), None),
        # The marker byte of the bytes between the two holes, standing in their place
        # (no JSON: a raw control character in one string).
        (orjson.dumps(text_chunk("d")).replace(SEPARATOR, b"\x04"), None),
        (None, None),  # a record the reader parsed
    ],
)
def test_a_run_read_by_blocks_stops_where_a_record_differs(at, other, known):
    texts = [f'w{n} "q" \\ é\t' if n % 3 else f"w{n}" for n in range(300)]
    records = raw_records(texts)
    if other is None:
        records[at] = Record(text_chunk("d"), line=records[at].line)
    else:
        records[at] = Record(raw=other, line=records[at].line)
    each, block = each_and_block(records)
    assert block == each
    if known is None:
        assert len(block[0]) == at
    else:
        assert len(block[0]) == 300 and block[0][at] == known


def test_a_long_run_of_plain_records_is_read_by_blocks(monkeypatch):
    """The block reader takes a run of ordinary records (escaped quotes, backslashes,
    tabs, non-ASCII) whole: record by record reading is not what runs use, but for the
    first record (where runs are short, most calls find none: one match() tells)."""
    template = template_of(primed()[0])
    calls = []
    read_each = ByteTemplate.read_each

    def counted(*args: Any) -> Any:
        calls.append(args)
        return read_each(*args)

    monkeypatch.setattr(ByteTemplate, "read_each", counted)
    records = raw_records([f'w{n} "q" \\ é\t😀' for n in range(1000)])
    texts, obfuscations, lines = template.read(records, 0, 0, 1)
    assert texts == [f'w{n} "q" \\ é\t😀' for n in range(1000)]
    assert obfuscations == [f"o{n}" for n in range(1000)] and lines == list(range(7, 2007, 2))
    assert [args[2:4] for args in calls] == [(0, 1)]
    calls.clear()
    escaped = [r.raw.replace(b'"w', b'"\\u0077') for r in records]  # as an ASCII-only writer
    records = [
        Record(raw=raw, line=record.line) for raw, record in zip(escaped, records, strict=True)
    ]
    assert template.read(records, 0, 0, 1) == (texts, obfuscations, lines)
    assert [args[2:4] for args in calls] == [(0, 1)]


def test_a_backslash_that_would_join_two_holes_is_read_record_by_record():
    """A record that is no JSON: a backslash before its text's closing quote, and an
    obfuscation whose bytes start with ``,"``. In one array of the holes' bytes the
    backslash escapes the quote after it, joining the two strings into one, and the
    obfuscation's quote makes one more: as many strings as holes, each other values
    than the record's. A block with such a backslash is read record by record, which
    refuses it; nothing of it is in the run."""
    good = orjson.dumps(text_chunk("a", "o"))
    bad = good.replace(b'"a"', b'"a\\"').replace(b'"o"', b'","y"')
    assert bad.count(b"\\") == 1 and bad.endswith(b'"obfuscation":","y"}')  # the bytes meant
    records = [Record(raw=raw, line=7 + 2 * n) for n, raw in enumerate([bad, good])]
    each, block = each_and_block(records)
    assert block == each == ([], [], [])
    each, block = each_and_block(raw_records(["z"]) + records)
    assert block == each == (["z"], ["o0"], [7])


@pytest.mark.parametrize("block", [7, 64, 1000])
def test_runs_split_across_reads_convert_as_parsed(block):
    """A stream of runs broken by differing records, fed in pieces that split records,
    gives the bytes the stream parsed whole gives."""
    texts = ["a\\", "é😀", 'q"', "\\\\", "t\tn\n", "\u2028", "plain"] * 60
    chunks = [role_chunk()]
    for n, text in enumerate(texts):
        chunks.append(text_chunk(text, f"o{n}"))
        if n % 50 == 49:
            chunks.append({**text_chunk("x"), "system_fingerprint": f"fp_{n}"})
    chunks.append(text_chunk("", None, delta={}, finish_reason="stop"))
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    for dst in ("responses-event", "chat-chunk", "anthropic-event"):
        whole = Transcoder(dst)
        expected = whole.feed(body) + whole.finish()
        pieces = Transcoder(dst)
        got = b"".join(pieces.feed(body[i : i + block]) for i in range(0, len(body), block))
        assert got + pieces.finish() == expected

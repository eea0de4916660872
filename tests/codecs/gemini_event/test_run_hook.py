"""The Gemini run hook (gemini_event/run_hook.py).

A raw chunk of one candidate with one text part, the same as the last but for its text,
is decoded from a template, and a long stretch of them reaches the encoder as one run
(its candidate's residue and the chunk's shared by every record). The rule that makes
this safe: a raw record decodes to exactly what its parsed record decodes to (the same
events, notes and error), whatever its bytes.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx import codecs, ir
from chatx.codecs.base import open_decoder
from chatx.codecs.template import RunDecoder
from chatx.containers.payload import parse
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.record import Record

SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=200)
FORMATS = ["chat-chunk", "responses-event", "anthropic-event", "llama-stack-event", "gemini-event"]


def chunk(text: Any, thought: bool = False, index: Any = 0, **top: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"text": text, "thought": True} if thought else {"text": text}
    candidate = {"content": {"parts": [part], "role": "model"}, "index": index}
    return {
        "candidates": [candidate],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
        **top,
    }


def last(reason: str = "STOP", index: int = 0) -> dict[str, Any]:
    candidate = {"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": reason}
    usage = {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 8}
    return {
        "candidates": [{**candidate, "index": index}],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(c) + b"\r\n\r\n" for c in chunks)


def primed(thought: bool = False) -> tuple[RunDecoder, Notes]:
    """A decoder that has read a first chunk parsed and two raw (the first raw one made a
    template, which knew the second): it holds a template."""
    notes = Notes()
    decoder = open_decoder(codecs.get("gemini-event"), notes)
    assert type(decoder) is RunDecoder
    decoder.feed(Record(chunk("Hi", thought), line=1))
    for line, text in ((3, " there"), (5, " you")):
        decoder.feed(Record(None, None, line, raw=orjson.dumps(chunk(text, thought))))
    assert decoder.hook.template is not None and decoder.hook.used == 1  # type: ignore[attr-defined]
    return decoder, notes


def both(payload: bytes, thought: bool = False) -> tuple[Any, Any, RunDecoder]:
    """What a primed decoder makes of ``payload`` raw and parsed, notes included."""
    results = []
    decoders = []
    for raw in (True, False):
        decoder, notes = primed(thought)
        record = Record(None, None, 7, raw=payload) if raw else parse(payload, None, 7)
        try:
            got: Any = ("InputError", record.error) if record.error else decoder.feed(record)
        except InputError as exc:
            got = ("InputError", exc.message)
        results.append((got, [(n.kind, n.message, n.line) for n in notes.items]))
        decoders.append(decoder)
    return results[0], results[1], decoders[0]


TRICKY = st.one_of(
    st.text(),
    st.text(alphabet='"\\/}]{[,: nu\x00\u2028é😀'),
    st.sampled_from(['"}}', '\\"', "\\", '"', '","x":"', '"}],"role":"model"}', ""]),
)


@SETTINGS
@given(text=TRICKY, thought=st.booleans())
def test_a_chunk_with_any_text_decodes_raw_as_parsed(text, thought):
    raw, parsed, decoder = both(orjson.dumps(chunk(text, thought)), thought)
    assert raw == parsed
    if text:  # known by its bytes, not parsed
        assert decoder.hook.used == 2  # type: ignore[attr-defined]


@SETTINGS
@given(
    text=TRICKY,
    thought=st.booleans(),
    edits=st.lists(
        st.tuples(st.integers(0, 160), st.integers(0, 3), st.binary(max_size=3)), max_size=4
    ),
)
def test_any_bytes_decode_as_parsed(text, thought, edits):
    """Edits of a matching payload (bytes cut, replaced or put in anywhere) give what
    the parsed record gives: events, notes or error."""
    payload = bytearray(orjson.dumps(chunk(text, thought)))
    for at, cut, put in edits:
        at = min(at, len(payload))
        payload[at : at + cut] = put
    raw, parsed, _ = both(bytes(payload), thought)
    assert raw == parsed


def test_chunks_beside_the_template_keep_their_difference():
    """A finish, usage, another candidate, a signature, a field of the part's own, other
    spacing: never known by the template, decoded as parsed."""
    cases = [
        chunk("a", usageMetadata={"promptTokenCount": 1}),
        chunk("a", index=1),
        {**chunk("a"), "candidates": [{**chunk("a")["candidates"][0], "finishReason": "STOP"}]},
        {**chunk("a"), "responseId": "r2"},
    ]
    payloads = [orjson.dumps(c) for c in cases]
    base = orjson.dumps(chunk("a"))
    payloads.append(base.replace(b'{"text":"a"}', b'{"text":"a","thoughtSignature":"c2ln"}'))
    payloads.append(base.replace(b'{"text":"a"}', b'{"text":"a","x":1}'))
    payloads.append(base.replace(b'"index":0', b'"index": 0'))
    for payload in payloads:
        raw, parsed, decoder = both(payload)
        assert raw == parsed and decoder.hook.used == 1, payload  # type: ignore[attr-defined]


def test_a_long_stream_is_read_in_runs_into_every_format_as_parsed():
    """Text then thoughts, read in blocks (the records after the first block raw, most
    in runs) and whole (every record parsed before the format is known): the same bytes
    and notes into every format."""
    chunks = [chunk(f"t{n} ", thought=True) for n in range(30)]
    chunks += [chunk(f"w{n} é\\") for n in range(60)]
    body = sse([*chunks, last()])
    for dst in FORMATS:
        results = []
        for size in (len(body), 500):
            notes = Notes()
            transcoder = Transcoder(dst, notes=notes)
            out = b"".join(transcoder.feed(body[i : i + size]) for i in range(0, len(body), size))
            results.append((out + transcoder.finish(), sorted(map(repr, notes.summary()))))
            if size == 500:
                assert transcoder.decoder.hook.used > 70, dst  # type: ignore[attr-defined]
        assert results[0] == results[1], dst


def test_choosing_a_candidate_gives_the_same_bytes_raw_or_parsed():
    """Two candidates, each in chunks of its own: --choice keeps one lane's runs (the
    chunk's residue of the other still goes on) and gives what parsing gives."""
    chunks = [chunk(f"a{n}", index=0) for n in range(30)]
    chunks += [chunk(f"b{n}", index=1) for n in range(30)]
    body = sse([*chunks, last(index=0), last(index=1)])
    for dst in ("responses-event", "chat-chunk", "gemini-event"):
        for choice in (0, 1):
            whole = Transcoder(dst, choice=choice)
            expected = whole.feed(body) + whole.finish()
            pieces = Transcoder(dst, choice=choice)
            got = b"".join(pieces.feed(body[i : i + 400]) for i in range(0, len(body), 400))
            assert got + pieces.finish() == expected
            assert pieces.decoder.hook.used > 40  # type: ignore[attr-defined]


def test_a_run_s_events_are_the_records_own():
    decoder, _ = primed()
    records = [Record(None, None, 9 + n, raw=orjson.dumps(chunk(f"x{n}"))) for n in range(3)]
    run = decoder.run(records, 0)
    assert run is not None and run.texts == ["x0", "x1", "x2"] and run.lines == [9, 10, 11]
    batch = run.batch(1)
    assert [type(e) for e in batch] == [ir.TextDelta, ir.Meta, ir.Meta]
    assert batch[1].lane == 0 and batch[2].lane is None
    again, _ = primed()
    assert again.feed(parse(orjson.dumps(chunk("x1")), None, 10)) == batch

"""The pipeline as a library: ``Transcoder`` streams live, ``convert``/``read_records``/
``decode`` work on whole streams held in memory."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatx import ir, pipeline
from chatx.errors import ChatxError, InputError, NotRepresentable
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.reading import decoding, framing
from tests.builders.chat_chunk import chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.meaning import summarize
from tests.streams import CHAT, RESPONSES, convert, payloads, sse


def _events(data: bytes) -> list[bytes]:
    """An SSE body cut into its events, each with its blank line."""
    return [block + b"\n\n" for block in data.split(b"\n\n") if block]


CHAT_BODY = sse(chat_text("one ", "two ", "three ", "four ", "five"))


# -- live streaming --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dst", "first"), [(RESPONSES, b"response.created"), (CHAT, b"chat.completion.chunk")]
)
def test_output_arrives_before_finish_once_detection_has_enough(dst, first):
    transcoder = Transcoder(dst)
    outputs = [transcoder.feed(event) for event in _events(CHAT_BODY)]
    # Detection may hold back the first few records (at most 4), never more.
    assert b"".join(outputs[:4])
    assert first in b"".join(outputs[:4])
    assert any(outputs[4:-1]), "later events come out as they go in"
    rest = transcoder.finish()
    assert b"".join(outputs) + rest == convert(CHAT_BODY, dst, CHAT)[0]


@pytest.mark.parametrize("dst", [RESPONSES, CHAT])
def test_with_src_given_output_arrives_after_one_event(dst):
    transcoder = Transcoder(dst, src=CHAT)
    first = transcoder.feed(_events(CHAT_BODY)[0])
    assert first, "the first event alone gives output"


def test_responses_source_streams_live():
    body = ResponsesBuilder().message(*"abcdefgh").end().bytes()
    transcoder = Transcoder(CHAT)
    outputs = [transcoder.feed(event) for event in _events(body)]
    assert b"".join(outputs[:4])
    assert sum(1 for o in outputs if o) > 5
    assert b"".join(outputs) + transcoder.finish() == convert(body, CHAT, RESPONSES)[0]


@pytest.mark.parametrize("dst", [RESPONSES, CHAT])
def test_byte_by_byte_gives_the_same_bytes(dst):
    transcoder = Transcoder(dst)
    out = b"".join(transcoder.feed(CHAT_BODY[i : i + 1]) for i in range(len(CHAT_BODY)))
    assert out + transcoder.finish() == convert(CHAT_BODY, dst, CHAT)[0]


# -- convert -----------------------------------------------------------------------------


def test_convert_takes_bytes_like_values_and_chunks():
    expected = pipeline.convert(CHAT_BODY, dst=RESPONSES)
    assert pipeline.convert(bytearray(CHAT_BODY), dst=RESPONSES) == expected
    assert pipeline.convert(memoryview(CHAT_BODY), dst=RESPONSES) == expected
    parts = [CHAT_BODY[i : i + 7] for i in range(0, len(CHAT_BODY), 7)]
    assert pipeline.convert(iter(parts), dst=RESPONSES) == expected


def test_convert_detects_the_source_format():
    body = ResponsesBuilder().message("hi").end().bytes()
    assert pipeline.convert(body, dst=CHAT) == pipeline.convert(body, dst=CHAT, src=RESPONSES)
    assert pipeline.convert(CHAT_BODY, dst=RESPONSES) == pipeline.convert(
        CHAT_BODY, dst=RESPONSES, src=CHAT
    )


def test_jsonl_in_and_out():
    lines = "".join(json.dumps(c) + "\n" for c in chat_text("a", "b")).encode()
    out = pipeline.convert(lines, dst=CHAT, out_container="jsonl")
    assert b"data:" not in out and b"[DONE]" not in out
    assert [json.loads(line) for line in out.splitlines()] == chat_text("a", "b")
    responses = pipeline.convert(lines, dst=RESPONSES)
    assert summarize(responses, RESPONSES)[0]["lanes"][0]["text"] == "ab"


def test_responses_output_names_its_events():
    out = pipeline.convert(CHAT_BODY, dst=RESPONSES)
    blocks = [b for b in out.decode().split("\n\n") if b]
    for block in blocks:
        event, data = block.split("\n")
        assert event == "event: " + json.loads(data.removeprefix("data: "))["type"]


def test_empty_input_is_an_input_error():
    with pytest.raises(InputError):
        pipeline.convert(b"", dst=RESPONSES)
    with pytest.raises(InputError):
        pipeline.convert(b"\n\n", dst=CHAT)


def test_bad_record_is_skipped_with_a_note_or_stops_when_strict():
    body = CHAT_BODY.replace(b'{"content": "two "}', b'{"content": "tw', 1)
    assert body != CHAT_BODY
    notes = Notes()
    out = pipeline.convert(body, dst=RESPONSES, notes=notes)
    skipped = [n for n in notes.items if n.kind == "skipped"]
    assert len(skipped) == 1 and skipped[0].line == 5
    assert summarize(out, RESPONSES)[0]["lanes"][0]["text"] == "one three four five"
    with pytest.raises(InputError) as info:
        pipeline.convert(body, dst=RESPONSES, strict=True)
    assert info.value.line == 5


def test_strict_refuses_what_the_target_cannot_hold():
    body = (
        ResponsesBuilder()
        .builtin({"id": "ws_1", "type": "web_search_call", "action": {"type": "search"}})
        .message("x")
        .end()
        .bytes()
    )
    pipeline.convert(body, dst=CHAT)
    with pytest.raises(NotRepresentable):
        pipeline.convert(body, dst=CHAT, strict=True)


def test_notes_carry_the_input_line():
    body = sse([chunk({"content": "no role"}), chunk({}, "stop")])
    notes = Notes()
    pipeline.convert(body, dst=CHAT, notes=notes)
    repaired = [n for n in notes.items if n.kind == "repaired"]
    assert repaired and repaired[0].line == 1


def test_unknown_format_names_are_refused():
    with pytest.raises(ChatxError):
        pipeline.convert(CHAT_BODY, dst="no-such-format")
    with pytest.raises(ChatxError):
        pipeline.convert(CHAT_BODY, dst=CHAT, src="no-such-format")


# -- read_records / decode ---------------------------------------------------------------


def test_read_records_frames_with_lines():
    container, records = framing.read_records(CHAT_BODY)
    assert container == "sse"
    assert [r.line for r in records] == list(range(1, 2 * len(records), 2))
    assert records[-1].done and not any(r.done for r in records[:-1])
    assert [r.data for r in records[:-1]] == chat_text("one ", "two ", "three ", "four ", "five")


def test_decode_yields_ir_batches_one_per_record():
    _, records = framing.read_records(CHAT_BODY)
    batches = list(decoding.decode(records))
    assert isinstance(batches[0][0], ir.StreamStart)
    texts = [e.text for b in batches for e in b if isinstance(e, ir.TextDelta)]
    assert texts == ["one ", "two ", "three ", "four ", "five"]
    assert isinstance(batches[-1][-1], ir.StreamEnd)
    assert sum(isinstance(e, ir.Finish) for b in batches for e in b) == 1


def test_decode_detects_responses():
    _, records = framing.read_records(ResponsesBuilder().message("hi").end().bytes())
    events = [e for b in decoding.decode(records) for e in b]
    assert [e.text for e in events if isinstance(e, ir.TextDelta)] == ["hi"]


def test_payload_helpers_see_what_convert_wrote():
    out = pipeline.convert(CHAT_BODY, dst=CHAT)
    assert payloads(out) == chat_text("one ", "two ", "three ", "four ", "five")


def test_frames_are_the_bytes_of_feed_and_finish_in_pieces():
    """feed_frames/finish_frames (what the CLI writes) give exactly feed/finish's bytes,
    and a stream's long final events come out as pieces of their own."""
    from chatx.containers.payload import LARGE

    data = sse(chat_text(*["word " * 1000] * 300))
    whole = Transcoder("responses-event").feed(data)
    whole_end = Transcoder("responses-event")
    joined = whole_end.feed(data) + whole_end.finish()
    framed = Transcoder("responses-event")
    pieces = framed.feed_frames(data) + framed.finish_frames()
    assert b"".join(pieces) == joined and joined.startswith(whole)
    alone = [p for p in pieces if p.startswith(b"{") and len(p) > LARGE]  # one payload each
    assert len(alone) == 4  # text.done, part.done, item.done, completed


@pytest.mark.parametrize(
    ("pieces", "text", "same"),
    [
        ([], "", True),
        ([], "a", False),
        (["ab", "c"], "abc", True),
        (["ab", "c"], "abcd", False),
        (["ab", "c"], "ab", False),
        (["ab", "x"], "abc", False),
        (["a"] * 3000, "a" * 3000, True),  # folded and loose pieces both compared
        (["a"] * 3000, "a" * 2999 + "b", False),
    ],
)
def test_pieces_equal_a_text_without_joining(pieces, text, same):
    from chatx.pieces import Pieces

    collected = Pieces()
    for piece in pieces:
        collected.append(piece)
    assert collected.equals(text) is same
    assert (collected.text() == text) is same


def _two_choices(count: int, **envelope: str) -> bytes:
    """A two-choice chat stream, each choice's text chunks one after another."""
    head = {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    head.update(envelope)

    def chunk_of(index: int, delta: dict[str, str], finish: str | None = None) -> Any:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**head, "choices": [choice]}

    chunks = [chunk_of(0, {"role": "assistant", "content": ""})]
    chunks.append(chunk_of(1, {"role": "assistant", "content": ""}))
    chunks += [chunk_of(0, {"content": f"a{n}"}) for n in range(count)]
    chunks += [chunk_of(1, {"content": f"b{n}"}) for n in range(count)]
    chunks += [chunk_of(0, {}, "stop"), chunk_of(1, {}, "stop")]
    body = b"".join(
        b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\n\n" for c in chunks
    )
    return body + b"data: [DONE]\n\n"


@pytest.mark.parametrize("blocks", [1, 7])
def test_choice_keeps_every_chunk_of_the_chosen_choice_as_it_came(blocks):
    """--choice 1 into chat: each text chunk of choice 1 comes out as it came, numbered
    0, its ``logprobs: null, finish_reason: null`` included (the decoder shares that
    residue between chunks, so choosing renumbers a copy of it)."""
    body = _two_choices(6)
    transcoder = Transcoder("chat-chunk", choice=1)
    step = len(body) if blocks == 1 else blocks
    out = b"".join(transcoder.feed(body[i : i + step]) for i in range(0, len(body), step))
    texts = [p for p in payloads(out + transcoder.finish()) if isinstance(p, dict)]
    chosen = [p["choices"][0] for p in texts if p["choices"][0]["delta"].get("content")]
    assert [c["delta"]["content"] for c in chosen] == [f"b{n}" for n in range(6)]
    assert all(
        c == {"index": 0, "delta": c["delta"], "logprobs": None, "finish_reason": None}
        for c in chosen
    )


def test_runs_stay_on_under_choice():
    """Records a decoder knows by their bytes reach the encoder as runs with --choice
    too: the chosen lane's, said on lane 0; the other lane's are left out whole."""
    body = _two_choices(40)
    transcoder = Transcoder("chat-chunk", choice=1)
    out = transcoder.feed(body[:600])  # the codecs are open by then
    encoder: Any = transcoder.encoder
    runs: list[tuple[int, int]] = []
    feed_run = encoder.feed_run

    def counted(run: Any) -> list[Any]:
        runs.append((run.lane, len(run.texts)))
        return feed_run(run)

    encoder.feed_run = counted
    out += transcoder.feed(body[600:]) + transcoder.finish()
    assert runs and {lane for lane, _ in runs} == {0} and max(n for _, n in runs) > 20
    assert out == convert(body, "chat-chunk", choice=1)[0]


@pytest.mark.parametrize("dst", ["chat-chunk", "responses-event", "llama-stack-event"])
@pytest.mark.parametrize("choice", [0, 1, 2])
def test_choice_says_the_same_read_whole_or_in_runs(dst, choice):
    """Read whole (no runs: every record is parsed before the format is known) or in
    blocks (runs): the same bytes and notes, the residue of the other choice's records
    (their system_fingerprint) counted as often."""
    body = _two_choices(30, system_fingerprint="fp_1")
    results = []
    for step in (len(body), 300):
        notes = Notes()
        transcoder = Transcoder(dst, choice=choice, notes=notes)
        try:
            out = b"".join(transcoder.feed(body[i : i + step]) for i in range(0, len(body), step))
            out += transcoder.finish()
        except ChatxError as exc:
            out = str(exc).encode()
        said = sorted((n.kind, n.message, n.line or 0) for n in notes.summary())
        results.append((out, said))
    assert results[0] == results[1]

"""Citations in chat output: another format's web page citations become the message's
``url_citation`` annotations (``choices[].delta.annotations``, all in the chunk that
finishes the choice), their span counted in characters of the message's ``content``; a
file cited by id has no chat annotation."""

from __future__ import annotations

from typing import Any

import pytest

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.chat_chunk.encode import ChatChunkEncoder
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.validation import validate_records
from tests.builders.anthropic_event import (
    ANTHROPIC,
    block_delta,
    block_start,
    block_stop,
    sse_events,
    stream,
    text,
)
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.builders.responses_event import url_citation as url
from tests.streams import CHAT, RESPONSES, convert, dumped, payloads, sse

PAGE = {
    "type": "web_search_result_location",
    "cited_text": "Tide tables for the fjord",
    "url": "https://tides.example.org/fjord",
    "title": "Fjord tides",
    "encrypted_index": "Eo8B",
}
DOCUMENT = {
    "type": "char_location",
    "cited_text": "the pier",
    "document_index": 0,
    "document_title": "harbour.txt",
    "start_char_index": 0,
    "end_char_index": 8,
    "file_id": "file_harbour",
}


def plain(notes: Any) -> list[str]:
    return [f"{n.kind}: {n.message}" for n in notes.summary()]


def chat_view(data: bytes) -> tuple[str, list[dict[str, Any]], list[int]]:
    """The content of choice 0, its annotations, and the chunks (by position) that say them."""
    content, annotations, where = "", [], []
    for number, chunk in enumerate(payloads(data)):
        for choice in chunk.get("choices", []):
            delta = choice["delta"]
            content += delta.get("content") or ""
            if "annotations" in delta:
                annotations += delta["annotations"]
                where.append(number)
    return content, annotations, where


def valid(data: bytes) -> bool:
    assert [f for f in validate_records(data) if f.severity == "E"] == []
    return True


def cited_block(index: int, citations: list[dict[str, Any]], *pieces: str) -> list[Any]:
    """A text block as the API streams one that cites: its citations before its text."""
    return [
        block_start(index, {"type": "text", "text": "", "citations": []}),
        *(block_delta(index, {"type": "citations_delta", "citation": c}) for c in citations),
        *(block_delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def test_an_anthropic_web_page_citation_spans_its_blocks_text_in_the_content():
    data = sse_events(
        stream(
            text(0, "Low tide first. "),
            cited_block(1, [PAGE, DOCUMENT], "High tide ", "is at noon."),
            text(2, " Calm seas."),
        )
    )
    out, notes = convert(data, CHAT, ANTHROPIC)
    content, annotations, _ = chat_view(out)
    assert content == "Low tide first. High tide is at noon. Calm seas."
    assert annotations == [
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://tides.example.org/fjord",
                "title": "Fjord tides",
                "start_index": 16,
                "end_index": 37,
            },
        }
    ]
    span = annotations[0]["url_citation"]
    assert content[span["start_index"] : span["end_index"]] == "High tide is at noon."
    said = plain(notes)
    # The web page is written; the document cited by id has no chat annotation.
    assert "lost: field citations has no place in the target format (1 record)" in said
    assert "lost: field citation.cited_text has no place in the target format (1 record)" in said
    assert valid(out)


def test_a_citation_before_any_text_and_one_without_a_title():
    untitled = {**PAGE, "title": None}
    data = sse_events(stream(cited_block(0, [untitled], "Spring tides.")))
    out, _ = convert(data, CHAT, ANTHROPIC)
    _, annotations, where = chat_view(out)
    assert annotations[0]["url_citation"] == {
        "url": "https://tides.example.org/fjord",
        "title": "",  # chat's title is required
        "start_index": 0,
        "end_index": 13,
    }
    # Said once, in the chunk that finishes the choice (the openai SDK's accumulator
    # raises on a second annotations delta).
    assert len(where) == 1
    assert payloads(out)[where[0]]["choices"][0] == {
        "index": 0,
        "delta": {"annotations": annotations},
        "finish_reason": "stop",
    }


def _annotated(builder: ResponsesBuilder, pieces: list[str], *annotations: Any) -> None:
    """A Responses message item of ``pieces``, then its annotations, as OpenAI streams one."""
    builder.annotated(*(("text", p) for p in pieces), *(("annotation", a) for a in annotations))


def test_a_responses_url_citation_keeps_its_span_counted_from_its_items_text():
    builder = ResponsesBuilder()
    first = [f"word{n} " for n in range(40)]
    _annotated(builder, first)
    filed = {"type": "file_citation", "file_id": "file_1", "filename": "a.pdf", "index": 3}
    _annotated(builder, ["Tides ", "peak at six."], url(6, 18), filed)
    out, notes = convert(builder.end(usage=responses_usage()).bytes(), CHAT, RESPONSES)
    content, annotations, _ = chat_view(out)
    base = len("".join(first))
    assert [a["url_citation"] for a in annotations] == [
        {"url": "https://a.example/", "title": "A", "start_index": base + 6, "end_index": base + 18}
    ]
    assert content[base + 6 : base + 18] == "peak at six."
    said = plain(notes)
    # The file citation has no chat annotation; the item's closing parts are not said again.
    assert "lost: field annotations has no place in the target format (1 record)" in said
    assert not [n for n in said if "item.content" in n]
    assert valid(out)


def test_chat_to_chat_is_untouched_and_llama_stack_still_loses_citations():
    data = sse_events(stream(cited_block(0, [PAGE], "Tides.")))
    _, notes = convert(data, "llama-stack-event", ANTHROPIC)
    assert "lost: field citations has no place in the target format (1 record)" in plain(notes)
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": "Hi", "annotations": [{"x": 1}]},
                "finish_reason": None,
            }
        ],
    }
    done = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    out, _ = convert(sse([chunk, done]), CHAT, CHAT)
    assert payloads(out) == [chunk, done]


def test_a_choice_that_never_finishes_says_its_citations_lost_unless_finish_ends_it():
    events = stream(cited_block(0, [PAGE], "Tides."))
    cut = events[: events.index(block_stop(0))]
    out, notes = convert(sse_events(cut), CHAT, ANTHROPIC)
    assert chat_view(out)[1] == []
    assert "lost: 1 citation(s) of a choice that never finished" in plain(notes)
    # --finish writes the ending: the citation covers the text that came.
    out, notes = convert(sse_events(cut), CHAT, ANTHROPIC, options=EncodeOptions(finish=True))
    assert [a["url_citation"]["end_index"] for a in chat_view(out)[1]] == [6]
    assert not [n for n in plain(notes) if "citation(s)" in n]
    assert valid(out)
    # A message item no decoder ends: its citations are placed when its choice finishes.
    notes = Notes()
    encoder = ChatChunkEncoder(notes, EncodeOptions(source_format=ANTHROPIC))
    cite = ir.Citation("url", "https://a.example/", "A")
    encoder.feed([ir.StreamStart("msg_1"), ir.LaneStart(0), ir.ItemStart(0, "message")])
    encoder.feed([ir.Meta(0, {"citations": [{}]}, None, cite), ir.TextDelta(0, "Tides.")])
    (finished,) = encoder.feed([ir.Finish(0, "stop")])
    (said,) = finished["choices"][0]["delta"]["annotations"]
    assert (said["url_citation"]["start_index"], said["url_citation"]["end_index"]) == (0, 6)


def test_text_written_as_a_run_is_counted_too():
    """Records the decoder knew by their bytes reach the encoder as a run (the speed
    path), whose chunks are copies: their text counts as the chunks fed one by one."""
    notes = Notes()
    encoder = ChatChunkEncoder(notes, EncodeOptions(source_format=ANTHROPIC))
    encoder.feed([ir.StreamStart("msg_1"), ir.LaneStart(0), ir.ItemStart(0, "message")])
    encoder.feed([ir.TextDelta(0, "a")])
    run = DeltaRun(ir.TextDelta(0, "b"), ["bb", "cc", "dd"], [None] * 3, [3, 4, 5])
    assert len(dumped(encoder.feed_run(run))) == 3
    encoder.feed([ir.ItemEnd(0, "message"), ir.ItemStart(0, "message")])
    cite = ir.Citation("url", "https://a.example/", "A")
    encoder.feed([ir.Meta(0, {"citations": [{}]}, None, cite), ir.TextDelta(0, "Tides.")])
    encoder.feed([ir.ItemEnd(0, "message")])
    (chunk,) = encoder.feed([ir.Finish(0, "stop")])
    (said,) = chunk["choices"][0]["delta"]["annotations"]
    assert (said["url_citation"]["start_index"], said["url_citation"]["end_index"]) == (7, 13)


def test_the_openai_sdk_rebuilds_the_annotations_of_several_items():
    stream_state = pytest.importorskip("openai.lib.streaming.chat", reason="the openai SDK")
    from openai.types.chat import ChatCompletionChunk

    builder = ResponsesBuilder()
    _annotated(builder, ["Tides ", "peak."], url(0, 5))
    _annotated(builder, ["Seas ", "are calm."], url(5, 14, "https://b.example/"))
    out, _ = convert(builder.end(usage=responses_usage()).bytes(), CHAT, RESPONSES)
    state = stream_state.ChatCompletionStreamState()
    for chunk in payloads(out):
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    message = state.current_completion_snapshot.choices[0].message
    assert message.content == "Tides peak.Seas are calm."
    assert [
        (a.url_citation.url, a.url_citation.start_index, a.url_citation.end_index)
        for a in message.annotations
    ] == [
        ("https://a.example/", 0, 5),
        ("https://b.example/", 16, 25),
    ]

"""Citations read from chat chunks: ``choices[].delta.annotations`` (``url_citation``
entries) are the IR's Citation, of the message item open when they come, their span
counted from where the item's text began in the content.

OpenRouter sends them early, one per chunk before any text, with ``start_index`` and
``end_index`` 0 and the page's text in ``content``; OpenAI's search models in the chunk
that finishes the choice. Chat output gives the chunks back as they came; Responses
writes the message part's ``url_citation`` annotations, Anthropic the text block's
``citations``; what no event says (``content``) is said lost, and Llama Stack, which has
no citations, says the field lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx import ir, pipeline
from chatx.validation import validate_records
from tests.builders.anthropic_event import ANTHROPIC
from tests.builders.chat_chunk import chunk, usage_chunk
from tests.captures import CAPTURES
from tests.streams import CHAT, RESPONSES, convert, events, payloads, sse
from tests.test_collect_across import collected, same_as_converted

LLAMA = "llama-stack-event"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / CHAT
CAPTURE = CAPTURES / CHAT / "pydantic-ai__openrouter_web_search_annotations_stream__i0.sse"
NEAP = "https://tides.example.org/neap"


def url_citation(url: str, start: int, end: int, title: str = "Tides", **more: Any) -> Any:
    page = {"url": url, "title": title, "start_index": start, "end_index": end, **more}
    return {"type": "url_citation", "url_citation": page}


def early_stream() -> list[dict[str, Any]]:
    """OpenRouter's shape: each annotation in a chunk of its own before the text."""
    page = "Neap tides come at the quarter moons."
    return [
        chunk({"role": "assistant", "content": "", "annotations": [url_citation(NEAP, 0, 0)]}),
        chunk({"content": "", "annotations": [url_citation(NEAP + "/2", 0, 0, content=page)]}),
        chunk({"content": "Neap tides"}),
        chunk({"content": " are small."}),
        chunk({"content": ""}, "stop"),
        usage_chunk(),
    ]


def finishing_stream(*annotations: Any) -> list[dict[str, Any]]:
    """OpenAI's shape: the annotations in the chunk that finishes the choice."""
    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Spring tides"}),
        chunk({"content": " follow the full moon."}),
        chunk({"annotations": list(annotations)}, "stop"),
        usage_chunk(),
    ]


def citations(data: bytes) -> list[tuple[ir.Citation, int]]:
    """Each citation the stream says, and how many message items had opened then."""
    out, opened = [], 0
    for event in events(data, CHAT):
        if type(event) is ir.ItemStart and event.kind == "message":
            opened += 1
        if type(event) is ir.Meta and event.meaning is not None:
            out.append((event.meaning, opened))
    return out


def annotations(data: bytes) -> list[list[dict[str, Any]]]:
    """The annotations of each Responses message part, as its done item says them."""
    return [
        part["annotations"]
        for e in payloads(data)
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "message"
        for part in e["item"]["content"]
    ]


def text_blocks(data: bytes) -> list[dict[str, Any]]:
    """Anthropic output's text blocks, each with its text and citations joined."""
    out: list[dict[str, Any]] = []
    for event in payloads(data):
        if event["type"] == "content_block_start":
            out.append({**event["content_block"], "citations": []})
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                out[-1]["text"] += delta["text"]
            elif delta["type"] == "citations_delta":
                out[-1]["citations"].append(delta["citation"])
    return [b for b in out if b["type"] == "text"]


def lost(notes: Any) -> set[str]:
    return set(notes.lost_fields)


def valid(data: bytes) -> bool:
    assert [f for f in validate_records(data) if f.severity == "E"] == []
    return True


# -- reading ------------------------------------------------------------------------------


def test_early_annotations_cite_the_message_that_opens_for_them():
    said = citations(sse(early_stream()))
    assert [(c.url, c.title, c.start, c.end, c.extra, opened) for c, opened in said] == [
        (NEAP, "Tides", 0, 0, {}, 1),
        (NEAP + "/2", "Tides", 0, 0, {"content": "Neap tides come at the quarter moons."}, 1),
    ]
    kinds = [type(e).__name__ for e in events(sse(early_stream()), CHAT)]
    # The message item opens before the first citation, and its text follows in it.
    assert kinds.index("ItemStart") < kinds.index("Meta", kinds.index("ItemStart"))
    assert kinds.count("ItemStart") == 1


def test_finishing_annotations_cite_the_open_message_with_their_spans():
    data = sse(finishing_stream(url_citation(NEAP, 0, 12), url_citation(NEAP + "/b", 13, 34)))
    said = citations(data)
    assert [(c.url, c.start, c.end) for c, _ in said] == [(NEAP, 0, 12), (NEAP + "/b", 13, 34)]
    assert all(c.kind == "url" and c.extra == {} for c, _ in said)


def test_a_span_is_counted_from_where_its_item_began_in_the_content():
    """Text, a tool call, text again: the second item's text starts at 12 in the content.
    A span in the first item's text has no place any more: it stays residue, said lost."""
    call = {"index": 0, "id": "call_t1", "type": "function"}
    stream = [
        chunk({"role": "assistant", "content": "Look it up."}),  # 11 characters
        chunk({"content": " "}),
        chunk({"tool_calls": [{**call, "function": {"name": "tides", "arguments": "{}"}}]}),
        chunk({"content": "Neap tides are small."}),
        chunk(
            {"annotations": [url_citation(NEAP, 12, 22), url_citation(NEAP + "/0", 0, 4)]},
            "stop",
        ),
        usage_chunk(),
    ]
    data = sse(stream)
    assert [(c.url, c.start, c.end, opened) for c, opened in citations(data)] == [(NEAP, 0, 10, 2)]
    out, notes = convert(data, RESPONSES)
    assert [
        [(a["url"], a["start_index"], a["end_index"]) for a in part] for part in annotations(out)
    ] == [
        [],
        [(NEAP, 0, 10)],
    ]
    assert "delta.annotations" in lost(notes)


def test_spans_count_the_text_of_plain_chunks_and_runs():
    """Many like chunks are plain chunks (decoded without the general path), and once the
    format is known, runs (records read raw, known by their bytes): their text counts as
    the general path's does."""
    words = [f"w{n} " for n in range(40)]
    before = len("".join(words))  # the first item's text: where the second's begins
    call = {"index": 0, "id": "call_t2", "type": "function"}
    stream = [chunk({"role": "assistant", "content": ""})]
    stream += [chunk({"content": word}) for word in words]
    stream.append(chunk({"tool_calls": [{**call, "function": {"name": "f", "arguments": ""}}]}))
    stream.append(chunk({"content": "Neap."}))
    stream += [chunk({"content": word}) for word in words]
    stream.append(chunk({"annotations": [url_citation(NEAP, before, before + 5)]}, "stop"))
    lines = [b"data: " + orjson.dumps(c) + b"\n\n" for c in stream] + [b"data: [DONE]\n\n"]
    assert [(c.start, c.end) for c, _ in citations(b"".join(lines))] == [(0, 5)]
    out = pipeline.convert([lines[0], lines[1], b"".join(lines[2:])], dst=RESPONSES)
    (cite,) = annotations(out)[1]
    assert (cite["start_index"], cite["end_index"]) == (0, 5)


@pytest.mark.parametrize(
    "entry",
    [
        {"type": "file_citation", "file_citation": {"file_id": "file_t1"}},
        {"type": "url_citation", "url_citation": {"title": "no url"}},
        {"type": "url_citation"},
        "a string",
    ],
)
def test_entries_of_another_shape_stay_residue_and_are_said_lost(entry: Any):
    data = sse(finishing_stream(entry, url_citation(NEAP, 0, 12)))
    assert [c.url for c, _ in citations(data)] == [NEAP]
    out, notes = convert(data, RESPONSES)
    assert [a["url"] for a in annotations(out)[0]] == [NEAP]
    assert "delta.annotations" in lost(notes)
    out, notes = convert(data, CHAT)
    assert payloads(out) == payloads(data) and notes.summary() == []


def test_annotations_after_the_finish_stay_residue():
    stream = finishing_stream()
    stream.insert(-1, chunk({"annotations": [url_citation(NEAP, 0, 5)]}))
    data = sse(stream)
    assert citations(data) == []
    _, notes = convert(data, RESPONSES)
    assert "delta.annotations" in lost(notes)


def test_a_span_that_is_not_two_ordered_integers_covers_the_item_and_is_said_lost():
    data = sse(finishing_stream(url_citation(NEAP, 9, 3)))
    ((cite, _),) = citations(data)
    assert (cite.start, cite.end, cite.extra) == (None, None, {"start_index": 9, "end_index": 3})
    out, notes = convert(data, RESPONSES)
    assert (annotations(out)[0][0]["start_index"], annotations(out)[0][0]["end_index"]) == (0, 34)
    assert {"citation.start_index", "citation.end_index"} <= lost(notes)


# -- writing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["openrouter-web-search-annotations.sse", "openai-url-citations.sse"]
)
def test_chat_to_chat_gives_back_the_fixtures_json_values(name: str):
    data = (FIXTURES / name).read_bytes()
    out, _ = convert(data, CHAT, CHAT)
    assert payloads(out) == payloads(data)


def test_responses_output_writes_the_annotations_on_the_output_text_part():
    data = (FIXTURES / "openai-url-citations.sse").read_bytes()
    out, notes = convert(data, RESPONSES)
    assert valid(out)
    (part,) = annotations(out)
    assert part == [
        {
            "type": "url_citation",
            "start_index": 0,
            "end_index": 37,
            "title": "Spring tides",
            "url": "https://tides.example.org/spring",
        },
        {
            "type": "url_citation",
            "start_index": 39,
            "end_index": 56,
            "title": "Tide tables",
            "url": "https://tides.example.org/",
        },
    ]
    added = [e for e in payloads(out) if e["type"] == "response.output_text.annotation.added"]
    assert [e["annotation"] for e in added] == part
    assert notes.summary() == []


def test_openrouter_annotations_in_responses_keep_their_zero_spans_and_lose_the_page_text():
    data = (FIXTURES / "openrouter-web-search-annotations.sse").read_bytes()
    out, notes = convert(data, RESPONSES)
    assert valid(out)
    (part,) = annotations(out)
    spans = [(a["url"], a["title"], a["start_index"], a["end_index"]) for a in part]
    assert spans == [
        ("https://tides.example.org/neap", "Neap tides", 0, 0),
        ("https://harbour.example.net/tables", "", 0, 0),
    ]
    assert notes.lost_fields["citation.content"] == 2
    assert "delta.annotations" not in lost(notes)


def test_anthropic_output_writes_the_text_blocks_citations():
    data = (FIXTURES / "openrouter-web-search-annotations.sse").read_bytes()
    out, notes = convert(data, ANTHROPIC)
    assert valid(out)
    (block,) = text_blocks(out)
    assert block["text"] == "Neap tides are the smallest tides (tides.example.org)."
    assert block["citations"] == [
        {
            "type": "web_search_result_location",
            "cited_text": "",
            "url": "https://tides.example.org/neap",
            "title": "Neap tides",
            "encrypted_index": "",
        },
        {
            "type": "web_search_result_location",
            "cited_text": "",
            "url": "https://harbour.example.net/tables",
            "title": "",
            "encrypted_index": "",
        },
    ]
    assert notes.lost_fields["annotation.content"] == 2
    assert "delta.annotations" not in lost(notes)
    assert not [n for n in notes.summary() if "citation spans" in n.message]


def test_anthropic_output_says_a_span_it_cannot_keep():
    data = (FIXTURES / "openai-url-citations.sse").read_bytes()
    out, notes = convert(data, ANTHROPIC)
    assert valid(out)
    (block,) = text_blocks(out)  # the citations come after the text of their block
    assert [c["url"] for c in block["citations"]] == [
        "https://tides.example.org/spring",
        "https://tides.example.org/",
    ]
    assert [n.message for n in notes.summary() if "citation spans" in n.message]


def test_llama_stack_output_says_the_annotations_lost():
    data = (FIXTURES / "openrouter-web-search-annotations.sse").read_bytes()
    out, notes = convert(data, LLAMA)
    assert valid(out)
    assert notes.lost_fields["delta.annotations"] == 2
    assert not [k for k in notes.lost_fields if k.startswith(("citation.", "annotation."))]


# -- collect ------------------------------------------------------------------------------


def test_collect_of_a_chat_stream_holds_its_annotations():
    data = (FIXTURES / "openai-url-citations.sse").read_bytes()
    (completion,) = collected(data, None)
    assert [
        (a["url_citation"]["url"], a["url_citation"]["start_index"], a["url_citation"]["end_index"])
        for a in completion["choices"][0]["message"]["annotations"]
    ] == [("https://tides.example.org/spring", 0, 37), ("https://tides.example.org/", 39, 56)]


@pytest.mark.parametrize(
    "name", ["openrouter-web-search-annotations.sse", "openai-url-citations.sse"]
)
@pytest.mark.parametrize("target", [RESPONSES, ANTHROPIC])
def test_collect_as_a_format_is_collect_of_the_conversion(name: str, target: str):
    same_as_converted((FIXTURES / name).read_bytes(), target)


# -- the real capture ---------------------------------------------------------------------


@pytest.mark.skipif(not CAPTURE.is_file(), reason=f"no real captures: {CAPTURE} is absent")
def test_the_openrouter_capture_keeps_its_citations_in_every_format():
    data = CAPTURE.read_bytes()
    urls = [c.url for c, _ in citations(data)]
    assert len(urls) == 5 and urls[0] == "https://github.com/pydantic/pydantic-ai"
    out, notes = convert(data, RESPONSES)
    assert valid(out) and [a["url"] for a in annotations(out)[0]] == urls
    assert notes.lost_fields["citation.content"] == 5
    out, notes = convert(data, ANTHROPIC)
    assert valid(out) and [c["url"] for c in text_blocks(out)[0]["citations"]] == urls
    assert notes.lost_fields["annotation.content"] == 5
    for target in (RESPONSES, ANTHROPIC):
        same_as_converted(data, target)

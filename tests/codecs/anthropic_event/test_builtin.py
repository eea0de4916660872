"""Server tools and citations between Anthropic and Responses.

Anthropic's ``web_search`` server tool (a ``server_tool_use`` block, then its
``web_search_tool_result``) ⇄ a Responses ``web_search_call`` item; Anthropic's
``citations_delta`` ⇄ a Responses ``output_text`` part's annotations (``url_citation``
for web pages, ``file_citation`` for a document cited by file id). What has no place on
the other side is said lost; other formats' output is what it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
from tests.streams import CHAT, RESPONSES, convert, payloads

LLAMA = "llama-stack-event"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
WEB_SEARCH = FIXTURES / ANTHROPIC / "web-search.sse"


def plain(notes: Any) -> list[str]:
    return [f"{n.kind}: {n.message}" for n in notes.summary()]


def valid(data: bytes) -> bool:
    """chatx validate finds no error in ``data``."""
    errors = [f for f in validate_records(data) if f.severity == "E"]
    assert errors == []
    return True


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


# -- Anthropic → Responses: web search ------------------------------------------------------


def test_a_web_search_is_a_web_search_call_item():
    out, notes = convert(WEB_SEARCH.read_bytes(), RESPONSES, ANTHROPIC)
    events = payloads(out)
    item_events = [e for e in events if e.get("output_index") == 0]
    assert [e["type"] for e in item_events] == [
        "response.output_item.added",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.output_item.done",
    ]
    assert item_events[0]["item"] == {
        "id": "ws_chatx_search01",
        "type": "web_search_call",
        "status": "in_progress",
        "action": {"type": "search"},
    }
    done = item_events[-1]["item"]
    assert done == {
        "id": "ws_chatx_search01",
        "type": "web_search_call",
        "status": "completed",
        "action": {
            "type": "search",
            "query": "tide tables Bergen",
            "sources": [{"type": "url", "url": "https://tides.example.org/bergen"}],
        },
    }
    assert events[-1]["response"]["output"][0] == done
    said = plain(notes)
    assert not [n for n in said if "server_tool_use" in n or "web_search_tool_result" in n]
    # What a Responses source list has no place for: page titles, encrypted content, age.
    assert (
        "lost: field web_search.sources.title has no place in the target format (1 record)" in said
    )
    assert "lost: field web_search.results has no place in the target format (1 record)" in said
    assert valid(out)


def _search_blocks(result: Any | None, *, query: str = '{"query": "q"}') -> list[Any]:
    call = {"type": "server_tool_use", "id": "srvtoolu_a1", "name": "web_search", "input": {}}
    blocks = [
        block_start(0, call),
        block_delta(0, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(0, {"type": "input_json_delta", "partial_json": query}),
        block_stop(0),
    ]
    if result is not None:
        block = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_a1", "content": result}
        blocks += [block_start(1, block), block_stop(1)]
    return blocks


def test_a_search_without_its_results_is_incomplete_and_a_failed_one_failed():
    paused = sse_events(stream(_search_blocks(None), stop="pause_turn"))
    out, _ = convert(paused, RESPONSES, ANTHROPIC)
    events = payloads(out)
    assert "response.web_search_call.completed" not in [e["type"] for e in events]
    done = of_type(events, "response.output_item.done")[0]["item"]
    assert (done["status"], done["action"]) == ("incomplete", {"type": "search", "query": "q"})
    error = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    failed = sse_events(stream(_search_blocks(error), text(2, "Sorry.")))
    out, notes = convert(failed, RESPONSES, ANTHROPIC)
    events = payloads(out)
    assert "response.web_search_call.completed" not in [e["type"] for e in events]
    done = of_type(events, "response.output_item.done")[0]["item"]
    assert done["status"] == "failed" and "sources" not in done["action"]
    assert "lost: field web_search.results has no place in the target format (1 record)" in plain(
        notes
    )
    assert valid(out)


@pytest.mark.parametrize("dst", [CHAT, LLAMA])
def test_chat_and_llama_stack_still_say_a_web_search_lost(dst: str):
    _, notes = convert(WEB_SEARCH.read_bytes(), dst, ANTHROPIC)
    lost = [n for n in plain(notes) if "item has no place" in n]
    assert [n.split(":")[1].split()[0] for n in lost] == [
        "server_tool_use",
        "web_search_tool_result",
    ]
    # Chat writes the web page citation as a url_citation annotation (its own tests).
    said = "lost: field citations has no place in the target format (1 record)" in plain(notes)
    assert said == (dst == LLAMA)


# -- Anthropic → Responses: citations --------------------------------------------------------


def _cited(citation: dict[str, Any], *before: str) -> bytes:
    index = 0
    blocks = [
        block_start(index, {"type": "text", "text": "", "citations": []}),
        *(block_delta(index, {"type": "text_delta", "text": t}) for t in before),
        block_delta(index, {"type": "citations_delta", "citation": citation}),
        block_delta(index, {"type": "text_delta", "text": "Tides peak at six."}),
        block_stop(index),
    ]
    return sse_events(stream(blocks))


PAGE = {
    "type": "web_search_result_location",
    "cited_text": "High tide at 06:12",
    "url": "https://tides.example.org/",
    "title": "Tides",
    "encrypted_index": "EpcB",
}


def test_a_web_page_citation_is_a_url_citation_of_its_blocks_text():
    out, notes = convert(_cited(PAGE, "So: "), RESPONSES, ANTHROPIC)
    events = payloads(out)
    annotation = {
        "type": "url_citation",
        "start_index": 0,
        "end_index": 22,
        "title": "Tides",
        "url": "https://tides.example.org/",
    }
    (added,) = of_type(events, "response.output_text.annotation.added")
    assert added["annotation"] == annotation and added["annotation_index"] == 0
    kinds = [e["type"] for e in events]
    assert kinds.index("response.output_text.annotation.added") < kinds.index(
        "response.output_text.done"
    )
    (part_done,) = of_type(events, "response.content_part.done")
    assert part_done["part"]["annotations"] == [annotation]
    item = of_type(events, "response.output_item.done")[0]["item"]
    assert item["content"][0]["annotations"] == [annotation]
    said = plain(notes)
    assert "lost: field citation.cited_text has no place in the target format (1 record)" in said
    assert (
        "lost: field citation.encrypted_index has no place in the target format (1 record)" in said
    )
    assert not [n for n in said if "field citations " in n]
    assert valid(out)


def test_a_document_citation_is_a_file_citation_when_it_has_a_file_id():
    document = {
        "type": "page_location",
        "cited_text": "p. 3",
        "document_index": 0,
        "document_title": "report.pdf",
        "start_page_number": 3,
        "end_page_number": 4,
        "file_id": "file_011",
    }
    out, _ = convert(_cited(document), RESPONSES, ANTHROPIC)
    (added,) = of_type(payloads(out), "response.output_text.annotation.added")
    assert added["annotation"] == {
        "type": "file_citation",
        "file_id": "file_011",
        "filename": "report.pdf",
        "index": 18,
    }
    inline = {k: v for k, v in document.items() if k != "file_id"}
    out, notes = convert(_cited(inline), RESPONSES, ANTHROPIC)
    assert of_type(payloads(out), "response.output_text.annotation.added") == []
    assert "lost: field citations has no place in the target format (1 record)" in plain(notes)


@pytest.mark.parametrize(
    ("source", "kept"), [("https://kb.example.org/a", True), ("kb://article/7", False)]
)
def test_a_search_result_citation_is_a_url_citation_when_its_source_is_a_url(source, kept):
    citation = {
        "type": "search_result_location",
        "cited_text": "x",
        "source": source,
        "title": "A",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    out, _ = convert(_cited(citation), RESPONSES, ANTHROPIC)
    added = of_type(payloads(out), "response.output_text.annotation.added")
    assert [a["annotation"]["url"] for a in added] == ([source] if kept else [])


# -- Responses → Anthropic ---------------------------------------------------------------------


def _search_item(status: str = "completed", **action: Any) -> ResponsesBuilder:
    builder = ResponsesBuilder()
    item = {"type": "web_search_call", "id": "ws_r1", "action": action}
    builder.builtin(
        item,
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
    )
    if status != "completed":
        builder.events[-1]["item"]["status"] = status
    return builder


def test_a_web_search_call_is_a_server_tool_use_and_its_result():
    sources = [
        {"type": "url", "url": "https://a.example/"},
        {"type": "url", "url": "https://b.example/"},
    ]
    data = _search_item(type="search", query="tides", sources=sources).message("Done.")
    out, notes = convert(data.end(usage=responses_usage()).bytes(), ANTHROPIC, RESPONSES)
    events = payloads(out)
    starts = [e["content_block"] for e in of_type(events, "content_block_start")]
    assert starts[0] == {
        "type": "server_tool_use",
        "id": "srvtoolu_r1",
        "name": "web_search",
        "input": {},
    }
    assert events[2] == block_delta(
        0, {"type": "input_json_delta", "partial_json": '{"query":"tides"}'}
    )
    page = {"type": "web_search_result", "title": "", "encrypted_content": "", "page_age": None}
    assert starts[1] == {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_r1",
        "content": [{**page, "url": "https://a.example/"}, {**page, "url": "https://b.example/"}],
    }
    assert starts[2]["type"] == "text"
    said = plain(notes)
    assert not [n for n in said if n.startswith("lost") and "web_search" in n]
    assert (
        "warning: web search results have no encrypted_content (nor titles) outside Anthropic: "
        "written empty" in said
    )
    assert valid(out)


def test_what_a_web_search_call_says_beyond_a_search_is_lost():
    opened = _search_item(type="open_page", url="https://a.example/").message("Read.")
    out, notes = convert(opened.end(usage=responses_usage()).bytes(), ANTHROPIC, RESPONSES)
    assert [b["content_block"]["type"] for b in of_type(payloads(out), "content_block_start")] == [
        "text"
    ]
    assert "lost: web_search_call item (open_page) has no place in Anthropic messages" in plain(
        notes
    )
    failed = _search_item("failed", type="search", query="q").message("Sorry.")
    out, notes = convert(failed.end(usage=responses_usage()).bytes(), ANTHROPIC, RESPONSES)
    result = of_type(payloads(out), "content_block_start")[1]["content_block"]
    assert result["content"] == {
        "type": "web_search_tool_result_error",
        "error_code": "unavailable",
    }
    assert "lost: a failed web search says no error code: unavailable written" in plain(notes)
    several = _search_item(type="search", queries=["one", "two"]).message("Both.")
    out, notes = convert(several.end(usage=responses_usage()).bytes(), ANTHROPIC, RESPONSES)
    assert payloads(out)[2]["delta"]["partial_json"] == '{"query":"one"}'
    assert (
        "lost: field web_search.action.queries has no place in the target format (1 record)"
        in plain(notes)
    )


def _annotated(*steps: tuple[str, Any]) -> bytes:
    """A Responses message whose steps are text deltas and annotations, in order."""
    builder = ResponsesBuilder().annotated(*steps, iid="msg_1")
    return builder.end(usage=responses_usage()).bytes()


def test_a_url_citation_ends_the_text_block_it_came_in():
    data = _annotated(
        ("text", "Tides peak "),
        ("text", "at six."),
        ("annotation", url(0, 18)),
        ("annotation", url(0, 18, "https://b.example/")),
        ("text", " Seas are calm."),
    )
    out, notes = convert(data, ANTHROPIC, RESPONSES)
    events = [e for e in payloads(out) if e["type"].startswith("content_block")]
    blocks: list[list[Any]] = []
    for event in events:
        if event["type"] == "content_block_start":
            blocks.append([])
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            blocks[-1].append(delta.get("text") or delta["citation"]["url"])
    assert blocks == [
        ["Tides peak ", "at six.", "https://a.example/", "https://b.example/"],
        [" Seas are calm."],
    ]
    citation = [e for e in events if e["type"] == "content_block_delta"][2]["delta"]["citation"]
    assert citation == {
        "type": "web_search_result_location",
        "cited_text": "",
        "url": "https://a.example/",
        "title": "A",
        "encrypted_index": "",
    }
    said = plain(notes)
    assert not [n for n in said if "annotation" in n or "item.item.content" in n or "span" in n]
    assert valid(out)


def test_a_citation_whose_span_is_not_its_blocks_says_the_span_is_lost():
    data = _annotated(
        ("text", "Tides peak at six."), ("annotation", url(6, 18)), ("text", " Calm.")
    )
    _, notes = convert(data, ANTHROPIC, RESPONSES)
    assert (
        "lost: citation spans (start_index, end_index) are lost: an Anthropic citation covers "
        "its text block, which ends where the citation came" in plain(notes)
    )


def test_a_file_citation_has_no_anthropic_citation():
    cited = {"type": "file_citation", "file_id": "file_1", "filename": "a.pdf", "index": 5}
    out, notes = convert(_annotated(("text", "Read."), ("annotation", cited)), ANTHROPIC, RESPONSES)
    kinds = [e["delta"]["type"] for e in payloads(out) if e["type"] == "content_block_delta"]
    assert kinds == ["text_delta"]
    assert "lost: field annotations has no place in the target format (1 record)" in plain(notes)


# -- round trips -------------------------------------------------------------------------------


def test_anthropic_to_responses_and_back_keeps_the_search_and_its_citation():
    source = payloads(WEB_SEARCH.read_bytes())
    there, _ = convert(WEB_SEARCH.read_bytes(), RESPONSES, ANTHROPIC)
    back = payloads(convert(there, ANTHROPIC, RESPONSES)[0])
    blocks = [e["content_block"] for e in of_type(back, "content_block_start")]
    assert blocks[0] == of_type(source, "content_block_start")[0]["content_block"]
    assert blocks[1]["tool_use_id"] == "srvtoolu_chatx_search01"
    assert [p["url"] for p in blocks[1]["content"]] == ["https://tides.example.org/bergen"]
    deltas = [e["delta"] for e in of_type(back, "content_block_delta")]
    assert deltas[0] == {
        "type": "input_json_delta",
        "partial_json": '{"query":"tide tables Bergen"}',
    }
    assert [(d["citation"]["url"], d["citation"]["title"]) for d in deltas if "citation" in d] == [
        ("https://tides.example.org/bergen", "Bergen tides")
    ]
    assert [d["text"] for d in deltas if "text" in d] == ["High tide is at 06:12."]


def test_responses_to_anthropic_and_back_keeps_the_search_and_its_citations():
    def round_trip(data: bytes) -> list[dict[str, Any]]:
        there, _ = convert(data, ANTHROPIC, RESPONSES)
        return payloads(convert(there, RESPONSES, ANTHROPIC)[0])

    back = round_trip(_annotated(("text", "Tides peak at six."), ("annotation", url(0, 18))))
    (added,) = of_type(back, "response.output_text.annotation.added")
    assert added["annotation"] == url(0, 18)
    sources = [{"type": "url", "url": "https://a.example/"}]
    searched = _search_item(type="search", query="tides", sources=sources).message("x")
    back = round_trip(searched.end(usage=responses_usage()).bytes())
    done = of_type(back, "response.output_item.done")[0]["item"]
    assert done == {
        "id": "ws_r1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "tides", "sources": sources},
    }

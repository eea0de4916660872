"""``collect --as X`` builds the meaning ``convert --to X`` carries: Anthropic's web
search (``server_tool_use`` and ``web_search_tool_result`` blocks) ⇄ a Responses
``web_search_call`` item, citations ⇄ ``url_citation`` / ``file_citation``
annotations, and chat's message ``annotations``.

The rule: ``collect --as X`` of a stream equals ``collect`` of ``convert --to X`` of it,
for every stream with a web search or a citation (the real captures that have one, the
fixtures, and the streams built here), ids included: both derive them from the input.
``tests/test_collect_rule.py`` holds it for every other stream too, every capture and
fixture of every format to every other (failed streams, several choices), and names the
kind of stream where the two cannot agree by design.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from chatx import ir
from chatx.collect import collect, target_for
from chatx.collect.streams import streams_of
from chatx.notes import Notes
from chatx.reading.framing import load
from tests.builders.anthropic_event import (
    ANTHROPIC,
    block_delta,
    block_start,
    block_stop,
    sse_events,
    stream,
    text,
    thinking,
)
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.builders.responses_event import url_citation as url
from tests.captures import CAPTURES, captures
from tests.streams import CHAT, RESPONSES, batches, convert

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OTHERS = {ANTHROPIC: (RESPONSES, CHAT), RESPONSES: (ANTHROPIC, CHAT)}


def collected(data: bytes, target: str | None, notes: Notes | None = None) -> list[Any]:
    """``chatx collect [--as target]``: one object per stream."""
    side = load(data, "input")
    if notes is not None:
        side.notes = notes
    name = target_for(target, side.format)
    return [collect(s, name, source=side.format, notes=side.notes) for s in streams_of(side)]


def plain(notes: Notes) -> list[str]:
    return [f"{n.kind}: {n.message}" for n in notes.summary()]


def same_as_converted(data: bytes, target: str) -> None:
    """Assert the rule for one stream and target."""
    direct = collected(data, target)
    out, _ = convert(data, target)
    via = collected(out, None)
    assert direct == via


# -- the streams ----------------------------------------------------------------------------

PAGE = {
    "type": "web_search_result_location",
    "cited_text": "Neap tides are smallest.",
    "url": "https://tides.example.org/neap",
    "title": "Neap tides",
    "encrypted_index": "Eo8B",
}


def _search(index: int, call_id: str, query: str, pages: list[str] | None) -> list[Any]:
    """An Anthropic web search: the call, its query streamed, and its results (None:
    the turn paused before they came)."""
    call = {"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {}}
    blocks = [
        block_start(index, call),
        block_delta(index, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(index, {"type": "input_json_delta", "partial_json": f'{{"query": "{query}"}}'}),
        block_stop(index),
    ]
    if pages is None:
        return blocks
    found = [
        {
            "type": "web_search_result",
            "title": f"Page {n}",
            "url": url,
            "encrypted_content": "EqQB",
            "page_age": None,
        }
        for n, url in enumerate(pages)
    ]
    result = {"type": "web_search_tool_result", "tool_use_id": call_id, "content": found}
    return [*blocks, block_start(index + 1, result), block_stop(index + 1)]


def _cited(index: int, citations: list[dict[str, Any]], *pieces: str) -> list[Any]:
    return [
        block_start(index, {"type": "text", "text": "", "citations": []}),
        *(block_delta(index, {"type": "citations_delta", "citation": c}) for c in citations),
        *(block_delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def anthropic_stream() -> bytes:
    document = {
        "type": "page_location",
        "cited_text": "p. 2",
        "document_index": 0,
        "document_title": "almanac.pdf",
        "start_page_number": 2,
        "end_page_number": 3,
        "file_id": "file_almanac",
    }
    inline = {k: v for k, v in document.items() if k != "file_id"}
    return sse_events(
        stream(
            thinking(0, "Look it up."),
            _search(1, "srvtoolu_tide1", "neap tides", ["https://tides.example.org/neap"]),
            text(3, "Here is what I found. "),
            _cited(4, [PAGE, document, inline], "Neap tides ", "are the smallest."),
            _search(5, "srvtoolu_tide2", "spring tides", None),
            stop="pause_turn",
            mid="msg_tides01",
        )
    )


def _message(builder: ResponsesBuilder, steps: list[tuple[str, Any]]) -> None:
    """A Responses message item whose text deltas and annotations come in ``steps``."""
    builder.annotated(*steps)


def _web_search(builder: ResponsesBuilder, iid: str, **action: Any) -> None:
    progress = ("in_progress", "searching", "completed")
    builder.builtin(
        {"type": "web_search_call", "id": iid, "action": action},
        *(f"response.web_search_call.{step}" for step in progress),
    )


def responses_stream() -> bytes:
    builder = ResponsesBuilder()
    sources = [{"type": "url", "url": "https://a.example/"}]
    _web_search(builder, "ws_tide1", type="search", query="tides", sources=sources)
    filed = {"type": "file_citation", "file_id": "file_1", "filename": "a.pdf", "index": 4}
    _message(
        builder,
        [
            ("text", "Tides "),
            ("text", "peak."),
            ("annotation", url(0, 11)),
            ("annotation", filed),
            ("text", " Seas are calm."),
            ("annotation", url(3, 20, "https://b.example/")),
        ],
    )
    _web_search(builder, "ws_tide2", type="open_page", url="https://a.example/")
    return builder.end(usage=responses_usage()).bytes()


def concurrent_searches() -> bytes:
    """Two searches open at once that end in the other order (xAI's streams)."""
    builder = ResponsesBuilder()
    for number, iid in enumerate(("ws_one", "ws_two")):
        added = {"id": iid, "type": "web_search_call", "status": "in_progress"}
        builder.emit("response.output_item.added", output_index=number, item=added)
    for number, iid in ((1, "ws_two"), (0, "ws_one")):
        action = {"type": "search", "query": iid[3:]}
        done = {"id": iid, "type": "web_search_call", "status": "completed", "action": action}
        builder.emit("response.output_item.done", output_index=number, item=done)
        builder.output.append(done)
    _message(builder, [("text", "Both done.")])
    return builder.end(usage=responses_usage()).bytes()


BUILT = {
    "anthropic": (ANTHROPIC, anthropic_stream),
    "responses": (RESPONSES, responses_stream),
    "concurrent": (RESPONSES, concurrent_searches),
}
FIXTURE_FILES = [
    FIXTURES / ANTHROPIC / "web-search.sse",
    FIXTURES / ANTHROPIC / "citations.sse",
    FIXTURES / RESPONSES / "web-search.sse",
]


# -- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "target"), [(name, to) for name in sorted(BUILT) for to in OTHERS[BUILT[name][0]]]
)
def test_collect_as_a_format_is_collect_of_the_conversion(name: str, target: str):
    same_as_converted(BUILT[name][1](), target)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_fixtures_with_searches_and_citations_follow_the_rule(path: Path):
    for target in OTHERS[path.parent.name]:
        same_as_converted(path.read_bytes(), target)


_WORDS = (b"web_search", b"citations", b"url_citation")


def _meaningful(path: Path) -> bool:
    """The stream names a web search or citations, or its decoder says one another
    format has words for."""
    data = path.read_bytes()
    if any(word in data for word in _WORDS):
        return True
    return any(
        getattr(event, "meaning", None) is not None
        for batch in batches(data, path.parent.name)
        for event in batch
    )


@functools.cache
def meaningful_captures() -> list[Path]:
    return [p for fmt in OTHERS for p in captures(fmt) if _meaningful(p)]


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_every_capture_with_a_search_or_a_citation_follows_the_rule():
    paths = meaningful_captures()
    # When written: 29 Anthropic and 25 Responses captures, 20 with a search or a
    # citation the decoder says (the others name citations: null, or other server tools).
    assert len(paths) >= 50
    for path in paths:
        for target in OTHERS[path.parent.name]:
            try:
                same_as_converted(path.read_bytes(), target)
            except AssertionError as exc:
                raise AssertionError(f"{path.name} --as {target}") from exc


# -- what each object holds -------------------------------------------------------------------


def test_an_anthropic_search_and_citations_in_a_response():
    notes = Notes()
    (response,) = collected(anthropic_stream(), RESPONSES, notes)
    output = response["output"]
    assert [item["type"] for item in output] == [
        "reasoning",
        "web_search_call",
        "message",
        "message",
        "web_search_call",
    ]
    assert output[0]["encrypted_content"] == "c2lnbmF0dXJl"  # the thinking's signature
    assert output[1] == {
        "id": "ws_tide1",
        "type": "web_search_call",
        "status": "completed",
        "action": {
            "type": "search",
            "query": "neap tides",
            "sources": [{"type": "url", "url": "https://tides.example.org/neap"}],
        },
    }
    # Ids by output index, as convert numbers them.
    assert [item["id"] for item in output[2:4]] == ["msg_msg_tides01_2", "msg_msg_tides01_3"]
    (part,) = output[3]["content"]
    assert part["annotations"] == [
        {
            "type": "url_citation",
            "start_index": 0,
            "end_index": 28,
            "title": "Neap tides",
            "url": "https://tides.example.org/neap",
        },
        {
            "type": "file_citation",
            "file_id": "file_almanac",
            "filename": "almanac.pdf",
            "index": 28,
        },
    ]
    # The call whose results never came (the turn paused).
    assert output[4]["status"] == "incomplete" and output[4]["id"] == "ws_tide2"
    said = plain(notes)
    assert not [n for n in said if "no place in a Responses response" in n]
    assert "lost: field citations has no place in the target format (1 record)" in said
    assert "lost: field web_search.results has no place in the target format (1 record)" in said


def test_a_responses_search_and_annotations_in_an_anthropic_message():
    notes = Notes()
    (message,) = collected(responses_stream(), ANTHROPIC, notes)
    content = message["content"]
    assert content[0] == {
        "type": "server_tool_use",
        "id": "srvtoolu_tide1",
        "name": "web_search",
        "input": {"query": "tides"},
    }
    assert content[1]["tool_use_id"] == "srvtoolu_tide1"
    assert [page["url"] for page in content[1]["content"]] == ["https://a.example/"]
    cite = {
        "type": "web_search_result_location",
        "cited_text": "",
        "url": "https://a.example/",
        "title": "A",
        "encrypted_index": "",
    }
    # The text after a citation is a block of its own, as the API splits a message.
    assert content[2:] == [
        {"type": "text", "text": "Tides peak.", "citations": [cite]},
        {
            "type": "text",
            "text": " Seas are calm.",
            "citations": [{**cite, "url": "https://b.example/"}],
        },
    ]
    said = plain(notes)
    assert "lost: web_search_call item (open_page) has no place in Anthropic messages" in said
    assert any("citation spans" in n for n in said)


def test_concurrent_searches_come_in_the_order_they_ended():
    (message,) = collected(concurrent_searches(), ANTHROPIC)
    calls = [b["id"] for b in message["content"] if b["type"] == "server_tool_use"]
    assert calls == ["srvtoolu_two", "srvtoolu_one"]
    (response,) = collected(concurrent_searches(), RESPONSES)  # its own order: added
    assert [item["id"] for item in response["output"][:2]] == ["ws_one", "ws_two"]


def test_chat_annotations_span_the_content():
    (completion,) = collected(anthropic_stream(), CHAT)
    message = completion["choices"][0]["message"]
    assert message["content"] == "Here is what I found. Neap tides are the smallest."
    assert message["annotations"] == [
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://tides.example.org/neap",
                "title": "Neap tides",
                "start_index": 22,
                "end_index": 50,
            },
        }
    ]
    # pause_turn has no chat word: 'length', as chat output writes it.
    assert completion["choices"][0]["finish_reason"] == "length"
    (completion,) = collected(responses_stream(), CHAT)
    spans = [
        (a["url_citation"]["url"], a["url_citation"]["start_index"], a["url_citation"]["end_index"])
        for a in completion["choices"][0]["message"]["annotations"]
    ]
    assert spans == [("https://a.example/", 0, 11), ("https://b.example/", 3, 20)]


def test_an_anthropic_message_keeps_its_own_citations():
    path = FIXTURES / ANTHROPIC / "citations.sse"
    (message,) = collected(path.read_bytes(), ANTHROPIC)
    cited = [b for b in message["content"] if "citations" in b]
    assert [(b["text"], [c["type"] for c in b["citations"]]) for b in cited] == [
        ("the harvest rose by 10%", ["char_location"])
    ]
    assert cited[0]["citations"][0]["cited_text"] == "Harvest rose by a tenth."


def test_the_assembler_keeps_a_search_on_its_calls_item():
    from chatx.collect.assembler import Assembler
    from chatx.collect.streams import other_items

    stream = Assembler(other_items)
    for batch in batches(anthropic_stream(), ANTHROPIC):
        stream.feed(batch)
    searches = [i for i in stream.lane(0).items if i.search is not None]
    assert [(i.search.id, i.search.step, i.search.query, i.began) for i in searches] == [
        ("srvtoolu_tide1", "end", "neap tides", True),
        ("srvtoolu_tide2", "query", "spring tides", True),  # its results never came
    ]
    results = [i for i in stream.lane(0).items if i.result_of is not None]
    assert [i.result_of for i in results] == searches[:1]
    cited = [i for i in stream.lane(0).items if i.citations]
    assert [
        (c.citation.kind if c.citation else None, c.at) for i in cited for c in i.citations
    ] == [("url", 0), ("file", 0), (None, 0)]
    assert isinstance(cited[0].citations[0].citation, ir.Citation)

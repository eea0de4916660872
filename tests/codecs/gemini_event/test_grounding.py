"""Gemini's grounding and citations ⇄ the IR's citations and web searches.

* A span is read in UTF-8 bytes of the candidate's answer text (google-genai's
  ``Segment`` says "measured in bytes"; the one grounded capture with a character
  outside ASCII agrees): the url citation another format writes quotes the very text
  the segment quotes.
* Over every grounded capture: Gemini → Responses gives ``url_citation`` annotations and
  a ``web_search_call`` item, → chat ``url_citation`` annotations, → Anthropic web search
  blocks and ``citations_delta``; back into Gemini the pages and spans come back (into
  Anthropic and back the pages: its citation covers its text block), the query where
  the middle format holds one.
* Another format's citations and searches come back to it through Gemini.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx import ir
from chatx.notes import Notes
from chatx.record import Record
from tests.captures import CAPTURES, captures
from tests.streams import batches, convert, records

GEMINI = "gemini-event"
CHAT, RESPONSES, ANTHROPIC = "chat-chunk", "responses-event", "anthropic-event"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def grounding(data: bytes) -> dict[str, Any]:
    """What a Gemini stream's grounding says: per candidate, the (page, quoted text)
    pairs of its supports and citations (the text taken from the answer by the span in
    bytes, not from the segment), the pages, the queries."""
    texts: dict[int, str] = {}
    cites: set[tuple[int, str, str]] = set()
    pages: set[tuple[int, str]] = set()
    queries: list[tuple[int, str]] = []
    for record in records(data):
        chunk = record.data
        if not isinstance(chunk, dict):
            continue
        for position, candidate in enumerate(chunk.get("candidates") or []):
            lane = candidate.get("index", position)
            for part in (candidate.get("content") or {}).get("parts") or []:
                if isinstance(part.get("text"), str) and not part.get("thought"):
                    texts[lane] = texts.get(lane, "") + part["text"]
            answer = texts.get(lane, "").encode()
            metadata = candidate.get("groundingMetadata") or {}
            chunks = metadata.get("groundingChunks") or []
            for support in metadata.get("groundingSupports") or []:
                segment = support["segment"]
                quoted = answer[segment.get("startIndex", 0) : segment["endIndex"]].decode()
                for number in support["groundingChunkIndices"]:
                    web = chunks[number].get("web")
                    if web:
                        cites.add((lane, web["uri"], quoted))
                        pages.add((lane, web["uri"]))
            cited = candidate.get("citationMetadata") or {}
            for entry in cited.get("citations") or cited.get("citationSources") or []:
                end = entry.get("endIndex", 0)
                if entry.get("uri") and end <= len(answer):
                    quoted = answer[entry.get("startIndex", 0) : end].decode()
                    cites.add((lane, entry["uri"], quoted))
                    pages.add((lane, entry["uri"]))
            queries += [(lane, q) for q in metadata.get("webSearchQueries") or [] if q]
    return {"cites": cites, "pages": pages, "queries": queries}


def _grounded() -> list[Any]:
    paths = [
        p
        for p in captures(GEMINI)
        if b"groundingSupports" in p.read_bytes() or b'"citationMetadata"' in p.read_bytes()
    ]
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no captures in {CAPTURES}"))]
    return [pytest.param(p, id=p.name) for p in paths]


def _meanings(data: bytes, src: str) -> tuple[list[ir.Citation], list[ir.WebSearch]]:
    cites: list[ir.Citation] = []
    searches: list[ir.WebSearch] = []
    for batch in batches(data, src):
        for event in batch:
            meaning = getattr(event, "meaning", None)
            if type(meaning) is ir.Citation:
                cites.append(meaning)
            elif type(meaning) is ir.WebSearch:
                searches.append(meaning)
    return cites, searches


def test_spans_are_read_in_bytes_and_become_characters() -> None:
    data = (FIXTURES / GEMINI / "search-grounding.sse").read_bytes()
    text = "In Bergen, high tide today is at 06:12 and the water is 9°C. Low tide follows at 12:24."
    cites, searches = _meanings(data, GEMINI)
    spans = [(c.url, text[c.start or 0 : c.end]) for c in cites]
    assert spans == [
        ("https://tides.example.org/bergen", text[:60]),
        ("https://weather.example.net/bergen", text[:60]),
        ("https://tides.example.org/bergen", "Low tide follows at 12:24."),
    ]
    # 61 characters, 62 bytes before the second support: the °.
    assert [c.start for c in cites] == [0, 0, 61]
    assert [(s.step, s.query) for s in searches] == [
        ("begin", None),
        ("end", "tide tables Bergen today"),
    ]
    assert [s["url"] for s in searches[1].sources] == [
        "https://tides.example.org/bergen",
        "https://weather.example.net/bergen",
    ]


def test_a_span_only_characters_match_is_read_in_characters() -> None:
    """Not seen from Google; a span whose quoted text is its characters, not its bytes,
    is read as characters rather than cut mid-word."""
    text = "Tides: 9°C at dawn, 11°C at noon."
    quoted = "11°C at noon."
    start = text.index(quoted)
    chunk = {
        "candidates": [
            {
                "content": {"parts": [{"text": text}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
                "groundingMetadata": {
                    "groundingChunks": [{"web": {"uri": "https://t.example/", "title": "t"}}],
                    "groundingSupports": [
                        {
                            "segment": {
                                "startIndex": start,
                                "endIndex": start + len(quoted),
                                "text": quoted,
                            },
                            "groundingChunkIndices": [0],
                        }
                    ],
                },
            }
        ],
        "responseId": "r1",
    }
    data = b"data: " + orjson.dumps(chunk) + b"\n\n"
    cites, _ = _meanings(data, GEMINI)
    assert [text[c.start or 0 : c.end] for c in cites] == [quoted]


@pytest.mark.parametrize("path", _grounded())
@pytest.mark.parametrize("other", [RESPONSES, CHAT, ANTHROPIC])
def test_grounding_comes_back_through_another_format(path: Path, other: str) -> None:
    data = path.read_bytes()
    middle, _ = convert(data, other, GEMINI)
    back, notes = convert(middle, GEMINI, other)
    before, after = grounding(data), grounding(back)
    if other == ANTHROPIC:
        # An Anthropic citation covers its text block: the pages come back, not the spans.
        assert after["pages"] == before["pages"]
    else:
        assert after["cites"] == before["cites"]
    first = sorted({(lane, q) for lane, q in before["queries"]})[:1]
    if other == CHAT:
        assert after["queries"] == []  # chat has no web search
    else:
        assert set(after["queries"]) <= set(before["queries"])
        assert bool(after["queries"]) is bool(first)


@pytest.mark.parametrize("path", _grounded())
def test_into_responses_each_annotation_quotes_what_its_segment_quotes(path: Path) -> None:
    data = path.read_bytes()
    out, _ = convert(data, RESPONSES, GEMINI)
    texts: dict[str, str] = {}
    quoted = set()
    for record in records(out):
        event = record.data
        if event.get("type") == "response.output_text.done":
            texts[event["item_id"]] = event["text"]
        if event.get("type") == "response.output_text.annotation.added":
            note = event["annotation"]
            quoted.add((event["item_id"], note["url"], note["start_index"], note["end_index"]))
    said = {(url, texts[item][start:end]) for item, url, start, end in quoted}
    assert said == {(url, text) for _, url, text in grounding(data)["cites"]}


def test_gemini_into_responses_writes_a_web_search_call_and_annotations() -> None:
    data = (FIXTURES / GEMINI / "search-grounding.sse").read_bytes()
    out, notes = convert(data, RESPONSES, GEMINI)
    items = [
        r.data["item"] for r in records(out) if r.data.get("type") == "response.output_item.done"
    ]
    assert [i["type"] for i in items] == ["message", "web_search_call"]
    assert items[1]["action"]["query"] == "tide tables Bergen today"
    assert len(items[0]["content"][0]["annotations"]) == 3
    lost = {n.message for n in notes.summary() if n.kind == "lost"}
    assert any("searchEntryPoint.renderedContent" in m for m in lost)
    assert any("web_search.sources.title" in m for m in lost)


@pytest.mark.parametrize(
    ("name", "src"),
    [
        ("web-search.sse", RESPONSES),
        ("web-search.sse", ANTHROPIC),
        ("openai-url-citations.sse", CHAT),
    ],
)
def test_another_formats_citations_come_back_through_gemini(name: str, src: str) -> None:
    data = (FIXTURES / src / name).read_bytes()
    middle, _ = convert(data, GEMINI, src)
    back, _ = convert(middle, src, GEMINI)
    before, before_searches = _meanings(data, src)
    after, after_searches = _meanings(back, src)
    assert [(c.url, c.title) for c in after] == [(c.url, c.title) for c in before]
    if src != ANTHROPIC:  # an Anthropic citation has no span; it covers its block
        assert [(c.start, c.end) for c in after] == [(c.start, c.end) for c in before]
    ended = [(s.query, [x["url"] for x in s.sources]) for s in before_searches if s.step == "end"]
    assert [
        (s.query, [x["url"] for x in s.sources]) for s in after_searches if s.step == "end"
    ] == ended


def test_a_search_that_never_ends_is_said_lost() -> None:
    data = (FIXTURES / ANTHROPIC / "pause-turn.sse").read_bytes()
    _, notes = convert(data, GEMINI, ANTHROPIC)
    assert any("never ended" in n.message for n in notes.items if n.kind == "lost")


def test_a_file_citation_has_no_place_in_gemini() -> None:
    from chatx.codecs.gemini_event.grounding_write import GroundingWriter

    writer = GroundingWriter(Notes())
    assert writer.cite(0, ir.Citation("file", file_id="file_1")) is False
    assert writer.cite(0, ir.Citation("url", "https://t.example/")) is True


def test_own_records_hold_no_grounding_events_for_gemini_output() -> None:
    """Gemini → Gemini writes the grounding back from the residue alone."""
    data = (FIXTURES / GEMINI / "search-grounding.sse").read_bytes()
    out, notes = convert(data, GEMINI, GEMINI)
    assert [r.data for r in records(out)] == [
        r.data for r in records(data) if isinstance(r, Record)
    ]
    assert notes.items == []


def test_a_citation_of_text_read_in_runs_keeps_its_span() -> None:
    """A long stream's text chunks are read in runs, past the decoder (the run hook):
    the candidate's text the spans count holds their text all the same."""
    from chatx.pipeline import Transcoder

    pieces = [f"w{n}° " for n in range(80)]
    text = "".join(pieces)
    quoted = "".join(pieces[70:])
    start = len(text[: text.index(quoted)].encode())
    chunks: list[dict[str, Any]] = [
        {
            "candidates": [{"content": {"parts": [{"text": p}], "role": "model"}, "index": 0}],
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r1",
        }
        for p in pieces
    ]
    segment = {"startIndex": start, "endIndex": start + len(quoted.encode()), "text": quoted}
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["candidates"][0]["groundingMetadata"] = {
        "groundingChunks": [{"web": {"uri": "https://t.example/", "title": "t"}}],
        "groundingSupports": [{"segment": segment, "groundingChunkIndices": [0]}],
    }
    body = b"".join(b"data: " + orjson.dumps(c) + b"\r\n\r\n" for c in chunks)
    transcoder = Transcoder(RESPONSES, notes=Notes())
    out = b"".join(transcoder.feed(body[i : i + 500]) for i in range(0, len(body), 500))
    out += transcoder.finish()
    assert transcoder.decoder.hook.used > 40  # type: ignore[attr-defined]
    notes = [
        r.data["annotation"]
        for r in records(out)
        if r.data.get("type") == "response.output_text.annotation.added"
    ]
    assert [text[n["start_index"] : n["end_index"]] for n in notes] == [quoted]


def test_another_formats_citation_of_text_written_in_runs_keeps_its_span() -> None:
    """Into Gemini, a long run of chat text is written in one loop (feed_run): the
    candidate's text the segments count holds it all the same."""
    from chatx.pipeline import Transcoder
    from tests.builders.chat_chunk import chunk

    pieces = [f"w{n}° " for n in range(80)]
    text = "".join(pieces)
    quoted = "".join(pieces[70:])
    start = text.index(quoted)
    cite = {
        "type": "url_citation",
        "url_citation": {
            "url": "https://t.example/",
            "title": "t",
            "start_index": start,
            "end_index": start + len(quoted),
        },
    }
    chunks = [chunk({"content": p}) for p in pieces]
    last = chunk({"annotations": [cite]}, "stop")
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in [*chunks, last])
    transcoder = Transcoder(GEMINI, src=CHAT, notes=Notes())
    out = b"".join(transcoder.feed(body[i : i + 500]) for i in range(0, len(body), 500))
    out += transcoder.finish()
    assert transcoder.decoder.hook.used > 40  # type: ignore[attr-defined]
    segments = [
        s["segment"]
        for r in records(out)
        for c in r.data.get("candidates", [])
        for s in c.get("groundingMetadata", {}).get("groundingSupports", [])
    ]
    answer = text.encode()
    assert [answer[s["startIndex"] : s["endIndex"]].decode() for s in segments] == [quoted]
    assert [s["text"] for s in segments] == [quoted]

"""``collect`` of Gemini streams: the final ``GenerateContentResponse`` keeps what the
chunks said beyond the parts, and ``collect --as X`` keeps a grounded stream's citations
and web search as ``convert --to X`` does.

* Same format, held by google-genai's own types: the final response's candidate has the
  ``groundingMetadata`` of the stream (the last chunk's that said one, as the SDK reads
  it), the ``citationMetadata`` citations of every chunk, in order, and the text the
  chunks' ``.text`` join to; the ``usageMetadata`` is the last chunk's as the SDK reads
  it (``toolUsePromptTokenCount`` kept apart, not added to the prompt); parts the IR has
  no words for (code execution, inline data) come where they came.
* What the final response has no place for (a part's own fields, on text joined from
  several parts) is said ``lost:``.
* Across formats, the rule of ``tests/test_collect_across.py``: ``collect --as X`` of a
  stream equals ``collect`` of ``convert --to X`` of it, for every Gemini fixture and
  capture with grounding or citations into Responses, Anthropic, chat and Llama Stack
  (a ``web_search_call`` item, web search blocks), and every capture of another format
  with a web search or a citation into Gemini (its ``groundingMetadata``).

Every fixture, and every capture when ``../shared`` is there.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from chatx.collect import collect, target_for
from chatx.collect.streams import streams_of
from chatx.notes import Notes
from chatx.reading.framing import load
from tests.captures import CAPTURES, captures
from tests.streams import convert, payloads, sse

GEMINI = "gemini-event"
CHAT, RESPONSES, ANTHROPIC = "chat-chunk", "responses-event", "anthropic-event"
LLAMA = "llama-stack-event"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
_WORDS = (b"groundingMetadata", b"citationMetadata")


def collected(data: bytes, target: str | None = None, notes: Notes | None = None) -> list[Any]:
    """``chatx collect [--as target]``: one object per stream."""
    side = load(data, "input")
    if notes is not None:
        side.notes = notes
    name = target_for(target, side.format)
    return [collect(s, name, source=side.format, notes=side.notes) for s in streams_of(side)]


def lost(notes: Notes) -> list[str]:
    return [n.message for n in notes.summary() if n.kind == "lost"]


def grounded(paths: list[Path]) -> list[Path]:
    """The Gemini streams whose candidates say grounding or citations."""
    return [p for p in paths if any(word in p.read_bytes() for word in _WORDS)]


def grounded_fixtures() -> list[Path]:
    return grounded(sorted((FIXTURES / GEMINI).iterdir()))


@functools.cache
def grounded_captures() -> list[Path]:
    return grounded(captures(GEMINI))


def sdk(value: Any, vertex: bool = False) -> types.GenerateContentResponse:
    """A response as google-genai's client reads a chunk (google/genai/models.py): the
    Developer API's names mapped (``citationSources``), or Vertex's, the fields it does
    not know left out (28 Gemini captures carry fields its types forbid)."""
    from google.genai import models

    mapped = (
        models._GenerateContentResponse_from_vertex(value, None, None)
        if vertex
        else models._GenerateContentResponse_from_mldev(value, None, None)
    )
    return types.GenerateContentResponse._from_response(response=mapped, kwargs={})


def is_vertex(data: bytes) -> bool:
    """Vertex names a candidate's citations ``citations``, the Developer API
    ``citationSources``: the client of the API that sent them reads them."""
    return b'"citations"' in data


def expected(chunks: list[Any], vertex: bool) -> dict[int, tuple[Any, list[Any], str]]:
    """Per candidate, what the SDK reads of the chunks: the last non-empty
    ``grounding_metadata``, every chunk's citations one after another, and the text."""
    out: dict[int, tuple[Any, list[Any], str]] = {}
    for chunk in chunks:
        for position, candidate in enumerate(sdk(chunk, vertex).candidates or []):
            index = candidate.index if candidate.index is not None else position
            grounding, cited, text = out.get(index, (None, [], ""))
            said = candidate.grounding_metadata
            if said is not None and said.model_dump(exclude_none=True):
                grounding = said
            if candidate.citation_metadata is not None:
                cited = cited + list(candidate.citation_metadata.citations or [])
            for part in candidate.content.parts or [] if candidate.content else []:
                if part.text is not None and not part.thought:
                    text += part.text
            out[index] = (grounding, cited, text)
    return out


def check_same_format(path: Path) -> None:
    data = path.read_bytes()
    chunks = [c for c in payloads(data) if "error" not in c]
    notes = Notes()
    (final,) = collected(data, notes=notes)
    assert lost(notes) == []
    vertex = is_vertex(data)
    response = sdk(final, vertex)
    for candidate in response.candidates or []:
        grounding, cited, text = expected(chunks, vertex)[candidate.index or 0]
        assert candidate.grounding_metadata == grounding
        said = candidate.citation_metadata.citations if candidate.citation_metadata else []
        assert said == cited
        joined = "".join(
            p.text for p in candidate.content.parts or [] if p.text is not None and not p.thought
        )
        assert joined == text
    usages = [c["usageMetadata"] for c in chunks if "usageMetadata" in c]
    last_usage = sdk({"usageMetadata": usages[-1]}, vertex).usage_metadata if usages else None
    assert response.usage_metadata == last_usage


# -- the same format ---------------------------------------------------------------------------


def test_collect_keeps_a_search_s_grounding_as_the_last_chunk_said_it() -> None:
    data = (FIXTURES / GEMINI / "search-grounding.sse").read_bytes()
    last = payloads(data)[-1]
    notes = Notes()
    (final,) = collected(data, notes=notes)
    candidate = final["candidates"][0]
    assert candidate["groundingMetadata"] == last["candidates"][0]["groundingMetadata"]
    assert final["usageMetadata"] == last["usageMetadata"]  # toolUsePromptTokenCount: 80
    assert lost(notes) == []
    check_same_format(FIXTURES / GEMINI / "search-grounding.sse")


def test_collect_keeps_the_citations_of_every_chunk() -> None:
    def chunk(text: str, cited: list[Any], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        candidate["citationMetadata"] = {"citations": cited}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "responseId": "r1"}

    first = {"startIndex": 0, "endIndex": 9, "uri": "https://tides.example.org/a"}
    second = {"startIndex": 10, "endIndex": 19, "uri": "https://tides.example.org/b"}
    beyond = {"startIndex": 10, "endIndex": 900, "uri": "https://tides.example.org/c"}
    data = sse([chunk("Spring ti", [first]), chunk("des rise.", [second, beyond], "STOP")])
    (final,) = collected(data)
    assert final["candidates"][0]["citationMetadata"] == {"citations": [first, second, beyond]}


@pytest.mark.parametrize("path", grounded_fixtures(), ids=lambda p: p.name)
def test_a_grounded_fixture_collects_as_the_sdk_reads_its_chunks(path: Path) -> None:
    check_same_format(path)


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_every_grounded_capture_collects_as_the_sdk_reads_its_chunks() -> None:
    paths = grounded_captures()
    # When written: 14 captures with groundingMetadata or citationMetadata.
    assert len(paths) >= 12
    for path in paths:
        try:
            check_same_format(path)
        except AssertionError as exc:
            raise AssertionError(path.name) from exc


def test_code_execution_parts_come_where_they_came() -> None:
    data = (FIXTURES / GEMINI / "code-execution.sse").read_bytes()
    said = [part for chunk in payloads(data) for part in chunk["candidates"][0]["content"]["parts"]]
    (final,) = collected(data)
    assert final["candidates"][0]["content"]["parts"] == said


def test_a_blocked_prompt_and_a_stream_without_an_id_collect_as_they_came() -> None:
    # The IR's filtered choice of a blocked prompt is no candidate Gemini sent; an id
    # the decoder made up for a stream without one is no field of its response.
    data = (FIXTURES / GEMINI / "prompt-blocked.sse").read_bytes()
    assert collected(data) == payloads(data)
    (final,) = collected((FIXTURES / GEMINI / "citations.sse").read_bytes())
    assert "responseId" not in final


def test_a_part_s_own_fields_are_said_lost() -> None:
    parts = [{"text": "Hi", "partMetadata": {"k": 1}}]
    candidate = {"content": {"parts": parts, "role": "model"}, "finishReason": "STOP"}
    data = sse([{"candidates": [candidate], "responseId": "r2"}])
    notes = Notes()
    collected(data, notes=notes)
    assert any("partMetadata" in message for message in lost(notes))


# -- across formats ----------------------------------------------------------------------------


def same_as_converted(data: bytes, target: str) -> None:
    direct = collected(data, target)
    out, _ = convert(data, target)
    assert direct == collected(out, None)


def test_a_grounded_stream_keeps_its_search_in_a_response_and_a_message() -> None:
    data = (FIXTURES / GEMINI / "search-grounding.sse").read_bytes()
    (response,) = collected(data, RESPONSES)
    search = response["output"][-1]
    assert search["type"] == "web_search_call"
    assert search["action"]["query"] == "tide tables Bergen today"
    (message,) = collected(data, ANTHROPIC)
    kinds = [block["type"] for block in message["content"]]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result"]
    assert len(message["content"][0]["citations"]) == 3


def test_another_format_s_citations_become_grounding() -> None:
    data = (FIXTURES / CHAT / "openai-url-citations.sse").read_bytes()
    (final,) = collected(data, GEMINI)
    grounding = final["candidates"][0]["groundingMetadata"]
    assert grounding["groundingSupports"] and grounding["groundingChunks"]
    same_as_converted(data, GEMINI)


@pytest.mark.parametrize("path", grounded_fixtures(), ids=lambda p: p.name)
@pytest.mark.parametrize("target", [RESPONSES, ANTHROPIC, CHAT, LLAMA])
def test_a_grounded_fixture_follows_the_rule(path: Path, target: str) -> None:
    same_as_converted(path.read_bytes(), target)


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_every_grounded_capture_follows_the_rule() -> None:
    for path in grounded_captures():
        for target in (RESPONSES, ANTHROPIC, CHAT, LLAMA):
            try:
                same_as_converted(path.read_bytes(), target)
            except AssertionError as exc:
                raise AssertionError(f"{path.name} --as {target}") from exc


_CITING = (b"url_citation", b"web_search", b"citations")


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_every_citing_capture_of_another_format_follows_the_rule_into_gemini() -> None:
    paths = [
        p
        for fmt in (CHAT, RESPONSES, ANTHROPIC)
        for p in captures(fmt)
        if any(word in p.read_bytes() for word in _CITING)
    ]
    # When written: 78 captures name a citation or a web search.
    assert len(paths) >= 50
    for path in paths:
        try:
            same_as_converted(path.read_bytes(), GEMINI)
        except AssertionError as exc:
            raise AssertionError(path.name) from exc


def _calls_said_early(notes: Notes) -> bool:
    """Convert wrote a call before its arguments were all said (another call's began:
    Gemini writes a call whole), and said so."""
    return any("arguments of a tool call already written" in m for m in lost(notes))


def _without_args(objects: list[Any]) -> list[Any]:
    for one in objects:
        for candidate in one.get("candidates", []):
            for part in candidate["content"].get("parts", []):
                part.get("functionCall", {}).pop("args", None)
    return objects


def every_other_stream() -> list[Any]:
    out = []
    for fmt in (CHAT, RESPONSES, ANTHROPIC, LLAMA):
        for path in sorted((FIXTURES / fmt).glob("*.*")) + captures(fmt):
            out.append(pytest.param(path, id=f"{fmt}/{path.name}"))
    return out


@pytest.mark.parametrize("path", every_other_stream())
def test_every_stream_of_another_format_follows_the_rule_into_gemini(path: Path) -> None:
    """Errors (an HTTP code, as the encoder writes it), a candidate the source left
    unfinished (STOP, as convert repairs it), one answer said in several items (one text
    part), arguments that are not a JSON object (none written), citations and searches.
    Where convert wrote a call before its arguments were all said (interleaved chat
    calls), it says so, and the arguments differ by design."""
    data = path.read_bytes()
    out, notes = convert(data, GEMINI)
    direct, via = collected(data, GEMINI), collected(out, None)
    if _calls_said_early(notes):
        assert direct != via
        direct, via = _without_args(direct), _without_args(via)
    assert direct == via

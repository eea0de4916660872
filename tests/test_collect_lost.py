"""``collect --as X`` says lost the citations it leaves out, as ``convert --to X`` does:
a Responses annotation no other format has words for (``file_citation``,
``container_file_citation``, ``file_path``) is field ``annotations`` lost in an
Anthropic message, a chat.completion and a Llama Stack response, once per record, and
Llama Stack, which has no citations, says every citation lost (``citations`` from
Anthropic, ``annotations`` from Responses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
)
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.captures import CAPTURES, captures
from tests.streams import CHAT, RESPONSES, convert

LLAMA = "llama-stack-event"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TARGETS = {ANTHROPIC: (RESPONSES, CHAT, LLAMA), RESPONSES: (ANTHROPIC, CHAT, LLAMA)}
# The fields a citation or annotation is said lost under.
FIELDS = ("annotations", "citations", "annotation.", "citation.")


def collected_notes(data: bytes, target: str) -> Notes:
    side = load(data, "input")
    side.notes = notes = Notes()
    for one in streams_of(side):
        collect(one, target_for(target, side.format), source=side.format, notes=notes)
    return notes


def cited(notes: Notes) -> dict[str, int]:
    return {k: v for k, v in notes.lost_fields.items() if k.startswith(FIELDS)}


def responses_message(annotations: list[dict[str, Any]]) -> bytes:
    """A Responses message whose text has ``annotations``, each said once its text is."""
    builder = ResponsesBuilder()
    head = {"item_id": "msg_files1", "output_index": 0, "content_index": 0}
    item = {"id": "msg_files1", "type": "message", "status": "in_progress", "role": "assistant"}
    builder.emit("response.output_item.added", output_index=0, item={**item, "content": []})
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    builder.emit("response.content_part.added", **head, part=part)
    builder.emit("response.output_text.delta", **head, delta="See the file.", logprobs=[])
    for number, annotation in enumerate(annotations):
        builder.emit(
            "response.output_text.annotation.added",
            **head,
            annotation_index=number,
            annotation=annotation,
        )
    builder.emit("response.output_text.done", **head, text="See the file.", logprobs=[])
    part = {**part, "annotations": annotations, "text": "See the file."}
    builder.emit("response.content_part.done", **head, part=part)
    done = {**item, "status": "completed", "content": [part]}
    builder.emit("response.output_item.done", output_index=0, item=done)
    builder.output.append(done)
    return builder.end(usage=responses_usage()).bytes()


FILED = {"type": "file_citation", "file_id": "file_notes1", "filename": "notes.txt", "index": 13}
CONTAINER = {
    "type": "container_file_citation",
    "container_id": "cntr_1",
    "file_id": "cfile_1",
    "filename": "plot.png",
    "start_index": 0,
    "end_index": 13,
}
URL = {"type": "url_citation", "url": "https://a.example/", "title": "A"}
URL |= {"start_index": 0, "end_index": 13}


@pytest.mark.parametrize("target", [ANTHROPIC, CHAT, LLAMA])
def test_a_file_citation_is_said_lost_as_convert_says_it(target: str) -> None:
    data = responses_message([FILED, CONTAINER])
    assert cited(collected_notes(data, target)) == {"annotations": 2}
    assert cited(convert(data, target)[1]) == {"annotations": 2}


def test_a_web_page_citation_has_a_place_but_in_llama_stack() -> None:
    data = responses_message([URL, FILED])
    for target, lost in ((ANTHROPIC, 1), (CHAT, 1), (LLAMA, 2)):
        assert cited(collected_notes(data, target)) == {"annotations": lost}, target
        assert cited(convert(data, target)[1]) == {"annotations": lost}, target


def test_the_response_keeps_its_own_annotations() -> None:
    side = load(responses_message([URL, FILED]), "input")
    (one,) = streams_of(side)
    response = collect(one, "responses", source=RESPONSES, notes=side.notes)
    (part,) = response["output"][0]["content"]
    assert part["annotations"] == [URL, FILED]
    assert cited(side.notes) == {}


def test_llama_stack_says_anthropic_citations_lost() -> None:
    page = {
        "type": "web_search_result_location",
        "cited_text": "Neap tides are smallest.",
        "url": "https://tides.example.org/neap",
        "title": "Neap tides",
        "encrypted_index": "Eo8B",
    }
    blocks = [
        block_start(0, {"type": "text", "text": "", "citations": []}),
        block_delta(0, {"type": "citations_delta", "citation": page}),
        block_delta(0, {"type": "citations_delta", "citation": page}),
        block_delta(0, {"type": "text_delta", "text": "Neap tides are small."}),
        block_stop(0),
    ]
    data = sse_events(stream(blocks))
    assert cited(collected_notes(data, LLAMA)) == {"citations": 2}
    assert cited(convert(data, LLAMA)[1]) == {"citations": 2}


def _sources() -> list[Path]:
    paths = []
    for fmt in TARGETS:
        paths += sorted(p for p in (FIXTURES / fmt).glob("*.*") if p.suffix != ".json")
        paths += captures(fmt)
    return paths


@pytest.mark.parametrize("path", _sources(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_collect_says_the_citations_lost_that_convert_says(path: Path) -> None:
    data = path.read_bytes()
    for target in TARGETS[path.parent.name]:
        said = cited(collected_notes(data, target))
        assert said == cited(convert(data, target)[1]), target


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_the_captures_have_files_cited() -> None:
    # When written: OpenAI's and Azure's file search and code interpreter captures.
    filed = [p for p in captures(RESPONSES) if b'"type":"file_citation"' in p.read_bytes()]
    filed += [p for p in captures(RESPONSES) if b"container_file_citation" in p.read_bytes()]
    assert len(filed) >= 4

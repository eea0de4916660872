"""``collect`` of an Anthropic stream builds each text block as the anthropic SDK's
accumulator (``accumulate_event``) does: the block its ``content_block_start`` gave, its
text, and each ``citations_delta``'s citation appended. A block that will cite starts
with ``"citations": []``, and keeps it when no citation comes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatx.collect import collect
from chatx.collect.streams import streams_of
from chatx.reading.framing import load
from tests.builders.anthropic_event import (
    ANTHROPIC,
    block_delta,
    block_start,
    block_stop,
    sse_events,
    stream,
    text,
)
from tests.captures import captures

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / ANTHROPIC
PAGE = {
    "type": "web_search_result_location",
    "cited_text": "Spring tides are largest.",
    "url": "https://tides.example.org/spring",
    "title": "Spring tides",
    "encrypted_index": "Eo8C",
}


def _block(index: int, head: dict[str, Any], *deltas: dict[str, Any]) -> list[Any]:
    return [
        block_start(index, {"type": "text", "text": "", **head}),
        *(block_delta(index, delta) for delta in deltas),
        block_stop(index),
    ]


def cited_stream() -> bytes:
    """A block that was to cite and did not, one that did, one that never was to."""
    return sse_events(
        stream(
            _block(0, {"citations": []}, {"type": "text_delta", "text": "Tides: "}),
            _block(
                1,
                {"citations": []},
                {"type": "citations_delta", "citation": PAGE},
                {"type": "text_delta", "text": "spring tides are largest"},
            ),
            text(2, "."),
            mid="msg_cite02",
        )
    )


def blocks(data: bytes) -> list[list[dict[str, Any]]]:
    side = load(data, "input")
    return [
        [b for b in collect(s, "anthropic", source=ANTHROPIC)["content"] if b["type"] == "text"]
        for s in streams_of(side)
    ]


def test_a_block_that_was_to_cite_keeps_its_empty_citations() -> None:
    (built,) = blocks(cited_stream())
    assert built == [
        {"type": "text", "text": "Tides: ", "citations": []},
        {"type": "text", "text": "spring tides are largest", "citations": [PAGE]},
        {"type": "text", "text": "."},
    ]


def test_a_blocks_own_fields_come_back() -> None:
    data = sse_events(stream(_block(0, {"note": {"k": 1}}, {"type": "text_delta", "text": "a"})))
    assert blocks(data) == [[{"type": "text", "text": "a", "note": {"k": 1}}]]


def sdk_blocks(data: bytes) -> list[list[dict[str, Any]]]:
    from tests.codecs.anthropic_event.test_oracle import sdk_messages

    return [[b.to_dict() for b in m.content if b.type == "text"] for m in sdk_messages(data)]


def test_the_sdk_builds_the_same_blocks() -> None:
    pytest.importorskip("anthropic", reason="the anthropic SDK (chatx[anthropic]) is the oracle")
    assert blocks(cited_stream()) == sdk_blocks(cited_stream())


def _streams() -> list[Any]:
    # A non-streaming Message is read as the stream it stands for; the SDK reads streams.
    paths = [p for p in sorted(FIXTURES.glob("*.*")) if p.suffix != ".json"]
    return [pytest.param(p, id=p.name) for p in [*paths, *captures(ANTHROPIC)]]


@pytest.mark.parametrize("path", _streams())
def test_every_stream_builds_the_text_blocks_the_sdk_builds(path: Path) -> None:
    pytest.importorskip("anthropic", reason="the anthropic SDK (chatx[anthropic]) is the oracle")
    data = path.read_bytes()
    assert blocks(data) == sdk_blocks(data)

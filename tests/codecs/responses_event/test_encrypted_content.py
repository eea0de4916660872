"""A Responses reasoning item's ``encrypted_content`` closes the IR reasoning item: a
signature of the text the item showed (a summary or reasoning text), or the reasoning
withheld when it showed none, as the Responses encoder writes Anthropic's signatures and
redacted thinking. Responses output gives the item back as it came; Anthropic output
writes a ``signature_delta`` or a ``redacted_thinking`` block, and says nothing lost for
it; chat and Llama Stack say the token lost once, by what it is."""

from __future__ import annotations

from typing import Any

import pytest

from chatx import ir
from tests.builders.anthropic_event import ANTHROPIC, sse_events, stream, text, thinking
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.streams import CHAT, RESPONSES, convert, events, payloads

LLAMA = "llama-stack-event"
TOKEN = "gAAAA-fixture-token"


def with_token(builder: ResponsesBuilder, token: Any = TOKEN) -> ResponsesBuilder:
    """The last item done gets ``encrypted_content`` (its done event and the output)."""
    builder.output[-1]["encrypted_content"] = token
    return builder


def withheld(builder: ResponsesBuilder, token: str = TOKEN) -> ResponsesBuilder:
    """A reasoning item with no summary and its encrypted content, as OpenAI sends it
    when no summary is asked for."""
    index, iid = len(builder.output), f"rs_{len(builder.events)}"
    added = {"id": iid, "type": "reasoning", "summary": []}
    builder.emit("response.output_item.added", output_index=index, item=added)
    item = {**added, "encrypted_content": token}
    builder.emit("response.output_item.done", output_index=index, item=item)
    builder.output.append(item)
    return builder


def ended(builder: ResponsesBuilder) -> bytes:
    return builder.message("Four.").end(usage=responses_usage()).bytes()


def summarized() -> bytes:
    return ended(with_token(ResponsesBuilder().reasoning("Two ", "and two.")))


def reasoning_ends(data: bytes) -> list[ir.ItemEnd]:
    return [e for e in events(data, RESPONSES) if type(e) is ir.ItemEnd and e.kind == "reasoning"]


def blocks(data: bytes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for event in payloads(data):
        if event["type"] == "content_block_start":
            out.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            for key in ("thinking", "signature", "text"):
                if key in event["delta"]:
                    out[-1][key] = out[-1].get(key, "") + event["delta"][key]
    return out


@pytest.mark.parametrize("family", ["summary", "text"])
def test_encrypted_content_of_an_item_that_showed_text_is_its_signature(family: str) -> None:
    data = ended(with_token(ResponsesBuilder().reasoning("Two ", "and two.", family=family)))
    (end,) = reasoning_ends(data)
    assert (end.signature, end.encrypted) == (TOKEN, None)


def test_encrypted_content_of_an_item_that_showed_none_is_the_reasoning_withheld() -> None:
    (end,) = reasoning_ends(ended(withheld(ResponsesBuilder())))
    assert (end.signature, end.encrypted) == (None, TOKEN)


@pytest.mark.parametrize("token", ["", None, 7])
def test_no_token_no_seal(token: Any) -> None:
    data = ended(with_token(ResponsesBuilder().reasoning("Two."), token))
    (end,) = reasoning_ends(data)
    assert (end.signature, end.encrypted) == (None, None)
    assert payloads(convert(data, RESPONSES, RESPONSES)[0]) == payloads(data)


@pytest.mark.parametrize("build", [summarized, lambda: ended(withheld(ResponsesBuilder()))])
def test_responses_output_gives_the_item_back_as_it_came(build: Any) -> None:
    data = build()
    out, notes = convert(data, RESPONSES, RESPONSES)
    assert payloads(out) == payloads(data)
    assert notes.summary() == []


def test_anthropic_output_writes_the_signature_and_says_nothing_lost() -> None:
    out, notes = convert(summarized(), ANTHROPIC, RESPONSES)
    assert blocks(out) == [
        {"type": "thinking", "thinking": "Two and two.", "signature": TOKEN},
        {"type": "text", "text": "Four."},
    ]
    assert not [path for path in notes.lost_fields if "encrypted_content" in path]


def test_anthropic_output_writes_withheld_reasoning_as_redacted_thinking() -> None:
    out, notes = convert(ended(withheld(ResponsesBuilder())), ANTHROPIC, RESPONSES)
    assert blocks(out) == [
        {"type": "redacted_thinking", "data": TOKEN},
        {"type": "text", "text": "Four."},
    ]
    assert not [path for path in notes.lost_fields if "encrypted_content" in path]


def test_the_done_items_other_fields_are_still_said_lost() -> None:
    builder = with_token(ResponsesBuilder().reasoning("Two."))
    builder.output[-1]["status"] = "completed"
    _, notes = convert(ended(builder), ANTHROPIC, RESPONSES)
    assert notes.lost_fields["item.item.status"] == 1
    assert "item.item.encrypted_content" not in notes.lost_fields


@pytest.mark.parametrize(
    ("build", "path"),
    [
        (summarized, "reasoning.signature"),
        (lambda: ended(withheld(ResponsesBuilder())), "reasoning.encrypted_content"),
    ],
)
@pytest.mark.parametrize("dst", [CHAT, LLAMA])
def test_formats_with_no_place_say_the_token_lost_once(build: Any, path: str, dst: str) -> None:
    _, notes = convert(build(), dst, RESPONSES)
    assert notes.lost_fields[path] == 1
    assert [p for p in notes.lost_fields if "encrypted_content" in p or "signature" in p] == [path]


def test_anthropic_through_responses_keeps_signatures_and_redacted_thinking() -> None:
    redacted = [
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
        },
        {"type": "content_block_stop", "index": 1},
    ]
    source = sse_events(
        stream(
            thinking(0, "Think ", "twice.", signature="c2lnLW9uZQ=="),
            redacted,
            text(2, "Done."),
            usage={"input_tokens": 5, "output_tokens": 0},
        )
    )
    middle, _ = convert(source, RESPONSES, ANTHROPIC)
    back, notes = convert(middle, ANTHROPIC, RESPONSES)
    assert (
        blocks(back)
        == blocks(source)
        == [
            {"type": "thinking", "thinking": "Think twice.", "signature": "c2lnLW9uZQ=="},
            {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
            {"type": "text", "text": "Done."},
        ]
    )
    assert not [p for p in notes.lost_fields if "encrypted_content" in p or "signature" in p]

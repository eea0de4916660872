"""``collect --as anthropic`` (the ``Message`` a client builds) and ``show`` of an
Anthropic stream."""

from __future__ import annotations

import json
from pathlib import Path

from chatx.codecs.anthropic_event import describe
from chatx.codecs.anthropic_event.final import other_item
from tests.builders.anthropic_event import (
    ANTHROPIC,
    block_delta,
    block_start,
    block_stop,
    sse_events,
    stream,
    text,
    tool_use,
)
from tests.builders.chat_chunk import chat_text
from tests.inprocess import run
from tests.streams import sse

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / ANTHROPIC


def collect(path: Path, *args: str) -> dict:
    result = run(["collect", str(path), "-q", *args])
    assert result.code == 0, result.err
    return json.loads(result.stdout)


def test_collecting_a_whole_message_gives_it_back():
    path = FIXTURES / "nonstream-message.json"
    assert collect(path, "--as", "anthropic") == json.loads(path.read_text())


def test_the_message_keeps_signatures_redacted_thinking_and_server_blocks():
    signed = collect(FIXTURES / "thinking-signature.sse")
    assert signed["content"][0] == {
        "type": "thinking",
        "thinking": "Seven times six is forty-two.",
        "signature": "ErUBCkYIBhgCIkChatxSignatureForTheFixtureOnlyAAAA",
    }
    assert signed["usage"]["output_tokens_details"] == {"thinking_tokens": 12}
    redacted = collect(FIXTURES / "redacted-thinking.sse")
    assert redacted["content"][0]["type"] == "redacted_thinking"
    search = collect(FIXTURES / "web-search.sse")
    assert [b["type"] for b in search["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert search["usage"]["server_tool_use"] == {"web_search_requests": 1}


def test_the_message_of_a_chat_stream(tmp_path: Path):
    path = tmp_path / "chat.sse"
    path.write_bytes(sse(chat_text("Hi", " there")))
    message = collect(path, "--as", "anthropic")
    assert message == {
        "id": "msg_T3st",
        "type": "message",
        "role": "assistant",
        "model": "gpt-test",
        "content": [{"type": "text", "text": "Hi there"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 7},
    }


def test_tool_input_is_parsed_and_an_empty_one_is_an_object(tmp_path: Path):
    path = tmp_path / "tools.sse"
    path.write_bytes(
        sse_events(
            stream(
                tool_use(0, "toolu_a", "f", '{"x": ', "1}"),
                tool_use(1, "toolu_b", "g"),
                stop="tool_use",
            )
        )
    )
    content = collect(path)["content"]
    assert [(b["id"], b["input"]) for b in content] == [("toolu_a", {"x": 1}), ("toolu_b", {})]


def test_other_item_is_a_block_the_ir_has_no_words_for():
    result = {"type": "web_search_tool_result", "tool_use_id": "s", "content": []}
    found = other_item(block_start(3, result))
    assert found is not None and (found.key, found.item, found.done) == (
        ("block", 3),
        result,
        False,
    )
    assert other_item(block_stop(3)) is None
    assert other_item(block_delta(3, {"type": "text_delta", "text": "x"})) is None


def test_other_item_of_an_input_delta_is_a_fragment_of_the_blocks_input():
    found = other_item(block_delta(3, {"type": "input_json_delta", "partial_json": '{"q'}))
    assert found is not None and (found.key, found.item, found.done, found.fragment) == (
        ("block", 3),
        {},
        False,
        '{"q',
    )
    assert other_item(block_delta(3, {"type": "input_json_delta", "partial_json": 7})) is None


def test_a_server_tool_calls_input_is_what_its_deltas_streamed(tmp_path: Path):
    search = collect(FIXTURES / "web-search.sse", "--as", "anthropic")
    assert search["content"][0] == {
        "type": "server_tool_use",
        "id": "srvtoolu_chatx_search01",
        "name": "web_search",
        "input": {"query": "tide tables Bergen"},
    }
    # A call that streams no input keeps the {} of its start; the result block has none.
    path = tmp_path / "empty.sse"
    call = {"type": "server_tool_use", "id": "srvtoolu_e", "name": "advisor", "input": {}}
    path.write_bytes(
        sse_events(
            stream(
                [
                    block_start(0, call),
                    block_delta(0, {"type": "input_json_delta", "partial_json": ""}),
                    block_stop(0),
                ],
                text(1, "ok"),
            )
        )
    )
    content = collect(path)["content"]
    assert content[0] == call and "input" not in search["content"][1]


def test_show_names_each_event_and_its_block_or_delta():
    assert describe.kinds(block_delta(0, {"type": "text_delta", "text": "x"})) == [
        "content_block_delta",
        "text_delta",
    ]
    assert describe.preview(block_delta(0, {"type": "text_delta", "text": "x"})) == "'x'"
    assert describe.kinds({"type": "message_stop"}) == ["message_stop"]
    # Responses events are not ours, its flat error event included.
    assert describe.kinds({"type": "response.created"}) is None
    assert describe.kinds({"type": "error", "message": "x", "error": {"message": "x"}}) is None
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert describe.preview(error) == "overloaded_error Overloaded"


def test_show_renders_an_anthropic_stream(tmp_path: Path):
    path = tmp_path / "a.sse"
    path.write_bytes(sse_events(stream(text(0, "Hello"), mid="msg_show")))
    result = run(["show", str(path)])
    assert result.code == 0, result.err
    out = result.stdout.decode()
    assert "anthropic-event" in out and "msg_show" in out and "Hello" in out
    assert "content_block_delta 1" in out


def test_diff_leaves_out_the_ids_and_signatures_of_two_runs(tmp_path: Path):
    one, two = tmp_path / "one.sse", tmp_path / "two.sse"
    one.write_bytes(sse_events(stream(tool_use(0, "toolu_a", "f", "{}"), mid="msg_a")))
    two.write_bytes(sse_events(stream(tool_use(0, "toolu_b", "f", "{}"), mid="msg_b")))
    assert run(["diff", str(one), str(two)]).code == 0
    assert run(["diff", "--no-normalize", str(one), str(two)]).code == 1


def test_collect_as_responses_maps_a_web_search_and_leaves_other_server_tools_out(tmp_path):
    result = run(["collect", str(FIXTURES / "web-search.sse"), "--as", "responses"])
    assert result.code == 0, result.err
    output = json.loads(result.stdout)["output"]
    # The search's call and result blocks are one web_search_call item (as convert
    # writes them); see tests/test_collect_across.py.
    assert [item["type"] for item in output] == ["web_search_call", "message"]
    assert "no place in a Responses response" not in result.err
    fetch = {"type": "server_tool_use", "id": "srvtoolu_f1", "name": "web_fetch", "input": {}}
    path = tmp_path / "fetch.sse"
    path.write_bytes(sse_events(stream([block_start(0, fetch), block_stop(0)], text(1, "Read."))))
    result = run(["collect", str(path), "--as", "responses"])
    assert [item["type"] for item in json.loads(result.stdout)["output"]] == ["message"]
    # In convert's words, as collect --as X says what it leaves out (chatx/collect/notes.py).
    said = "anthropic-event server_tool_use item with no Responses equivalent"
    assert f"lost: {path}:4: {said}" in result.err

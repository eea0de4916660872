"""What the fuzzers found, one small input each: a regression test per bug.

A field of an unexpected JSON type (a list where an index should be, a string where a
count should be) must make chatx skip that record with a message that names its line, or
read past it; never fail with an internal error. Every bug here is fixed: each entry is
its regression test, with the bug as it was found (its message, and the exception and
innermost chatx function it raised then, for the record: code has moved since, a
function named may now live in another module).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.inprocess import assert_clean, run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CHAT = FIXTURES / "chat-chunk" / "text.sse"
RESPONSES = FIXTURES / "responses-event" / "text.sse"
FUNCTION_CALL = FIXTURES / "responses-event" / "function-call.sse"

COMMANDS = [
    ["convert", "-", "--to", "chat-chunk"],
    ["convert", "-", "--to", "responses-event"],
    ["convert", "-", "--to", "llama-stack-event"],
    ["validate", "-"],
    ["show", "-", "--events"],
    ["collect", "-"],
    ["collect", "-", "--as", "responses"],
    ["diff", "-", str(CHAT)],
]


def edit(path: Path, match: dict[str, Any], **changes: Any) -> bytes:
    """The SSE fixture with ``changes`` made to the first payload that has ``match``'s
    top-level values (dotted keys reach into objects: ``delta.content``)."""
    out, done = [], False
    for block in path.read_bytes().decode().split("\n\n"):
        lines = block.split("\n")
        for n, line in enumerate(lines):
            if done or not line.startswith("data: {"):
                continue
            payload = json.loads(line[6:])
            if all(_get(payload, k) == v for k, v in match.items()):
                for key, value in changes.items():
                    _put(payload, key, value)
                lines[n] = "data: " + json.dumps(payload, separators=(",", ":"))
                done = True
        out.append("\n".join(lines))
    assert done, match
    return "\n\n".join(out).encode()


def _get(payload: Any, key: str) -> Any:
    for part in key.split("."):
        payload = payload[int(part)] if isinstance(payload, list) else payload.get(part)
    return payload


def _put(payload: Any, key: str, value: Any) -> None:
    *parents, last = key.split(".")
    for part in parents:
        payload = payload[int(part)] if isinstance(payload, list) else payload[part]
    payload[last] = value


def chunk_with(content: str, **changes: Any) -> bytes:
    """The chat fixture with changes to the chunk whose delta carries ``content``."""
    return edit(CHAT, {"choices.0.delta.content": content}, **changes)


def event_with(kind: str, path: Path = RESPONSES, **changes: Any) -> bytes:
    """A Responses fixture with changes to its first event of type ``kind``."""
    return edit(path, {"type": kind}, **changes)


# Bugs found and fixed: their inputs stay as regression tests (no reason, no signature).
def _item_closed_before_its_text(data: bytes) -> bytes:
    """The stream with its output_item.done moved before the first text delta."""
    blocks = data.split(b"\n\n")
    done = next(n for n, b in enumerate(blocks) if b"response.output_item.done" in b)
    delta = next(n for n, b in enumerate(blocks) if b"response.output_text.delta" in b)
    blocks.insert(delta, blocks.pop(done))
    return b"\n\n".join(blocks)


# name: (input, reason, signatures)
FOUND: dict[str, tuple[bytes, str, list[tuple[str, str]]]] = {
    "responses-item-added-output-index-list": (
        event_with("response.output_item.added", output_index=[]),
        "BUG chatx/codecs/responses_event/items.py _item_added: output_index [] in "
        "response.output_item.added is used as a dict key (TypeError: unhashable type: "
        "'list'); expected: the record skipped, 'output_index must be an integer'",
        [("TypeError", "codecs/responses_event/items.py:_item_added")],
    ),
    "responses-item-done-output-index-list": (
        event_with("response.output_item.done", output_index=[]),
        "BUG chatx/codecs/responses_event/items.py _item_done: output_index [] in "
        "response.output_item.done is used as a dict key (TypeError: unhashable type)",
        [("TypeError", "codecs/responses_event/items.py:_item_done")],
    ),
    "responses-created-id-null": (
        _item_closed_before_its_text(event_with("response.created", **{"response.id": None})),
        "BUG chatx/codecs/responses_event/encode.py _open: a response id null in the "
        "source's own envelope named the items (AttributeError: 'NoneType' object has no "
        "attribute 'startswith')",
        [("AttributeError", "codecs/responses_event/envelope.py:item_id")],
    ),
    "responses-delta-output-index-list": (
        event_with("response.output_text.delta", output_index=[]),
        "BUG chatx/codecs/responses_event/fast.py _text_fast: output_index [] in "
        "response.output_text.delta is used as a dict key (TypeError: unhashable type)",
        [("TypeError", "codecs/responses_event/fast.py:_text_fast")],
    ),
    "responses-delta-content-index-list": (
        event_with("response.output_text.delta", content_index=[]),
        "BUG chatx/codecs/responses_event/decode.py _delta: content_index [] in "
        "response.output_text.delta is used in a dict key (TypeError: unhashable type)",
        [("TypeError", "codecs/responses_event/decode.py:_delta")],
    ),
    "responses-done-output-index-list": (
        event_with("response.output_text.done", output_index=[]),
        "BUG chatx/codecs/responses_event/items.py _derived: output_index [] in "
        "response.output_text.done is used as a dict key (TypeError: unhashable type)",
        [("TypeError", "codecs/responses_event/items.py:_derived")],
    ),
    "responses-done-content-index-list": (
        event_with("response.output_text.done", content_index=[]),
        "BUG chatx/codecs/responses_event/items.py _done_only: content_index [] in "
        "response.output_text.done is used in a dict key (TypeError: unhashable type)",
        [("TypeError", "codecs/responses_event/items.py:_done_only")],
    ),
    "responses-part-done-content-index-list": (
        event_with("response.content_part.done", content_index=[]),
        "BUG chatx/codecs/responses_event/items.py _canonical: content_index [] in "
        "response.content_part.done is used in a dict key (TypeError: unhashable type)",
        [("TypeError", "codecs/responses_event/items.py:_canonical")],
    ),
    "responses-arguments-output-index-object": (
        event_with("response.function_call_arguments.delta", FUNCTION_CALL, output_index={}),
        "BUG chatx/codecs/responses_event/decode.py _arguments: output_index {} in "
        "response.function_call_arguments.delta is used as a dict key (TypeError)",
        [("TypeError", "codecs/responses_event/decode.py:_arguments")],
    ),
    "responses-logprobs-a-number": (
        event_with("response.output_text.delta", logprobs=5),
        "BUG chatx/codecs/responses_event/parts.py _text (and chatx/collect/streams.py "
        "Assembler._text, chatx/codecs/llama_stack_event/encode.py _scan): logprobs 5 on "
        "response.output_text.delta is iterated (TypeError: 'int' object is not iterable)",
        [
            ("TypeError", "codecs/responses_event/parts.py:_text"),
            ("TypeError", "assemble.py:_text"),
            ("TypeError", "codecs/llama_stack_event/encode.py:_scan"),
        ],
    ),
    "responses-logprob-token-object": (
        event_with(
            "response.output_text.delta",
            logprobs=[{"token": {}, "logprob": -1.0, "bytes": [], "top_logprobs": []}],
        ),
        "BUG chatx/codecs/llama_stack_event/records.py logprobs_from_ir: a logprob whose "
        "token is {} becomes a dict key (TypeError: unhashable type: 'dict'); a token that "
        "is a number or null becomes a non-string key (written as a string by the writer)",
        [("TypeError", "codecs/llama_stack_event/records.py:logprobs_from_ir")],
    ),
    "responses-item-added-arguments-a-number": (
        event_with("response.output_item.added", FUNCTION_CALL, **{"item.arguments": 1.5}),
        "BUG chatx/codecs/responses_event (items.py _item_added keeps item.arguments as a "
        "piece) and chatx/pieces.py Pieces.text: a function_call item added with arguments "
        "1.5 (a number) reaches ''.join() (TypeError: sequence item 0: expected str "
        "instance, float found) when the arguments are read (finish, collect, show, diff)",
        [("TypeError", "pieces.py:text")],
    ),
    "responses-model-a-number": (
        event_with("response.created", **{"response.model": 1.5}),
        "BUG chatx/codecs/responses_event (decoder: the response's model is passed on "
        "unchecked) and chatx/show.py _stream (safe(stream.model)): a Responses model 1.5 "
        "fails with AttributeError: 'float' object has no attribute 'split' (the chat "
        "decoder's fix covers chat streams only)",
        [("AttributeError", "show.py:safe")],
    ),
    "chat-choice-index-object": (
        edit(CHAT, {"choices.0.delta.content": "Hello"}, **{"choices.0.index": {}}),
        "BUG chatx/codecs/chat_chunk/decode.py _text_chunk: choices[0].index {} is used "
        "as a dict key (TypeError: unhashable type: 'dict'); expected: the record skipped, "
        "'index must be an integer'",
        [("TypeError", "codecs/chat_chunk/decode.py:_text_chunk")],
    ),
    "chat-choices-a-number": (
        chunk_with("Hello", choices=7),
        "BUG chatx/codecs/chat_chunk/decode.py feed (and chatx/show.py _chat_kinds): "
        "choices 7 is iterated (TypeError: 'int' object is not iterable); expected: the "
        "record skipped, 'choices must be a list'",
        [
            ("TypeError", "codecs/chat_chunk/decode.py:feed"),
            ("TypeError", "show.py:_chat_kinds"),
        ],
    ),
    "chat-tool-calls-a-number": (
        chunk_with("Hello", **{"choices.0.delta.tool_calls": 1.5}),
        "BUG chatx/show.py _chat_preview (show --events, diff's context): delta.tool_calls "
        "1.5 is iterated (TypeError: 'float' object is not iterable)",
        [("TypeError", "show.py:_chat_preview")],
    ),
    "chat-finish-reason-object": (
        edit(CHAT, {"choices.0.finish_reason": "stop"}, **{"choices.0.finish_reason": {"a": 1}}),
        "BUG chatx/codecs/llama_stack_event/records.py stop_word (from encode.py _finish): "
        "a chat finish_reason {'a': 1} reaches FINISH_TO_STOP.get() (TypeError: "
        "unhashable type); the chat decoder passes a finish_reason that is not a string on "
        "(chatx/show.py safe fails on it too)",
        [
            ("TypeError", "codecs/llama_stack_event/records.py:stop_word"),
            ("AttributeError", "show.py:safe"),
        ],
    ),
    "chat-id-a-number": (
        edit(CHAT, {"choices.0.delta.role": "assistant"}, id=5),
        "BUG chatx/codecs/responses_event/envelope.py responses_id (from encode.py "
        "_start): a chat id 5 reaches source_id.startswith() (AttributeError)",
        [("AttributeError", "codecs/responses_event/envelope.py:responses_id")],
    ),
    "chat-model-not-a-string": (
        edit(CHAT, {"choices.0.delta.role": "assistant"}, model=[1]),
        "BUG chatx/show.py _stream (safe(stream.model)): a model that is not a string "
        "(a list, a number) fails with AttributeError: 'list' object has no attribute "
        "'split'; the assembler passes the value through unchecked",
        [("AttributeError", "show.py:safe")],
    ),
    "chat-usage-a-string": (
        edit(CHAT, {"choices": []}, usage={"prompt_tokens": "12", "completion_tokens": 4}),
        "BUG chatx/codecs/chat_chunk/encode.py _usage (and responses_event/envelope.py "
        "usage_object, llama_stack_event/encode.py _complete, collect.py _chat_usage): "
        "prompt_tokens '12' is added to a number (TypeError); the decoders pass token "
        "counts that are not numbers on",
        [
            ("TypeError", "codecs/chat_chunk/encode.py:_usage"),
            ("TypeError", "codecs/responses_event/envelope.py:usage_object"),
            ("TypeError", "codecs/llama_stack_event/encode.py:_complete"),
            ("TypeError", "collect.py:_chat_usage"),
        ],
    ),
    "chat-usage-beyond-64-bits": (
        edit(
            CHAT,
            {"choices": []},
            usage={"prompt_tokens": 2**64 - 1, "completion_tokens": 4},
        ),
        "BUG chatx/cli/collect.py collect: the total of two counts is an integer beyond 64 "
        "bits, which orjson.dumps refuses (TypeError: Integer exceeds 64-bit range); the "
        "stream writers write it as a double (containers.payload.lenient_dumps)",
        [("TypeError", "cli/collect.py:collect")],
    ),
}


@pytest.mark.parametrize("name", list(FOUND))
def test_no_internal_error(name):
    """Every command on the input: exit 0, 1 or 2, and no internal error said anywhere."""
    data, _, _ = FOUND[name]
    for args in COMMANDS:
        result = run(args, data)
        assert_clean(result)
        assert b"internal error" not in result.stdout, args

"""``chatx collect``: the final objects, checked against the openai SDK's types and its own
stream accumulators (the real client as oracle)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pydantic
import pytest

from chatx import codecs, ir
from chatx.cli import app, main
from chatx.codecs.chat_chunk.final import to_chat
from chatx.codecs.llama_stack_event.final import to_llama_stack
from chatx.codecs.responses_event.final import to_response
from chatx.collect import collect
from chatx.collect.assembler import Assembler
from chatx.collect.streams import streams_of
from chatx.errors import UsageError
from chatx.notes import Notes
from chatx.reading.framing import load
from tests.captures import CAPTURES, capture_params, captures
from tests.streams import sse

openai = pytest.importorskip(
    "openai", reason="the openai SDK is the oracle (pip install -e '.[dev]')"
)
from openai._models import construct_type  # noqa: E402
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.lib.streaming.responses._responses import ResponseStreamState  # noqa: E402
from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: E402
from openai.types.responses import Response, ResponseStreamEvent  # noqa: E402

HAVE_LLAMA = "llama-stack-event" in codecs.names()


@pytest.fixture(autouse=True)
def _fresh_app() -> Iterator[None]:
    """main() registers the commands again on each call: undo that after each test so
    in-process runs stay fast (a command list that grows makes every call slower)."""
    saved = list(app.registered_commands)
    yield
    app.registered_commands[:] = saved


def _stream(*batches: list[ir.Event]) -> Assembler:
    stream = Assembler()
    for batch in batches:
        stream.feed(batch)
    return stream


def _tool_stream(finish: str = "tool_calls") -> Assembler:
    return _stream(
        [ir.StreamStart("chatcmpl-abc", "m", 100), ir.LaneStart(0)],
        [ir.ItemStart(0, "reasoning"), ir.ReasoningDelta(0, "hmm", source_field="reasoning")],
        [ir.ItemEnd(0, "reasoning"), ir.ItemStart(0, "message"), ir.TextDelta(0, "Let me look.")],
        [
            ir.ItemEnd(0, "message"),
            ir.ItemStart(0, "tool_call", call=0, call_id="call_1", name="get_weather"),
        ],
        [ir.ToolArgsDelta(0, 0, '{"city": '), ir.ToolArgsDelta(0, 0, '"Paris"}')],
        [ir.Finish(0, finish)],
        [ir.Usage(10, 5, 15, cached=2, reasoning=1)],
        [ir.StreamEnd()],
    )


# -- the builders -------------------------------------------------------------------------


def test_chat_completion_from_a_chat_stream() -> None:
    built = to_chat(_tool_stream(), "chat-chunk")
    ChatCompletion.model_validate(built)
    choice = built["choices"][0]
    assert built["id"] == "chatcmpl-abc" and built["object"] == "chat.completion"
    assert choice["message"]["content"] == "Let me look."
    assert choice["message"]["reasoning"] == "hmm"  # the source's own field name
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert choice["finish_reason"] == "tool_calls"
    assert built["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 2},
        "completion_tokens_details": {"reasoning_tokens": 1},
    }


def test_response_from_a_chat_stream_derives_ids_and_status() -> None:
    built = to_response(_tool_stream("length"), "chat-chunk")
    Response.model_validate(built)
    assert built["id"] == "resp_abc" and built["created_at"] == 100
    assert (built["status"], built["incomplete_details"]) == (
        "incomplete",
        {"reason": "max_output_tokens"},
    )
    assert [(item["type"], item["id"]) for item in built["output"]] == [
        ("reasoning", "rs_abc_0"),
        ("message", "msg_abc_1"),
        ("function_call", "fc_abc_2"),
    ]
    assert built["output"][0]["summary"] == [{"type": "summary_text", "text": "hmm"}]
    assert built["output"][2]["call_id"] == "call_1"
    assert built["usage"]["output_tokens_details"] == {"reasoning_tokens": 1}


def test_failed_and_unfinished_responses() -> None:
    failed = _stream([ir.StreamStart("chatcmpl-e"), ir.LaneStart(0)], [ir.Error("overloaded", 529)])
    notes = Notes()
    built = to_response(failed, "chat-chunk", notes=notes)
    assert built["status"] == "failed"
    # 529 is no Responses error code (the SDK types them as a list): said, not kept.
    assert built["error"] == {"code": "server_error", "message": "overloaded"}
    assert "529" in notes.summary()[0].message
    unfinished = _stream(
        [ir.StreamStart("chatcmpl-u"), ir.ItemStart(0, "message"), ir.TextDelta(0, "Half")]
    )
    built = to_response(unfinished, "chat-chunk")
    assert built["status"] == "in_progress"  # the snapshot a client holds, no invented end
    assert built["output"][0]["content"][0]["text"] == "Half"


def test_llama_stack_response() -> None:
    notes = Notes()
    built = to_llama_stack(_tool_stream(), "chat-chunk", notes=notes)
    message = built["completion_message"]
    assert message["stop_reason"] == "end_of_message"
    assert message["content"] == "Let me look."
    assert message["tool_calls"] == [
        {
            "call_id": "call_1",
            "tool_name": "get_weather",
            "arguments": {"city": "Paris"},
            "arguments_json": '{"city": "Paris"}',
        }
    ]
    assert [m["metric"] for m in built["metrics"]] == [
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
    ]
    assert any("reasoning" in n.message for n in notes.summary())  # said, not dropped
    bad = _stream(
        [ir.StreamStart("x"), ir.ItemStart(0, "tool_call", call=0, name="f")],
        [ir.ToolArgsDelta(0, 0, "{not json"), ir.Finish(0, "length")],
    )
    message = to_llama_stack(bad)["completion_message"]
    assert message["tool_calls"][0]["arguments"] == "{not json"
    assert message["stop_reason"] == "out_of_tokens"


def test_several_choices_need_a_choice_for_one_choice_objects() -> None:
    stream = _stream(
        [
            ir.StreamStart("x"),
            ir.ItemStart(0, "message"),
            ir.TextDelta(0, "a"),
            ir.ItemStart(1, "message"),
            ir.TextDelta(1, "b"),
        ]
    )
    assert len(collect(stream, "chat")["choices"]) == 2
    assert [c["index"] for c in collect(stream, "chat", choice=1)["choices"]] == [1]
    with pytest.raises(UsageError, match="--choice"):
        collect(stream, "responses")
    built = collect(stream, "responses", choice=1)
    assert built["output"][0]["content"][0]["text"] == "b"


# -- the command ----------------------------------------------------------------------------


def test_cli_collect_prints_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.sse"
    base = {"id": "chatcmpl-c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    path.write_bytes(
        sse(
            [
                {
                    **base,
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}],
                },
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
        )
    )
    assert main(["collect", str(path)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["choices"][0]["message"]["content"] == "Hi"
    assert main(["collect", str(path), "--as", "responses"]) == 0
    assert json.loads(capsys.readouterr().out)["output"][0]["content"][0]["text"] == "Hi"
    assert main(["collect", str(path), "--as", "nonsense"]) == 2
    assert "--as: unknown format 'nonsense'" in capsys.readouterr().err


def test_cli_collect_trouble(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.sse"
    empty.write_bytes(b"")
    assert main(["collect", str(empty)]) == 2
    assert main(["collect", str(tmp_path / "missing.sse")]) == 2
    err = capsys.readouterr().err
    assert "chatx: error:" in err and "Traceback" not in err
    # A record that cannot be read: the object is built from the rest, and exit 2 says
    # the input was not whole (as convert does).
    broken = tmp_path / "broken.sse"
    base = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
    broken.write_text(
        f'data: {base}[{{"index":0,"delta":{{"content":"Hi"}}}}]}}\n\n'
        'data: {"id": broken\n\n'
        f'data: {base}[{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}\n\n'
    )
    assert main(["collect", str(broken)]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["choices"][0]["message"]["content"] == "Hi"
    assert "skipped" in err and "broken.sse:3" in err


# -- every real capture -------------------------------------------------------------------


def _streams(path: Path) -> tuple[str, list[Assembler], list[Any]]:
    side = load(path.read_bytes(), path.name, keep=True)
    streams = streams_of(side)
    return side.format, streams, side.kept or []


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_every_capture_collects_to_every_object() -> None:
    count = 0
    for fmt in ("chat-chunk", "responses-event", "llama-stack-event"):
        if fmt == "llama-stack-event" and not HAVE_LLAMA:
            continue
        for path in captures(fmt):
            source, streams, _ = _streams(path)
            for stream in streams:
                choice = 0 if len(stream.choices) > 1 else None
                for target in ("chat", "responses", "llama-stack"):
                    orjson.dumps(collect(stream, target, source=source, choice=choice))
            count += 1
    assert count > 0


@pytest.mark.parametrize("path", capture_params("responses-event"))
def test_responses_collect_gives_back_the_terminal_response(path: Path) -> None:
    """Collecting a Responses stream rebuilds its terminal response exactly: items,
    envelope and usage, residue merged back."""
    _, streams, records = _streams(path)
    terminals = [
        r.data["response"]
        for r in records
        if isinstance(r.data, dict)
        and r.data.get("type") in ("response.completed", "response.incomplete", "response.failed")
    ]
    finished = [s for s in streams if s.ended]
    assert len(finished) == len(terminals)
    done = [r.data["item"] for r in records if _said(r, "response.output_item.done")]
    for stream, terminal in zip(finished, terminals, strict=True):
        if terminal.get("output") is None:
            # A terminal response without its output: the items the stream said done,
            # as the SDK's stream state recovers them.
            terminal = {**terminal, "output": done}
        assert to_response(stream, "responses-event") == terminal


def _said(record: Any, kind: str) -> bool:
    return isinstance(record.data, dict) and record.data.get("type") == kind


# -- the openai SDK's accumulators as oracle ----------------------------------------------------

# Chat captures the SDK's accumulator cannot take (it raises) or reads differently from
# chatx, with the reason. Everything else must agree on text, tool calls and usage.
SDK_CHAT_CANNOT = {
    "pydantic-ai__openrouter_web_search_annotations_stream__i0.sse": "annotations list entries without index: accumulate_delta raises",
    "vercel-ai__mistral-mistral-reasoning.jsonl": "content sent as a list of parts",
    "vercel-ai__mistral-mistral-tool-call.jsonl": "a tool call without index",
    "vercel-ai__openai-compatible-azure-text.jsonl": "a choice without delta",
}
SDK_CHAT_DIFFERS = {
    "simonw-llm__tools_streaming_variant_a__i0.sse": "Novita repeats id and name on every fragment: the SDK concatenates them "
    "('00', 'llm_versionllm_version'), chatx keeps the first",
    "vercel-ai__openai-compatible-issue-13703-mistral-thinking.jsonl": "content as a list of thinking/text parts: the SDK merges the lists, chatx takes "
    "the text parts",
    "vercel-ai__perplexity-perplexity-citations.jsonl": "the last chunk is object chat.completion.done, which the SDK's stream skips",
    "vercel-ai__perplexity-perplexity-text.jsonl": "the last chunk is object chat.completion.done, which the SDK's stream skips",
    "pydantic-ai__openai_moderation_stream__i0.sse": "the SDK keeps the usage of the last chunk only; a moderation chunk follows usage",
}


# The SDK's accumulators take about half a millisecond per event (they rebuild their
# snapshot each time); longer captures keep their checks above (valid objects, the exact
# terminal response) and skip only this comparison, to keep the suite fast.
SDK_MAX_EVENTS = 400


def _skip_long(records: list[Any]) -> None:
    if len(records) > SDK_MAX_EVENTS:
        pytest.skip(
            f"{len(records)} events: longer than the {SDK_MAX_EVENTS} the SDK oracle is run on"
        )


def _strip_nulls(value: Any) -> Any:
    # SDK-dumped captures (Llama Stack recorder) write every unset field as null; on the
    # wire those fields are absent, and the accumulator expects them so.
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_nulls(v) for v in value]
    return value


def _chunk(data: dict[str, Any]) -> Any:
    # The SDK's stream builds chunks with construct (no validation); validating is the
    # same object when the chunk is well formed, and much faster.
    try:
        return ChatCompletionChunk.model_validate(data)
    except pydantic.ValidationError:
        return ChatCompletionChunk.construct(**data)


def _sdk_chat(records: list[Any]) -> Any:
    state = ChatCompletionStreamState()
    for record in records:
        data = record.data
        # As the SDK's stream does: only chat.completion.chunk objects reach the state.
        if isinstance(data, dict) and data.get("object") == "chat.completion.chunk":
            state.handle_chunk(_chunk(_strip_nulls(data)))
    return state.current_completion_snapshot


def _validate_chat(built: dict[str, Any], stream: Assembler) -> None:
    valid = json.loads(json.dumps(built))
    for choice, lane in zip(valid["choices"], stream.choices, strict=True):
        if choice["finish_reason"] is None:
            # The stream ended without one; the type requires a value.
            assert lane.finish is None
            choice["finish_reason"] = "stop"
    ChatCompletion.model_validate(valid)


@pytest.mark.filterwarnings("ignore::UserWarning")  # SDK serializer warnings on odd chunks
@pytest.mark.parametrize("path", capture_params("chat-chunk"))
def test_chat_completion_matches_the_sdk_accumulator(path: Path) -> None:
    _, streams, records = _streams(path)
    built = to_chat(streams[0], "chat-chunk")
    _validate_chat(built, streams[0])
    if path.name in SDK_CHAT_CANNOT:
        pytest.skip(SDK_CHAT_CANNOT[path.name])
    _skip_long(records)
    sdk = _sdk_chat(records)
    ours = {c["index"]: c for c in built["choices"]}
    found = []
    for choice in sdk.choices:
        mine = ours[choice.index]["message"]
        calls = [
            (c.id, c.function.name, c.function.arguments or "")
            for c in choice.message.tool_calls or []
        ]
        found.append(
            (choice.message.content or None, calls)
            == (
                mine["content"],
                [
                    (c["id"], c["function"]["name"], c["function"]["arguments"])
                    for c in mine.get("tool_calls", [])
                ],
            )
        )
        found.append(choice.finish_reason == ours[choice.index]["finish_reason"])
    usage = sdk.usage and (
        sdk.usage.prompt_tokens,
        sdk.usage.completion_tokens,
        sdk.usage.total_tokens,
    )
    mine_usage = built["usage"] and (
        built["usage"]["prompt_tokens"],
        built["usage"]["completion_tokens"],
        built["usage"]["total_tokens"],
    )
    found.append(usage == mine_usage)
    assert all(found) != (path.name in SDK_CHAT_DIFFERS), SDK_CHAT_DIFFERS.get(path.name)


_EVENT = pydantic.TypeAdapter(ResponseStreamEvent)


def _event(data: dict[str, Any]) -> Any:
    try:
        return _EVENT.validate_python(data)
    except pydantic.ValidationError:
        return construct_type(type_=ResponseStreamEvent, value=data)


def _sdk_response(records: list[Any]) -> list[Any]:
    """The final response of each stream, as the SDK's ResponseStreamState builds it."""
    finals, state = [], None
    for record in records:
        data = record.data
        if not isinstance(data, dict):
            continue
        if data.get("type") == "response.created":
            state = ResponseStreamState(input_tools=openai.omit, text_format=openai.omit)
        if state is None:
            continue
        event = _event(data)
        for out in state.handle_event(event):  # type: ignore[arg-type]
            if out.type in ("response.completed", "response.incomplete", "response.failed"):
                finals.append(out.response)
    return finals


def _response_view(response: Any) -> tuple[Any, ...]:
    calls = [(i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"]
    usage = response.usage
    counts = usage and (usage.input_tokens, usage.output_tokens, usage.total_tokens)
    return response.output_text, calls, counts


# Responses captures the SDK's ResponseStreamState refuses (it raises or never starts).
SDK_RESPONSES_CANNOT = {
    "pydantic-ai__openai_responses-background_mode_streaming_starting_after_vcr__i1.sse": "a resumed stream (starting_after): no response.created to start from",
    "vercel-ai__azure-azure-client-tool-search.1.jsonl": "tool_search_call changes call_id between added and done",
    "vercel-ai__openai-openai-client-tool-search.1.jsonl": "tool_search_call changes call_id between added and done",
    "vercel-ai__openai-github-copilot-id-rotation.1.jsonl": "the Copilot endpoint rotates item ids between events",
    "vercel-ai__openai-issue-18970-programmatic-approval.1.jsonl": "a trimmed fixture: response.completed has no response id",
}


def _errors(model: Any, value: Any) -> set[tuple[Any, ...]]:
    """Where and why ``value`` fails the SDK type (empty when it validates)."""
    try:
        model.model_validate(value)
    except pydantic.ValidationError as exc:
        return {(tuple(e["loc"]), e["type"]) for e in exc.errors()}
    return set()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("path", capture_params("responses-event"))
def test_response_matches_the_sdk_accumulator(path: Path) -> None:
    _, streams, records = _streams(path)
    built = [to_response(s, "responses-event") for s in streams if s.ended]
    terminals = [
        r.data["response"]
        for r in records
        if isinstance(r.data, dict)
        and r.data.get("type") in ("response.completed", "response.incomplete", "response.failed")
    ]
    for response, terminal in zip(built, terminals, strict=True):
        # Valid as far as what the server sent is: the SDK's types are stricter than
        # real servers (cache_write_tokens is required, xAI leaves out fields).
        assert _errors(Response, response) <= _errors(Response, terminal)
    if path.name in SDK_RESPONSES_CANNOT:
        pytest.skip(SDK_RESPONSES_CANNOT[path.name])
    _skip_long(records)
    sdk = _sdk_response(records)
    assert [_response_view(Response.construct(**r)) for r in built] == [
        _response_view(r) for r in sdk
    ]


@pytest.mark.parametrize("path", capture_params("chat-chunk"))
def test_chat_captures_collect_to_valid_responses(path: Path) -> None:
    _, streams, _ = _streams(path)
    stream = streams[0]
    for lane in stream.choices or [stream.lane(0)]:
        assert _errors(Response, to_response(stream, "chat-chunk", lane.index)) == set()

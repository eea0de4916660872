"""The rule of ``tests/test_collect_across.py`` for every stream: ``collect --as X`` of a
stream equals ``collect`` of ``convert --to X`` of it, for every capture and fixture of
every format and every other format X with a final object; a several-choice chat stream
once per choice (``--choice N`` on both sides). The converted output is read as format X:
a stream that is nothing but an error frame is the same record in chat and Llama Stack.

Failed streams follow what a server of X sends and its SDK's accumulator gives: a chat,
Anthropic or Llama Stack error ends the stream, so another format's finish reason or
usage said after its error (a Responses ``response.failed``) is not said (Anthropic
``stop_reason`` null, chat ``finish_reason`` null, Llama Stack ``stop_reason`` null) and a
chat choice whose first chunk came is a choice. A stream that ended without a finish
reason ends with the one X requires, as convert repairs it.

Where the two cannot agree by design, ``DESIGN`` names the kind of stream and why, and
the test checks that they differ only there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatx.collect import collect, target_for
from chatx.collect.streams import streams_of
from chatx.notes import Notes
from chatx.reading.framing import load
from chatx.validation import validate_records
from tests.builders.anthropic_event import ANTHROPIC
from tests.builders.chat_chunk import chunk, usage_chunk
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.captures import CAPTURES, capture_choices, captures
from tests.streams import CHAT, RESPONSES, convert, payloads, sse

LLAMA = "llama-stack-event"
FORMATS = (CHAT, RESPONSES, LLAMA, ANTHROPIC)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def collected(
    data: bytes,
    target: str | None,
    fmt: str | None = None,
    choice: int | None = None,
    notes: Notes | None = None,
) -> list[Any]:
    """``chatx collect [--from fmt] [--as target] [--choice N]``: one object per stream."""
    side = load(data, "input", fmt)
    if notes is not None:
        side.notes = notes
    name = target_for(target, side.format)
    return [
        collect(s, name, source=side.format, choice=choice, notes=side.notes)
        for s in streams_of(side)
    ]


def both(data: bytes, target: str, choice: int | None = None) -> tuple[list[Any], list[Any]]:
    """``collect --as target`` of ``data``, and ``collect`` of its conversion."""
    out, _ = convert(data, target, choice=choice)
    return collected(data, target, choice=choice), collected(out, None, target)


# -- where the two cannot agree, by design ---------------------------------------------------


def _unparsed_call(data: bytes) -> bool:
    """A tool call whose arguments are not a JSON object (cut off by max_tokens)."""
    for stream in streams_of(load(data, "input")):
        for lane in stream.lanes.values():
            for call in lane.calls:
                try:
                    if type(json.loads(call.arguments or "{}")) is not dict:
                        return True
                except ValueError:
                    return True
    return False


# (target, the kind of stream, why, the fields of the final object that differ)
DESIGN = [
    (
        LLAMA,
        _unparsed_call,
        "a tool call whose arguments are not JSON: a Llama Stack stream can say it only as "
        "a failed parse, the call's text with no name or call id, which its client reads "
        "as message text (Llama Stack's own OpenAI-compat layer streams it so); its "
        "response holds the call, the arguments as a string",
        ("content", "tool_calls"),
    ),
]


def check(data: bytes, source: str, target: str, choice: int | None = None) -> None:
    direct, via = both(data, target, choice)
    for kind_target, kind, why, fields in DESIGN:
        if kind_target == target and kind(data):
            assert direct != via, f"no longer differs: {why}"
            for one in (*direct, *via):
                for name in fields:
                    one["completion_message"].pop(name)
    assert direct == via


def streams() -> list[Any]:
    out = []
    for fmt in FORMATS:
        paths = sorted((FIXTURES / fmt).glob("*.*")) + captures(fmt)
        for path in paths:
            for choice in capture_choices(path):
                suffix = "" if choice is None else f"-choice{choice}"
                out.append(pytest.param(path, choice, id=f"{fmt}/{path.name}{suffix}"))
    return out


@pytest.mark.parametrize(("path", "choice"), streams())
def test_every_stream_follows_the_rule(path: Path, choice: int | None) -> None:
    source = path.parent.name
    for target in FORMATS:
        if target != source:
            try:
                check(path.read_bytes(), source, target, choice)
            except AssertionError as exc:
                raise AssertionError(f"--as {target}") from exc


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_the_design_cases_are_there() -> None:
    # When written: an Anthropic SDK fixture whose call input max_tokens cut.
    paths = [p for fmt in FORMATS for p in captures(fmt) if _unparsed_call(p.read_bytes())]
    assert len(paths) >= 1


# -- failed streams ---------------------------------------------------------------------------


def failed_after_text(*, error_event: bool = True) -> bytes:
    """A Responses stream that fails after some text: its error event, then
    response.failed with the usage so far."""
    builder = ResponsesBuilder()
    builder.message("Half an ans")
    if error_event:
        builder.emit("error", code="server_error", message="The model crashed.", param=None)
    error = {"code": "server_error", "message": "The model crashed."}
    return builder.end("failed", usage=responses_usage(), error=error).bytes()


def failed_before_text() -> bytes:
    builder = ResponsesBuilder()
    builder.emit("error", code="server_error", message="Overloaded.", param=None)
    error = {"code": "server_error", "message": "Overloaded."}
    return builder.end("failed", error=error).bytes()


@pytest.mark.parametrize("data", [failed_after_text(), failed_before_text()], ids=["text", "none"])
@pytest.mark.parametrize("target", [CHAT, ANTHROPIC, LLAMA])
def test_a_failed_stream_follows_the_rule(data: bytes, target: str) -> None:
    check(data, RESPONSES, target)


def test_an_anthropic_message_that_failed_has_no_stop_reason() -> None:
    notes = Notes()
    (message,) = collected(failed_after_text(), ANTHROPIC, notes=notes)
    assert message["content"] == [{"type": "text", "text": "Half an ans"}]
    # No message_delta: the API writes nothing after its error event.
    assert (message["stop_reason"], message["usage"]) == (
        None,
        {"input_tokens": 0, "output_tokens": 0},
    )
    said = [n.message for n in notes.summary()]
    assert "what came after the error event has no place" in said


def test_the_anthropic_sdk_sees_no_stop_reason() -> None:
    pytest.importorskip("anthropic", reason="the anthropic SDK (chatx[anthropic]) is the oracle")
    from tests.codecs.anthropic_event.test_oracle import sdk_messages

    out, _ = convert(failed_after_text(), ANTHROPIC)
    (sdk,) = sdk_messages(out)
    (message,) = collected(failed_after_text(), ANTHROPIC)
    assert sdk.stop_reason is message["stop_reason"] is None
    assert [b.text for b in sdk.content] == ["Half an ans"]


def test_a_chat_completion_that_failed_keeps_its_choice_unfinished() -> None:
    cases = ((failed_after_text(), "Half an ans", 18), (failed_before_text(), None, None))
    for data, content, total in cases:
        (completion,) = collected(data, CHAT)
        (choice,) = completion["choices"]
        assert (choice["message"]["content"], choice["finish_reason"]) == (content, None)
        # The usage came after the error, as the chat encoder writes it on its error chunk.
        assert (completion["usage"] or {}).get("total_tokens") == total


def test_chat_output_writes_nothing_after_the_error_frame() -> None:
    out, notes = convert(failed_after_text(), CHAT)
    chunks = payloads(out)
    # response.failed's usage rides on the error chunk, as OpenRouter writes it.
    assert chunks[-1]["error"] == {"message": "The model crashed.", "code": "server_error"}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 18
    # The error frame is a warning; no chunk after it (CHK018).
    assert [f.rule for f in validate_records(out, CHAT)] == ["CHK017"]
    said = [n.message for n in notes.summary()]
    assert not any("after the error frame" in m for m in said)


def test_the_openai_sdk_keeps_the_choice_of_a_failed_stream() -> None:
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    out, _ = convert(failed_before_text(), CHAT)
    state = ChatCompletionStreamState()
    for payload in payloads(out):
        if "error" in payload:
            break  # the SDK's stream raises at the error frame
        state.handle_chunk(ChatCompletionChunk.model_validate(payload))
    sdk = state.current_completion_snapshot
    (completion,) = collected(out, None, CHAT)
    assert [(c.index, c.finish_reason) for c in sdk.choices] == [
        (c["index"], c["finish_reason"]) for c in completion["choices"]
    ]
    assert len(sdk.choices) == 1


def test_a_llama_stack_response_that_failed_has_no_stop_reason() -> None:
    (response,) = collected(failed_after_text(), LLAMA)
    message = response["completion_message"]
    assert (message["content"], message["stop_reason"]) == ("Half an ans", None)
    assert response["metrics"] is None


def test_a_failure_no_error_event_said_is_a_stop() -> None:
    """A response.failed with no error event before it: chat output has no error frame
    to end the stream with, and writes finish_reason stop, said lost."""
    data = failed_after_text(error_event=False)
    check(data, RESPONSES, CHAT)
    notes = Notes()
    (completion,) = collected(data, CHAT, notes=notes)
    assert completion["choices"][0]["finish_reason"] == "stop"
    said = [n.message for n in notes.summary()]
    assert "finish reason 'error' (the generation failed): written as 'stop'" in said


def test_a_response_error_code_is_a_responses_one() -> None:
    chunks = [chunk({"role": "assistant", "content": "Hi"})]
    chunks.append({"error": {"message": "Rate limited.", "code": 429}})
    data = sse(chunks)
    check(data, CHAT, RESPONSES)
    notes = Notes()
    (response,) = collected(data, RESPONSES, notes=notes)
    assert response["error"] == {"code": "server_error", "message": "Rate limited."}
    said = [n.message for n in notes.summary()]
    assert "error code '429' is not a Responses error code: written as server_error" in said


def test_an_error_before_any_stream_has_no_message_id() -> None:
    data = sse([{"error": {"message": "Too long.", "type": "BadRequestError", "code": 400}}])
    check(data, CHAT, ANTHROPIC)
    (message,) = collected(data, ANTHROPIC)
    assert message["id"] == ""


# -- streams that end without a finish reason -------------------------------------------------


def unfinished_chat(*, call: bool = False) -> bytes:
    """A chat stream that ends ([DONE]) with no finish_reason (Snowflake's)."""
    chunks = [chunk({"role": "assistant", "content": "Done"})]
    if call:
        entry = {"index": 0, "id": "call_1", "type": "function"}
        entry["function"] = {"name": "f", "arguments": "{}"}
        chunks.append(chunk({"tool_calls": [entry]}))
    return sse([*chunks, usage_chunk()])


@pytest.mark.parametrize("call", [False, True], ids=["text", "call"])
@pytest.mark.parametrize("target", [ANTHROPIC, RESPONSES, LLAMA])
def test_a_stream_without_a_finish_reason_ends_as_convert_ends_it(target: str, call: bool):
    check(unfinished_chat(call=call), CHAT, target)
    notes = Notes()
    (final,) = collected(unfinished_chat(call=call), target, notes=notes)
    if target == ANTHROPIC:
        assert final["stop_reason"] == ("tool_use" if call else "end_turn")
        assert any(n.kind == "repaired" for n in notes.summary())
    elif target == RESPONSES:
        assert final["status"] == "completed"
    else:
        assert final["completion_message"]["stop_reason"] == "end_of_turn"


def test_a_stream_cut_short_stays_in_progress() -> None:
    data = sse([chunk({"role": "assistant", "content": "Cut"})], done=False)
    check(data, CHAT, RESPONSES)
    (response,) = collected(data, RESPONSES)
    assert response["status"] == "in_progress"


# -- what else the rule found -----------------------------------------------------------------


def test_logprobs_without_bytes_have_none_in_a_response() -> None:
    logprobs = {"content": [{"token": "<|end|>", "logprob": -0.1, "bytes": None}]}
    first = chunk({"role": "assistant", "content": "Hi"})
    first["choices"][0]["logprobs"] = logprobs
    data = sse([first, chunk({}, "stop")])
    check(data, CHAT, RESPONSES)
    (response,) = collected(data, RESPONSES)
    (part,) = response["output"][0]["content"]
    assert part["logprobs"][0]["bytes"] == []


def test_llama_special_tokens_in_chat_text_are_read_as_llama_stack_reads_them() -> None:
    call = '{"name": "greet", "parameters": {"who": "world"}}'
    data = sse(
        [chunk({"role": "assistant", "content": "<|python_tag|>" + call}), chunk({}, "stop")]
    )
    check(data, CHAT, LLAMA)
    (response,) = collected(data, LLAMA)
    message = response["completion_message"]
    assert message["content"] == ""
    assert [(c["tool_name"], c["arguments"]) for c in message["tool_calls"]] == [
        ("greet", {"who": "world"})
    ]
    data = sse([chunk({"role": "assistant", "content": "Bye.<|eom_id|>"}), chunk({}, "stop")])
    check(data, CHAT, LLAMA)
    (response,) = collected(data, LLAMA)
    assert response["completion_message"]["content"] == "Bye."
    assert response["completion_message"]["stop_reason"] == "end_of_message"

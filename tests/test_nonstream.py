"""Non-streaming objects are read as the streams they stand for: the inverse of collect.

A ``chat.completion``, a Responses ``response`` and a Llama Stack
``ChatCompletionResponse`` convert to the records a server streams for them; ``collect``
of the object and of that stream give back the object; ``validate`` says the object is
not a stream (STR003). The openai SDK's stream accumulators are the oracle for the chat
and Responses streams.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx import codecs, pipeline
from chatx.collect import DEFAULT_TARGET, collect
from chatx.collect.streams import streams_of
from chatx.errors import NotRepresentable
from chatx.notes import Notes
from chatx.reading import framing
from chatx.reading.framing import load
from chatx.record import Record
from chatx.validation import validate_records
from tests.captures import CAPTURES, captures
from tests.inprocess import run
from tests.streams import convert, payloads

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CHAT, RESPONSES, LLAMA = "chat-chunk", "responses-event", "llama-stack-event"
OBJECTS = {
    "chat-text": (CHAT, "nonstream-completion.json"),
    "chat-tools": (CHAT, "nonstream-tool-calls.json"),
    "responses-text": (RESPONSES, "nonstream-response.json"),
    "responses-tools": (RESPONSES, "nonstream-function-calls.json"),
    "llama-text": (LLAMA, "nonstream-completion.json"),
    "llama-tools": (LLAMA, "nonstream-tool-calls.json"),
}


def fixture(name: str) -> tuple[str, bytes, dict[str, Any]]:
    fmt, file = OBJECTS[name]
    data = (FIXTURES / fmt / file).read_bytes()
    return fmt, data, orjson.loads(data)


def collected(data: bytes, fmt: str | None = None) -> tuple[list[dict[str, Any]], Notes]:
    """What ``chatx collect`` prints for ``data``: one object per stream, and its notes."""
    side = load(data, "<input>", fmt)
    target = DEFAULT_TARGET[side.format]
    built = [
        collect(stream, target, source=side.format, notes=side.notes) for stream in streams_of(side)
    ]
    return built, side.notes


def said(notes: Notes) -> list[str]:
    return [str(note) for note in notes.summary()]


# -- collect: the object, read as its stream, gives back the object -----------------------


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_collect_of_the_object_equals_collect_of_its_stream(name: str) -> None:
    fmt, data, _ = fixture(name)
    direct, notes = collected(data)
    stream, _ = convert(data, fmt)
    again, _ = collected(stream)
    assert direct == again and len(direct) == 1
    assert not [n for n in notes.items if n.kind in ("repaired", "skipped", "warning")]


def test_chat_completion_collects_to_itself() -> None:
    _, data, obj = fixture("chat-text")
    (built,), _ = collected(data)
    assert built["choices"][0]["message"]["content"] == "Oslo is the capital of Norway."
    for key in ("id", "object", "created", "model", "usage", "service_tier", "system_fingerprint"):
        assert built[key] == obj[key], key
    assert built["choices"][0]["finish_reason"] == "stop"


def test_chat_tool_calls_and_reasoning_collect_to_themselves() -> None:
    _, data, obj = fixture("chat-tools")
    (built,), _ = collected(data)
    message, want = built["choices"][0]["message"], obj["choices"][0]["message"]
    assert message["tool_calls"] == want["tool_calls"]
    assert message["reasoning_content"] == want["reasoning_content"]
    assert message["content"] is None
    assert built["choices"][0]["finish_reason"] == "tool_calls"
    assert built["usage"] == obj["usage"]


@pytest.mark.parametrize("name", ["responses-text", "responses-tools"])
def test_response_collects_to_itself_exactly(name: str) -> None:
    _, data, obj = fixture(name)
    (built,), _ = collected(data)
    assert built == obj


@pytest.mark.parametrize("name", ["llama-text", "llama-tools"])
def test_llama_completion_collects_to_its_content(name: str) -> None:
    _, data, obj = fixture(name)
    (built,), _ = collected(data)
    message, want = built["completion_message"], obj["completion_message"]
    assert message["content"] == want["content"]
    assert message["stop_reason"] == want["stop_reason"]
    calls = [(c["call_id"], c["tool_name"], c["arguments"]) for c in message["tool_calls"]]
    assert calls == [(c["call_id"], c["tool_name"], c["arguments"]) for c in want["tool_calls"]]
    values = {m["metric"]: m["value"] for m in built["metrics"]}
    assert values == {m["metric"]: m["value"] for m in obj["metrics"]}


def test_chat_logprobs_refusal_and_two_choices_survive() -> None:
    obj = {
        "id": "chatcmpl-lp",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi", "refusal": None},
                "logprobs": {
                    "content": [{"token": "Hi", "logprob": -0.01, "bytes": [72, 105],
                                 "top_logprobs": []}],
                    "refusal": None,
                },
                "finish_reason": "stop",
            },
            {
                "index": 1,
                "message": {"role": "assistant", "content": None, "refusal": "No."},
                "logprobs": {
                    "content": None,
                    "refusal": [{"token": "No.", "logprob": -0.2, "bytes": [78, 111, 46],
                                 "top_logprobs": []}],
                },
                "finish_reason": "stop",
            },
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }  # fmt: skip
    data = orjson.dumps(obj)
    (built,), _ = collected(data)
    assert built["choices"] == obj["choices"]
    out, notes = convert(data, CHAT)
    assert validate_records(out, CHAT) == [] and not notes.items
    lanes = [p["choices"][0]["index"] for p in payloads(out) if p["choices"]]
    assert lanes == [0, 0, 0, 1, 1, 1]  # role, content, finish for each choice in turn


# -- the streams written --------------------------------------------------------------------


def test_chat_completion_becomes_the_chunks_a_server_streams() -> None:
    _, data, _ = fixture("chat-text")
    out, notes = convert(data, CHAT)
    chunks = payloads(out)
    assert [c["choices"][0]["delta"] if c["choices"] else c["usage"] for c in chunks] == [
        {"role": "assistant"},
        {"content": "Oslo is the capital of Norway."},
        {},
        orjson.loads(data)["usage"],
    ]
    assert [c["choices"][0]["finish_reason"] for c in chunks[:3]] == [None, None, "stop"]
    assert {(c["id"], c["object"], c["created"], c["system_fingerprint"]) for c in chunks} == {
        ("chatcmpl-nonstream1", "chat.completion.chunk", 1767225600, "fp_nonstream")
    }
    assert out.endswith(b"data: [DONE]\n\n")
    assert not notes.items


def test_chat_tool_calls_become_one_chunk_per_call() -> None:
    _, data, _ = fixture("chat-tools")
    out, _ = convert(data, CHAT)
    deltas = [c["choices"][0]["delta"] for c in payloads(out) if c["choices"]]
    assert deltas[1] == {"reasoning_content": "Two cities: call the tool twice."}
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert [(c["index"], c["id"], c["function"]["arguments"]) for c in calls] == [
        (0, "call_ns1", '{"city": "Oslo"}'),
        (1, "call_ns2", '{"city": "Bergen"}'),
    ]


def test_response_becomes_its_events() -> None:
    _, data, obj = fixture("responses-text")
    out, notes = convert(data, RESPONSES)
    events = payloads(out)
    assert [e["type"].removeprefix("response.") for e in events] == [
        "created", "in_progress",
        "output_item.added", "reasoning_summary_part.added", "reasoning_summary_text.delta",
        "reasoning_summary_text.done", "reasoning_summary_part.done", "output_item.done",
        "output_item.added", "content_part.added", "output_text.delta", "output_text.done",
        "content_part.done", "output_item.done",
        "completed",
    ]  # fmt: skip
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    created = events[0]["response"]
    assert created["status"] == "in_progress" and created["output"] == []
    assert created["usage"] is None and created["completed_at"] is None
    assert created["reasoning"] == obj["reasoning"]
    assert events[-1]["response"] == obj
    assert not notes.items


def test_failed_response_says_its_error_before_the_terminal_event() -> None:
    obj = {"id": "resp_f", "object": "response", "created_at": 1, "model": "m",
           "status": "failed", "output": [],
           "error": {"code": "server_error", "message": "The model crashed."}}  # fmt: skip
    out, _ = convert(orjson.dumps(obj), RESPONSES)
    events = payloads(out)
    assert [e["type"] for e in events[2:]] == ["error", "response.failed"]
    assert events[2]["message"] == "The model crashed."
    chat, _ = convert(orjson.dumps(obj), CHAT)
    error = payloads(chat)[-1]["error"]
    assert (error["message"], error["code"]) == ("The model crashed.", "server_error")


def test_response_still_in_progress_has_no_terminal_event() -> None:
    obj = {"id": "resp_q", "object": "response", "created_at": 1, "model": "m",
           "status": "queued", "output": []}  # fmt: skip
    out, notes = convert(orjson.dumps(obj), RESPONSES)
    assert [e["type"] for e in payloads(out)] == ["response.created", "response.in_progress"]
    assert any("status 'queued'" in n.message for n in notes.items if n.kind == "warning")


@pytest.mark.parametrize(
    "obj",
    [
        {"object": "response", "status": [], "output": []},
        {"object": "response", "status": "completed",
         "output": [{"type": "message", "content": [{"type": ["output_text"]}, "x"]}, 1]},
        {"object": "chat.completion", "choices": [{"message": [], "finish_reason": {}}]},
        {"completion_message": {"content": [1, {"type": []}], "tool_calls": [2, {}]}},
    ],
)  # fmt: skip
def test_a_malformed_object_is_read_as_far_as_it_says(obj: dict[str, Any]) -> None:
    """Odd values in an object are the decoder's to judge, never a crash."""
    for dst in (CHAT, RESPONSES, LLAMA):
        _, notes = convert(orjson.dumps(obj), dst)
        assert not [n for n in notes.items if n.kind == "skipped"], said(notes)


def test_llama_completion_becomes_its_events() -> None:
    _, data, obj = fixture("llama-tools")
    out, notes = convert(data, LLAMA)
    events = [p["event"] for p in payloads(out)]
    kinds = [(e["event_type"], e["delta"].get("parse_status"), e["stop_reason"]) for e in events]
    assert kinds == [
        ("start", None, None),
        ("progress", "started", None), ("progress", "in_progress", None),
        ("progress", "succeeded", None),
        ("progress", "started", None), ("progress", "in_progress", None),
        ("progress", "succeeded", "end_of_turn"),
        ("complete", None, "end_of_turn"),
    ]  # fmt: skip
    calls = [
        e["delta"]["tool_call"] for e in events if e["delta"].get("parse_status") == "succeeded"
    ]
    assert calls[0] == obj["completion_message"]["tool_calls"][0]
    assert payloads(out)[-1]["metrics"] == obj["metrics"]
    assert not notes.items


def test_llama_content_items_are_text_deltas_and_other_fields_are_said_lost() -> None:
    obj = {
        "completion_message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "One. "}, {"type": "text", "text": "Two."}],
            "stop_reason": "end_of_turn",
            "tool_calls": [],
            "extra_field": 1,
        },
        "metrics": None,
    }
    out, notes = convert(orjson.dumps(obj), LLAMA)
    texts = [p["event"]["delta"].get("text") for p in payloads(out)]
    assert texts == ["", "One. ", "Two.", ""]
    assert "lost: field extra_field has no place in the target format (1 record)" in said(notes)


@pytest.mark.parametrize("name", sorted(OBJECTS))
@pytest.mark.parametrize("dst", [CHAT, RESPONSES, LLAMA])
def test_every_stream_written_passes_validate(name: str, dst: str) -> None:
    fmt, data, _ = fixture(name)
    out, _ = convert(data, dst)
    findings = validate_records(out, dst)
    if dst == fmt:
        assert findings == []  # not even a warning
    assert [f for f in findings if f.severity == "E"] == []


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_a_same_format_conversion_needs_no_repair(name: str) -> None:
    fmt, data, _ = fixture(name)
    out = pipeline.convert(data, dst=fmt, strict=True)  # raises on a repair or a loss
    assert out


def test_several_objects_are_several_streams() -> None:
    _, one, _ = fixture("chat-text")
    _, two, _ = fixture("chat-tools")
    data = orjson.dumps(orjson.loads(one)) + b"\n" + two
    out, notes = convert(data, CHAT)
    assert out.count(b"data: [DONE]") == 2 and not notes.items
    built, _ = collected(data)
    assert [b["id"] for b in built] == ["chatcmpl-nonstream1", "chatcmpl-nonstream2"]


def test_strict_still_stops_at_a_loss() -> None:
    _, data, _ = fixture("chat-text")
    with pytest.raises(NotRepresentable, match="system_fingerprint|service_tier|usage"):
        pipeline.convert(data, dst=RESPONSES, strict=True)


# -- detection and framing -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_one_object_names_its_format(name: str) -> None:
    fmt, _, obj = fixture(name)
    assert codecs.sniff([Record(obj, line=1)], final=False).name == fmt
    assert codecs.get(fmt).whole(obj) is not None
    others = [c.name for c in codecs.CODECS if c.whole is not None and c.whole(obj)]
    assert others == [fmt]


def test_a_pretty_printed_object_is_one_record() -> None:
    _, data, obj = fixture("responses-text")
    assert data.startswith(b"{\n")
    container, records = framing.read_records(data)
    assert container == "json" and [r.data for r in records] == [obj]
    _, compact, _ = fixture("chat-tools")
    assert framing.read_records(compact)[0] == "jsonl"


def test_chunks_that_say_chat_completion_are_still_chunks() -> None:
    """Some servers send chunks whose object is ``chat.completion``: deltas, not a
    message, so they are read as the chunks they are."""
    chunk = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]}  # fmt: skip
    (built,), _ = collected(orjson.dumps(chunk) + b"\n")
    assert built["choices"][0]["message"]["content"] == "Hi"


# -- validate ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_validate_says_an_object_is_not_a_stream(name: str) -> None:
    fmt, data, _ = fixture(name)
    findings = validate_records(data, file="x.json")
    assert [(f.rule, f.severity, f.line) for f in findings] == [("STR003", "E", 1)]
    assert f"not a stream: `chatx convert --to {fmt}`" in findings[0].message


def test_validate_cli_exits_1_on_an_object() -> None:
    path = FIXTURES / CHAT / "nonstream-completion.json"
    result = run(["validate", str(path)])
    assert result.code == 1
    assert b"STR003 E a chat.completion object, not a stream" in result.stdout


def test_collect_cli_prints_the_message() -> None:
    path = FIXTURES / CHAT / "nonstream-tool-calls.json"
    result = run(["collect", str(path)])
    assert result.code == 0, result.err
    message = orjson.loads(result.stdout)["choices"][0]["message"]
    assert [c["id"] for c in message["tool_calls"]] == ["call_ns1", "call_ns2"]


# -- the openai SDK's accumulators ---------------------------------------------------------


def test_chat_stream_state_rebuilds_the_completion() -> None:
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    for name in ("chat-text", "chat-tools"):
        _, data, obj = fixture(name)
        out, _ = convert(data, CHAT)
        state: Any = ChatCompletionStreamState()
        for chunk in payloads(out):
            state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
        got = state.current_completion_snapshot
        want = ChatCompletion.model_validate(obj)
        assert got.choices[0].message.content == want.choices[0].message.content
        assert got.choices[0].finish_reason == want.choices[0].finish_reason
        calls = [
            [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
            for choice in (got.choices[0], want.choices[0])
        ]
        assert calls[0] == calls[1]
        assert got.usage == want.usage


def test_responses_stream_state_rebuilds_the_response() -> None:
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    from openai import omit
    from openai.lib.streaming.responses import ResponseStreamState
    from openai.types.responses import Response

    from tests.test_oracle import sdk_event

    for name in ("responses-text", "responses-tools"):
        _, data, obj = fixture(name)
        out, _ = convert(data, RESPONSES)
        state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
        texts, args, final = [], [], None
        for payload in payloads(out):
            for event in state.handle_event(sdk_event(payload)):
                if event.type == "response.output_text.delta":
                    texts.append(event.snapshot)
                elif event.type == "response.function_call_arguments.delta":
                    args.append(event.snapshot)
                elif event.type == "response.completed":
                    final = event.response
        want = Response.model_validate(obj)
        assert texts == [p.text for i in want.output if i.type == "message" for p in i.content]
        assert args == [i.arguments for i in want.output if i.type == "function_call"]
        assert final is not None and final.output_text == want.output_text
        assert [i.id for i in final.output] == [i.id for i in want.output]
        assert final.usage == want.usage


# -- real captures: what collect makes of each is read back as the same stream ----------------


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_collect_then_convert_then_collect_gives_the_same_object() -> None:
    """The captures hold no non-streaming object of their own (none in MANIFEST.tsv, none
    among their records): the objects ``collect`` builds of them stand in. Each, read
    back, is the stream that collects to it."""
    assert not [p for fmt in (CHAT, RESPONSES, LLAMA) for p in captures(fmt) if _holds_whole(p)]
    count = 0
    for fmt in (CHAT, RESPONSES, LLAMA):
        whole = codecs.get(fmt).whole
        assert whole is not None
        for path in captures(fmt):
            objects, _ = collected(path.read_bytes(), fmt)
            # Not every object collect builds is one an API returns (a Responses stream
            # whose terminal event holds no response object builds none): those are not
            # non-streaming objects, and read as no format.
            for obj in filter(whole, objects):
                data = orjson.dumps(obj)
                assert collected(data)[0] == [obj], path.name
                stream, _ = convert(data, fmt)
                assert collected(stream, fmt)[0] == [obj], path.name
                count += 1
    assert count > 300


def _holds_whole(path: Path) -> bool:
    _, records = framing.read_records(path.read_bytes())
    return any(
        codec.whole is not None and codec.whole(record.data)
        for record in records
        for codec in codecs.CODECS
    )

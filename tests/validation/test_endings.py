"""How streams end, in what chatx writes and in what validate accepts (issue 15).

* Containers: ``data: [DONE]`` is SSE framing. Every SSE chat output ends with it, whatever
  container the source came from; JSON lines hold JSON values and never carry it.
* Errors: an error frame ends a stream in every format, the way each server writes it.
* Llama Stack: the shapes its own server and OpenAI-compat layer write validate clean.
* Files that hold several streams, one after the other, validate stream by stream.
"""

from __future__ import annotations

import json

from chatx.codecs.base import EncodeOptions
from chatx.validation import validate_records
from tests.builders.chat_chunk import chat_text, chunk
from tests.paths import ROOT
from tests.streams import convert, jsonl, payloads, records, sse

FIXTURES = ROOT / "fixtures"
CHAT, RESPONSES, LLAMA = "chat-chunk", "responses-event", "llama-stack-event"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def rules(data: bytes, fmt: str, severity: str | None = None) -> list[str]:
    return [
        f.rule for f in validate_records(data, fmt) if severity is None or f.severity == severity
    ]


def llama(*events: dict) -> bytes:
    return jsonl(events)


def ls_event(kind: str, delta: dict | None = None, stop: str | None = None) -> dict:
    delta = delta if delta is not None else {"type": "text", "text": ""}
    return {
        "event": {"event_type": kind, "delta": delta, "logprobs": None, "stop_reason": stop},
        "metrics": None,
    }


def ls_tool(status: str, tool_call) -> dict:
    return ls_event(
        "progress", {"type": "tool_call", "tool_call": tool_call, "parse_status": status}
    )


# -- containers -----------------------------------------------------------------------


def test_a_json_lines_chat_source_written_as_sse_ends_with_done() -> None:
    out, _ = convert(fixture("chat-chunk/jsonl-container.jsonl"), CHAT, CHAT)
    assert out.endswith(b"\n\ndata: [DONE]\n\n") and out.count(b"[DONE]") == 1
    assert rules(out, CHAT) == []


def test_an_sse_source_without_done_gets_it() -> None:
    # Writer's streams end without [DONE]; the output is SSE, so it ends with it.
    out, _ = convert(sse(chat_text("Hi"), done=False), CHAT, CHAT)
    assert out.endswith(b"data: [DONE]\n\n")
    assert rules(out, CHAT) == []


def test_json_lines_chat_output_never_holds_done() -> None:
    out, _ = convert(fixture("chat-chunk/text.sse"), CHAT, CHAT, out_container="jsonl")
    lines = out.decode().splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)  # JSON values only
    assert validate_records(out, CHAT, container="jsonl") == []
    # The same records as SSE lack the sentinel: CHK015 is about SSE framing only.
    assert rules(sse([json.loads(line) for line in lines], done=False), CHAT) == ["CHK015"]


# -- errors ---------------------------------------------------------------------------


def test_an_error_before_any_token_becomes_a_failed_response() -> None:
    out, _ = convert(fixture("chat-chunk/error-only.sse"), RESPONSES, CHAT)
    events = payloads(out)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "error",
        "response.failed",
    ]
    assert events[2]["message"].startswith("This model's maximum context length")
    assert events[3]["response"]["status"] == "failed"
    assert [e["sequence_number"] for e in events] == [0, 1, 2, 3]
    assert rules(out, RESPONSES) == []


def test_chat_to_chat_keeps_done_after_an_error_frame() -> None:
    for name in ("chat-chunk/error-only.sse", "chat-chunk/error-frame-done.sse"):
        source = fixture(name)
        out, _ = convert(source, CHAT, CHAT)
        assert payloads(out) == payloads(source)
        assert out.endswith(b"data: [DONE]\n\n") and out.count(b"[DONE]") == 1, name
        assert rules(out, CHAT, "E") == []


def test_an_error_frame_without_done_gets_it_in_sse_output() -> None:
    # Groq ends at its error frame; SSE chat output always ends with the sentinel.
    source = fixture("chat-chunk/error-frame.sse")
    assert b"[DONE]" not in source
    out, _ = convert(source, CHAT, CHAT)
    assert payloads(out) == payloads(source) and out.endswith(b"data: [DONE]\n\n")
    assert rules(out, CHAT) == ["CHK017"]


def test_a_llama_stack_error_frame_becomes_a_failed_response() -> None:
    out, notes = convert(fixture("llama-stack-event/error.jsonl"), RESPONSES, LLAMA)
    types = [e["type"] for e in payloads(out)]
    assert types[-2:] == ["error", "response.failed"]
    assert rules(out, RESPONSES) == []
    # The error frame is how Llama Stack ends a stream: nothing was cut short.
    assert not [n for n in notes.items if "ends without" in n.message]


def test_an_error_written_as_llama_stack_is_its_servers_frame() -> None:
    out, _ = convert(fixture("chat-chunk/error-frame.sse"), LLAMA, CHAT)
    last = payloads(out)[-1]
    # server.py sse_generator: {"error": {"message": …}} and nothing after it.
    assert last == {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
        }
    }
    assert all(p.get("event", {}).get("event_type") != "complete" for p in payloads(out))
    assert rules(out, LLAMA) == ["LLS009"]


def test_an_ending_said_before_the_error_goes_in_a_complete_before_it() -> None:
    # OpenRouter: finish_reason "length", then an error chunk that carries the usage.
    out, _ = convert(fixture("chat-chunk/finish-then-error.sse"), LLAMA, CHAT)
    complete, error = payloads(out)[-2:]
    assert complete["event"]["event_type"] == "complete"
    assert complete["event"]["stop_reason"] == "out_of_tokens"
    assert [m["value"] for m in complete["metrics"]] == [12, 1, 13]
    assert error == {"error": {"message": "Token limit reached", "code": 400}}
    assert rules(out, LLAMA) == ["LLS009"]


def test_an_error_without_a_message_gets_the_llama_stack_clients_words() -> None:
    source = sse([chunk({"role": "assistant", "content": "Hi"}), {"error": {"code": 500}}])
    out, _ = convert(source, LLAMA, CHAT)
    assert payloads(out)[-1] == {
        "error": {"message": "An error occurred during streaming", "code": 500}
    }
    assert rules(out, LLAMA, "E") == []


def test_what_follows_a_llama_stack_error_frame_is_an_error() -> None:
    start, text = ls_event("start"), ls_event("progress", {"type": "text", "text": "Hi"})
    error = {"error": {"message": "upstream provider timed out"}}
    assert rules(llama(start, text, error), LLAMA) == ["LLS009"]
    assert rules(llama(error), LLAMA) == ["LLS009"]  # failed before its first event
    after = llama(start, text, error, ls_event("complete", stop="end_of_turn"))
    assert rules(after, LLAMA) == ["LLS009", "LLS002"]
    assert rules(llama(start, {"error": {"code": 500}}), LLAMA) == ["LLS003", "LLS009"]
    # The server stops mid-call when it fails: the open call is not an error.
    mid_call = llama(start, ls_tool("started", ""), ls_tool("in_progress", "f("), error)
    assert rules(mid_call, LLAMA) == ["LLS009"]


def test_llama_stack_total_is_the_sources_when_stated() -> None:
    """A total that counts reasoning tokens too (171 for 9 + 2) is carried, not recomputed,
    and passes LLS008 (a total is at least its parts, never exactly their sum)."""
    out, notes = convert(fixture("chat-chunk/usage-total-reasoning.jsonl"), LLAMA, CHAT)
    metrics = payloads(out)[-1]["metrics"]
    assert {m["metric"]: m["value"] for m in metrics} == {
        "prompt_tokens": 9,
        "completion_tokens": 2,
        "total_tokens": 171,
    }
    assert not any("total_tokens" in n.message for n in notes.items if n.kind == "lost")
    assert rules(out, LLAMA) == []


# -- endings that were never said --------------------------------------------------------


def test_a_choice_that_never_finished_gets_a_finish_reason() -> None:
    # Snowflake: text, a usage chunk and [DONE], never a finish_reason.
    source = sse([chunk({"role": "assistant", "content": "Hi"}), *chat_text()[-1:]])
    assert "CHK009" in rules(source, CHAT)
    out, notes = convert(source, CHAT, CHAT)
    chunks = payloads(out)
    assert chunks[1]["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    assert chunks[2]["choices"] == [] and "usage" in chunks[2]  # the usage chunk stays last
    assert any("never got a finish_reason" in n.message for n in notes.items)
    assert rules(out, CHAT) == []
    llama_out, _ = convert(source, LLAMA, CHAT)
    assert payloads(llama_out)[-1]["event"]["stop_reason"] == "end_of_turn"
    assert rules(llama_out, LLAMA) == []


def test_a_second_finish_reason_is_left_out() -> None:
    source = sse([*chat_text("Hi", usage=False), chunk({}, "stop")])
    assert "CHK010" in rules(source, CHAT)
    out, notes = convert(source, CHAT, CHAT)
    reasons = [c["choices"][0].get("finish_reason") for c in payloads(out) if c["choices"]]
    assert reasons.count("stop") == 1
    assert rules(out, CHAT) == []
    assert any("second finish_reason" in n.message for n in notes.items)


def test_finish_writes_the_ending_a_cut_stream_lacks() -> None:
    cut = fixture("chat-chunk/truncated.sse")
    finish = EncodeOptions(finish=True)
    out, _ = convert(cut, CHAT, CHAT, options=finish)
    assert payloads(out)[-1]["choices"][0]["finish_reason"] == "stop"
    assert out.endswith(b"data: [DONE]\n\n") and rules(out, CHAT) == []
    out, _ = convert(cut, LLAMA, CHAT, options=finish)
    assert payloads(out)[-1]["event"]["stop_reason"] == "end_of_turn"
    assert rules(out, LLAMA) == []
    out, notes = convert(fixture("responses-event/truncated.sse"), CHAT, RESPONSES)
    assert any("input ended without a terminal event" in n.message for n in notes.items)


# -- Llama Stack's own shapes -----------------------------------------------------------


def test_the_openai_compat_tool_call_shape_validates() -> None:
    """convert_openai_chat_completion_stream: in_progress fragments with no started —
    "name(", the arguments, ")" — then succeeded; parallel calls end one after another."""
    assert rules(fixture("llama-stack-event/tool-call-openai-compat.jsonl"), LLAMA) == []
    call = {"call_id": "c0", "tool_name": "a", "arguments": {}, "arguments_json": "{}"}
    parallel = llama(
        ls_event("start"),
        ls_tool("in_progress", "a("),
        ls_tool("in_progress", "{}"),
        ls_tool("in_progress", "b("),
        ls_tool("in_progress", "{}"),
        ls_tool("in_progress", ")"),
        ls_tool("succeeded", call),
        ls_tool("in_progress", ")"),
        ls_tool("failed", "b({})"),
        ls_event("complete", stop="end_of_message"),
    )
    assert rules(parallel, LLAMA) == []
    unsettled = llama(
        ls_event("start"), ls_tool("in_progress", "a("), ls_event("complete", stop="end_of_turn")
    )
    assert rules(unsettled, LLAMA) == ["LLS004"]


# -- several streams in one file ----------------------------------------------------------


def test_several_streams_in_one_file_validate_one_by_one() -> None:
    turns = fixture("responses-event/two-turns.jsonl")
    assert rules(turns, RESPONSES) == []
    chat, _ = convert(turns, CHAT, RESPONSES)
    assert sum(r.done for r in records(chat)) == 2 and rules(chat, CHAT) == []
    llama_out, _ = convert(turns, LLAMA, RESPONSES)
    kinds = [p["event"]["event_type"] for p in payloads(llama_out)]
    assert kinds.count("start") == kinds.count("complete") == 2
    assert rules(llama_out, LLAMA) == []
    # A second start before the first stream ended is still a misplaced start.
    start, complete = ls_event("start"), ls_event("complete", stop="end_of_turn")
    assert rules(llama(start, start, complete), LLAMA) == ["LLS001"]
    # After [DONE], a chunk of the same completion is still data after the end.
    first = payloads(chat)[0]
    again = sse([*payloads(chat)[:3]], done=True) + sse([first], done=False)
    assert "CHK016" in rules(again, CHAT)

"""Same-format ``collect`` keeps a stream's residue where the server's object has it,
and says lost what it cannot place, for every format.

- Anthropic: the message is what the anthropic SDK's accumulator (``accumulate_event``)
  builds, but where the SDK drops what the API's ``Message`` has (a ``message_delta``'s
  usage fields it does not copy, an MCP call's streamed input it does not parse) and a
  tool input that is not JSON (the SDK parses what it can; collect writes ``{}`` and
  says so).
- Responses: the response is what the openai SDK's ``ResponseStreamState`` holds: the
  terminal event's response, or for a stream cut before one its snapshot with the items
  the stream said done.
- Llama Stack: no field of the source's residue is dropped without a ``lost:`` note.
- Chat: the annotations as they came; and no IR event but a Meta carries residue that
  collect drops (the count is in the test).

Every fixture, and every capture when ``../shared`` is there; small streams made here
for the shapes the fixtures lack.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from chatx import ir
from chatx.collect import collect_side
from chatx.notes import Notes
from chatx.reading.decoding import decode
from chatx.reading.framing import load
from chatx.residue import lost_paths, reported
from tests.captures import CAPTURES, captures
from tests.streams import jsonl, payloads, sse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ANTHROPIC, RESPONSES = "anthropic-event", "responses-event"
LLAMA, CHAT = "llama-stack-event", "chat-chunk"
# The SDKs' models warn when they serialize a block or item of a type their unions do
# not name (an MCP call): the oracles' dicts are still what they hold.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def paths(fmt: str) -> list[Any]:
    """Every fixture of ``fmt``, then every capture (none when ../shared is absent)."""
    found = sorted(p for p in (FIXTURES / fmt).iterdir() if p.suffix in (".sse", ".jsonl"))
    return [pytest.param(p, id=f"{p.parent.parent.name}/{p.name}") for p in found + captures(fmt)]


def collected(data: bytes) -> tuple[list[Any], Notes]:
    side = load(data, "input")
    return collect_side(side), side.notes


def lost(notes: Notes) -> list[str]:
    return sorted(n.message for n in notes.summary() if n.kind == "lost")


def stripped(value: Any) -> Any:
    """Nulls left out: the SDKs' models say an unset field as null."""
    if type(value) is dict:
        return {k: stripped(v) for k, v in value.items() if v is not None}
    if type(value) is list:
        return [stripped(v) for v in value]
    return value


def test_the_captures_are_read_when_there() -> None:
    if not CAPTURES.is_dir():
        pytest.skip(f"no real captures: {CAPTURES} is absent")
    assert all(len(paths(fmt)) > 30 for fmt in (ANTHROPIC, RESPONSES, LLAMA, CHAT))


# -- Anthropic: the SDK's accumulator ------------------------------------------------------


def sdk_messages(data: bytes) -> list[dict[str, Any]]:
    from anthropic.lib.streaming._messages import accumulate_event

    messages: list[Any] = []
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in payloads(data):
        if event.get("type") == "ping":
            continue
        if event.get("type") == "error":
            break  # the SDK's stream raises there
        if event.get("type") == "message_start" and snapshot is not None:
            messages.append(snapshot)
            snapshot, buffers = None, {}
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
    if snapshot is not None:
        messages.append(snapshot)
    return [m.to_dict(mode="json") for m in messages]


def _by_design(sdk: dict[str, Any], ours: dict[str, Any], data: bytes, said: list[str]) -> None:
    """Where collect keeps more than the SDK, or writes what it says it lost: the SDK's
    message given what collect gives, each after checking it is that case."""
    from anthropic.lib.streaming._messages import TRACKS_TOOL_INPUT

    delta_usage = {
        key
        for event in payloads(data)
        if event.get("type") == "message_delta" and type(event.get("usage")) is dict
        for key in event["usage"]
    }
    for key in set(ours["usage"]) - set(sdk["usage"]):
        # A message_delta's usage field the SDK does not copy (compaction's iterations).
        assert key in delta_usage, key
        sdk["usage"][key] = ours["usage"][key]
    tracked = {typing.get_args(cls.model_fields["type"].annotation)[0] for cls in TRACKS_TOOL_INPUT}
    for theirs, mine in zip(sdk["content"], ours["content"], strict=False):
        if "input" in mine and theirs.get("type") not in tracked:
            theirs["input"] = mine["input"]  # streamed input the SDK leaves unparsed
        elif "input" in mine and mine["input"] != theirs.get("input") and mine["input"] == {}:
            assert "tool call arguments that are not JSON: input {} written" in said
            theirs["input"] = {}


@pytest.mark.parametrize("path", paths(ANTHROPIC))
def test_an_anthropic_message_is_what_the_sdk_accumulates(path: Path) -> None:
    pytest.importorskip("anthropic", reason="the anthropic SDK is the oracle")
    data = path.read_bytes()
    ours, notes = collected(data)
    sdk = sdk_messages(data)
    assert len(ours) == len(sdk)
    for theirs, mine in zip(sdk, ours, strict=True):
        theirs, mine = stripped(theirs), stripped(mine)
        _by_design(theirs, mine, data, lost(notes))
        assert mine == theirs


def anthropic_stream(*, cut: bool = False) -> bytes:
    """A code-execution turn: a tool call with a caller, a thinking block that never
    gets a signature, the container in message_delta (message_start says an older one)."""
    start: dict[str, Any] = {
        "id": "msg_fxsame01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-1",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "container": {"id": "container_fx", "expires_at": "2026-01-01T00:00:00Z"},
        "usage": {"input_tokens": 21, "cache_read_input_tokens": 3, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Count them."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_fxsame01",
                "name": "count",
                "input": {},
                "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_fx"},
            },
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"n": 3}'},
        },
        {"type": "content_block_stop", "index": 1},
    ]
    if not cut:
        later = {"id": "container_fx", "expires_at": "2026-01-01T01:00:00Z"}
        events += [
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None, "container": later},
                "usage": {"output_tokens": 12},
            },
            {"type": "message_stop"},
        ]
    return sse(events, done=False, events=True)


def test_an_anthropic_message_keeps_the_container_caller_and_counts() -> None:
    (message,), notes = collected(anthropic_stream())
    assert not lost(notes)
    assert message["container"]["expires_at"] == "2026-01-01T01:00:00Z"  # the last said
    thinking, call = message["content"]
    assert thinking == {"type": "thinking", "thinking": "Count them."}  # no signature came
    assert call["caller"] == {"type": "code_execution_20250825", "tool_id": "srvtoolu_fx"}
    assert call["input"] == {"n": 3}
    pytest.importorskip("anthropic", reason="the anthropic SDK is the oracle")
    assert stripped(message) == stripped(sdk_messages(anthropic_stream())[0])


def test_an_anthropic_stream_cut_before_message_delta_keeps_message_starts_counts() -> None:
    (message,), _ = collected(anthropic_stream(cut=True))
    assert message["usage"] == {
        "input_tokens": 21,
        "cache_read_input_tokens": 3,
        "output_tokens": 1,
    }
    assert message["stop_reason"] is None


def test_an_anthropic_records_own_fields_beside_its_block_are_said_lost() -> None:
    data = anthropic_stream().replace(
        b'{"type": "content_block_stop", "index": 1}',
        b'{"type": "content_block_stop", "index": 1, "trace": "fx"}',
    )
    _, notes = collected(data)
    assert lost(notes) == ["field trace has no place in the target format (1 record)"]


# -- Responses: the SDK's ResponseStreamState --------------------------------------------


def sdk_responses(data: bytes) -> list[dict[str, Any]]:
    """Per stream, the SDK's final response; for a stream cut before its terminal
    event, the snapshot with the items said done in their done shape."""
    import openai
    from openai._models import construct_type
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    out: list[dict[str, Any]] = []
    state: Any = None
    final: Any = None

    def close() -> None:
        if final is not None:
            out.append(final.to_dict(mode="json"))
            return
        snapshot = state._ResponseStreamState__current_snapshot
        for index, item in state._completed_output.items():
            snapshot.output[index] = item
        out.append(snapshot.to_dict(mode="json"))

    for event in payloads(data):
        if type(event) is not dict:
            continue
        if event.get("type") == "response.created":
            if state is not None:
                close()
            state = ResponseStreamState(input_tools=openai.omit, text_format=openai.omit)
            final = None
        if state is None:
            pytest.skip("no response.created: the SDK's stream state starts at it")
        for said in state.handle_event(construct_type(type_=ResponseStreamEvent, value=event)):
            if said.type in ("response.completed", "response.incomplete", "response.failed"):
                final = said.response
    if state is not None:
        close()
    return out


@pytest.mark.parametrize("path", paths(RESPONSES))
def test_a_response_is_what_the_sdk_holds(path: Path) -> None:
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    data = path.read_bytes()
    ours, notes = collected(data)
    try:
        sdk = sdk_responses(data)
    except RuntimeError as exc:  # the SDK refuses the stream (ids that change)
        pytest.skip(f"the SDK's ResponseStreamState refuses it: {exc}")
    assert [stripped(r) for r in ours] == [stripped(r) for r in sdk]
    assert not lost(notes)


def responses_cut() -> bytes:
    """A stream cut in the middle of its message item's text (no done events)."""
    envelope = {"id": "resp_fxsame", "object": "response", "status": "in_progress", "output": []}
    item = {"id": "msg_fxsame", "type": "message", "status": "in_progress", "content": []}
    item["role"], item["phase"] = "assistant", "final_answer"
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    common = {"item_id": "msg_fxsame", "output_index": 0, "content_index": 0}
    return sse(
        [
            {"type": "response.created", "response": envelope, "sequence_number": 0},
            {"type": "response.output_item.added", "item": item, "output_index": 0},
            {"type": "response.content_part.added", "part": part, **common},
            {"type": "response.output_text.delta", "delta": "Half of", "logprobs": [], **common},
        ],
        done=False,
        events=True,
    )


def test_a_response_cut_short_keeps_its_item_as_added() -> None:
    (response,), _ = collected(responses_cut())
    (item,) = response["output"]
    assert (item["status"], item["phase"]) == ("in_progress", "final_answer")
    assert item["content"][0]["text"] == "Half of"
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    assert stripped(response) == stripped(sdk_responses(responses_cut())[0])


def test_a_response_cut_short_keeps_its_parts_as_added() -> None:
    data = responses_cut().replace(b'"text": ""}', b'"text": "", "x_fx": "p"}')
    (response,), _ = collected(data)
    assert response["output"][0]["content"][0]["x_fx"] == "p"
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    assert stripped(response) == stripped(sdk_responses(data)[0])


def responses_without_output(output: Any) -> bytes:
    """A finished stream whose response.completed leaves out its output (None: null)."""
    envelope = {"id": "resp_fxsame", "object": "response", "status": "in_progress", "output": []}
    item = {"id": "msg_fxsame", "type": "message", "status": "in_progress", "content": []}
    item["role"] = "assistant"
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    done = {**item, "status": "completed", "content": [{**part, "text": "Whole."}]}
    common = {"item_id": "msg_fxsame", "output_index": 0, "content_index": 0}
    final: dict[str, Any] = {"id": "resp_fxsame", "object": "response", "status": "completed"}
    if output is None:
        final["output"] = None
    return sse(
        [
            {"type": "response.created", "response": envelope},
            {"type": "response.output_item.added", "item": item, "output_index": 0},
            {"type": "response.content_part.added", "part": part, **common},
            {"type": "response.output_text.delta", "delta": "Whole.", "logprobs": [], **common},
            {"type": "response.content_part.done", "part": {**part, "text": "Whole."}, **common},
            {"type": "response.output_item.done", "item": done, "output_index": 0},
            {"type": "response.completed", "response": final},
        ],
        done=False,
        events=True,
    )


@pytest.mark.parametrize("output", [None, "left out"])
def test_a_terminal_response_without_output_gets_the_items_the_stream_built(output: Any) -> None:
    (response,), _ = collected(responses_without_output(output))
    (item,) = response["output"]
    assert (item["status"], item["content"][0]["text"]) == ("completed", "Whole.")
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    (sdk,) = sdk_responses(responses_without_output(output))
    assert stripped(response) == stripped(sdk)


# -- Anthropic, Responses, Llama Stack: no residue dropped without a note -----------------


def _holds(whole: Any, value: Any) -> bool:
    """``value`` is somewhere in ``whole``: equal, or (an object) all its fields in one
    object there, or (a list) each of its entries held."""
    if whole == value:
        return True
    if type(value) is list and value:
        return all(_holds(whole, v) for v in value)
    if type(value) is dict and type(whole) is dict and value.items() <= whole.items():
        return True
    children = whole.values() if type(whole) is dict else whole if type(whole) is list else ()
    return any(_holds(child, value) for child in children)


def _has_field(whole: Any, key: str, said: bool = False) -> bool:
    """Some object in ``whole`` has the field ``key`` (``said``: not empty)."""
    if type(whole) is dict and key in whole and (whole[key] or not said):
        return True
    children = whole.values() if type(whole) is dict else whole if type(whole) is list else ()
    return any(_has_field(child, key, said) for child in children)


def _residue(data: bytes) -> list[tuple[str, Any]]:
    """(path, value) of every leaf of every IR event's residue, the codec's prefix off."""
    side = load(data, "input")
    side.decode_only()
    found = []
    for batch in decode(side.records(), side.format, Notes()):
        for event in batch:
            extra = getattr(event, "extra", None)
            if type(event) is ir.TextDelta and event.logprobs:
                found.append(("logprobs", None))
            if not extra:
                continue
            for path in lost_paths(reported(extra)):
                value: Any = extra
                for key in path.split("."):
                    value = value[key]
                found.append((path.removeprefix("llama_stack.").removeprefix("patch."), value))
    return found


def _placed(data: bytes) -> int:
    """Assert every residue leaf is in the object, or a later record said its field
    anew (an item's added status, the done item's; created's service_tier, the
    terminal response's), or is said lost; how many leaves there were."""
    objects, notes = collected(data)
    said = lost(notes)
    found = _residue(data)
    for path, value in found:
        if path == "logprobs":
            assert any(_has_field(o, "logprobs", True) for o in objects), "the logprobs"
        elif not any(_holds(o, value) for o in objects):
            leaf = path.rsplit(".", 1)[-1]
            if not any(_has_field(o, leaf) for o in objects):
                assert any(f"field {path} has no place" in line for line in said), path
    return len(found)


@pytest.mark.parametrize("path", paths(ANTHROPIC) + paths(RESPONSES) + paths(LLAMA))
def test_no_residue_is_dropped_silently(path: Path) -> None:
    _placed(path.read_bytes())


def test_an_anthropic_stream_says_lost_what_a_message_has_no_place_for() -> None:
    data = anthropic_stream().replace(
        b'"thinking": "Count them."}', b'"thinking": "Count them.", "x_fx": 1}, "x_top": 2'
    )
    _, notes = collected(data)
    assert lost(notes) == [
        "field delta.x_fx has no place in the target format (1 record)",
        "field x_top has no place in the target format (1 record)",
    ]
    _, notes = collected((FIXTURES / ANTHROPIC / "bedrock.jsonl").read_bytes())
    metrics = ("firstByteLatency", "inputTokenCount", "invocationLatency", "outputTokenCount")
    assert lost(notes) == [
        f"field amazon-bedrock-invocationMetrics.{name} has no place in the target format "
        "(1 record)"
        for name in metrics
    ]


LLAMA_EXTRA = [
    {
        "event": {
            "event_type": "start",
            "delta": {"type": "text", "text": ""},
            "logprobs": None,
            "stop_reason": None,
            "x_start": 1,
        },
        "metrics": None,
        "provider": "fxcloud",
    },
    {
        "event": {
            "event_type": "progress",
            "delta": {"type": "text", "text": "Yes", "x_delta": "d"},
            "logprobs": [{"logprobs_by_token": {"Yes": -0.01, "No": -4.6}}],
            "stop_reason": None,
        },
        "metrics": None,
    },
    {
        "event": {
            "event_type": "complete",
            "delta": {"type": "text", "text": ""},
            "logprobs": None,
            "stop_reason": "end_of_turn",
        },
        "metrics": [
            {"metric": "prompt_tokens", "value": 3, "unit": "tokens", "trace_id": "FxT1"},
            {"metric": "completion_tokens", "value": 1, "unit": "tokens", "trace_id": "FxT1"},
        ],
    },
]


def test_a_llama_stack_response_keeps_logprobs_metrics_and_chunk_fields() -> None:
    data = jsonl(LLAMA_EXTRA)
    (response,), notes = collected(data)
    assert response["logprobs"] == [{"logprobs_by_token": {"Yes": -0.01, "No": -4.6}}]
    assert [m["trace_id"] for m in response["metrics"]] == ["FxT1", "FxT1"]
    assert [m["value"] for m in response["metrics"]] == [3, 1]
    assert response["provider"] == "fxcloud"
    assert lost(notes) == [
        "field event.delta.x_delta has no place in the target format (1 record)",
        "field event.x_start has no place in the target format (1 record)",
    ]
    assert _placed(data) == 5


# -- chat: annotations, and residue on events other than Meta ------------------------------


def test_a_chat_annotations_page_text_stays_on_it() -> None:
    data = (FIXTURES / CHAT / "openrouter-web-search-annotations.sse").read_bytes()
    (completion,), notes = collected(data)
    assert not lost(notes)
    said = [
        entry
        for chunk in payloads(data)
        for choice in chunk.get("choices") or ()
        for entry in (choice.get("delta") or {}).get("annotations") or ()
    ]
    assert said and all("content" in entry["url_citation"] for entry in said)
    assert completion["choices"][0]["message"]["annotations"] == said


def _chat_residue(data: bytes) -> list[tuple[str, str]]:
    """(event type, path) of each leaf of the residue of each IR event but Meta."""
    side = load(data, "input")
    side.decode_only()
    return [
        (type(event).__name__, path)
        for batch in decode(side.records(), side.format, Notes())
        for event in batch
        if type(event) is not ir.Meta
        for path in lost_paths(reported(getattr(event, "extra", None) or {}))
    ]


def _at(value: Any, path: str) -> Any:
    for key in path.split("."):
        value = value.get(key) if type(value) is dict else None
    return value


@pytest.mark.parametrize("path", paths(CHAT))
def test_chat_residue_beside_meta_is_kept_or_repeats_the_call(path: Path) -> None:
    """A chat stream's residue on IR events other than Meta: its usage's own fields (on
    the completion's usage), an error's (said lost with the error), and a tool call
    fragment's repeats of the call's id, type and name (null, empty, or the first
    fragment's: the call keeps those). Text and item events carry none."""
    data = path.read_bytes()
    found = _chat_residue(data)
    assert not [f for f in found if f[0] in ("TextDelta", "ItemStart", "ItemEnd")]
    if not found:
        return
    objects, notes = collected(data)
    for kind, where in found:
        if kind == "Usage":
            assert any(_at(o["usage"], where) is not None for o in objects), where
        elif kind == "Error":
            assert any("error(s) in the stream have no place" in line for line in lost(notes))
        else:
            assert kind == "ToolArgsDelta", (kind, where)
            assert where in ("id", "type", "function.name", "function.arguments")
    _check_repeats(data)


def _check_repeats(data: bytes) -> None:
    """Each later fragment's id, type and name is null, empty or the call's own."""
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    for chunk in payloads(data):
        for choice in (chunk.get("choices") or []) if type(chunk) is dict else []:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                key = (choice.get("index", 0), call.get("index", 0))
                first = calls.setdefault(key, call)
                for field in ("id", "type"):
                    assert call.get(field) in (None, "", first.get(field)), json.dumps(call)
                name = (call.get("function") or {}).get("name")
                assert name in (None, "", (first.get("function") or {}).get("name"))

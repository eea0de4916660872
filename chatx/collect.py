"""The final object a client builds from a stream: ``chat.completion``, Responses
``response``, or a Llama Stack chat completion response.

Each builder reads an :class:`~chatx.assemble.Assembler`. When the stream is in the
target's own format, the source's residue (usage details, item and envelope fields the
IR has no name for) is merged back, so collecting a Responses stream gives back its
terminal ``response`` object. What the target has no place for is said in ``notes``.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from chatx.assemble import Assembler, Item, Lane, joined
from chatx.codecs.chat_chunk.encode import chat_id
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.envelope import envelope, item_id, responses_id, usage_object
from chatx.errors import UsageError
from chatx.notes import Notes
from chatx.residue import ABSENT, merge

CHAT = "chat-chunk"
RESPONSES = "responses-event"
LLAMA = "llama-stack-event"
# --as names → the format whose final object is built.
TARGETS = {"chat": CHAT, "responses": RESPONSES, "llama-stack": LLAMA}
# The stream formats whose final object is each --as target.
DEFAULT_TARGET = {CHAT: "chat", RESPONSES: "responses", LLAMA: "llama-stack"}

_CHAT_FINISH = ("stop", "length", "tool_calls", "content_filter", "function_call")
_LLAMA_STOP = {
    "stop": "end_of_turn",
    "tool_calls": "end_of_message",
    "function_call": "end_of_message",
    "length": "out_of_tokens",
}


def collect(
    stream: Assembler,
    target: str,
    *,
    source: str | None = None,
    choice: int | None = None,
    notes: Notes | None = None,
) -> dict[str, Any]:
    """Build the ``target`` object (``chat``, ``responses`` or ``llama-stack``)."""
    notes = notes if notes is not None else Notes()
    notes.line = None  # what collect says is about the whole stream, not its last line
    if target == "chat":
        lanes = None if choice is None else [_one_lane(stream, choice, "")]
        return to_chat(stream, source, notes, lanes)
    if target == "responses":
        return to_response(stream, source, _one_lane(stream, choice, "a response"), notes)
    if target == "llama-stack":
        return to_llama_stack(
            stream, source, _one_lane(stream, choice, "a Llama Stack response"), notes
        )
    raise UsageError(f"unknown --as {target!r} (known: {', '.join(TARGETS)})")


def _one_lane(stream: Assembler, choice: int | None, what: str) -> Lane:
    lanes = stream.choices or [stream.lane(0)]
    if choice is not None:
        if choice not in stream.lanes:
            raise UsageError(
                f"no choice {choice} in the stream "
                f"(choices: {', '.join(map(str, sorted(stream.lanes)))})"
            )
        return stream.lanes[choice]
    if len(lanes) > 1:
        raise UsageError(
            f"the stream has {len(lanes)} choices and {what} holds one: pass --choice N"
        )
    return lanes[0]


def _copy(patch: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of residue that keeps the ABSENT marker itself (merge tests identity)."""
    return copy.deepcopy(patch, {id(ABSENT): ABSENT})


# -- chat.completion -------------------------------------------------------------------


def to_chat(
    stream: Assembler,
    source: str | None = None,
    notes: Notes | None = None,
    lanes: list[Lane] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` object, as the openai SDK's stream accumulator builds it;
    ``lanes`` keeps some choices only (``--choice``), all by default."""
    notes = notes if notes is not None else Notes()
    own = source == CHAT
    lanes = stream.choices if lanes is None else lanes
    completion: dict[str, Any] = {
        "id": (stream.id or "") if own else chat_id(stream.id or ""),
        "object": "chat.completion",
        "created": stream.created if isinstance(stream.created, int) else 0,
        "model": stream.model or "",
        "choices": [_chat_choice(lane, notes) for lane in lanes],
        "usage": _chat_usage(stream, own),
    }
    for key, value in stream.meta.items():
        completion[key] = value
    if stream.errors:
        notes.lost(
            f"{len(stream.errors)} error(s) in the stream have no place in a chat.completion"
        )
    return completion


def _chat_choice(lane: Lane, notes: Notes) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": lane.role,
        "content": lane.text or None,
        "refusal": lane.refusal or None,
    }
    if lane.reasoning:
        # Not in the openai types, but what the SDK's accumulator keeps from the deltas.
        message[lane.reasoning_field or "reasoning_content"] = lane.reasoning
    calls = lane.calls
    if calls:
        message["tool_calls"] = [
            {
                "id": call.call_id or "",
                "type": "function",
                "function": {"name": call.name or "", "arguments": call.arguments},
            }
            for call in calls
        ]
    content, refusal = lane.logprobs, lane.refusal_logprobs
    logprobs = (
        {"content": content or None, "refusal": refusal or None} if content or refusal else None
    )
    reason = lane.finish
    if reason == "error":
        reason = "stop"  # as chat output does: the error frame says it, "stop" ends it
    elif reason is not None and reason not in _CHAT_FINISH:
        notes.warning(f"choice {lane.index}: finish reason {reason!r} is not a chat finish reason")
    if any(i.kind == "other" for i in lane.items):
        notes.lost(f"choice {lane.index}: built-in tool items have no place in a chat.completion")
    return {"index": lane.index, "message": message, "logprobs": logprobs, "finish_reason": reason}


def _chat_usage(stream: Assembler, own: bool) -> dict[str, Any] | None:
    usage = stream.usage
    if usage is None:
        return None
    prompt, completion = usage.input or 0, usage.output or 0
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": usage.total if usage.total is not None else prompt + completion,
    }
    if usage.cached is not None:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cached}
    if usage.reasoning is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning}
    if own and usage.extra:
        merge(out, _copy(usage.extra))
    return out


# -- Responses response ----------------------------------------------------------------


def to_response(
    stream: Assembler,
    source: str | None = None,
    lane: Lane | None = None,
    notes: Notes | None = None,
) -> dict[str, Any]:
    """A Responses ``response`` object: the terminal event's, or the in-progress snapshot
    of a stream that stopped without one."""
    notes = notes if notes is not None else Notes()
    lane = lane if lane is not None else _one_lane(stream, None, "a response")
    own = source == RESPONSES
    if own:
        template = copy.deepcopy(_source_envelope(stream.start_extra))
        rid = str(template.get("id") or stream.id or "")
    else:
        rid = responses_id(stream.id or "")
        template = envelope(rid, stream.created, stream.model, None)
    output = [_output_item(item, rid, index, own) for index, item in enumerate(lane.items)]
    error = _response_error(stream, own, notes)
    usage = usage_object(stream.usage, own) if stream.usage is not None else None
    if lane.finish is None and error is None:
        # No terminal event: what a client holds is the snapshot, still in progress.
        template["output"] = output
        if usage is not None:
            template["usage"] = usage
        return template
    status, details = shapes.terminal_status(lane.finish, error is not None)
    response = shapes.terminal_response(template, status, details, output, error, usage)
    if own and stream.end_extra:
        # "~" keys are the codec's own bookkeeping (fields beside the response), not
        # fields of the response.
        patch = {k: v for k, v in stream.end_extra.items() if not k.startswith("~")}
        merge(response, _copy(patch))
    return response


def _logprob(entry: Any) -> Any:
    """A chat logprob entry as Responses types it: ``bytes`` is a list, never null."""
    if not isinstance(entry, dict):
        return entry
    out = dict(entry)
    if out.get("bytes") is None and isinstance(out.get("token"), str):
        out["bytes"] = list(out["token"].encode())
    if isinstance(out.get("top_logprobs"), list):
        out["top_logprobs"] = [_logprob(top) for top in out["top_logprobs"]]
    return out


def _source_envelope(extra: dict[str, Any]) -> dict[str, Any]:
    """The ``response`` of the source's ``response.created``, kept by the Responses
    decoder in its StreamStart residue (a codec-private key)."""
    for key in ("~response", "response"):
        if isinstance(extra.get(key), dict):
            return extra[key]
    return {}


# ResponseError.code as the openai SDK and the Responses API define it.
_RESPONSE_ERROR_CODES = frozenset((
    "server_error", "rate_limit_exceeded", "invalid_prompt", "data_residency_mismatch",
    "bio_policy", "misalignment_policy_violation", "vector_store_timeout", "invalid_image",
    "invalid_image_format", "invalid_base64_image", "invalid_image_url", "image_too_large",
    "image_too_small", "image_parse_error", "image_content_policy_violation",
    "invalid_image_mode", "image_file_too_large", "unsupported_image_media_type",
    "empty_image_file", "failed_to_download_image", "image_file_not_found",
))  # fmt: skip


def _response_error(stream: Assembler, own: bool, notes: Notes) -> dict[str, Any] | None:
    if not stream.errors:
        return None
    # The last error is the one that ended the stream (the Responses decoder agrees).
    last = stream.errors[-1]
    code = last.code if last.code is None or isinstance(last.code, str) else str(last.code)
    if not own and code not in _RESPONSE_ERROR_CODES:
        # Groq's tool_use_failed, OpenRouter's 400: not a response error code.
        if code is not None:
            notes.lost(
                f"error code {code!r} is not a Responses error code: written as server_error"
            )
        code = None
    return {"code": code or "server_error", "message": last.message or ""}


def _output_item(item: Item, rid: str, index: int, own: bool) -> dict[str, Any]:
    if item.kind == "other":
        return copy.deepcopy(item.data) if item.data is not None else {}
    if item.kind == "message":
        parts: list[dict[str, Any]] = []
        text, refusal = joined(item.text), joined(item.refusal)
        if text or not refusal:
            logprobs = item.logprobs if own else [_logprob(lp) for lp in item.logprobs]
            parts.append(shapes.text_part(text, logprobs))
        if refusal:
            parts.append(shapes.refusal_part(refusal))
        built = shapes.message_item(item.id or item_id(rid, "msg", index), "completed", parts)
    elif item.kind == "reasoning":
        summary = [
            shapes.summary_part(joined(p))
            for (kind, _), p in item.reasoning.items()
            if kind == "summary" or not own
        ]
        content = [
            shapes.reasoning_text_part(joined(p))
            for (kind, _), p in item.reasoning.items()
            if kind == "text" and own
        ]
        built = shapes.reasoning_item(item.id or item_id(rid, "rs", index), summary, content)
    else:
        call = item.call
        assert call is not None
        built = shapes.function_item(
            item.id or item_id(rid, "fc", index),
            "completed",
            call.arguments,
            call.call_id,
            call.name,
        )
    if own and item.patch:
        merge(built, _copy(item.patch))
    return built


# -- Llama Stack chat completion response ------------------------------------------------


def to_llama_stack(
    stream: Assembler,
    source: str | None = None,
    lane: Lane | None = None,
    notes: Notes | None = None,
) -> dict[str, Any]:
    """A Llama Stack ``ChatCompletionResponse``: ``completion_message`` and ``metrics``."""
    notes = notes if notes is not None else Notes()
    lane = lane if lane is not None else _one_lane(stream, None, "a Llama Stack response")
    if lane.reasoning:
        notes.lost("reasoning has no place in a Llama Stack response: left out")
    if lane.refusal:
        notes.lost("the refusal is written as message content")
    stop = (
        lane.raw_finish
        if source == LLAMA and lane.raw_finish
        else _LLAMA_STOP.get(lane.finish or "", "end_of_turn" if lane.finish else None)
    )
    message = {
        "role": "assistant",
        "content": lane.text + lane.refusal,
        "stop_reason": stop,
        "tool_calls": [_llama_call(call.call_id, call.name, call.arguments) for call in lane.calls],
    }
    return {"completion_message": message, "logprobs": None, "metrics": _metrics(stream)}


def _llama_call(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    try:
        parsed: Any = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        parsed = None
    return {
        "call_id": call_id or "",
        "tool_name": name or "",
        "arguments": parsed if isinstance(parsed, dict) else arguments,
        "arguments_json": arguments,
    }


def _metrics(stream: Assembler) -> list[dict[str, Any]] | None:
    usage = stream.usage
    if usage is None:
        return None
    counts = (
        ("prompt_tokens", usage.input),
        ("completion_tokens", usage.output),
        ("total_tokens", usage.total),
    )
    return [
        {"metric": name, "value": value, "unit": "tokens"}
        for name, value in counts
        if value is not None
    ]

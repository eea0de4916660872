"""What ``collect`` builds from a stream as chat: the ``chat.completion`` object, as the
openai SDK's stream accumulator builds it.

It reads an :class:`~chatx.collect.assembler.Assembler`. When the stream is a chat stream, its
residue (usage details) is merged back; what a ``chat.completion`` has no place for is
said in ``notes``.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.base import exact_reason
from chatx.codecs.chat_chunk.annotations import annotation
from chatx.codecs.chat_chunk.annotations_in import FIELD
from chatx.codecs.chat_chunk.encode import chat_id
from chatx.codecs.chat_chunk.fields import ChatOwn
from chatx.collect.assembler import Assembler
from chatx.collect.items import Lane
from chatx.notes import Notes
from chatx.residue import copied, merge, report

NAME = "chat-chunk"
_FINISH = ("stop", "length", "tool_calls", "content_filter", "function_call")


def final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    """The descriptor's ``final``: every choice, or the one ``choice`` names."""
    lanes = None if choice is None else [stream.one_lane(choice, "")]
    return to_chat(stream, source, notes, lanes)


def to_chat(
    stream: Assembler,
    source: str | None = None,
    notes: Notes | None = None,
    lanes: list[Lane] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` object, as the openai SDK's stream accumulator builds it;
    ``lanes`` keeps some choices only (``--choice``), all by default."""
    notes = notes if notes is not None else Notes()
    own = source == NAME
    lanes = stream.choices if lanes is None else lanes
    completion: dict[str, Any] = {
        "id": (stream.id or "") if own else chat_id(stream.id or ""),
        "object": "chat.completion",
        "created": stream.created if isinstance(stream.created, int) else 0,
        "model": stream.model or "",
        "choices": [_choice(lane, notes, own) for lane in lanes],
        "usage": _usage(stream, own),
    }
    for key, value in stream.meta.items():
        completion[key] = value
    if own:
        # The chunks' own fields where Azure's chat.completion has them
        # (prompt_filter_results, at the top), as the SDK keeps its first chunk's.
        _place(completion, stream.residue, _CHUNK)
    if stream.errors:
        notes.lost(
            f"{len(stream.errors)} error(s) in the stream have no place in a chat.completion"
        )
        if not own and stream.finished_after_error():
            notes.lost("the finish reason that came after the error frame")
    return completion


def _choice(lane: Lane, notes: Notes, own: bool) -> dict[str, Any]:
    """One choice: its message, logprobs and finish reason."""
    message = _message(lane, notes, own)
    logprobs, reason = _logprobs(lane), _finish_reason(lane, notes, own)
    if any(i.kind == "other" for i in lane.items):
        notes.lost(f"choice {lane.index}: built-in tool items have no place in a chat.completion")
    choice = {
        "index": lane.index,
        "message": message,
        "logprobs": logprobs,
        "finish_reason": reason,
    }
    if own:
        # A choice's own fields on the choice (Azure's content_filter_results,
        # OpenRouter's native_finish_reason), a delta's on the message (OpenRouter's
        # reasoning_details): where a non-streaming chat.completion has them.
        _place(choice, lane.residue, _CHOICE)
        _place(message, lane.delta, _MESSAGE)
    if lane.stop_sequence is not None:
        # The stop string that ended the text, where vLLM's chat.completion says it
        # (chat output writes it beside finish_reason, as vLLM streams it).
        choice["stop_reason"] = lane.stop_sequence
    return choice


def _message(lane: Lane, notes: Notes, own: bool) -> dict[str, Any]:
    """What the lane said: its text, refusal, citations, reasoning and tool calls."""
    message: dict[str, Any] = {
        "role": lane.role,
        "content": lane.text or None,
        "refusal": lane.refusal or None,
    }
    annotations = _own_annotations(lane) if own else _annotations(lane, notes)
    if annotations:
        message["annotations"] = annotations
    if lane.reasoning:
        # Not in the openai types, but what the SDK's accumulator keeps from the deltas.
        message[lane.reasoning_field or "reasoning_content"] = lane.reasoning
    calls = lane.calls
    if own:  # a functions-API call is its delta's function_call, placed as it came
        legacy = {i.call.call for i in lane.items if i.call and _function_call(i.own)}
        calls = [call for call in calls if call.call not in legacy]
    if calls:
        message["tool_calls"] = [
            {
                "id": call.call_id or "",
                "type": "function",
                "function": {"name": call.name or "", "arguments": call.arguments},
            }
            for call in calls
        ]
    return message


def _logprobs(lane: Lane) -> dict[str, Any] | None:
    content, refusal = lane.logprobs, lane.refusal_logprobs
    if not content and not refusal:
        return None
    return {"content": content or None, "refusal": refusal or None}


def _finish_reason(lane: Lane, notes: Notes, own: bool) -> str | None:
    """The lane's finish reason as chat output writes it: a chat stream's own as it
    came (warned of when chat has no such word), another format's in chat's words."""
    reason = lane.finish
    if reason is None:
        return None
    if own:
        if reason not in _FINISH and reason != "error":
            notes.warning(
                f"choice {lane.index}: finish reason {reason!r} is not a chat finish reason"
            )
        return reason
    if lane.after_error:
        return None  # as chat output: the error frame ended the stream, nothing follows
    if reason == "error":
        # As chat output writes a failed generation no error frame said (a Responses
        # response.failed without an error event). A chat stream's own 'error' (OpenRouter
        # says it of a generation that failed mid-stream) stays, as the openai SDK's
        # accumulator keeps the chunk's finish_reason.
        notes.lost("finish reason 'error' (the generation failed): written as 'stop'")
        return "stop"
    if exact_reason(reason) is None:
        # As chat output writes it (Anthropic's pause_turn: an incomplete response).
        notes.lost(f"choice {lane.index}: finish reason {reason!r} has no chat word: 'length'")
        return "length"
    if reason not in _FINISH:
        notes.warning(f"choice {lane.index}: finish reason {reason!r} is not a chat finish reason")
    return reason


# The fields the object builds from the IR, never from residue: a chunk's (a prelude
# record's empty id or model is no value of the completion; obfuscation pads one chunk,
# and the SDK drops it too), a choice's, a delta's.
_CHUNK = frozenset(("id", "object", "created", "model", "choices", "usage", "obfuscation"))
_CHOICE = frozenset(("index", "delta", "message", "logprobs", "finish_reason", "stop_reason"))
_MESSAGE = frozenset(
    ("role", "content", "refusal", "tool_calls", "reasoning", "reasoning_content", "annotations")
)


def _place(into: dict[str, Any], residue: dict[str, Any], built: frozenset[str]) -> None:
    # A null says nothing a client needs (the SDK keeps a delta's "function_call": null
    # as it came; a chat.completion read back as its stream has none).
    for key, value in residue.items():
        if value is not None and key not in built and key not in into:
            into[key] = value


def _own_annotations(lane: Lane) -> list[dict[str, Any]]:
    """A chat stream's own annotations as its deltas said them, every field kept
    (OpenRouter's page text in ``url_citation.content``): the entries of every delta in
    the order they came, as a client that gathers a delta's lists holds them (the
    field stays the deltas' residue, see chat_chunk/annotations_in.py)."""
    said = lane.delta.get(FIELD)
    return said if type(said) is list else []


def _annotations(lane: Lane, notes: Notes) -> list[dict[str, Any]]:
    """The message's web page citations as ``url_citation`` annotations, in the order
    chat output says them: a span counted in characters of the content (every message
    item's text one after another), from where its item's text began; a citation
    without a span covers its item's text (Anthropic's, which cites its text block)."""
    said: list[dict[str, Any]] = []
    base = 0  # the content before the item
    for item in lane.items:
        if item.kind != "message":
            continue
        size = item.text.size()
        whole = []
        for cited in item.citations:
            cite = cited.citation
            if cite is None or cite.kind != "url":
                notes.lost_field("citations" if "citations" in cited.extra else "annotations")
                continue
            if cite.extra:
                report(cite.extra, notes, "citation.")
            if cite.start is None or cite.end is None:
                whole.append(cite)
            else:
                said.append(annotation(cite, base + cite.start, base + cite.end))
        for cite in whole:
            start = base if cite.start is None else base + cite.start
            said.append(annotation(cite, start, base + size))
        base += size
    return said


def _usage(stream: Assembler, own: bool) -> dict[str, Any] | None:
    # Another format's usage after its error (a Responses response.failed's) is the
    # usage, as the encoder writes it on its error chunk.
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
        merge(out, copied(usage.extra))
    return out


def _function_call(own: ir.Own | None) -> bool:
    """Whether the item is a functions-API call (see :class:`ChatOwn`)."""
    return type(own) is ChatOwn and own.function_call

"""The Anthropic Messages event vocabulary both sides of the codec share.

The canonical records here are what the encoder writes for an IR event; the decoder
builds the same record for what it read and keeps the difference as the event's
residue (:func:`chatx.residue.exact_diff`), so anthropic → anthropic merges it back and gives
the source's JSON values, and another format reports exactly what it cannot hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.codecs.base import exact_reason
from chatx.residue import ABSENT, merge

from .probe import EVENTS as EVENTS
from .probe import NAME as NAME


@dataclass(slots=True, eq=False, repr=False)  # eq and repr: ir.Own
class AnthropicOwn(ir.Own):
    """The Anthropic decoder's own note on an event, for anthropic output and the
    Anthropic final message (see :class:`chatx.ir.Own`).

    - ``record`` (a ``Meta``): the record as it came (a ping, a signature or citation
      delta, a record the IR has no words for), written back whole.
    - ``prefill`` (an item's start, deltas and end, a ``Finish``): message_start held the
      block or the stop reason already; nothing more is written of it.
    - ``seed`` (an ``ItemStart``): the text, thinking or input the block's start held,
      written back in it; ``redacted`` and ``data``: the block is a redacted_thinking
      block and its data.
    - ``again`` (a delta, a ``Usage``): the event says again what the stream said
      elsewhere, for other formats (a block's seed as its first delta, a call's empty
      arguments, message_start's usage at a stop without message_delta); nothing is
      written of it. The decoder gives every such event :data:`AGAIN`.
    - ``cut`` (an ``ItemEnd``): the input ended in the block, which stays open.
    - ``implicit`` (the ``StreamStart``): the source had no message_start; ``usage``,
      ``content`` and ``stop``: message_start's usage counts, content blocks and
      ``[stop_reason, stop_sequence]``, written back in it.
    - ``patch`` (a ``Usage``): the residue of a message_delta that says usage and no
      stop reason (whose ``Finish`` carries it otherwise)."""

    record: dict[str, Any] | None = None
    prefill: bool = False
    seed: Any = None
    redacted: bool = False
    data: Any = None
    again: bool = False
    cut: bool = False
    implicit: bool = False
    usage: dict[str, Any] | None = None
    content: list[Any] | None = None
    stop: list[Any] | None = None
    patch: dict[str, Any] | None = None


# Notes that nothing changes, shared: the encoder tells AGAIN by identity, a test per
# delta that costs less than reading the flag; NONE stands for an event without a note.
AGAIN = AnthropicOwn(again=True)
PREFILL = AnthropicOwn(prefill=True)
CUT = AnthropicOwn(cut=True)
NONE = AnthropicOwn()


def own_of(event: Any) -> AnthropicOwn:
    """The event's note, :data:`NONE` when it has none of this codec's."""
    own = event.own
    return own if type(own) is AnthropicOwn else NONE


# Stop reasons as the API names them, and the IR (chat) word each one says.
STOP_TO_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    # A server tool loop paused before its end: the client sends the turn back to go on.
    # No other format has a word for it, so it stays the IR's reason as it came.
    "pause_turn": "pause_turn",
}
FINISH_TO_STOP = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}

# Usage counts the IR names; everything else in a usage object is residue.
INPUT, WRITE, READ, OUTPUT = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
COUNTS = (INPUT, WRITE, READ, OUTPUT)
# output_tokens_details.thinking_tokens: the output tokens spent thinking.
DETAILS, THINKING = "output_tokens_details", "thinking_tokens"

# Content block types the IR has words for, and the item kind each one is.
BLOCK_KINDS: dict[str, ir.ItemKind] = {
    "text": "message",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "tool_use": "tool_call",
}


def finish_of(word: str, stop_sequence: Any = None) -> ir.Finish:
    """The IR Finish of a stop reason: the chat word, and the API's word as ``raw``; the
    stop sequence matched, when it is a string."""
    reason = STOP_TO_FINISH.get(word, word)
    finish = ir.Finish(0, reason, word if word != reason else None)
    if type(stop_sequence) is str:
        finish.stop_sequence = stop_sequence
    return finish


def stop_word(reason: str, raw: str | None) -> str | None:
    """The stop reason an IR Finish says exactly, or None when the API has none."""
    if raw in STOP_TO_FINISH:
        return raw
    if reason in STOP_TO_FINISH:
        return reason
    return FINISH_TO_STOP.get(exact_reason(reason) or "")


# --- records ------------------------------------------------------------------------


def message_start(
    mid: Any, model: Any, usage: dict[str, Any], content: list[Any], stop: list[Any]
) -> dict[str, Any]:
    """``message_start``: ``stop`` is the message's ``[stop_reason, stop_sequence]``."""
    return {
        "type": "message_start",
        "message": {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop[0],
            "stop_sequence": stop[1],
            "usage": usage,
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def text_block() -> dict[str, Any]:
    return {"type": "text", "text": ""}


def thinking_block() -> dict[str, Any]:
    return {"type": "thinking", "thinking": "", "signature": ""}


def redacted_block(data: Any) -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": data}


def tool_block(call_id: Any, name: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {}}


def block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def text_delta(text: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": text}


def thinking_delta(text: str) -> dict[str, Any]:
    return {"type": "thinking_delta", "thinking": text}


def json_delta(fragment: str) -> dict[str, Any]:
    return {"type": "input_json_delta", "partial_json": fragment}


def signature_delta(signature: str) -> dict[str, Any]:
    return {"type": "signature_delta", "signature": signature}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(
    word: Any, usage: dict[str, Any] | None, stop_sequence: str | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": word, "stop_sequence": stop_sequence},
    }
    if usage is not None:
        record["usage"] = usage
    return record


def message_stop() -> dict[str, Any]:
    return {"type": "message_stop"}


def error(etype: str | None, message: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if etype is not None:
        body["type"] = etype
    if message is not None:
        body["message"] = message
    return {"type": "error", "error": body}


# --- usage ----------------------------------------------------------------------------


def counts_of(usage: Any) -> dict[str, int]:
    """The integer counts of a usage object, in its own key order."""
    if type(usage) is not dict:
        return {}
    return {k: v for k, v in usage.items() if k in COUNTS and type(v) is int}


def read_usage(usage: dict[str, Any], start: dict[str, int]) -> ir.Usage:
    """``message_delta.usage`` → IR Usage. Its counts are the stream's final ones; the
    input counts it leaves out (older streams send only ``output_tokens``) come from
    ``message_start``. The IR's ``input`` counts every input token, as OpenAI's
    ``prompt_tokens`` does: Anthropic's ``input_tokens`` leaves out the tokens read from
    and written to the cache."""
    counts = {**start, **counts_of(usage)}
    extra = {k: v for k, v in usage.items() if k not in COUNTS or type(v) is not int}
    reasoning = None
    details = extra.get(DETAILS)
    if type(details) is dict and type(details.get(THINKING)) is int:
        reasoning = details[THINKING]
        rest = {k: v for k, v in details.items() if k != THINKING}
        if rest:
            extra[DETAILS] = rest
        else:
            del extra[DETAILS]
    write, read = counts.get(WRITE), counts.get(READ)
    base = counts.get(INPUT)
    total_input = None if base is None else base + (write or 0) + (read or 0)
    return ir.Usage(total_input, counts.get(OUTPUT), None, read, reasoning, extra, write)


def usage_object(usage: ir.Usage, own: bool) -> dict[str, Any]:
    """IR Usage → ``message_delta.usage``. From another format, a count the source lacks
    is written as 0 (the API requires ``output_tokens``), and ``input_tokens`` is the
    input less its cached part."""
    out: dict[str, Any] = {}
    cached, write = usage.cached, usage.cache_write
    if usage.input is not None:
        out[INPUT] = usage.input - (cached or 0) - (write or 0)
        if not own and out[INPUT] < 0:
            out[INPUT] = 0
    elif not own:
        out[INPUT] = 0
    if write is not None:
        out[WRITE] = write
    if cached is not None:
        out[READ] = cached
    if usage.output is not None or not own:
        out[OUTPUT] = usage.output or 0
    if usage.reasoning is not None:
        out[DETAILS] = {THINKING: usage.reasoning}
    return out


def usage_record(usage: ir.Usage) -> dict[str, Any]:
    """The ``message_delta.usage`` of this codec's own Usage, its residue merged back."""
    return merge(usage_object(usage, True), usage.extra)


def start_usage(counts: dict[str, Any]) -> dict[str, Any]:
    """``message_start.usage`` from another format: the counts come at the end."""
    return {INPUT: 0, OUTPUT: 0} if not counts else dict(counts)


# --- errors ---------------------------------------------------------------------------


def read_error(body: Any) -> ir.Error:
    """An ``error`` event's ``error`` object; fields that are not strings stay residue."""
    if type(body) is not dict:
        return ir.Error(extra={})
    extra = {k: v for k, v in body.items() if k not in ("type", "message")}
    for key in ("type", "message"):
        if key in body and type(body[key]) is not str:
            extra[key] = body[key]
    message, etype = body.get("message"), body.get("type")
    return ir.Error(
        message if type(message) is str else None,
        None,
        etype if type(etype) is str else None,
        None,
        extra,
    )


def without_absent(patch: dict[str, Any]) -> dict[str, Any]:
    """A patch without its ``ABSENT`` markers: what a reader of another format sees."""
    out: dict[str, Any] = {}
    for key, value in patch.items():
        if value is ABSENT:
            continue
        out[key] = without_absent(value) if type(value) is dict else value
    return out

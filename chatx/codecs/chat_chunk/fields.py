"""Chat chunk fields the decoder reads apart from the delta: usage, logprobs, errors,
obfuscation; and usage as the encoder writes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.residue import Carried
from chatx.usage import UsageNames
from chatx.usage import decode_usage as read_usage

# Tells a key that is absent from one present with a null value.
MISSING = object()


@dataclass(slots=True, eq=False, repr=False)  # eq and repr: ir.Own
class ChatOwn(ir.Own):
    """The chat decoder's own note on an event, for chat output and chat's final object
    (see :class:`chatx.ir.Own`). ``function_call``: the tool call this ``ItemStart``
    opens is the functions API's ``function_call`` (openai-python 0.27), which stays in
    the chunk's residue as it came and is not written again as a tool call."""

    function_call: bool = False


# The one note chat's decoder makes: shared, as nothing changes it.
FUNCTION_CALL = ChatOwn(function_call=True)

USAGE = UsageNames(
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_tokens_details",
    "completion_tokens_details",
)


def decode_usage(usage: dict[str, Any]) -> ir.Usage:
    """Chat ``usage`` → IR Usage; the cached and reasoning counts come from the details."""
    return read_usage(usage, USAGE)


def usage_object(event: ir.Usage) -> dict[str, Any]:
    """IR Usage → chat ``usage`` (its residue aside); a total the source left out is the
    sum of the two counts."""
    usage: dict[str, Any] = {}
    if event.output is not None:
        usage["completion_tokens"] = event.output
    if event.input is not None:
        usage["prompt_tokens"] = event.input
    total = event.total
    if total is None and event.input is not None and event.output is not None:
        total = event.input + event.output
    if total is not None:
        usage["total_tokens"] = total
    if event.reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": event.reasoning}
    if event.cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": event.cached}
    return usage


def split_logprobs(logprobs: Any, extra: dict[str, Any]) -> tuple[Any, Any]:
    """Chat ``logprobs`` → (content entries, refusal entries); the rest is residue."""
    if logprobs is MISSING:
        return None, None
    if not isinstance(logprobs, dict):
        extra["logprobs"] = logprobs
        return None, None
    content = logprobs.get("content")
    refusal = logprobs.get("refusal")
    rest = {
        k: v
        for k, v in logprobs.items()
        if not (k in ("content", "refusal") and isinstance(v, list) and v)
    }
    if rest:
        extra["logprobs"] = rest
    return (
        content if isinstance(content, list) and content else None,
        refusal if isinstance(refusal, list) and refusal else None,
    )


def decode_error(error: dict[str, Any]) -> ir.Error:
    extra = {k: v for k, v in error.items() if k not in ("message", "code", "type", "param")}
    for key in ("message", "type", "param"):
        value = error.get(key, MISSING)
        if value is not MISSING and not isinstance(value, str):
            extra[key] = value
    if "code" in error and error["code"] is None:
        extra["code"] = None
    message = error.get("message")
    return ir.Error(
        message if isinstance(message, str) else None,
        error.get("code"),
        error.get("type") if isinstance(error.get("type"), str) else None,
        error.get("param") if isinstance(error.get("param"), str) else None,
        extra,
    )


def beside_choices(
    data: dict[str, Any], extra: dict[str, Any], error: Any, out: list[ir.Event]
) -> None:
    """What a chunk says beside its choices: usage, an error, its obfuscation (which goes
    on the chunk's deltas; ``extra`` is the chunk's residue)."""
    usage = data.get("usage")
    if isinstance(usage, dict) and usage:
        out.append(decode_usage(usage))
    if isinstance(error, dict):
        out.append(decode_error(error))
    if type(extra.get("obfuscation")) is str:
        obfuscate(extra, out)


def stop_string(finish: ir.Finish, choice: dict[str, Any], extra: dict[str, Any]) -> ir.Finish:
    """vLLM's ``stop_reason`` beside finish_reason "stop": the stop string that ended the
    text is the Finish's stop sequence, said in the words of Anthropic's stop reason
    (``raw``); a token id or null stays residue. ``extra`` (the choice's residue, a
    :class:`Carried` when it has the field) keeps it for chat output."""
    stop = choice.get("stop_reason")
    if finish.reason == "stop" and type(stop) is str and stop and type(extra) is Carried:
        finish.raw, finish.stop_sequence = "stop_sequence", stop
        extra.rest["stop_reason"] = None
    return finish


# Delta fields an IR event also says in its own words: reasoning signatures
# (signatures.py), citations (annotations_in.py) and the functions API's call.
_CARRIED = frozenset(("reasoning_details", "thinking_blocks", "annotations", "function_call"))


def delta_residue(delta: Any) -> dict[str, Any]:
    """The residue dict a delta's leftovers go in: a :class:`Carried` when the delta has
    a field an event also says, so that chat output writes the field back as it came
    and another format reports only what no event says."""
    if type(delta) is dict and not _CARRIED.isdisjoint(delta):
        return Carried()
    return {}


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def kind_of(value: Any) -> str:
    return {
        list: "an array",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
        type(None): "null",
    }.get(type(value), type(value).__name__)


_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)


def obfuscate(extra: dict[str, Any], out: list[ir.Event]) -> None:
    """A chunk's obfuscation goes on its delta when it has exactly one (ir.OBFUSCATION);
    beside several, it stays the chunk's residue."""
    deltas = [event for event in out if type(event) in _DELTAS]
    if len(deltas) == 1:
        deltas[0].obfuscation = extra.pop("obfuscation")  # type: ignore[union-attr]
        if not extra:
            out[:] = [
                event for event in out if not (type(event) is ir.Meta and event.extra is extra)
            ]

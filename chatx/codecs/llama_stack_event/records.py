"""The Llama Stack event vocabulary, shared by the decoder and the encoder.

A record is ``{"event": {"event_type", "delta", "logprobs", "stop_reason"}, "metrics"}``
(``ChatCompletionResponseStreamChunk`` of Llama Stack's legacy inference API). The builders
here write the *canonical* record for some content; the encoder writes exactly these, and
the decoder compares each source record with the canonical one for its content to find the
residue it must carry (:func:`residue`). Sharing one set of builders is what keeps
``llama-stack -> llama-stack`` exact.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from chatx import ir
from chatx.codecs.base import exact_reason
from chatx.residue import diff

from .probe import NAME as NAME

LS = "llama_stack"  # the key under which this codec keeps its own residue in ``extra``


@dataclass(slots=True, eq=False, repr=False)  # eq and repr: ir.Own
class LlamaStackOwn(ir.Own):
    """The Llama Stack decoder's own note on an event, for Llama Stack output (see
    :class:`chatx.ir.Own`).

    - ``held`` (a ``Meta``, a text or arguments delta): the event stands for a record the
      decoder held back while it could not tell text from a call: ``text``, or the tool
      call delta's parse status (``started``, ``in_progress``, ``failed``…); ``value`` is
      that record's text (a failed record: ``None`` for the fragments' text, as newer
      Llama Stack sends it).
    - ``stop`` (a tool record's events): the stop reason that record carries though its
      ``Finish`` comes later.
    - ``deferred`` (a ``Finish``): said after the tool record that carried its stop
      reason, not on a record of its own.
    - ``args_string`` (a call's ``ItemEnd``): the call's arguments came as a JSON string."""

    held: Any = None
    value: Any = None
    stop: str | None = None
    deferred: bool = False
    args_string: bool = False


# Notes that nothing changes, shared: the encoder tells them by identity. IN_PROGRESS:
# an in_progress fragment held back, said as text or as a call's arguments.
IN_PROGRESS = LlamaStackOwn(held="in_progress")
DEFERRED = LlamaStackOwn(deferred=True)
NONE = LlamaStackOwn()


def own_of(event: Any) -> LlamaStackOwn:
    """The event's note, :data:`NONE` when it has none of this codec's."""
    own = event.own
    return own if type(own) is LlamaStackOwn else NONE


def kept(ls: dict[str, Any]) -> dict[str, Any]:
    """The ``extra`` of an event whose own residue is ``ls`` (nothing when it is empty)."""
    return {LS: ls} if ls else {}


# StopReason <-> chat finish reason. Llama Stack's own OpenAI-compat layer uses the same
# pairs (openai_compat.py: _convert_openai_finish_reason and its inverse); it reads eos and
# eos_token as end_of_turn too (chatx.codecs.base.SAME_AS).
STOP_TO_FINISH = {"end_of_turn": "stop", "end_of_message": "tool_calls", "out_of_tokens": "length"}
FINISH_TO_STOP = {
    "stop": "end_of_turn",
    "tool_calls": "end_of_message",
    "length": "out_of_tokens",
    # The legacy chat name for "the model called a tool": same meaning.
    "function_call": "end_of_message",
}
# No stop reason says the others (content_filter, error, a provider's own word such as
# vLLM's abort); Llama Stack's own mapping falls back to end_of_turn for any finish reason
# it does not know. The encoder reports the loss.
FALLBACK_STOP = "end_of_turn"

# Token metrics on the complete event <-> IR Usage fields.
METRIC_FIELDS = (
    ("prompt_tokens", "input"),
    ("completion_tokens", "output"),
    ("total_tokens", "total"),
)
METRIC_TO_FIELD = dict(METRIC_FIELDS)


def stream_id(first: Any) -> str:
    """Llama Stack events carry no id: derive one from the first record's content."""
    import hashlib  # 3 ms at start-up: imported only by the streams that need it

    digest = hashlib.sha256(orjson.dumps(first, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return "chatcmpl-ls-" + digest[:16]


def call_id(stream: str, number: int) -> str:
    """A deterministic call id for a call whose source gave none."""
    return f"{stream}-call-{number}"


def stop_word(reason: str, raw: str | None) -> str:
    """IR finish reason (+ the source's own word) -> StopReason.

    ``raw`` wins when it is a stop reason that agrees with ``reason``; ``end_of_turn`` with
    ``tool_calls`` agrees because the decoder reports a turn that ended in a call that way.
    """
    if raw in STOP_TO_FINISH and (
        STOP_TO_FINISH[raw] == reason or (raw == "end_of_turn" and reason == "tool_calls")
    ):
        return raw
    return FINISH_TO_STOP.get(exact_reason(reason) or "", FALLBACK_STOP)


def event(
    event_type: str,
    delta: dict[str, Any],
    logprobs: Any = None,
    stop_reason: Any = None,
    metrics: Any = None,
) -> dict[str, Any]:
    """One record, fields in the order Llama Stack's models declare them."""
    return {
        "event": {
            "event_type": event_type,
            "delta": delta,
            "logprobs": logprobs,
            "stop_reason": stop_reason,
        },
        "metrics": metrics,
    }


def text_delta(text: Any) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_delta(status: str, tool_call: Any) -> dict[str, Any]:
    return {"type": "tool_call", "tool_call": tool_call, "parse_status": status}


def tool_call(
    call: str | None, name: str | None, arguments: str, as_string: bool = False
) -> dict[str, Any]:
    """A parsed ``ToolCall``: ``arguments`` as an object (or the JSON text itself when the
    source wrote it so, or when it is not an object) and ``arguments_json`` the exact text."""
    value: Any = arguments
    if not as_string:
        parsed = parse_json(arguments)
        if isinstance(parsed, dict):
            value = parsed
    return {"call_id": call, "tool_name": name, "arguments": value, "arguments_json": arguments}


_INVALID = object()


def parse_json(text: str) -> Any:
    """``orjson.loads`` that returns a sentinel instead of raising; "" reads as ``{}``
    (providers send an empty argument string for calls without arguments)."""
    if not text:
        return {}
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _INVALID


def is_json(text: str) -> bool:
    return parse_json(text) is not _INVALID


def dumps(value: Any) -> str:
    """Compact JSON text; integers beyond 64 bits fall back to the json module."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --- logprobs -------------------------------------------------------------------------


def logprobs_to_ir(value: Any) -> list[dict[str, Any]] | None:
    """``[{"logprobs_by_token": {token: logprob}}]`` -> chat-style per-token entries (the
    most likely token first-class, every token in ``top_logprobs``); ``None`` when the
    value is not in that shape (it then travels as residue)."""
    if not isinstance(value, list) or not value:
        return None
    out = []
    for entry in value:
        if not isinstance(entry, dict) or len(entry) != 1:
            return None
        tokens = entry.get("logprobs_by_token")
        if not isinstance(tokens, dict) or not tokens:
            return None
        top = []
        for token, logprob in tokens.items():
            if not isinstance(logprob, (int, float)) or isinstance(logprob, bool):
                return None
            top.append({"token": token, "logprob": logprob, "bytes": None})
        best = max(top, key=lambda t: t["logprob"])
        out.append(
            {"token": best["token"], "logprob": best["logprob"], "bytes": None, "top_logprobs": top}
        )
    return out


def logprobs_from_ir(entries: list[Any] | None) -> list[dict[str, Any]] | None:
    """Chat-style entries -> ``logprobs_by_token`` (as Llama Stack's _convert_openai_logprobs
    does: the top tokens; the chosen token alone when there are none)."""
    if not entries:
        return None
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        top = entry.get("top_logprobs")
        # A token must be a string to be a key; a malformed entry is left out.
        if isinstance(top, list) and top:
            tokens = {
                t["token"]: t.get("logprob")
                for t in top
                if isinstance(t, dict) and isinstance(t.get("token"), str)
            }
        elif isinstance(entry.get("token"), str):
            tokens = {entry["token"]: entry.get("logprob")}
        else:
            continue
        out.append({"logprobs_by_token": tokens})
    return out or None


# --- metrics --------------------------------------------------------------------------


def render_metrics(counts: Mapping[str, int | None], residue: list[Any] | None) -> Any:
    """The ``metrics`` list of a complete event.

    Without residue: one ``{"metric", "value", "unit": null}`` per known count. With the
    decoder's residue (the source's entries, values of known metrics taken out): those
    entries in their order, each known value filled in from ``counts``.
    """
    if residue is None:
        metrics = [
            {"metric": name, "value": counts[field], "unit": None}
            for name, field in METRIC_FIELDS
            if counts.get(field) is not None
        ]
        return metrics or None
    out = []
    for entry in residue:
        if isinstance(entry, dict) and "value" not in entry:
            field = METRIC_TO_FIELD.get(entry.get("metric"))  # type: ignore[arg-type]
            entry = {**entry, "value": counts.get(field) if field else None}
        out.append(entry)
    return out


def read_metrics(metrics: Any) -> tuple[dict[str, int], list[Any] | None] | None:
    """``metrics`` -> (token counts, residue); ``None`` when no count is there.

    The residue is the source's entries with the counted values taken out, kept only when
    :func:`render_metrics` would not give the source back by itself. Only the first entry
    of a metric counts, as :func:`render_metrics` fills only the first.
    """
    if not isinstance(metrics, list) or not metrics:
        return None
    counts: dict[str, int] = {}
    seen: set[str] = set()
    entries: list[Any] = []
    for entry in metrics:
        name = entry.get("metric") if isinstance(entry, dict) else None
        field = METRIC_TO_FIELD.get(name) if isinstance(name, str) else None
        if field is not None and field not in seen:
            seen.add(field)
            value = entry.get("value")
            if isinstance(value, int) and not isinstance(value, bool):
                counts[field] = value
                entries.append({k: v for k, v in entry.items() if k != "value"})
                continue
        entries.append(entry)
    if not counts:
        return None
    return counts, (None if render_metrics(counts, None) == metrics else entries)


# --- tool calls -----------------------------------------------------------------------


def tool_name(value: Any) -> str | None:
    """Built-in tool names are enum values; some serializers write the enum's repr."""
    if isinstance(value, str):
        return value.removeprefix("BuiltinTool.")
    if isinstance(value, dict) and isinstance(value.get("value"), str):
        return value["value"]  # {"__enum__": "BuiltinTool", "value": "brave_search"}
    return None


def arguments_text(call: dict[str, Any]) -> tuple[str, bool]:
    """A ToolCall's arguments as JSON text, and whether the source wrote ``arguments``
    itself as that text (newer Llama Stack releases do)."""
    text = call.get("arguments_json")
    value = call.get("arguments")
    if isinstance(text, str):
        return text, value == text
    if isinstance(value, str):
        return value, True
    return dumps(value if value is not None else {}), False


def read_error(error: dict[str, Any]) -> ir.Error:
    """An ``{"error": {…}}`` frame's object; what is not a string field stays as residue."""
    known = ("message", "type", "param")
    extra = {k: v for k, v in error.items() if k not in (*known, "code")}
    extra.update({k: error[k] for k in known if k in error and not isinstance(error[k], str)})
    if "code" in error and error["code"] is None:
        extra["code"] = None
    fields = {k: error[k] if isinstance(error.get(k), str) else None for k in known}
    return ir.Error(code=error.get("code"), extra=extra, **fields)


# --- residue --------------------------------------------------------------------------


def residue(actual: dict[str, Any], canonical: dict[str, Any]) -> dict[str, Any]:
    """``{"patch": …}`` turning ``canonical`` into ``actual`` (:func:`chatx.residue.merge`
    applies it; keys the source left out are ``ABSENT``), or ``{}`` when they agree."""
    if actual == canonical:  # the common case, decided in C
        return {}
    return {"patch": diff(actual, canonical)}

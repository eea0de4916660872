"""The canonical shapes of Responses items and parts.

The encoder builds its ``*.done`` payloads with these; the decoder builds the same from
what it has read and keeps only the difference (``residue.diff``), which is how a
Responses → Responses conversion gives back the source's JSON values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.codecs.base import exact_reason


@dataclass(slots=True, eq=False, repr=False)  # eq and repr: ir.Own
class ResponsesOwn(ir.Own):
    """The Responses decoder's own note on an event, for Responses output and the
    Responses final object (see :class:`chatx.ir.Own`).

    On the ``StreamStart``: ``response``, the opening event's ``response`` as it came
    (the envelope written again), ``first``, that event's type (``response.created``, or
    ``response.queued`` where a server opens with it) and ``event``, its fields beside
    the response. On the ``StreamEnd``: ``event``, the terminal event's fields beside
    its response. On a text or arguments delta: ``silent``, the source said it in an
    item or a done event, not in a delta event of its own (none is written). On a
    ``Meta``: ``derived``, the patch of a derived event (a done event, an added part)
    against its canonical shape, by :func:`derived_key`; ``open_part``, the part an
    added-part event opened, ``(part type, number)``, which may never get a delta."""

    response: dict[str, Any] | None = None
    first: str = "response.created"
    event: dict[str, Any] | None = None
    silent: bool = False
    derived: dict[Any, Any] | None = None
    open_part: tuple[Any, Any] | None = None


# The one note of a delta said in an item or a done event: the decoder gives every such
# delta this instance (nothing changes it), and the encoder tells them by identity, a
# test per delta that costs less than reading the flag.
SILENT = ResponsesOwn(silent=True)


def text_part(text: str, logprobs: list[Any]) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": logprobs, "text": text}


def refusal_part(text: str) -> dict[str, Any]:
    return {"type": "refusal", "refusal": text}


def summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def reasoning_text_part(text: str) -> dict[str, Any]:
    return {"type": "reasoning_text", "text": text}


def message_item(item_id: str, status: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "content": content,
        "role": "assistant",
    }


def reasoning_item(
    item_id: str, summary: list[dict[str, Any]], content: list[dict[str, Any]] | None
) -> dict[str, Any]:
    item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": summary}
    if content:
        item["content"] = content
    return item


def function_item(
    item_id: str, status: str, arguments: str, call_id: str | None, name: str | None
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id or "",
        "name": name or "",
    }


def terminal_status(reason: str | None, failed: bool) -> tuple[str, dict[str, Any] | None]:
    """The terminal status and ``incomplete_details`` for an IR finish reason."""
    if failed or reason == "error":
        return "failed", None
    said = exact_reason(reason)
    if said == "length":
        return "incomplete", {"reason": "max_output_tokens"}
    if said == "content_filter":
        return "incomplete", {"reason": "content_filter"}
    if reason is None or said is not None:
        return "completed", None
    # A word Responses has no status for (vLLM's abort, Gemini's recitation) did not end
    # the response cleanly, as far as anyone can tell: incomplete, and the word itself in
    # incomplete_details.reason, a free string in Open Responses.
    return "incomplete", {"reason": reason}


TERMINAL_EVENT = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
}


def terminal_response(
    opening: dict[str, Any],
    status: str,
    details: dict[str, Any] | None,
    output: list[Any],
    error: dict[str, Any] | None,
    usage: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``response`` of the terminal event: the start's envelope, closed."""
    response = dict(opening)
    response["status"] = status
    response["incomplete_details"] = details
    response["output"] = output
    if error is not None:
        response["error"] = error
    if usage is not None:
        response["usage"] = usage
    return response


def error_event(
    code: Any, message: str | None, param: Any, etype: str | None, details: dict[str, Any] | None
) -> dict[str, Any]:
    """An ``error`` event in both shapes: the openai SDK types the flat one (``code``,
    ``message``, ``param``), the Open Responses schema the nested ``error`` object."""
    code = str(code) if code is not None and not isinstance(code, str) else code
    # Open Responses' ErrorPayload requires type, code, message and param (nullable).
    nested: dict[str, Any] = {
        "type": etype or "server_error",
        "code": code,
        "message": message or "",
        "param": param,
    }
    if details:
        nested.update(details)
    return {
        "type": "error",
        "code": code,
        "message": message or "",
        "param": param,
        "error": nested,
    }


_EMPTY_PART = {
    "output_text": lambda: text_part("", []),
    "refusal": lambda: refusal_part(""),
    "reasoning_text": lambda: reasoning_text_part(""),
}


def part_added(item_id: str, output_index: int, index: int, ptype: str) -> dict[str, Any]:
    """``content_part.added`` or, for summaries, ``reasoning_summary_part.added``."""
    head = {"item_id": item_id, "output_index": output_index}
    if ptype == "summary_text":
        return {
            "type": "response.reasoning_summary_part.added",
            **head,
            "summary_index": index,
            "part": summary_part(""),
        }
    return {
        "type": "response.content_part.added",
        **head,
        "content_index": index,
        "part": _EMPTY_PART[ptype](),
    }


def part_done(
    item_id: str, output_index: int, index: int, ptype: str, text: str, logprobs: list[Any]
) -> list[dict[str, Any]]:
    """The text's ``*.done`` event and the part's done event, in the order they go out."""
    head = {"item_id": item_id, "output_index": output_index}
    if ptype == "summary_text":
        at = {"summary_index": index}
        return [
            {"type": "response.reasoning_summary_text.done", **head, **at, "text": text},
            {
                "type": "response.reasoning_summary_part.done",
                **head,
                **at,
                "part": summary_part(text),
            },
        ]
    at = {"content_index": index}
    if ptype == "output_text":
        done = {
            "type": "response.output_text.done",
            **head,
            **at,
            "text": text,
            "logprobs": logprobs,
        }
        part = text_part(text, logprobs)
    elif ptype == "refusal":
        done = {"type": "response.refusal.done", **head, **at, "refusal": text}
        part = refusal_part(text)
    else:
        done = {"type": "response.reasoning_text.done", **head, **at, "text": text}
        part = reasoning_text_part(text)
    return [done, {"type": "response.content_part.done", **head, **at, "part": part}]


def arguments_done(
    item_id: str, output_index: int, arguments: str, name: str | None
) -> dict[str, Any]:
    done = {
        "type": "response.function_call_arguments.done",
        "item_id": item_id,
        "output_index": output_index,
        "arguments": arguments,
    }
    if name:
        done["name"] = name
    return done


# Derived events: the decoder keeps how the source's differ from these, keyed like this.
DERIVED = frozenset(
    (
        "response.content_part.added",
        "response.reasoning_summary_part.added",
        "response.output_text.done",
        "response.refusal.done",
        "response.reasoning_text.done",
        "response.reasoning_summary_text.done",
        "response.function_call_arguments.done",
        "response.content_part.done",
        "response.reasoning_summary_part.done",
    )
)


def derived_key(event: dict[str, Any]) -> tuple[Any, ...]:
    """Which derived event this is: type, output index and part index."""
    return (
        event.get("type"),
        event.get("output_index"),
        event.get("summary_index", event.get("content_index")),
    )


# The codes a terminal ``response.error`` may carry (the openai SDK's ResponseError enum).
RESPONSE_ERROR_CODES = frozenset(
    (
        "server_error",
        "rate_limit_exceeded",
        "invalid_prompt",
        "data_residency_mismatch",
        "bio_policy",
        "misalignment_policy_violation",
        "vector_store_timeout",
        "invalid_image",
        "invalid_image_format",
        "invalid_base64_image",
        "invalid_image_url",
        "image_too_large",
        "image_too_small",
        "image_parse_error",
        "image_content_policy_violation",
        "invalid_image_mode",
        "image_file_too_large",
        "unsupported_image_media_type",
        "empty_image_file",
        "failed_to_download_image",
        "image_file_not_found",
    )
)


def response_error(code: Any, message: str | None) -> dict[str, Any]:
    """The terminal response's ``error``. A provider's own code (Groq's
    ``tool_use_failed``, OpenRouter's 400) is not one a Responses client accepts there:
    it becomes ``server_error``, and the ``error`` event before it keeps the original."""
    code = str(code) if code is not None and not isinstance(code, str) else code
    return {
        "code": code if code in RESPONSE_ERROR_CODES else "server_error",
        "message": message or "",
    }


# What a field holds, when it holds the type the spec gives it (a source may send
# anything): the value, or the empty value of that type.
def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int:
    return value if isinstance(value, int) else 0

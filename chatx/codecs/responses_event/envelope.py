"""The ``response`` object around a Responses stream: ids, defaults, request settings.

Where the source has no value for a field the Open Responses schema requires, the
envelope holds the value a server reports when the request left it unset (its zero or
default value), never a made-up figure.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.residue import merge
from chatx.usage import UsageNames
from chatx.usage import decode_usage as read_usage

USAGE = UsageNames(
    "input_tokens", "output_tokens", "total_tokens", "input_tokens_details", "output_tokens_details"
)

# Field order follows the Open Responses ResponseResource schema.
DEFAULTS: dict[str, Any] = {
    "background": False,
    "completed_at": None,
    "error": None,
    "frequency_penalty": 0.0,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "parallel_tool_calls": True,
    "presence_penalty": 0.0,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "reasoning": None,
    "safety_identifier": None,
    "service_tier": "default",
    "store": False,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": None,
    "metadata": {},
}

# Request fields that land in the envelope under the same name.
_SAME_NAME = (
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "parallel_tool_calls",
    "previous_response_id",
    "prompt_cache_key",
    "safety_identifier",
    "service_tier",
    "store",
    "temperature",
    "top_p",
    "top_logprobs",
    "truncation",
    "metadata",
    "background",
    "frequency_penalty",
    "presence_penalty",
    "user",
)


def responses_id(source_id: str) -> str:
    """``chatcmpl-X`` → ``resp_X``: the response id derives from the source's id."""
    if source_id.startswith("resp_"):
        return source_id
    for prefix in ("chatcmpl-", "chat-"):
        if source_id.startswith(prefix):
            return "resp_" + source_id[len(prefix) :]
    return "resp_" + (source_id or "0")


def item_id(response_id: str, prefix: str, index: int) -> str:
    """``msg_X_0``, ``rs_X_1``, ``fc_X_2``: from the response id and the output index."""
    base = response_id[5:] if response_id.startswith("resp_") else response_id
    return f"{prefix}_{base}_{index}"


def envelope(rid: str, created: Any, model: Any, request: dict[str, Any] | None) -> dict[str, Any]:
    """A fresh ``response`` object (status in_progress, no output) for a foreign source."""
    response: dict[str, Any] = {
        "id": rid,
        "object": "response",
        "created_at": created if isinstance(created, int) else 0,
        "status": "in_progress",
        "model": model or "",
        "output": [],
    }
    response.update(DEFAULTS)
    response["text"] = {"format": {"type": "text"}}
    response["tools"] = []
    response["metadata"] = {}
    if request:
        _apply_request(response, request)
    return response


def _apply_request(response: dict[str, Any], request: dict[str, Any]) -> None:
    """Fill the envelope from the request body, as a server echoes its settings."""
    _apply_settings(response, request)
    _apply_text(response, request)
    _apply_prompt(response, request)


def _apply_settings(response: dict[str, Any], request: dict[str, Any]) -> None:
    """The settings a request names as Responses does, the output limit, the tools."""
    for key in _SAME_NAME:
        if key in request:
            response[key] = request[key]
    # Chat requests name the limit differently.
    for key in ("max_completion_tokens", "max_tokens"):
        if request.get(key) is not None and response.get("max_output_tokens") is None:
            response["max_output_tokens"] = request[key]
    if "tools" in request and isinstance(request["tools"], list):
        response["tools"] = [_tool(tool) for tool in request["tools"]]
    if "tool_choice" in request:
        response["tool_choice"] = _tool_choice(request["tool_choice"])


def _apply_text(response: dict[str, Any], request: dict[str, Any]) -> None:
    """The output's format and verbosity, which chat asks for at the top level."""
    if isinstance(request.get("text"), dict):
        response["text"] = request["text"]
    elif isinstance(request.get("response_format"), dict):
        response["text"] = {"format": _text_format(request["response_format"])}
    if request.get("verbosity") is not None and "verbosity" not in response["text"]:
        # Chat asks for it at the top level; Responses has it in text.
        response["text"] = {**response["text"], "verbosity": request["verbosity"]}


def _apply_prompt(response: dict[str, Any], request: dict[str, Any]) -> None:
    """Instructions (a chat request's system messages), reasoning, the model."""
    if "instructions" not in request:
        instructions = _instructions(request.get("messages"))
        if instructions is not None:
            response["instructions"] = instructions
    if isinstance(request.get("reasoning"), dict):
        response["reasoning"] = request["reasoning"]
    elif request.get("reasoning_effort") is not None:
        response["reasoning"] = {"effort": request["reasoning_effort"], "summary": None}
    if request.get("model") and not response.get("model"):
        response["model"] = request["model"]


def _instructions(messages: Any) -> str | None:
    """A chat request's system and developer messages, in order: what Responses calls the
    instructions (one string in Open Responses; messages apart by a blank line)."""
    if not isinstance(messages, list):
        return None
    texts = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") in ("system", "developer"):
            text = _content_text(message.get("content"))
            if text:
                texts.append(text)
    return "\n\n".join(texts) if texts else None


def _content_text(content: Any) -> str:
    """A message's content as text: the string, or its text parts one after another."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    )


def _tool(tool: Any) -> Any:
    """Chat's nested ``{"type": "function", "function": {...}}`` → the flat Responses tool."""
    if not isinstance(tool, dict) or not isinstance(tool.get("function"), dict):
        return tool
    function = tool["function"]
    flat = {
        "type": "function",
        "name": function.get("name"),
        "description": function.get("description"),
        "parameters": function.get("parameters"),
        "strict": function.get("strict"),
    }
    return flat


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def _text_format(response_format: dict[str, Any]) -> dict[str, Any]:
    if response_format.get("type") == "json_schema" and isinstance(
        response_format.get("json_schema"), dict
    ):
        return {"type": "json_schema", **response_format["json_schema"]}
    return response_format


def usage_object(event: Any, own: bool) -> dict[str, Any]:
    """IR Usage → Responses ``usage``.

    From another format, counts the source lacks are written as 0, the schema's zero;
    from a Responses source only what it had is written, and its residue merged back.
    """
    if own:
        usage: dict[str, Any] = {}
        for key, value in (
            ("input_tokens", event.input),
            ("output_tokens", event.output),
            ("total_tokens", event.total),
        ):
            if value is not None:
                usage[key] = value
        if event.cached is not None:
            usage["input_tokens_details"] = {"cached_tokens": event.cached}
        if event.reasoning is not None:
            usage["output_tokens_details"] = {"reasoning_tokens": event.reasoning}
        return merge(usage, event.extra) if event.extra else usage
    input_tokens = event.input or 0
    output_tokens = event.output or 0
    total = event.total if event.total is not None else input_tokens + output_tokens
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {
            "cached_tokens": event.cached or 0,
            "cache_write_tokens": event.cache_write or 0,
        },
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": event.reasoning or 0},
        "total_tokens": total,
    }


def decode_usage(usage: dict[str, Any]) -> ir.Usage:
    """Responses ``usage`` → IR Usage; the rest of it stays as residue."""
    return read_usage(usage, USAGE)

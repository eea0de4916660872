"""A request body checked against its API's SDK request types: openai's
``CompletionCreateParams`` and ``ResponseCreateParams``, anthropic's
``MessageCreateParams``, google-genai's ``Content``, ``Tool``, ``GenerationConfig``….

The SDK types are TypedDicts whose ``messages``, ``input``, ``tools`` and content parts are
``Iterable[...]``, which a pydantic ``TypeAdapter`` validates lazily: ``validate_python``
hands back an iterator and a bad message passes until something walks it. :func:`errors`
walks the whole result into lists, which is what makes the check real
(``test_sdk_check.py`` shows a bad body passing without the walk and failing with it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError


@cache
def adapter(codec: str) -> TypeAdapter[Any]:
    """The SDK's request type for ``codec``'s API, streamed or not."""
    if codec == "chat-chunk":
        from openai.types.chat import completion_create_params as chat

        return TypeAdapter(
            chat.CompletionCreateParamsStreaming | chat.CompletionCreateParamsNonStreaming
        )
    if codec == "responses-event":
        from openai.types.responses import response_create_params as responses

        return TypeAdapter(
            responses.ResponseCreateParamsStreaming | responses.ResponseCreateParamsNonStreaming
        )
    if codec == "anthropic-event":
        from anthropic.types import message_create_params as messages

        return TypeAdapter(
            messages.MessageCreateParamsStreaming | messages.MessageCreateParamsNonStreaming
        )
    if codec == "gemini-event":
        return TypeAdapter(_gemini_request())
    raise KeyError(f"no SDK request type for {codec}")


def _gemini_request() -> type:
    """google-genai has no type for the REST body itself, only for its pieces: a model of
    them, under the SDK's own rules (either spelling of a field, no field it does not
    know)."""
    from google.genai import _common, types

    class GenerateContentRequest(_common.BaseModel):
        model: str | None = None
        contents: list[types.Content]
        system_instruction: types.Content | None = None
        tools: list[types.Tool] | None = None
        tool_config: types.ToolConfig | None = None
        generation_config: types.GenerationConfig | None = None
        safety_settings: list[types.SafetySetting] | None = None
        cached_content: str | None = None
        labels: dict[str, str] | None = None

    return GenerateContentRequest


def has_types(codec: str) -> bool:
    return codec in ("chat-chunk", "responses-event", "anthropic-event", "gemini-event")


def walk(value: Any) -> Any:
    """``value`` with every iterable the validation left lazy turned into a list, which
    validates what it holds."""
    if isinstance(value, Mapping):
        return {key: walk(item) for key, item in value.items()}
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Iterable):
        return [walk(item) for item in value]
    return value


def errors(codec: str, body: Any, *, walked: bool = True) -> list[str]:
    """What the SDK's type says is wrong with ``body`` (empty: it is valid)."""
    try:
        checked = adapter(codec).validate_python(body)
        if walked:
            walk(checked)
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    return []

"""``validate --schema`` for Responses events: the openai SDK's event classes.

Imported only under ``--schema``; the SDK itself only when a payload is checked. Events
are looked up by their ``type`` in a dict built once from the SDK's event classes, and
each class gets its own cached ``TypeAdapter``: validating against the SDK's published
``ResponseStreamEvent`` union instead is about 17 times slower, because pydantic tries
the union's members rather than jumping to the one the ``type`` names.
"""

from __future__ import annotations

import typing
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import TypeAdapter


@cache
def responses_classes() -> dict[str, type]:
    """``type`` value → SDK event class, read from the SDK's own union."""
    from openai.types.responses import ResponseStreamEvent

    union = typing.get_args(ResponseStreamEvent)[0]  # Annotated[Union[...], discriminator]
    classes: dict[str, type] = {}
    for cls in typing.get_args(union):
        (literal,) = typing.get_args(cls.model_fields["type"].annotation)
        classes[literal] = cls
    return classes


@cache
def _adapter(cls: type) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


def schema(data: Any) -> tuple[TypeAdapter[Any], Any] | None:
    """The SDK class the event's ``type`` names and the value to check with it; None
    for an event type this SDK does not know."""
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    cls = responses_classes().get(kind) if isinstance(kind, str) else None
    if cls is None:
        return None
    if isinstance(data.get("error"), dict):
        # The nested error shape (what OpenAI sends) is as valid as the flat one the SDK
        # type describes (DESIGN.md §5): validate it flattened.
        data = {**data["error"], "type": "error", "sequence_number": data.get("sequence_number")}
    return _adapter(cls), data

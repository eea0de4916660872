"""``validate --schema`` for Gemini chunks: the google-genai SDK's
``GenerateContentResponse``.

Imported only under ``--schema``; the SDK itself only when a payload is checked.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import TypeAdapter


@cache
def _adapter() -> TypeAdapter[Any]:
    from google.genai.types import GenerateContentResponse
    from pydantic import TypeAdapter

    return TypeAdapter(GenerateContentResponse)


# The enums of a response: with enum-encoding=int (the vertexai SDK's REST transport)
# each is a number, which google-genai's types never read (they ask for names).
_ENUMS = frozenset(
    (
        "finishReason",
        "modality",
        "trafficType",
        "category",
        "probability",
        "severity",
        "blockReason",
    )
)


def _int_enums(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            (key in _ENUMS and type(item) is int) or _int_enums(item) for key, item in value.items()
        )
    if isinstance(value, list):
        return any(_int_enums(item) for item in value)
    return False


def schema(data: Any) -> tuple[TypeAdapter[Any], Any] | None:
    """The SDK type to check ``data`` with, and ``data``; None for a failed request's
    error object, which is no response (GEM008), and for a chunk with enum-encoding=int,
    which the SDK does not read."""
    if isinstance(data, dict) and data.get("error") is not None and "candidates" not in data:
        return None
    if _int_enums(data):
        return None
    return _adapter(), data

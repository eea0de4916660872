"""``validate --schema`` for ``anthropic-event``: each payload against the anthropic SDK's
pydantic model for its type (rule ANT100).

The descriptor's schema hook. Only ``--schema`` calls it, and it imports the SDK (the
optional ``anthropic`` extra) when called: ``convert`` never loads it.
"""

from __future__ import annotations

import typing
from functools import cache
from typing import Any


def schema(data: Any) -> tuple[Any, Any] | None:
    """``validate --schema``: the anthropic SDK type one payload is checked with, and the
    value to check (``(TypeAdapter, data)``), or None when the SDK has no type for it (a
    ping, which its reader skips; an unknown event, ANT005). Imports the SDK: only
    ``--schema`` calls it."""
    etype = data.get("type") if isinstance(data, dict) else None
    adapter = _adapters().get(etype) if isinstance(etype, str) else None
    return None if adapter is None else (adapter, data)


@cache
def _adapters() -> dict[str, Any]:
    """``type`` → a TypeAdapter of the SDK's event class, read from its own union.

    The beta union is the one that holds every content block the API streams (MCP,
    compaction, advisor results); an adapter per class, rather than one for the union,
    reports against the class the ``type`` names instead of every member's.
    """
    from anthropic.types.beta import BetaRawMessageStreamEvent
    from anthropic.types.shared import ErrorResponse
    from pydantic import TypeAdapter

    union = typing.get_args(BetaRawMessageStreamEvent)[0]  # Annotated[Union[...], …]
    adapters: dict[str, Any] = {"error": TypeAdapter(ErrorResponse)}
    for cls in typing.get_args(union):
        (literal,) = typing.get_args(cls.model_fields["type"].annotation)
        adapters[literal] = TypeAdapter(cls)
    return adapters

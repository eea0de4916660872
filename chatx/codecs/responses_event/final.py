"""What ``collect`` builds from a Responses stream: the ``response`` object."""

from __future__ import annotations

from typing import Any

from chatx.assembler import OtherItem

_ADDED = "response.output_item.added"
_DONE = "response.output_item.done"


def other_item(data: Any) -> OtherItem | None:
    """An ``output_item.added`` / ``.done`` the decoder passed through (a web search, an
    MCP call…): the item, kept whole in output order by ``collect`` and ``show``."""
    if not isinstance(data, dict):
        return None
    item = data.get("item")
    if not isinstance(item, dict):
        return None
    kind = data.get("type")
    if kind in (_ADDED, _DONE):
        return OtherItem(data.get("output_index"), item, kind == _DONE)
    return None

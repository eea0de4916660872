"""What a message item's closing residue still says once its citations are written.

A Responses message item closes with its parts (``output_item.done``'s ``content``),
which repeat the text and the annotations the decoder has already said one by one. An
encoder of another format that wrote those citations in its own words (chat
annotations, Anthropic citations) would report the parts lost a second time: it takes
them out of the residue when they hold nothing else.
"""

from __future__ import annotations

from typing import Any

# Fields of a Responses message part its text and its annotations say.
_PART = frozenset(("type", "text", "annotations", "logprobs"))


def without_cited_parts(extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` less the closing item's parts when every part holds only what the
    text and the citations said; ``extra`` itself otherwise."""
    item = extra.get("item")
    if type(item) is not dict:
        return extra
    content = item.get("content")
    if type(content) is list and all(type(p) is dict and p.keys() <= _PART for p in content):
        rest = {k: v for k, v in item.items() if k != "content"}
        extra = {k: v for k, v in extra.items() if k != "item"}
        if rest:
            extra["item"] = rest
    return extra

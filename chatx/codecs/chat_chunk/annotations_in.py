"""Citations in chat deltas: ``choices[].delta.annotations`` read as the IR's
:class:`~chatx.ir.Citation`.

A chat message says its web page citations as ``url_citation`` annotations:
``{"type": "url_citation", "url_citation": {"url", "title", "start_index",
"end_index"}}``, the span in characters of the message's ``content``. The openai SDK
types them on the message only (``ChatCompletionMessage.annotations``); streams say
them in a delta all the same: OpenAI's search models in the chunk that finishes the
choice, after the text they cite; OpenRouter's web search early, one per chunk before
any text, with ``start_index`` and ``end_index`` 0 and the page's text in ``content``.

A citation is of the message item open when it comes (one opens for it when none is,
as Anthropic's citation comes before its text), its span counted from where that
item's text began in the content. ``extra`` keeps what else an entry says (OpenRouter's
``content``, a span that is not two ordered integers: the citation then covers its
item), which another format reports lost. An entry whose span starts before the item
(it cites the text of an item closed since, a tool call between them) has no place in
the IR: it stays residue, reported lost.

The field stays the delta's residue (:class:`chatx.residue.Carried`): chat output writes
it back as it came, and another format reports only the entries no citation says.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.residue import Carried

FIELD = "annotations"
_SAID = frozenset(("url", "title", "start_index", "end_index"))


def events(lane: int, entries: Any, base: int) -> tuple[list[ir.Meta], Any]:
    """A ``Meta`` saying each url citation of a delta's ``annotations`` (spans counted
    from ``base``, where the cited item's text began in the content), and what of the
    field no citation says (``None``: nothing), for the delta's :class:`Carried` rest."""
    if type(entries) is not list:
        return [], entries
    cited: list[Any] = []
    rest: list[Any] = []
    said: list[ir.Meta] = []
    for entry in entries:
        cite = _citation(entry, base)
        if cite is None:
            rest.append(entry)
        else:
            cited.append(entry)
            said.append(ir.Meta(lane, {}, None, cite))
    if said:
        # Chat output writes the field back from the choice's residue; a format with no
        # place for a citation reports the entries, once, as it would the field.
        carried = said[0].extra = Carried()
        carried.rest["delta"] = {FIELD: cited}
    return said, rest or None


def _citation(entry: Any, base: int) -> ir.Citation | None:
    if type(entry) is not dict or entry.get("type") != "url_citation":
        return None
    page = entry.get("url_citation")
    if type(page) is not dict or type(page.get("url")) is not str:
        return None
    title = page.get("title")
    extra = {k: v for k, v in page.items() if k not in _SAID}
    extra.update((k, v) for k, v in entry.items() if k != "type" and k != "url_citation")
    if title is not None and type(title) is not str:
        extra["title"] = title
    start, end = page.get("start_index"), page.get("end_index")
    if type(start) is int and type(end) is int and start < base:
        return None
    if type(start) is int and type(end) is int and start <= end:
        start, end = start - base, end - base
    else:
        for key in ("start_index", "end_index"):
            if key in page:
                extra[key] = page[key]
        start = end = None
    return ir.Citation(
        "url",
        page["url"],
        title if type(title) is str else None,
        start=start,
        end=end,
        extra=extra,
    )

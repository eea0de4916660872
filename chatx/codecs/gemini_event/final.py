"""``collect`` for Gemini: the final ``GenerateContentResponse`` as a client accumulates
the chunks, each candidate's parts joined in the order they came (a thought's text, the
answer's, each call whole with its ``args`` parsed, a part the IR has no words for — code
execution, inline data, a built-in tool's call — where it came, a signature on the part
after the reasoning it closes), its ``finishReason``, the last ``usageMetadata``.

**From a Gemini stream**, the chunks' own fields stay where the response has them, as a
client that joins the chunks keeps them (google-genai joins none of its own: its chat
keeps each chunk's content, its stream each chunk's usage as the running total; Google's
JavaScript SDKs keep each candidate's fields of the last chunk): a candidate's
``groundingMetadata``, ``safetyRatings``, ``finishMessage``, ``urlContextMetadata``… the
last chunk's that said one (an object field by field: the ``{}`` of the chunks before the
grounding says nothing), but ``citationMetadata``, whose entries ride on the chunks of
the text they cite, each chunk its own: every chunk's, in the order they came (as
google-genai's own join of responses, ``merge_pydantic_models``, adds lists up). The
response's ``usageMetadata`` is the last chunk's as it came, its ``promptFeedback`` and
``createTime`` kept. A part's own fields, on text joined from several parts, have no
place: said lost.

**From another format**, its citations and web searches become each candidate's
``groundingMetadata`` as the encoder writes them (:class:`~.grounding_write.GroundingWriter`):
``collect --as gemini`` of a stream is ``collect`` of ``convert --to gemini`` of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chatx.collect.assembler import Assembler
from chatx.collect.items import Item, Lane, OtherItem, joined
from chatx.notes import Notes
from chatx.residue import ABSENT, copied, merge

from . import records as r
from .ending import error_body, usage_metadata
from .grounding_write import GroundingWriter
from .parts import is_base64, loads

# A candidate's fields the object builds from the IR, and a response's.
_BUILT = frozenset(("content", "finishReason", "index"))
_BUILT_TOP = frozenset(("candidates", "modelVersion", "responseId"))


def other_item(data: Any) -> OtherItem | None:
    """A part the IR has no words for, kept in its place among its candidate's parts,
    and a candidate's web search (its begin and end carry one payload: each finishes the
    one item)."""
    if type(data) is not dict or type(data.get("lane")) is not int:
        return None
    lane = data["lane"]
    part = data.get("part")
    if type(part) is dict and "functionCall" in part:
        return None  # a piece of a call Vertex streams: the whole call is the item
    if type(part) is dict:
        # Each part an item of its own: the decoder makes a payload per part, which its
        # item keeps (so no other payload has its id while the stream is assembled).
        return OtherItem(("part", id(data)), data, True, lane=lane)
    if r.GROUNDING in data:
        return OtherItem(("search", lane), data, True, lane=lane)
    return None


def _call(item: Item, lane: int, sid: str) -> dict[str, Any]:
    call = item.call
    if call is None:
        return {}
    text = call.arguments
    try:
        args = loads(text) if text.strip() else {}
    except ValueError:
        args = None
    if type(args) is not dict:
        args = {}  # arguments that are not a JSON object: the encoder writes none
    call_id = call.call_id or r.derived_call_id(sid, lane, call.call)
    return r.call_part(call.name, args, call_id)


def _reasoning(
    item: Item, parts: list[dict[str, Any]], signature: str | None
) -> tuple[dict[str, Any] | None, str | None]:
    """A thought part, or none with the signature that waits for the next part."""
    text = item.reasoning_text()
    part = r.thought_part(text) if text else None
    token = item.signature if item.signature is not None else item.encrypted
    if token is None or not is_base64(token):
        return part, signature  # a token that is not base64 is no thoughtSignature
    if part is not None:
        if signature is not None:
            part["thoughtSignature"] = signature
        parts.append(part)
    elif signature is not None:
        parts.append({"thoughtSignature": signature})
    return None, token


def _in_order(lane: Lane) -> Iterator[Item | str]:
    """The lane's items in the order their parts came: a message's text (a str) cut
    where an other item came inside it (the IR says a Gemini text, a code part and more
    text as one message)."""
    inside: dict[int, list[Item]] = {}
    for item in lane.items:
        if item.inside is not None:
            inside.setdefault(id(item.inside[0]), []).append(item)
    for item in lane.items:
        if item.inside is not None:
            continue  # said in its message
        others = inside.get(id(item))
        if not others:
            yield item
            continue
        text, start = joined(item.text), 0
        for other in others:
            at = other.inside[1] if other.inside is not None else start
            yield text[start:at]
            yield other
            start = at
        yield text[start:] + joined(item.refusal)


def _part(item: Item | str, lane: Lane, sid: str) -> dict[str, Any] | None:
    """The part of an item (or of a piece of a message's text) but a reasoning item's."""
    if not isinstance(item, Item):
        return r.text_part(item) if item else None
    if item.kind == "message":
        text = joined(item.text) + joined(item.refusal)
        return r.text_part(text) if text else None
    if item.kind == "tool_call":
        return _call(item, lane.index, sid)
    data = item.data
    if item.kind == "other" and item.format == r.NAME and type(data) is dict and "part" in data:
        return dict(data["part"])
    return None


def _parts(lane: Lane, sid: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    signature: str | None = None
    for item in _in_order(lane):
        if isinstance(item, Item) and item.kind == "reasoning":
            part, signature = _reasoning(item, parts, signature)
        else:
            part = _part(item, lane, sid)
        if part is None:
            continue
        if signature is not None:
            part["thoughtSignature"] = signature
            signature = None
        last = parts[-1] if parts else None
        if last is not None and _joins(last, part):
            last["text"] += part["text"]  # one answer said in several items: one part
            continue
        parts.append(part)
    if signature is not None:
        parts.append({"thoughtSignature": signature})
    return parts


def _joins(last: dict[str, Any], part: dict[str, Any]) -> bool:
    """Whether ``part``, text alone, goes on with the text of ``last``, the part before
    it (Gemini's chunks say one answer text in as many parts: a client joins them)."""
    return (
        len(part) == 1
        and type(part.get("text")) is str
        and type(last.get("text")) is str
        and not last.get("thought")
    )


def _cited(stream: Assembler) -> dict[int, list[Any]]:
    """Every chunk's ``citationMetadata``, by candidate (see :class:`records.GeminiOwn`)."""
    cited: dict[int, list[Any]] = {}
    for own in stream.owns:
        if type(own) is r.GeminiOwn:
            for lane, metadata in own.cited:
                cited.setdefault(lane, []).append(metadata)
    return cited


def _citations(said: list[Any]) -> dict[str, Any]:
    """The chunks' ``citationMetadata`` as one: their lists of citations one after
    another, another field the last said."""
    out: dict[str, Any] = {}
    for metadata in said:
        for key, value in metadata.items():
            held = out.get(key)
            out[key] = held + value if type(held) is list and type(value) is list else value
    return copied(out)


def _own_candidate(candidate: dict[str, Any], lane: Lane, cited: list[Any]) -> None:
    """A Gemini candidate's own fields: its residue (the last said of each), and every
    chunk's citations."""
    residue = lane.residue
    content = residue.get("content")
    if type(content) is dict:
        merge(candidate["content"], {k: v for k, v in content.items() if k != "parts"})
    for key, value in residue.items():
        if key not in _BUILT:
            candidate[key] = copied(value)
    if cited:
        candidate[r.CITATIONS] = _citations(cited)


def _blocked(stream: Assembler) -> bool:
    """A Gemini response to a blocked prompt: ``promptFeedback.blockReason``, no
    candidate said (the decoder's lane says nothing but its finish)."""
    feedback = stream.residue.get("promptFeedback")
    if type(feedback) is not dict or not feedback.get("blockReason"):
        return False
    return all(not lane.items and not lane.residue for lane in stream.lanes.values())


def _grounding(lane: Lane, number: int, notes: Notes) -> dict[str, Any] | None:
    """Another format's citations and web searches in a candidate, as the encoder's
    ``groundingMetadata`` of it."""
    writer = GroundingWriter(notes)
    writer.lane = number
    for item in lane.items:
        if item.kind == "message":
            writer.item_start(number)
            writer.text(number, joined(item.text) + joined(item.refusal))
            for cited in item.citations:
                if cited.citation is not None:
                    writer.cite(number, cited.citation)
            writer.item_end(number)
        elif item.search is not None:
            writer.search(item.search)
    return writer.metadata(number)


def final(
    assembler: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    """The accumulated response; with ``choice``, that candidate alone (index 0)."""
    own = source == r.NAME
    lanes = (
        [assembler.one_lane(choice, "a Gemini response")]
        if choice is not None
        else assembler.choices
    )
    candidates = _candidates(assembler, lanes, choice, own, notes)
    out: dict[str, Any] = {"candidates": candidates} if candidates else {}
    if assembler.usage is not None:
        out["usageMetadata"] = usage_metadata(assembler.usage, notes)
    if assembler.model:
        out["modelVersion"] = assembler.model
    out["responseId"] = assembler.id or ""
    if own:
        _own_response(out, assembler, notes)
    if assembler.errors:
        error = assembler.errors[-1]
        if not own:
            return error_body(error, notes)
        out = {"error": r.error_object(error.code, error.message, error.type)}
        if error.extra:
            merge(out, copied(error.extra))
    return out


def _candidates(
    stream: Assembler, lanes: list[Lane], choice: int | None, own: bool, notes: Notes
) -> list[dict[str, Any]]:
    if own and _blocked(stream):
        return []  # the IR's filtered choice of a blocked prompt: Gemini sent none
    cited = _cited(stream) if own else {}
    sid = stream.id or ""
    candidates = []
    for lane in lanes:
        index = 0 if choice is not None else lane.index
        finish = None
        if lane.finish is not None:
            finish, _ = r.gemini_reason(lane.finish, lane.raw_finish)
        elif not own and stream.ended and not stream.errors:
            finish = "STOP"  # the source ended its stream, the candidate unfinished
        candidate = r.candidate(index, _parts(lane, sid), finish)
        if own:
            _own_candidate(candidate, lane, cited.get(lane.index, []))
        else:
            grounding = _grounding(lane, index, notes)
            if grounding is not None:
                candidate[r.GROUNDING] = grounding
        candidates.append(candidate)
    return candidates


def _own_response(out: dict[str, Any], stream: Assembler, notes: Notes) -> None:
    """A Gemini response's own fields: its ``createTime``, the chunks' other fields
    (``promptFeedback``) the last said, the last chunk's usage as it came; a part's own
    fields said lost."""
    said = stream.start_own
    if type(said) is r.GeminiOwn and said.said_id is not None:
        # The decoder made the id up: the chunks said none, or said it empty.
        if said.said_id is ABSENT:
            del out["responseId"]
        else:
            out["responseId"] = said.said_id
    create = stream.start_extra.get("createTime")
    if create is not None:
        out["createTime"] = create
    for key, value in stream.residue.items():
        if key not in _BUILT_TOP:
            out[key] = copied(value)
    usage = stream.usage.own if stream.usage is not None else None
    if type(usage) is r.GeminiOwn and type(usage.usage) is dict:
        # The last chunk's, whole: the residue settles each count, the last said winning.
        out["usageMetadata"] = copied(usage.usage)
    notes.lost_fields.update(stream.delta_residue)

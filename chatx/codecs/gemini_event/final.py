"""``collect`` for Gemini: the final ``GenerateContentResponse`` as a client accumulates
the chunks, each candidate's parts joined in the order they came (a thought's text, the
answer's, each call whole with its ``args`` parsed, a signature on the part after the
reasoning it closes), its ``finishReason``, the last ``usageMetadata``."""

from __future__ import annotations

from typing import Any

from chatx.collect.assembler import Assembler
from chatx.collect.items import Item, Lane, joined
from chatx.notes import Notes

from . import records as r
from .ending import usage_metadata
from .parts import is_base64, loads


def _call(item: Item, lane: int, sid: str) -> dict[str, Any]:
    call = item.call
    if call is None:
        return {}
    text = call.arguments
    try:
        args = loads(text) if text.strip() else {}
    except ValueError:
        args = text
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


def _parts(lane: Lane, sid: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    signature: str | None = None
    for item in lane.items:
        part: dict[str, Any] | None = None
        if item.kind == "message":
            text = joined(item.text) + joined(item.refusal)
            part = r.text_part(text) if text else None
        elif item.kind == "reasoning":
            part, signature = _reasoning(item, parts, signature)
        elif item.kind == "tool_call":
            part = _call(item, lane.index, sid)
        elif item.kind == "other" and isinstance(item.data, dict) and "part" in item.data:
            part = dict(item.data["part"])
        if part is None:
            continue
        if signature is not None:
            part["thoughtSignature"] = signature
            signature = None
        parts.append(part)
    if signature is not None:
        parts.append({"thoughtSignature": signature})
    return parts


def final(
    assembler: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    """The accumulated response; with ``choice``, that candidate alone (index 0)."""
    sid = assembler.id or ""
    lanes = (
        [assembler.one_lane(choice, "a Gemini response")]
        if choice is not None
        else assembler.choices
    )
    candidates = []
    for lane in lanes:
        index = 0 if choice is not None else lane.index
        finish = None
        if lane.finish is not None:
            finish, _ = r.gemini_reason(lane.finish, lane.raw_finish)
        candidates.append(r.candidate(index, _parts(lane, sid), finish))
    out: dict[str, Any] = {"candidates": candidates} if candidates else {}
    if assembler.usage is not None:
        out["usageMetadata"] = usage_metadata(assembler.usage, notes)
    if assembler.model:
        out["modelVersion"] = assembler.model
    out["responseId"] = sid
    if assembler.errors:
        error = assembler.errors[-1]
        out = {"error": r.error_object(error.code, error.message, error.type)}
    return out

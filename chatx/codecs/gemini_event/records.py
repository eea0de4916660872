"""The vocabulary both sides of the codec share: the canonical parts and candidates the
encoder writes, which the decoder compares each source part and candidate with (the
difference is the residue an own-format encoder merges back), finish reasons both ways,
and usage.

A Gemini chunk is a whole ``GenerateContentResponse``: ``candidates[]`` (each a
``content`` with ``parts[]``, a ``finishReason`` on its last chunk, an ``index``),
``usageMetadata``, ``modelVersion``, ``responseId`` and on Vertex ``createTime``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatx import ir

NAME = "gemini-event"
# A candidate's grounding and citations (read and written by .grounding_read and
# .grounding_write, kept whole by the final response).
GROUNDING, CITATIONS = "groundingMetadata", "citationMetadata"


@dataclass(slots=True, eq=False, repr=False)  # eq and repr: ir.Own
class GeminiOwn(ir.Own):
    """The Gemini decoder's own note (see :class:`chatx.ir.Own`), for the final response.

    - ``cited`` (a chunk's ``Meta``): each candidate's ``citationMetadata`` as the chunk
      said it (lane, value). Citations ride on the text chunks they cite, each chunk its
      own: the final response gathers every chunk's, where the candidate's residue keeps
      the last chunk's only.
    - ``said_id`` (the ``StreamStart`` of a response whose id the decoder made up): the
      ``responseId`` the chunk said (``""``, null), or :data:`~chatx.residue.ABSENT`.
    - ``usage`` (the ``Usage``): the last chunk's ``usageMetadata`` as it came, which a
      client keeps whole (the running total: a count the last chunk leaves out is none).
    """

    cited: list[tuple[int, Any]]
    said_id: Any = None
    usage: Any = None


# finishReason with enum-encoding=int (Vertex's numbering: the int form was seen only
# from the vertexai SDK's REST transport).
FINISH_INTS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
)

# Gemini's words that say exactly what a chat word says. STOP is "stop", or "tool_calls"
# on a candidate that called tools: Gemini has no word of its own for a tool turn.
_CONTENT_FILTER = ("SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY")
TO_CHAT = {"MAX_TOKENS": "length", **{word: "content_filter" for word in _CONTENT_FILTER}}
FINISH_WORDS = frozenset(
    (
        *FINISH_INTS,
        "LANGUAGE",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "IMAGE_PROHIBITED_CONTENT",
        "NO_IMAGE",
    )
)
FROM_CHAT = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "function_call": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}


def finish_word(value: Any) -> str | None:
    """A ``finishReason`` as its word (an int of enum-encoding=int read as one)."""
    if isinstance(value, str):
        return value or None
    if type(value) is int and 0 <= value < len(FINISH_INTS):
        return FINISH_INTS[value]
    return None


def chat_reason(word: str, called: bool) -> str:
    """The IR's reason for a Gemini word: a chat word where one says it exactly, else
    Gemini's word in lower case (``recitation``), which other formats report."""
    if word == "STOP":
        return "tool_calls" if called else "stop"
    return TO_CHAT.get(word) or word.lower()


def gemini_reason(reason: str, raw: str | None) -> tuple[str, bool]:
    """The Gemini word for an IR finish, and whether it says it exactly."""
    if raw in FINISH_WORDS:
        return str(raw), True
    word = FROM_CHAT.get(reason)
    if word is not None:
        return word, True
    upper = reason.upper()
    if upper in FINISH_WORDS:
        return upper, True
    return "OTHER", False


# -- canonical parts -----------------------------------------------------------------


def text_part(text: str) -> dict[str, Any]:
    return {"text": text}


def thought_part(text: str) -> dict[str, Any]:
    return {"text": text, "thought": True}


def call_part(name: str | None, args: Any, call_id: str | None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        call["id"] = call_id
    return {"functionCall": call}


def candidate(lane: int, parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    """The canonical candidate: parts (left out when there are none), role, finish,
    index."""
    content: dict[str, Any] = {"parts": parts, "role": "model"} if parts else {"role": "model"}
    out: dict[str, Any] = {"content": content}
    if finish is not None:
        out["finishReason"] = finish
    out["index"] = lane
    return out


def derived_call_id(stream_id: str, lane: int, call: int) -> str:
    """A call id where Gemini gives none: from the response id and the call's place, so
    that one input always gives the same ids."""
    return f"call_{stream_id}_{lane}_{call}"


# -- usage ---------------------------------------------------------------------------

USAGE_COUNTS = (
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "totalTokenCount",
)


def counted(value: Any) -> int | None:
    return value if type(value) is int else None


def response_fields(
    out: dict[str, Any], model: str | None, response_id: Any, create: Any
) -> dict[str, Any]:
    """``out``, a chunk, with the response's fields after its candidates, in Gemini's
    order: ``modelVersion`` (when there is one), ``responseId``, ``createTime`` (when
    there is one)."""
    if model:
        out["modelVersion"] = model
    out["responseId"] = response_id
    if create is not None:
        out["createTime"] = create
    return out


def error_object(code: Any, message: Any, status: Any) -> dict[str, Any]:
    """The canonical error object: what of code, message and status there is."""
    out: dict[str, Any] = {}
    if code is not None:
        out["code"] = code
    if message is not None:
        out["message"] = message
    if status is not None:
        out["status"] = status
    return out

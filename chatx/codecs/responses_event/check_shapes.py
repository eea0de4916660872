"""The shapes the Responses checker tracks: event families, items, parts, values.

A *family* is a ``.delta``/``.done`` pair of event types (``response.output_text``,
``response.function_call_arguments``…): where its value lives, what item and part it
belongs to, and which field of the finished item repeats it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from chatx.pieces import Pieces


class Family(NamedTuple):
    """A ``.delta``/``.done`` event family: where its value lives and what it belongs to."""

    part: str | None  # "content" / "summary" for text inside a content part, else None
    index_field: str | None  # the field numbering the part or value within the item
    done_field: str  # the field of the ``.done`` event that repeats the whole value
    part_type: str | None  # the part type its part was added with
    item_type: str  # the item type it belongs to
    item_field: str | None  # the field of the finished item that repeats the value


# Open Responses names raw reasoning ``response.reasoning.*``; the openai SDK names it
# ``response.reasoning_text.*`` (DESIGN.md §4): both are accepted.
FAMILIES: dict[str, Family] = {
    "response.output_text": Family(
        "content", "content_index", "text", "output_text", "message", "text"
    ),
    "response.refusal": Family(
        "content", "content_index", "refusal", "refusal", "message", "refusal"
    ),
    "response.reasoning_text": Family(
        "content", "content_index", "text", "reasoning_text", "reasoning", "text"
    ),
    "response.reasoning": Family(
        "content", "content_index", "text", "reasoning_text", "reasoning", "text"
    ),
    "response.reasoning_summary_text": Family(
        "summary", "summary_index", "text", "summary_text", "reasoning", "text"
    ),
    "response.function_call_arguments": Family(
        None, None, "arguments", None, "function_call", "arguments"
    ),
    "response.custom_tool_call_input": Family(
        None, None, "input", None, "custom_tool_call", "input"
    ),
    "response.mcp_call_arguments": Family(None, None, "arguments", None, "mcp_call", "arguments"),
    "response.code_interpreter_call_code": Family(
        None, None, "code", None, "code_interpreter_call", "code"
    ),
    "response.shell_call_command": Family(
        None, "command_index", "command", None, "shell_call", None
    ),
    "response.apply_patch_call_operation_diff": Family(
        None, None, "diff", None, "apply_patch_call", None
    ),
}

# The field of a content part that holds its text, by part type.
PART_TEXT_FIELD = {
    "output_text": "text",
    "refusal": "refusal",
    "reasoning_text": "text",
    "summary_text": "text",
}
# Where an item keeps its parts, by part kind.
PART_CONTAINER = {"content": "content", "summary": "summary"}


@dataclass(slots=True)
class CheckedText:
    """One streamed value: its deltas so far and, once done, the done event's copy."""

    family: str
    deltas: Pieces = field(default_factory=Pieces)
    final: str | Digest | None = None

    def value(self) -> str | Digest:
        return self.final if self.final is not None else self.deltas.text()


@dataclass(slots=True)
class CheckedPart:
    """A content part (or reasoning summary part) between its added and done events."""

    kind: str
    index: int
    type: str | None
    text: CheckedText | None = None
    closed: bool = False


@dataclass(slots=True)
class CheckedItem:
    """An output item, from output_item.added to output_item.done."""

    output_index: int
    id: str | None
    type: str | None
    line: int
    done: bool = False
    id_mismatch: bool = False
    parts: dict[tuple[str, int], CheckedPart] = field(default_factory=dict)
    next_part: dict[str, int] = field(default_factory=lambda: {"content": 0, "summary": 0})
    values: dict[tuple[str, Any], CheckedText] = field(default_factory=dict)


def nth(value: Any, index: int) -> Any:
    return value[index] if isinstance(value, list) and 0 <= index < len(value) else None


def short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + "…" + text[-4:]


# Opaque Fernet tokens ("gAAAAA…") that OpenAI re-encrypts each time it serializes an
# item, so they differ between output_item.done and response.output: reasoning
# encrypted_content and the fingerprint of program items.
OPAQUE_FIELDS = frozenset({"encrypted_content", "fingerprint"})


def differing_field(got: Any, want: Any) -> str | None:
    """Name the first top-level field where two items differ, or ``None`` if they agree."""
    if not isinstance(got, dict) or not isinstance(want, dict):
        return None if got == want else "not an object"
    for key in sorted(got.keys() | want.keys()):
        if key not in OPAQUE_FIELDS and got.get(key) != want.get(key):
            return f"field {key!r}"
    return None


_LONG = 1 << 16  # characters: shorter strings are kept as they are


class Digest:
    """Stands for a long string of a closed item until the terminal event is compared
    with it: equal to a str of the same length and hash. A long stream's text is then not
    held once more while its terminal event, which repeats it, is being read."""

    __slots__ = ("hash", "length")

    def __init__(self, text: str) -> None:
        self.hash, self.length = hash(text), len(text)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Digest):
            return (self.hash, self.length) == (other.hash, other.length)
        return isinstance(other, str) and len(other) == self.length and hash(other) == self.hash

    def __hash__(self) -> int:
        return self.hash

    def __repr__(self) -> str:
        return f"<{self.length} characters>"


def slim(value: Any) -> Any:
    """``value`` with each long string in it replaced by its :class:`Digest`."""
    kind = type(value)
    if kind is str:
        return Digest(value) if len(value) > _LONG else value
    if kind is dict:
        return {key: slim(item) for key, item in value.items()}
    if kind is list:
        return [slim(item) for item in value]
    return value

"""The Anthropic run hook: a long stream is mostly ``content_block_delta`` records of
more text for the block open (its text, its thinking, a tool call's arguments), the same
but for that text (:class:`~chatx.codecs.template.DeltaTemplate`).

A record is its ``data:`` payload and its SSE ``event:`` name: the decoder says a name
that differs from the type, so a run takes only records named ``content_block_delta``
or not named at all. A ``signature_delta`` closes its item and is never templated; a
delta with residue of its own (an ``"index": 1.0``, a field beside the usual ones) makes
no template, and a record that differs from the template by one byte is parsed.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.anthropic_event.decode import AnthropicDecoder
from chatx.codecs.byte_template import TEXT
from chatx.codecs.template import Delta, DeltaHook, DeltaTemplate

EVENT = "content_block_delta"
# The delta types templated, and the field that holds their text.
_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}
_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)


def run_hook(decoder: AnthropicDecoder) -> DeltaHook:
    """The Anthropic :class:`~chatx.codecs.template.RunHook`, made with the decoder. The
    template stands for a delta of the block open when it was made: any record decoded
    drops it (a delta may close the block: a signature), and a plain delta makes the
    next. A run moves the decoder's ``line`` to its last record."""
    return DeltaHook(decoder.feed, decoder.notes, decoder.read, _plain, _template, EVENT)


def _plain(out: list[ir.Event], quiet: bool) -> bool:
    """Whether ``out`` is one delta of the open block with no residue, said without a
    note."""
    return len(out) == 1 and isinstance(out[0], _DELTAS) and not out[0].extra and quiet


def _template(data: Any, out: list[ir.Event]) -> DeltaTemplate | None:
    """The template of ``data``, a ``content_block_delta`` the decoder read into one
    delta with no residue (``out``): the canonical record, its keys in any order."""
    delta: Delta = out[0]  # type: ignore[assignment]  # _plain said so
    if type(data) is not dict or type(inner := data.get("delta")) is not dict:
        return None
    dtype = inner.get("type")
    field = _FIELDS.get(dtype) if type(dtype) is str else None
    if field is None or type(inner.get(field)) is not str:
        return None
    return DeltaTemplate.make({**data, "delta": {**inner, field: TEXT}}, delta)

"""What the registry holds of the Anthropic format from start-up: its name and what
tells its records from another format's. Every ``convert`` that sniffs calls every
format's probe, so this module imports no other of the codec's: the decoder, the encoder
and the rest load when a command uses them (:class:`chatx.codecs.base.lazy`)."""

from __future__ import annotations

from typing import Any

from chatx.record import Record

NAME = "anthropic-event"

# Every event type of the stream; a record typed with one of them is certainly ours.
EVENTS = frozenset(
    (
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    )
)


def is_message(data: dict[str, Any]) -> bool:
    """A whole Anthropic message: ``type`` ``message`` with a ``content`` list."""
    return data.get("type") == "message" and type(data.get("content")) is list


def probe(records: list[Record]) -> int:
    """100 for an event typed with one of the stream's own names (``message_start``,
    ``content_block_delta``, ``ping``…) or a whole ``message``; 60 for a lone
    ``{"type": "error", "error": {…}}`` (Responses has an ``error`` event too, flat)."""
    score = 0
    for record in records:
        data = record.data
        if record.done or record.error or type(data) is not dict:
            continue
        kind = data.get("type")
        if type(kind) is str and kind in EVENTS:
            return 100
        if is_message(data):
            return 100
        if kind == "error" and type(data.get("error")) is dict and "sequence_number" not in data:
            score = 60
    return score

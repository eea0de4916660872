"""What the registry holds of the Llama Stack format from start-up: its name and what
tells its records from another format's. Every ``convert`` that sniffs calls every
format's probe, so this module imports no other of the codec's: the decoder, the encoder
and the rest load when a command uses them (:class:`chatx.codecs.base.lazy`)."""

from __future__ import annotations

from typing import Any

from chatx.record import Record

NAME = "llama-stack-event"


def is_completion(data: dict[str, Any]) -> bool:
    """A whole Llama Stack completion: a ``completion_message`` and no ``event``."""
    return type(data.get("completion_message")) is dict and "event" not in data


def probe(records: list[Record]) -> int:
    """100 when the first record is ``{"event": {"event_type": …}}`` or a whole completion
    (``{"completion_message": …}``), else 0."""
    for record in records:
        if record.done or record.error:
            continue
        data = record.data
        event = data.get("event") if isinstance(data, dict) else None
        if event is None and isinstance(data, dict) and is_completion(data):
            return 100  # a whole completion: read as the events it stands for
        return 100 if isinstance(event, dict) and "event_type" in event else 0
    return 0

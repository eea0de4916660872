"""What the registry holds of the Responses format from start-up: what tells its records
from another format's. Every ``convert`` that sniffs calls every format's probe, so this
module imports no other of the codec's: the decoder, the encoder and the rest load when a
command uses them (:class:`chatx.codecs.base.lazy`)."""

from __future__ import annotations

from typing import Any

from chatx.record import Record


def is_response(data: dict[str, Any]) -> bool:
    """A whole ``response`` object (it has no event ``type``)."""
    return data.get("object") == "response" and "type" not in data


def probe(records: list[Record]) -> int:
    """Events typed ``response.*`` (or a bare ``error`` event with a sequence number), or
    a whole ``response`` object."""
    score = 0
    for record in records:
        data = record.data
        if not isinstance(data, dict):
            continue
        kind = data.get("type") or record.event
        if isinstance(kind, str) and kind.startswith("response."):
            return 100
        if kind is None and is_response(data):
            return 100  # a whole response object: read as the events it stands for
        if kind == "error" and "sequence_number" in data:
            score = 70
    return score

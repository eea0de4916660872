"""What tells a Gemini chunk: a ``candidates`` list, ``promptFeedback`` or
``usageMetadata`` (certain: no other format has those names), or Google's error object
(``code``, ``message`` and ``status``), likely."""

from __future__ import annotations

from typing import Any

from chatx.record import Record

_CERTAIN = ("candidates", "promptFeedback", "usageMetadata")


def model(data: Any) -> str | None:
    """The model a chunk names: its ``modelVersion`` (``ls``)."""
    said = data.get("modelVersion") if type(data) is dict else None
    return said if type(said) is str else None


def probe(records: list[Record]) -> int:
    score = 0
    for record in records:
        data = record.data
        if not isinstance(data, dict):
            continue
        if any(key in data for key in _CERTAIN) and "choices" not in data and "type" not in data:
            return 100
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("status"), str) and len(data) == 1:
            score = max(score, 50)
    return score

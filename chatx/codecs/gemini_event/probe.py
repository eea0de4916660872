"""What tells a Gemini chunk: a ``candidates`` list, ``promptFeedback`` or
``usageMetadata`` (certain: no other format has those names), or Google's error object
(``code``, ``message`` and ``status``), likely; without ``status``, barely (the URL
decides, :func:`chatx.reading.telling.told`)."""

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
        if isinstance(error, dict) and len(data) == 1:
            score = max(score, _error_score(error))
    return score


def _error_score(error: dict[str, Any]) -> int:
    """Google's error object: likely with its ``status``; without one (some of Google's
    front ends leave it out) a numeric ``code`` and a ``message`` are Google's too, but an
    OpenAI error reads the same, so chat's probe outscores it and only the URL it was
    asked at (a file of exchanges) tells it Gemini's."""
    if isinstance(error.get("status"), str):
        return 50
    code = error.get("code")
    if type(code) is int and isinstance(error.get("message"), str) and "type" not in error:
        return 10
    return 0

"""A tiny private SSE/JSONL reader for the validate tests.

Used only until ``chatx.containers`` exists; it follows the WHATWG event-stream steps
closely enough for small fixtures and the shared captures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from chatx.record import Record

_LINE_END = re.compile(r"\r\n|\r|\n")


def _payload(text: str, event: str | None, line: int) -> Record:
    if text == "[DONE]":
        return Record(event=event, line=line, done=True)
    try:
        return Record(json.loads(text), event=event, line=line)
    except ValueError as exc:
        return Record(event=event, line=line, error=str(exc))


def read_sse(text: str) -> list[Record]:
    """Split an event stream into records, one per dispatched block with data."""
    records: list[Record] = []
    data: list[str] = []
    event: str | None = None
    start = 0
    for number, line in enumerate(_LINE_END.split(text.lstrip("\ufeff")), 1):
        if not line:
            if data:
                records.append(_payload("\n".join(data), event, start))
            data, event, start = [], None, 0
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        start = start or number
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        records.append(_payload("\n".join(data), event, start))
    return records


def read_jsonl(text: str) -> list[Record]:
    """One JSON value per non-blank line."""
    return [
        _payload(line, None, number)
        for number, line in enumerate(_LINE_END.split(text), 1)
        if line.strip()
    ]


def read_path(path: Path) -> tuple[str, list[Record]]:
    """Return (container, records) for a fixture or capture, chosen by suffix."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".sse":
        return "sse", read_sse(text)
    return "jsonl", read_jsonl(text)

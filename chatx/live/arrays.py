"""Gemini's stream without ``alt=sse``: one JSON array of the chunks
(``[{…}\n,\r\n{…}]``), as Google sends it, in place of SSE ``data:`` lines.

chatx writes a stream as SSE events; these put the same payloads in the array, a piece
for each event, each sent when its event would be: :func:`json_array` for ``serve``,
which pulls its events, :class:`JsonArray` for the gateway, to which they are pushed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def payload(event: bytes) -> bytes:
    """The JSON an SSE event carries on its ``data:`` lines."""
    return b"\n".join(line[5:].strip() for line in event.splitlines() if line.startswith(b"data:"))


def json_array(events: Iterator[Any]) -> Iterator[Any]:
    """SSE events as the pieces of one JSON array of their payloads, as Gemini streams
    without ``alt=sse`` (``[{…}\n,\r\n{…}]``): a piece for each event, sent when its event
    would be, the array closed on the last. An event may come with its number
    (``replay.timed``'s pairs): its piece keeps it."""
    held: Any = None
    for item in events:
        event, tag = item if isinstance(item, tuple) else (item, None)
        said = payload(event)
        if not said:
            continue
        if held is not None:
            yield held
        piece = (b"\n,\r\n" if held is not None else b"[") + said
        held = (piece, tag) if isinstance(item, tuple) else piece
    if held is None:
        yield b"[]"
    elif isinstance(held, tuple):
        yield held[0] + b"]", held[1]
    else:
        yield held + b"]"


class JsonArray:
    """The array made as events are pushed: :meth:`feed` gives the pieces of those that
    came, :meth:`finish` the array's end (``[]`` when none came)."""

    def __init__(self) -> None:
        self.started = False

    def feed(self, events: list[bytes]) -> list[bytes]:
        out = []
        for event in events:
            said = payload(event)
            if said:
                out.append((b"\n,\r\n" if self.started else b"[") + said)
                self.started = True
        return out

    def finish(self) -> bytes:
        return b"]" if self.started else b"[]"

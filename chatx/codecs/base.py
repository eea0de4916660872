"""The codec contract, after FFmpeg's send/receive API.

A *decoder* is fed one :class:`~chatx.record.Record` at a time and returns the IR
events it means (zero or more, as one batch); ``finish()`` drains it at end of input.
A codec with ``reads_raw`` may be fed records whose payload the reader left unparsed
(``Record.raw``): its decoder parses only those its byte templates do not match.
An *encoder* is fed one such batch at a time and returns output payloads (JSON values,
or :data:`~chatx.record.DONE`); ``finish()`` drains it. Neither does I/O, reads the
clock or draws random numbers: ids and timestamps come from the input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from chatx.ir import Event
from chatx.notes import Notes
from chatx.record import Record


@dataclass(frozen=True, slots=True)
class EncodeOptions:
    """Choices an encoder offers; defaults give the most widely understood output."""

    # Responses: write reasoning as reasoning_summary_* (every client rebuilds those)
    # or as raw reasoning_text.*.
    reasoning: Literal["summary", "text"] = "summary"
    # Chat: the delta field reasoning goes in; None keeps the source's own name.
    reasoning_field: str | None = None
    # Responses: the original request body, to fill the response envelope.
    request: dict[str, Any] | None = None
    # Write an ending (terminal event / finish) when the input has none.
    finish: bool = False
    # The codec that decoded the events. An encoder merges ``extra`` back only when it
    # is its own format's residue; from any other format it reports it as lost.
    source_format: str | None = None


class Decoder(Protocol):
    """Feed records, get IR event batches."""

    def feed(self, record: Record) -> list[Event]:
        """Decode one record; return the events it means (possibly none)."""

    def finish(self) -> list[Event]:
        """End of input: return what is still pending (drain)."""


class Encoder(Protocol):
    """Feed IR event batches, get output payloads."""

    def feed(self, events: list[Event]) -> list[Any]:
        """Encode the events of one source record; return payloads to write."""

    def finish(self) -> list[Any]:
        """End of input: return the closing payloads (drain)."""


@dataclass(frozen=True, slots=True)
class Codec:
    """One format: its name, how to recognise it, and how to read and write it."""

    name: str
    description: str
    decoder: Callable[[Notes], Decoder]
    encoder: Callable[[Notes, EncodeOptions], Encoder]
    # 0..100: how sure we are that a stream whose first records are these is ours.
    probe: Callable[[list[Record]], int]
    container: str = "sse"  # default output container
    sse_event_names: bool = False  # write "event: <type>" lines on SSE output
    single_lane: bool = True  # holds one choice only
    aliases: tuple[str, ...] = field(default=())
    # The decoder also takes records a reader left unparsed (``Record.raw``): it knows
    # most of its payloads by their bytes, and parses only the others.
    reads_raw: bool = False
    # Names the format's non-streaming object (``"a chat.completion object"``) when a
    # record's value is one, else None: the decoder reads it as the stream it stands for.
    whole: Callable[[Any], str | None] | None = None

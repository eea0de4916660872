"""Building inputs, converting them and reading the output back: the helpers every
codec, oracle and property test shares."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import orjson

from chatx import ir, pipeline
from chatx.codecs.base import EncodeOptions
from chatx.notes import Notes
from chatx.reading import decoding, framing
from chatx.record import DONE, Dumped, Record

CHAT = "chat-chunk"
RESPONSES = "responses-event"
OTHER = {CHAT: RESPONSES, RESPONSES: CHAT}


# -- building inputs --------------------------------------------------------------------


def sse(payloads: Iterable[Any], *, done: bool = True, events: bool = False) -> bytes:
    """Frame payloads as SSE; ``events`` writes ``event: <type>`` lines (Responses style)."""
    out = []
    for payload in payloads:
        if events and isinstance(payload, dict) and "type" in payload:
            out.append(f"event: {payload['type']}\n")
        out.append(f"data: {json.dumps(payload)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def jsonl(payloads: Iterable[Any]) -> bytes:
    return "".join(json.dumps(p) + "\n" for p in payloads).encode()


def responses_delta(seq: Any, text: str, **more: Any) -> bytes:
    """A Responses output_text delta event's payload: sequence number ``seq``, delta
    ``text``, then ``more`` fields."""
    return orjson.dumps(
        {
            "type": "response.output_text.delta",
            "item_id": "msg_fx1",
            "output_index": 0,
            "content_index": 0,
            "delta": text,
            "logprobs": [],
            "sequence_number": seq,
            **more,
        }
    )


# -- converting and reading back --------------------------------------------------------


def convert(
    data: bytes,
    dst: str,
    src: str | None = None,
    *,
    choice: int | None = None,
    options: EncodeOptions | None = None,
    out_container: str | None = None,
) -> tuple[bytes, Notes]:
    """``chatx.pipeline.convert`` that also hands back its notes."""
    notes = Notes()
    out = pipeline.convert(
        data,
        dst=dst,
        src=src,
        notes=notes,
        choice=choice,
        options=options,
        out_container=out_container,
    )
    return out, notes


def fed(body: bytes, cuts: Iterable[int], dst: str, **setup: Any) -> tuple[bytes, list[str], Any]:
    """What a ``Transcoder`` to ``dst`` writes of ``body`` fed in the pieces ``cuts``
    (their starts; the last piece runs to the end) then finished, a ChatxError as
    ``error: …``; its notes, each as repr; and its encoder, for a test to ask what path it
    took."""
    from chatx.errors import ChatxError

    notes = Notes()
    transcoder = pipeline.Transcoder(dst, notes=notes, **setup)
    starts = sorted(set(cuts) | {0})
    try:
        ends = [*starts[1:], len(body)]
        out = b"".join(transcoder.feed(body[i:j]) for i, j in zip(starts, ends, strict=True))
        out += transcoder.finish()
    except ChatxError as exc:
        out = b"error: " + str(exc).encode()
    return out, sorted(repr(note) for note in notes.summary()), transcoder.encoder


def records(data: bytes) -> list[Record]:
    """Frame bytes into records (the container detected)."""
    return framing.read_records(data)[1]


def payloads(data: bytes) -> list[Any]:
    """The JSON payloads of a stream, ``[DONE]`` left out (errors fail the test)."""
    out = []
    for record in records(data):
        assert record.error is None, f"line {record.line}: {record.error}"
        if not record.done:
            out.append(record.data)
    return out


def sse_blocks(data: bytes) -> list[tuple[str | None, str]]:
    """(event name, data text) per SSE block of chatx's output, ``[DONE]`` included."""
    blocks = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        event, lines = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                lines.append(line[6:])
            else:
                raise AssertionError(f"unexpected SSE line {line!r}")
        blocks.append((event, "\n".join(lines)))
    return blocks


def batches(data: bytes, src: str | None = None) -> list[list[ir.Event]]:
    """The IR batches a stream decodes to."""
    return list(decoding.decode(records(data), src=src))


def events(data: bytes, src: str | None = None) -> list[ir.Event]:
    return [event for batch in batches(data, src) for event in batch]


def note_kinds(notes: Notes) -> list[str]:
    return [note.kind for note in notes.summary()]


# -- the meaning of a stream ------------------------------------------------------------


def dumped(out: Iterable[Any]) -> list[Any]:
    """An encoder's payloads as the writers write each record: JSON bytes (a run's records
    written from a byte template come as their bytes, in a :class:`Dumped`), ``DONE``
    as it is."""
    written: list[Any] = []
    for payload in out:
        if type(payload) is Dumped:
            written += payload.payloads
        else:
            written.append(payload if payload is DONE else orjson.dumps(payload))
    return written

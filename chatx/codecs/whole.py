"""Non-streaming objects read as the streams they stand for: the inverse of ``collect``.

A client that asks without ``stream: true`` gets one object (a ``chat.completion``, a
Responses ``response``, a Llama Stack completion) where a streaming client would get the
records that build it. Each format's ``whole`` module writes those records for its
object; :func:`expand` runs them through the format's own decoder, so the object's IR is
by construction the IR of its stream, one batch per record, and every encoder, ``collect``
and ``show`` take it as they take that stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from chatx import ir
from chatx.record import DONE, Record


def expand(
    general: Callable[[Record], list[ir.Event]], payloads: Iterable[Any], line: int
) -> ir.Batches:
    """Decode ``payloads`` (JSON values, or :data:`~chatx.record.DONE`) with a decoder's
    general path, every one of them at the object's ``line``; one batch per payload."""
    out = ir.Batches()
    for payload in payloads:
        record = Record(done=True, line=line) if payload is DONE else Record(payload, line=line)
        batch = general(record)
        if batch:
            out.append(batch)
    return out


def present(source: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """The ``keys`` that ``source`` has, in that order: an absent field stays absent."""
    return {key: source[key] for key in keys if key in source}

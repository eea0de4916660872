"""Faults ``chatx serve`` puts into what it sends, for testing how a client copes.

Each fault names where it strikes, counting a stream's events from 1: ``cut_after`` N
events then the connection drops (:mod:`chatx.live.app`); ``status`` answers with an HTTP
error before anything is sent; ``malformed_at`` K sends event K with its JSON cut in half;
``error_at`` K sends, in place of event K, an error event in the shape of the API called
(:data:`~chatx.live.endpoints.STREAM_ERRORS`) and ends the stream there, as a provider
does when it fails mid-stream; ``stall`` seconds are waited before event ``stall_at``.

``rate`` (``--chaos-rate P``): a share P of requests gets the faults given, the others
none; with no fault given, each struck request gets one fault drawn from those a client
must survive (an error status, a cut, a malformed event, an error event), at a drawn
place. Draws come from ``random.Random`` seeded with ``--seed`` and the request's number:
the same requests in the same order get the same faults, run after run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from chatx.live.endpoints import stream_error

# Where a drawn fault strikes: within the first events, where every stream has some.
_DRAWN_AT = (1, 2, 3, 4, 5)
_DRAWN_STATUS = (429, 500, 503)


@dataclass(frozen=True, slots=True)
class Faults:
    cut_after: int | None = None
    status: int | None = None
    malformed_at: int | None = None
    error_at: int | None = None
    stall_at: int | None = None
    stall: float = 0.0

    @property
    def given(self) -> bool:
        return any(
            v is not None
            for v in (self.cut_after, self.status, self.malformed_at, self.error_at, self.stall_at)
        )

    def pause(self, number: int) -> float:
        """The stall before event ``number`` (from 1)."""
        return self.stall if self.stall_at == number else 0.0


NONE = Faults()


class Chaos:
    """The faults of each request: all of them, or with ``rate`` a seeded share."""

    def __init__(self, faults: Faults, rate: float | None = None, seed: int = 0) -> None:
        self.faults = faults
        self.rate = rate
        self.seed = seed

    def of(self, number: int) -> Faults:
        """The faults of the ``number``-th request (from 1)."""
        if self.rate is None:
            return self.faults
        draw = random.Random(f"chatx-chaos:{self.seed}:{number}")
        if draw.random() >= self.rate:
            return NONE
        if self.faults.given:
            return self.faults
        kind = draw.choice(("status", "cut", "malformed", "error"))
        at = draw.choice(_DRAWN_AT)
        if kind == "status":
            return replace(NONE, status=draw.choice(_DRAWN_STATUS))
        if kind == "cut":
            return replace(NONE, cut_after=at)
        if kind == "malformed":
            return replace(NONE, malformed_at=at)
        return replace(NONE, error_at=at)


def malformed(event: bytes) -> bytes:
    """The event with the JSON of its ``data:`` line cut in half (a stream's first line
    of data stands in for an event without one)."""
    lines = event.splitlines(keepends=True)
    for at, line in enumerate(lines):
        if line.startswith(b"data:"):
            body = line.rstrip(b"\r\n")
            ending = line[len(body) :]
            payload = body[5:].lstrip(b" ")
            cut = payload[: max(1, len(payload) // 2)]
            if cut == payload:  # "{" or one character: still no JSON once a quote is added
                cut = payload + b'"'
            lines[at] = b"data: " + cut + ending
            return b"".join(lines)
    return b"data: {" + event


def error_event(api: str | None, number: int) -> bytes:
    """The error event a provider of ``api`` sends mid-stream (chatx serve's words)."""
    return stream_error(api, f"chatx serve: an error event in place of event {number} (chaos)")

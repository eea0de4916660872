"""When each piece of a recorded body arrived: a sidecar beside the capture, and the
schedule ``serve --timing recorded`` sends a capture's events on.

``capture`` and ``proxy`` write ``NAME.timing`` (``NAME.part.timing`` for a body that
did not end) when the body ends: a JSON object

    {"chatx_timing": 1, "head": SECONDS, "arrived": [[BYTES, SECONDS], ...]}

``head`` the time from the request sent to the answer's head arrived (the provider
queueing it, reading the prompt: what a client's first-byte timeout sees), and one pair
per read, ``BYTES`` the body's length once that read was written and ``SECONDS`` the
time since the answer's head arrived (monotonic, to the microsecond). A sidecar written
before ``head`` was recorded has none, and is read as it was: no wait before the head.
Nothing else is in it: no header, no URL, no clock time. A directory walk passes it
over (no capture suffix), and it is written as every file chatx writes is, through an
unpredictable temporary name created exclusively, then renamed (:mod:`chatx.atomic`).

An event is sent when its last byte arrived: the time of the first read whose
``BYTES`` reach the event's end in the capture (for a transcoded capture, the end of
the source line that made the event). :func:`schedule` turns those times into the wait
before each event, divided by ``--speed``, and :meth:`Timing.before_head` the wait
before the answer's head; the server waits them, and no test needs a clock to check
them.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chatx import atomic
from chatx.errors import InputError

SUFFIX = ".timing"
VERSION = 1
MODES = ("none", "recorded")

Arrivals = list[tuple[int, float]]


def timing_path(path: str | Path) -> Path:
    return Path(f"{path}{SUFFIX}")


@dataclass(frozen=True, slots=True)
class Timing:
    """A capture's sidecar: when each read of its body arrived, and how long its head
    took (None: not recorded, a sidecar from before it was)."""

    arrived: Arrivals
    head: float | None = None

    def before_head(self, speed: float = 1.0, whole: bool = False) -> float:
        """The wait before the answer's head, at ``speed``: the head's recorded time;
        ``whole``, for an answer sent whole (``"stream": false``), the time until the
        body's last byte arrived, as a provider answers one once it has made it all."""
        wait = self.head or 0.0
        if whole and self.arrived:
            wait += self.arrived[-1][1]
        return wait / speed


class Clock:
    """The arrivals of one body, as :class:`~chatx.live.recorded_files.Recording` writes it;
    ``clock`` is injectable (a test's). Made when the answer's head arrived; ``sent``,
    when the request was sent by the same clock (the head's time, recorded)."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, sent: float | None = None
    ) -> None:
        self.clock = clock
        self.start = clock()
        self.head = None if sent is None else round(max(0.0, self.start - sent), 6)
        self.arrivals: Arrivals = []

    def arrived(self, size: int) -> None:
        self.arrivals.append((size, round(self.clock() - self.start, 6)))

    def write(self, beside: Path) -> None:
        atomic.replace_with(str(timing_path(beside)), to_bytes(self.arrivals, self.head))


def to_bytes(arrivals: Arrivals, head: float | None = None) -> bytes:
    said: dict[str, Any] = {"chatx_timing": VERSION}
    if head is not None:
        said["head"] = head
    said["arrived"] = [list(a) for a in arrivals]
    return orjson.dumps(said) + b"\n"


def read(capture: str | Path) -> Timing | None:
    """The timing recorded beside ``capture``; None when there is no sidecar. One that
    cannot be read is an InputError naming it."""
    path = timing_path(capture)
    if not path.is_file():
        return None
    try:
        said: Any = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", file=str(path), line=1) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    pairs = said.get("arrived") if isinstance(said, dict) else None
    if said.get("chatx_timing") != VERSION or not isinstance(pairs, list):
        raise InputError(
            "not a timing file",
            file=str(path),
            line=1,
            expected='{"chatx_timing": 1, "head": SECONDS, "arrived": [...]}',
        )
    head = said.get("head")
    if head is not None and not _seconds(head):
        raise InputError(
            f"head: {orjson.dumps(head).decode()[:40]}",
            file=str(path),
            line=1,
            expected="the seconds before the answer's head, a number from 0",
        )
    out: Arrivals = []
    for pair in pairs:
        if not _pair(pair) or (out and (pair[0] < out[-1][0] or pair[1] < out[-1][1])):
            raise InputError(
                f"arrived: {orjson.dumps(pair).decode()[:40]}",
                file=str(path),
                line=1,
                expected="[bytes, seconds] pairs, both growing",
            )
        out.append((pair[0], float(pair[1])))
    return Timing(out, None if head is None else float(head))


def _seconds(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _pair(pair: Any) -> bool:
    return (
        isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], int)
        and not isinstance(pair[0], bool)
        and pair[0] >= 0
        and _seconds(pair[1])
    )


def arrived_at(arrivals: Arrivals, end: int) -> float:
    """When the byte before ``end`` arrived: the first read that reached it (the last
    read's time past the end of what was recorded)."""
    if not arrivals:
        return 0.0
    at = bisect.bisect_left([size for size, _ in arrivals], end)
    return arrivals[min(at, len(arrivals) - 1)][1]


def schedule(ends: list[int], arrivals: Arrivals, speed: float = 1.0) -> list[float]:
    """The wait before each event, the events ending at ``ends`` bytes of the capture:
    the time between its arrival and the previous one's (the first's since the head),
    divided by ``speed``."""
    paced = Paced(iter([(b"", end) for end in ends]), arrivals, speed)
    for _ in paced:
        pass
    return paced.waits


class Paced:
    """The events of a stream (``(event, end)`` pairs: the event and where the capture
    it came from had been read to) as bytes, each one's wait kept in :attr:`waits` for
    the server to take before sending it."""

    def __init__(
        self, pairs: Iterator[tuple[bytes, int]], arrivals: Arrivals, speed: float
    ) -> None:
        self.pairs = pairs
        self.arrivals = arrivals
        self.speed = speed
        self.last = 0.0
        self.waits: list[float] = []

    def __iter__(self) -> Paced:
        return self

    def __next__(self) -> bytes:
        event, end = next(self.pairs)
        at = arrived_at(self.arrivals, end)
        self.waits.append(max(0.0, at - self.last) / self.speed)
        self.last = max(self.last, at)
        return event

    def close(self) -> None:
        close = getattr(self.pairs, "close", None)
        if close is not None:
            close()

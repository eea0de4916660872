"""When each piece of a recorded body arrived: a sidecar beside the capture, and the
schedule ``serve --timing recorded`` sends a capture's events on.

``capture`` and ``proxy`` write ``NAME.timing`` (``NAME.part.timing`` for a body that
did not end) when the body ends: a JSON object

    {"chatx_timing": 1, "arrived": [[BYTES, SECONDS], ...]}

one pair per read, ``BYTES`` the body's length once that read was written and
``SECONDS`` the time since the answer's head arrived (monotonic, to the microsecond).
Nothing else is in it: no header, no URL, no clock time. A directory walk passes it
over (no capture suffix), and it is written as every file chatx writes is, through an
unpredictable temporary name created exclusively, then renamed (:mod:`chatx.atomic`).

An event is sent when its last byte arrived: the time of the first read whose
``BYTES`` reach the event's end in the capture (for a transcoded capture, the end of
the source line that made the event). :func:`schedule` turns those times into the wait
before each event, divided by ``--speed``; the server waits them, and no test needs a
clock to check them.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator
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


class Clock:
    """The arrivals of one body, as :class:`~chatx.live.recorded_files.Recording` writes it;
    ``clock`` is injectable (a test's)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.start = clock()
        self.arrivals: Arrivals = []

    def arrived(self, size: int) -> None:
        self.arrivals.append((size, round(self.clock() - self.start, 6)))

    def write(self, beside: Path) -> None:
        atomic.replace_with(str(timing_path(beside)), to_bytes(self.arrivals))


def to_bytes(arrivals: Arrivals) -> bytes:
    return orjson.dumps({"chatx_timing": VERSION, "arrived": [list(a) for a in arrivals]}) + b"\n"


def read(capture: str | Path) -> Arrivals | None:
    """The arrivals recorded beside ``capture``; None when there is no sidecar. One that
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
            expected='{"chatx_timing": 1, "arrived": [...]}',
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
    return out


def _pair(pair: Any) -> bool:
    return (
        isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], int)
        and not isinstance(pair[0], bool)
        and pair[0] >= 0
        and isinstance(pair[1], int | float)
        and not isinstance(pair[1], bool)
        and pair[1] >= 0
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

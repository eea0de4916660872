"""Timing: ``capture`` and ``proxy`` write when each read of a body arrived beside it
(``NAME.timing``), and ``serve --timing recorded`` sends each event on that schedule at
``--speed``. No assertion here is on a wall clock: the schedule is computed and checked,
and the server's waits are taken from it by a stand-in for its wait."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx.errors import InputError
from chatx.live import asgi, timing
from chatx.live.recorded_files import Recording
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, Running, post, serving
from tests.live.test_record_on_miss import StandIn, ask, serve

ARRIVALS = [(10, 0.5), (30, 0.7), (50, 2.0)]


def test_each_event_waits_from_the_one_before_to_when_its_last_byte_arrived() -> None:
    ends = [10, 20, 30, 50, 60]
    assert timing.schedule(ends, ARRIVALS) == pytest.approx([0.5, 0.2, 0.0, 1.3, 0.0])
    assert timing.schedule(ends, ARRIVALS, speed=2) == pytest.approx([0.25, 0.1, 0, 0.65, 0])
    assert timing.schedule([5, 5], []) == [0.0, 0.0]


def test_a_recording_writes_its_arrivals_by_an_injected_clock(tmp_path: Path) -> None:
    ticks = iter([100.0, 100.25, 101.0])
    recording = Recording(tmp_path / "a.sse", {"model": "m"})
    recording.clock = timing.Clock(lambda: next(ticks))
    recording.write(b"data: 1\n\n")
    recording.write(b"data: 22\n\n")
    recording.close(whole=True)
    assert timing.read(tmp_path / "a.sse") == [(9, 0.25), (19, 1.0)]
    said = orjson.loads((tmp_path / "a.sse.timing").read_bytes())
    assert said == {"chatx_timing": 1, "arrived": [[9, 0.25], [19, 1.0]]}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"{nope", "invalid JSON"),
        (b'{"arrived": []}', "not a timing file"),
        (b'{"chatx_timing": 1, "arrived": [[5, 1], [3, 2]]}', "both growing"),
        (b'{"chatx_timing": 1, "arrived": [[5, -1]]}', "both growing"),
        (b'{"chatx_timing": 1, "arrived": [["5", 1]]}', "both growing"),
    ],
)
def test_a_timing_file_that_cannot_be_read_names_itself(
    tmp_path: Path, text: bytes, says: str
) -> None:
    (tmp_path / "a.sse.timing").write_bytes(text)
    with pytest.raises(InputError, match=says) as raised:
        timing.read(tmp_path / "a.sse")
    assert str(tmp_path / "a.sse.timing") in str(raised.value)
    assert timing.read(tmp_path / "b.sse") is None


def test_serve_records_its_upstreams_arrivals_beside_each_capture(tmp_path: Path) -> None:
    with (
        Running(StandIn()) as upstream,
        serve(tmp_path, upstream.url, on_miss="upstream", record_mode="new") as one,
    ):
        ask(one.url, "three words here", True)
    (capture,) = [p for p in tmp_path.iterdir() if p.name.endswith(".sse")]
    arrived = timing.read(capture)
    assert arrived is not None and arrived[-1][0] == capture.stat().st_size
    assert all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(arrived, arrived[1:], strict=False))


CHAT = FIXTURES / "chat-chunk" / "text.sse"


@pytest.fixture
def timed(tmp_path: Path) -> Path:
    """text.sse with a sidecar: each event arrived 0.1 s after the one before, but the
    fourth, 2 s after."""
    data = CHAT.read_bytes()
    (tmp_path / "t.sse").write_bytes(data)
    ends, at = [], 0.0
    for number, event in enumerate(data.split(b"\n\n")[:-1]):
        at += 2.0 if number == 3 else 0.1
        ends.append([(ends[-1][0] if ends else 0) + len(event) + 2, round(at, 6)])
    (tmp_path / "t.sse.timing").write_bytes(orjson.dumps({"chatx_timing": 1, "arrived": ends}))
    return tmp_path


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """What the server waits before each event, none of it waited."""
    said: list[float] = []

    async def no_wait(self: asgi.Watch, seconds: float) -> bool:
        said.append(seconds)
        return self.task.done()

    monkeypatch.setattr(asgi.Watch, "wait", no_wait)
    return said


def _stream(url: str, path: str = "/v1/chat/completions") -> bytes:
    body: dict[str, Any] = {"model": "m", "stream": True, "messages": [], "input": "x"}
    answer = post(f"{url}{path}", body)
    assert answer.status_code == 200
    return answer.content


@pytest.mark.parametrize("speed", [1.0, 4.0])
def test_serve_sends_each_event_when_it_arrived(
    timed: Path, waits: list[float], speed: float
) -> None:
    with serving([str(timed)], timing="recorded", speed=speed) as (running, _):
        sent = _stream(running.url)
    assert sent == CHAT.read_bytes()
    events = sent.count(b"\n\n")
    expected = [(2.0 if n == 3 else 0.1) / speed for n in range(events)]
    assert waits == pytest.approx(expected)


def test_transcoded_events_keep_the_recorded_schedule(timed: Path, waits: list[float]) -> None:
    with serving([str(timed)], timing="recorded") as (running, _):
        _stream(running.url, "/v1/responses")
    assert all(w >= 0 for w in waits)
    assert sum(waits) == pytest.approx(0.1 * (CHAT.read_bytes().count(b"\n\n") - 1) + 2.0)
    assert max(waits) == pytest.approx(2.0)


def test_without_timing_recorded_no_event_waits(timed: Path, waits: list[float]) -> None:
    with serving([str(timed)]) as (running, _):
        _stream(running.url)
    assert waits and set(waits) == {0}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--timing", "fast"], "--timing: recorded or none (not 'fast')"),
        (["--speed", "0"], "--speed: a number above 0 (not 0)"),
        (["--speed", "-2"], "--speed: a number above 0"),
    ],
)
def test_bad_timing_options(args: list[str], says: str) -> None:
    result = run(["serve", str(CHAT), *args])
    assert_clean(result, {2})
    assert says in result.err

"""Timing: ``capture`` and ``proxy`` write when each read of a body arrived beside it
(``NAME.timing``), and ``serve --timing recorded`` sends each event on that schedule at
``--speed``. No assertion here is on a wall clock: the schedule is computed and checked,
and the server's waits are taken from it by a stand-in for its wait."""

from __future__ import annotations

import asyncio
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


def test_a_recording_writes_its_head_and_arrivals_by_an_injected_clock(tmp_path: Path) -> None:
    ticks = iter([100.0, 100.25, 101.0])
    recording = Recording(tmp_path / "a.sse", {"model": "m"})
    # The request went at 99.25, its head arrived at 100.0 (when the recording began).
    recording.clock = timing.Clock(lambda: next(ticks), sent=99.25)
    recording.write(b"data: 1\n\n")
    recording.write(b"data: 22\n\n")
    recording.close(whole=True)
    assert timing.read(tmp_path / "a.sse") == timing.Timing([(9, 0.25), (19, 1.0)], head=0.75)
    said = orjson.loads((tmp_path / "a.sse.timing").read_bytes())
    assert said == {"chatx_timing": 1, "head": 0.75, "arrived": [[9, 0.25], [19, 1.0]]}


def test_a_sidecar_from_before_the_head_was_recorded_is_read_as_it_was(tmp_path: Path) -> None:
    old = {"chatx_timing": 1, "arrived": [[9, 0.25], [19, 1.0]]}
    (tmp_path / "a.sse.timing").write_bytes(orjson.dumps(old))
    said = timing.read(tmp_path / "a.sse")
    assert said == timing.Timing([(9, 0.25), (19, 1.0)], head=None)
    assert said.before_head() == 0 and said.before_head(whole=True) == 1.0


def test_the_wait_before_the_head() -> None:
    recorded = timing.Timing([(9, 0.25), (19, 1.0)], head=3.0)
    assert recorded.before_head() == 3.0
    assert recorded.before_head(speed=2) == 1.5
    assert recorded.before_head(whole=True) == 4.0  # the head's, then the whole body's
    assert recorded.before_head(speed=4, whole=True) == 1.0
    assert timing.Timing([], head=0.5).before_head(whole=True) == 0.5


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"{nope", "invalid JSON"),
        (b'{"arrived": []}', "not a timing file"),
        (b'{"chatx_timing": 1, "arrived": [[5, 1], [3, 2]]}', "both growing"),
        (b'{"chatx_timing": 1, "arrived": [[5, -1]]}', "both growing"),
        (b'{"chatx_timing": 1, "arrived": [["5", 1]]}', "both growing"),
        (b'{"chatx_timing": 1, "head": -1, "arrived": []}', "head: -1"),
        (b'{"chatx_timing": 1, "head": "2", "arrived": []}', "a number from 0"),
        (b'{"chatx_timing": 1, "head": true, "arrived": []}', "head: true"),
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
    said = timing.read(capture)
    assert said is not None and said.head is not None and said.head >= 0
    arrived = said.arrived
    assert arrived[-1][0] == capture.stat().st_size
    assert all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(arrived, arrived[1:], strict=False))


class SlowHead(StandIn):
    """The stand-in, its answer's head sent once ``hold`` seconds have gone by (a
    provider queueing the request): the head's time recorded is at least that."""

    hold = 0.3

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(self.hold)
        await super().__call__(scope, receive, send)


@pytest.mark.parametrize("stream", [True, False])
def test_the_proxy_records_how_long_the_head_took(tmp_path: Path, stream: bool) -> None:
    with (
        Running(SlowHead()) as upstream,
        serve(tmp_path, upstream.url, on_miss="upstream", record_mode="new") as one,
    ):
        ask(one.url, "three words here", stream)
    (capture,) = [
        p
        for p in tmp_path.iterdir()
        if p.name.endswith((".sse", ".json")) and not p.name.endswith(".request.json")
    ]
    said = timing.read(capture)
    assert said is not None and said.head is not None and said.head >= SlowHead.hold


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


CHAT_PATH = "/v1/chat/completions"
RESPONSES = "/v1/responses"


def _stream(url: str, path: str = CHAT_PATH) -> bytes:
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


# -- the wait before the head --------------------------------------------------------------


@pytest.fixture
def headed(timed: Path) -> Path:
    """t.sse's sidecar with its head recorded: 3 s from the request to the head."""
    sidecar = timed / "t.sse.timing"
    said = orjson.loads(sidecar.read_bytes())
    sidecar.write_bytes(orjson.dumps({**said, "head": 3.0}))
    return timed


@pytest.fixture
def happened(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the server did, in order: each wait (none of it waited), the start of a
    stream, a whole response."""
    said: list[Any] = []

    async def no_wait(self: asgi.Watch, seconds: float) -> bool:
        said.append(("wait", seconds))
        return self.task.done()

    start, respond = asgi.start_stream, asgi.respond

    async def started(send: asgi.Send, status: int, *args: Any, **kwargs: Any) -> None:
        said.append(("head", status))
        await start(send, status, *args, **kwargs)

    async def responded(send: asgi.Send, status: int, *args: Any, **kwargs: Any) -> None:
        said.append(("whole", status))
        await respond(send, status, *args, **kwargs)

    monkeypatch.setattr(asgi.Watch, "wait", no_wait)
    monkeypatch.setattr(asgi, "start_stream", started)
    monkeypatch.setattr(asgi, "respond", responded)
    return said


@pytest.mark.parametrize(("speed", "path"), [(1.0, CHAT_PATH), (2.0, CHAT_PATH), (1.0, RESPONSES)])
def test_serve_waits_the_heads_time_before_it_sends_the_head(
    headed: Path, happened: list[Any], speed: float, path: str
) -> None:
    with serving([str(headed)], timing="recorded", speed=speed, delay=0.5) as (running, _):
        _stream(running.url, path)
    # --delay goes between events, not before the head.
    assert happened[:2] == [("wait", pytest.approx(3.0 / speed)), ("head", 200)]
    assert happened[2] == ("wait", pytest.approx(0.1 / speed))
    assert all(kind == "wait" for kind, _ in happened[2:])


@pytest.mark.parametrize("speed", [1.0, 4.0])
def test_a_whole_answer_waits_the_heads_and_the_bodys_time(
    headed: Path, happened: list[Any], speed: float
) -> None:
    events = CHAT.read_bytes().count(b"\n\n")
    body = {"model": "m", "messages": [], "stream": False}
    with serving([str(headed)], timing="recorded", speed=speed) as (running, _):
        answer = post(f"{running.url}{CHAT_PATH}", body)
    assert answer.status_code == 200 and answer.json()["object"] == "chat.completion"
    whole = 3.0 + 0.1 * (events - 1) + 2.0
    assert happened == [("wait", pytest.approx(whole / speed)), ("whole", 200)]


def test_no_wait_before_the_head_without_a_recorded_head_or_timing(
    timed: Path, headed: Path, happened: list[Any]
) -> None:
    with serving([str(headed)]) as (running, _):  # --timing none
        _stream(running.url)
        post(f"{running.url}{CHAT_PATH}", {"model": "m", "messages": []})
    assert happened[0] == ("head", 200) and ("whole", 200) in happened
    assert not [w for kind, w in happened if kind == "wait" and w]
    happened.clear()
    sidecar = headed / "t.sse.timing"
    said = orjson.loads(sidecar.read_bytes())
    del said["head"]
    sidecar.write_bytes(orjson.dumps(said))  # a sidecar from before the head was recorded
    with serving([str(headed)], timing="recorded") as (running, _):
        _stream(running.url)
    assert happened[:2] == [("head", 200), ("wait", pytest.approx(0.1))]


def test_a_clients_first_byte_timeout_sees_the_heads_wait(headed: Path) -> None:
    import openai

    sidecar = headed / "t.sse.timing"
    said = orjson.loads(sidecar.read_bytes())
    sidecar.write_bytes(orjson.dumps({**said, "head": 600.0}))  # far past the client's patience
    with (
        serving([str(headed)], timing="recorded") as (running, app),
        openai.OpenAI(
            base_url=f"{running.url}/v1", api_key="k", max_retries=0, timeout=0.5
        ) as client,
        pytest.raises(openai.APITimeoutError),
    ):
        client.chat.completions.create(model="m", messages=[], stream=True)
    assert app.under_way == 0  # the client left: the stream was never started

"""Faults for testing clients, beside --delay, --cut-after and --status: an event whose
JSON is malformed, an error event mid-stream in the API's shape, a stall before an
event, and --chaos-rate P, a seeded share of requests, so that runs repeat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import orjson
import pytest

from chatx.collect.streams import streams_of
from chatx.live import asgi
from chatx.live.chaos import NONE, Chaos, Faults, malformed
from chatx.reading.framing import load
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, post, serving

CHAT = FIXTURES / "chat-chunk" / "text.sse"
PATHS = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "llama-stack": "/v1/inference/chat-completion",
}
ASK: dict[str, Any] = {
    "model": "m",
    "model_id": "m",
    "stream": True,
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "hi"}],
    "input": "hi",
}


def events_of(data: bytes) -> list[bytes]:
    return [e + b"\n\n" for e in data.split(b"\n\n") if e]


def test_malformed_at_cuts_that_events_json_and_leaves_the_rest() -> None:
    recorded = events_of(CHAT.read_bytes())
    with serving([str(CHAT)], chaos=Chaos(Faults(malformed_at=2))) as (running, _):
        sent = events_of(post(f"{running.url}{PATHS['chat']}", ASK).content)
    assert len(sent) == len(recorded)
    assert sent[:1] == recorded[:1] and sent[2:] == recorded[2:]
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(sent[1].removeprefix(b"data: "))
    assert recorded[1].startswith(sent[1].rstrip(b"\n"))


@pytest.mark.parametrize("event", [b'data: {"a": 1}\n\n', b"data: {\n\n", b"data: 1\r\n\r\n"])
def test_a_malformed_event_is_no_json(event: bytes) -> None:
    cut = malformed(event)
    payload = cut.split(b"data:", 1)[1].strip()
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(payload)


@pytest.mark.parametrize("api", list(PATHS))
def test_error_at_sends_an_error_event_in_the_apis_shape_and_ends(api: str) -> None:
    with serving([str(CHAT)], chaos=Chaos(Faults(error_at=3))) as (running, _):
        answer = post(f"{running.url}{PATHS[api]}", ASK)
    assert answer.status_code == 200
    sent = events_of(answer.content)
    assert b"chaos" in sent[-1] and all(b"chaos" not in e for e in sent[:-1])
    # chatx's own decoder of the API reads the last event as the stream's error.
    streams = streams_of(load(answer.content, f"<{api}>"))
    assert streams and streams[0].errors, api
    error = streams[0].errors[0]  # Llama Stack's says it as a detail
    assert "in place of event 3" in (error.message or error.extra.get("detail", ""))


def test_an_error_event_is_raised_by_the_openai_sdk() -> None:
    with (
        serving([str(CHAT)], chaos=Chaos(Faults(error_at=2))) as (running, _),
        openai.OpenAI(base_url=f"{running.url}/v1", api_key="k", max_retries=0) as client,
    ):
        stream = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
        with pytest.raises(openai.APIError, match="in place of event 2"):
            list(stream)


def test_an_error_event_is_raised_by_the_anthropic_sdk() -> None:
    with (
        serving([str(CHAT)], chaos=Chaos(Faults(error_at=2))) as (running, _),
        anthropic.Anthropic(base_url=running.url, api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        list(
            client.messages.create(
                model="m",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
            )
        )
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["error"]["type"] == "overloaded_error"


def test_stall_waits_before_its_event(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def no_wait(self: asgi.Watch, seconds: float) -> bool:
        waits.append(seconds)
        return self.task.done()

    monkeypatch.setattr(asgi.Watch, "wait", no_wait)
    with serving([str(CHAT)], chaos=Chaos(Faults(stall_at=3, stall=7.5))) as (running, _):
        post(f"{running.url}{PATHS['chat']}", ASK)
    assert waits[:4] == [0, 0, 7.5, 0] and set(waits[3:]) == {0}


def test_chaos_rate_draws_the_same_faults_for_the_same_seed() -> None:
    one = [Chaos(Faults(), 0.5, seed=7).of(n) for n in range(1, 41)]
    assert one == [Chaos(Faults(), 0.5, seed=7).of(n) for n in range(1, 41)]
    assert one != [Chaos(Faults(), 0.5, seed=8).of(n) for n in range(1, 41)]
    struck = [f for f in one if f != NONE]
    assert 10 <= len(struck) <= 30  # a share near half; the list itself is fixed by the seed
    kinds = {
        next(k for k in ("status", "cut_after", "malformed_at", "error_at") if getattr(f, k))
        for f in struck
    }
    assert kinds == {"status", "cut_after", "malformed_at", "error_at"}
    assert all(f == NONE for f in (Chaos(Faults(), 0.0).of(n) for n in range(1, 20)))
    given = Faults(error_at=2)
    assert all(Chaos(given, 1.0).of(n) == given for n in range(1, 20))


def _outcomes(url: str, times: int) -> list[tuple[int, bytes]]:
    out = []
    for _ in range(times):
        try:
            answer = post(f"{url}{PATHS['chat']}", ASK)
            out.append((answer.status_code, answer.content))
        except httpx2.HTTPError as exc:  # a cut: the client sees a broken body
            out.append((0, type(exc).__name__.encode()))
    return out


def test_chaos_rate_runs_repeat(tmp_path: Path) -> None:
    runs = []
    for _ in range(2):
        with serving([str(CHAT)], chaos=Chaos(Faults(), 0.5, seed=11)) as (running, _):
            runs.append(_outcomes(running.url, 12))
    assert runs[0] == runs[1]
    clean = CHAT.read_bytes()
    assert any(o == (200, clean) for o in runs[0])
    assert any(o != (200, clean) for o in runs[0])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--malformed-at", "0"], "--malformed-at: an event's number, from 1 (not 0)"),
        (["--error-at", "-1"], "--error-at: an event's number, from 1"),
        (["--stall", "-1"], "--stall: seconds, 0 or more"),
        (["--stall-at", "2"], "--stall-at K names the event --stall SECONDS waits before"),
        (["--chaos-rate", "1.5"], "--chaos-rate: a share of requests, 0 to 1 (not 1.5)"),
    ],
)
def test_bad_chaos_options(args: list[str], says: str) -> None:
    result = run(["serve", str(CHAT), *args])
    assert_clean(result, {2})
    assert says in result.err

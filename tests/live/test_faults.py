"""``chatx serve``'s faults, as a client under test meets them: ``--delay`` between
events, ``--cut-after`` a dropped connection, ``--status`` an OpenAI-shaped error."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx2
import openai
import pytest

from chatx.live import asgi
from chatx.live.app import ServeApp
from chatx.live.replay import Events
from tests.live.support import TIMEOUT, Running, fixture, post, serving

TEXT = "chat-chunk/text.sse"  # 8 events, the last data: [DONE]
MESSAGES: list = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Running, ServeApp]]:
    with serving() as pair:
        yield pair


@pytest.fixture
def app(served: tuple[Running, ServeApp]) -> Iterator[ServeApp]:
    app = served[1]
    yield app
    app.delay, app.cut_after, app.status = 0.0, None, None


@pytest.fixture
def client(served: tuple[Running, ServeApp]) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{served[0].url}/v1", api_key="sk-test", max_retries=0) as sdk:
        yield sdk


def events(data: bytes) -> list[bytes]:
    splitter = Events()
    return splitter.feed(data) + splitter.finish()


def arrivals(url: str, capture: str) -> list[tuple[float, bytes]]:
    """Each piece of the body with the time it came."""
    got = []
    with (
        httpx2.Client(timeout=TIMEOUT) as http,
        http.stream(
            "POST", url, content=b'{"stream": true}', headers={"x-chatx-capture": capture}
        ) as response,
    ):
        for piece in response.iter_raw():
            got.append((time.monotonic(), piece))
    return got


def test_delay_between_events(
    served: tuple[Running, ServeApp], app: ServeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the server waits before each event, and what it sends, one piece an event:
    # taken from the server, not from a client's clock (a loaded machine's reads merge).
    waits: list[float] = []
    pieces: list[bytes] = []

    async def no_wait(self: asgi.Watch, seconds: float) -> bool:
        waits.append(seconds)
        return self.task.done()

    async def sent(send: asgi.Send, piece: bytes) -> None:
        pieces.append(piece)
        await send_piece(send, piece)

    send_piece = asgi.send_piece
    monkeypatch.setattr(asgi.Watch, "wait", no_wait)
    monkeypatch.setattr(asgi, "send_piece", sent)
    app.delay = 0.1
    got = arrivals(f"{served[0].url}/v1/chat/completions", TEXT)
    expected = events(fixture(TEXT))
    assert b"".join(piece for _, piece in got) == fixture(TEXT)
    # Each event is sent on its own, the delay before all but the first.
    assert pieces == expected
    assert waits == [0.0] + [0.1] * (len(expected) - 1)


def test_cut_after_drops_the_connection(served: tuple[Running, ServeApp], app: ServeApp) -> None:
    app.cut_after = 3
    received = b""
    with (
        pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"),
        httpx2.stream(
            "POST",
            f"{served[0].url}/v1/chat/completions",
            content=b'{"stream": true}',
            headers={"x-chatx-capture": TEXT},
            timeout=TIMEOUT,
        ) as response,
    ):
        for piece in response.iter_raw():
            received += piece
    assert received == b"".join(events(fixture(TEXT))[:3])


def test_cut_after_through_the_sdk(client: openai.OpenAI, app: ServeApp) -> None:
    app.cut_after = 4
    seen = []
    with (
        pytest.raises(openai.APIConnectionError),
        client.chat.completions.stream(
            model="m", messages=MESSAGES, extra_headers={"x-chatx-capture": TEXT}
        ) as stream,
    ):
        for event in stream:
            if event.type == "content.delta":
                seen.append(event.delta)
    assert seen == ["", "Hello", ",", " world"]


def test_cut_after_the_last_event_is_no_cut(
    served: tuple[Running, ServeApp], app: ServeApp
) -> None:
    app.cut_after = len(events(fixture(TEXT)))
    got = post(f"{served[0].url}/v1/chat/completions", {"stream": True}, TEXT)
    assert got.status_code == 200 and got.content == fixture(TEXT)


@pytest.mark.parametrize(
    ("status", "error", "kind", "code"),
    [
        (429, openai.RateLimitError, "requests", "rate_limit_exceeded"),
        (401, openai.AuthenticationError, "invalid_request_error", "invalid_api_key"),
        (400, openai.BadRequestError, "invalid_request_error", None),
        (500, openai.InternalServerError, "server_error", None),
        (503, openai.InternalServerError, "server_error", "overloaded"),
    ],
)
def test_status_answers_with_an_openai_error(
    client: openai.OpenAI,
    app: ServeApp,
    status: int,
    error: type[openai.APIStatusError],
    kind: str,
    code: str | None,
) -> None:
    app.status = status
    with pytest.raises(error) as raised:
        client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    assert raised.value.status_code == status
    body = raised.value.body
    assert isinstance(body, dict)  # the SDK hands over the "error" object
    assert body["type"] == kind and body["code"] == code and body["param"] is None
    assert f"(chatx serve --status {status})" in body["message"]
    with pytest.raises(error):
        client.responses.create(model="m", input="hi")


def test_status_leaves_the_models_list(client: openai.OpenAI, app: ServeApp) -> None:
    app.status = 503
    assert [m.id for m in client.models.list()]

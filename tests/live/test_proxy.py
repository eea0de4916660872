"""``chatx proxy`` between a client and a local upstream (``chatx serve`` in a thread):
what the client reads is what the upstream sent, byte for byte and as it came, and so
is each recorded capture; its request is beside it, with no secret."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import openai
import orjson
import pytest

from chatx.live.app import ServeApp
from chatx.live.proxy import ProxyApp
from chatx.live.served_captures import load
from tests.live.support import DIRS, FIXTURES, TIMEOUT, Running
from tests.live.test_capture import Seen

KEY = "sk-proxy-test-SECRET-5678"
NAME = re.compile(r"^\d{8}T\d{6}_\d{6}Z-\d{4}-[a-z0-9-]+\.(sse|json|jsonl)$")
TEXT = "chat-chunk/text.sse"
MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]


class Proxy:
    def __init__(self, upstream: Running, seen: Seen, proxy: Running, app: ProxyApp, folder: Path):
        self.upstream, self.seen, self.proxy, self.app, self.folder = (
            upstream,
            seen,
            proxy,
            app,
            folder,
        )
        self.log: list[str] = []
        self.findings: list[str] = []

    def recorded(self, before: set[Path]) -> list[Path]:
        """The captures recorded since ``before`` (requests and parts left out), by name."""
        return sorted(p for p in set(self.folder.iterdir()) - before if NAME.match(p.name))


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("recorded")
    seen = Seen(ServeApp(load(DIRS)))
    with Running(seen) as upstream:
        app = ProxyApp(upstream.url, folder, validate=True)
        with Running(app, lifespan="on") as proxy:
            state = Proxy(upstream, seen, proxy, app, folder)
            app.log, app.findings = state.log.append, state.findings.append
            yield state


@pytest.fixture
def upstream_app(proxied: Proxy) -> Iterator[ServeApp]:
    app = proxied.seen.app
    yield app
    app.delay, app.status = 0.0, None


def stream(base: str, path: str, body: dict[str, Any], capture: str) -> list[tuple[float, bytes]]:
    got = []
    headers = {"authorization": f"Bearer {KEY}", "x-chatx-capture": capture}
    with (
        httpx2.Client(timeout=TIMEOUT) as http,
        http.stream("POST", base + path, content=orjson.dumps(body), headers=headers) as response,
    ):
        assert response.status_code == 200
        for piece in response.iter_raw():
            got.append((time.monotonic(), piece))
    return got


@contextmanager
def text_stream(proxied: Proxy) -> Iterator[httpx2.Response]:
    """The TEXT capture streamed through the proxy, open while the caller reads it."""
    headers = {"x-chatx-capture": TEXT}
    with (
        httpx2.Client(timeout=TIMEOUT) as http,
        http.stream(
            "POST",
            f"{proxied.proxy.url}/v1/chat/completions",
            content=b'{"stream":true}',
            headers=headers,
        ) as response,
    ):
        yield response


def joined(pieces: list[tuple[float, bytes]]) -> bytes:
    return b"".join(piece for _, piece in pieces)


@pytest.mark.parametrize(
    ("capture", "path", "slug"),
    [
        (TEXT, "/v1/chat/completions", "chat-completions"),
        ("chat-chunk/tool-call-parallel.sse", "/v1/responses", "responses"),
        (
            "llama-stack-event/text.jsonl",
            "/v1/inference/chat-completion",
            "inference-chat-completion",
        ),
    ],
)
def test_client_and_recording_get_the_upstream_bytes(
    proxied: Proxy, capture: str, path: str, slug: str
) -> None:
    body = {"model": "m", "input": "hi", "stream": True, "api_key": "sk-body-SECRET"}
    before = set(proxied.folder.iterdir())
    through = joined(stream(proxied.proxy.url, path, body, capture))
    direct = joined(stream(proxied.upstream.url, path, body, capture))
    assert through == direct and through
    (recorded,) = proxied.recorded(before)
    assert recorded.name.endswith(f"-{slug}.sse")
    assert recorded.read_bytes() == direct
    request = orjson.loads(Path(f"{recorded}.request.json").read_bytes())
    assert request == {"model": "m", "input": "hi", "stream": True}
    # Authorization reached the upstream, and no file holds it.
    assert proxied.seen.headers[-2][b"authorization"] == f"Bearer {KEY}".encode()
    for path_ in proxied.folder.iterdir():
        assert KEY.encode() not in path_.read_bytes()
        assert b"sk-body-SECRET" not in path_.read_bytes()


def test_sdk_through_the_proxy(proxied: Proxy) -> None:
    with (
        openai.OpenAI(base_url=f"{proxied.proxy.url}/v1", api_key=KEY, max_retries=0) as client,
        openai.OpenAI(base_url=f"{proxied.upstream.url}/v1", api_key=KEY, max_retries=0) as direct,
    ):
        for sdk in (client, direct):
            with sdk.responses.stream(
                model="m",
                input="hi",
                extra_headers={"x-chatx-capture": "responses-event/function-call.sse"},
            ) as events:
                for _ in events:
                    pass
                response = events.get_final_response()
            assert response.output[0].type == "function_call"
        models = [m.id for m in client.models.list()]
        assert models == [m.id for m in direct.models.list()]


def test_each_chunk_is_flushed(proxied: Proxy, upstream_app: ServeApp) -> None:
    upstream_app.delay = 0.15
    pieces = stream(proxied.proxy.url, "/v1/chat/completions", {"stream": True}, TEXT)
    assert joined(pieces) == (FIXTURES / TEXT).read_bytes()
    gaps = [b[0] - a[0] for a, b in zip(pieces, pieces[1:], strict=False)]
    assert len(pieces) >= 6 and min(gaps) >= 0.1  # each event arrived when the upstream sent it


def test_not_streamed_is_passed_and_recorded(proxied: Proxy) -> None:
    before = set(proxied.folder.iterdir())
    headers = {"x-chatx-capture": TEXT, "authorization": f"Bearer {KEY}"}
    url = "/v1/chat/completions?api-version=2026-01-01"
    through = httpx2.post(proxied.proxy.url + url, content=b'{"model": "m"}', headers=headers)
    direct = httpx2.post(proxied.upstream.url + url, content=b'{"model": "m"}', headers=headers)
    assert through.status_code == 200 and through.content == direct.content
    assert through.headers["content-type"] == "application/json"
    (recorded,) = proxied.recorded(before)
    assert recorded.suffix == ".json" and recorded.read_bytes() == direct.content


def test_names_sort_in_request_order(proxied: Proxy) -> None:
    before = set(proxied.folder.iterdir())
    captures = ["chat-chunk/refusal.sse", TEXT, "chat-chunk/logprobs.sse"]
    for capture in captures:
        stream(proxied.proxy.url, "/v1/chat/completions", {"stream": True}, capture)
    recorded = proxied.recorded(before)
    assert len(recorded) == 3 and all(NAME.match(p.name) for p in recorded)
    assert [p.read_bytes() for p in recorded] == [(FIXTURES / c).read_bytes() for c in captures]


def said(lines: list[str], count: int, recorded: Path) -> list[str]:
    """The lines about ``recorded`` once ``count`` are there: the proxy checks a stream once
    it has ended, and an earlier test's stream may end (and be said) after this one began."""
    deadline = time.monotonic() + TIMEOUT
    about = f"chatx: proxy: {recorded}:"
    while True:
        found = [line for line in list(lines) if line.startswith(about)]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def test_validate_prints_findings_when_the_stream_ends(proxied: Proxy) -> None:
    proxied.findings.clear()
    before = set(proxied.folder.iterdir())
    stream(proxied.proxy.url, "/v1/chat/completions", {"stream": True}, "chat-chunk/truncated.sse")
    (recorded,) = proxied.recorded(before)
    assert said(proxied.findings, 2, recorded) == [
        f"chatx: proxy: {recorded}:3: CHK009 E choice 0 never gets a finish_reason",
        f"chatx: proxy: {recorded}:3: CHK015 E stream ends without data: [DONE]",
    ]
    proxied.findings.clear()
    before = set(proxied.folder.iterdir())
    stream(proxied.proxy.url, "/v1/chat/completions", {"stream": True}, TEXT)
    (recorded,) = proxied.recorded(before)
    assert said(proxied.findings, 1, recorded) == [f"chatx: proxy: {recorded}: no findings"]


def test_upstream_errors_pass_through_unrecorded(proxied: Proxy, upstream_app: ServeApp) -> None:
    upstream_app.status = 429
    before = set(proxied.folder.iterdir())
    got = httpx2.post(f"{proxied.proxy.url}/v1/chat/completions", content=b"{}")
    assert got.status_code == 429
    assert got.json()["error"]["code"] == "rate_limit_exceeded"
    assert set(proxied.folder.iterdir()) == before


def test_client_leaving_keeps_a_part(proxied: Proxy, upstream_app: ServeApp) -> None:
    upstream_app.delay = 0.2
    before = set(proxied.folder.iterdir())
    with text_stream(proxied) as response:
        next(response.iter_raw())
    deadline = time.monotonic() + TIMEOUT
    parts: list[Path] = []
    while not parts and time.monotonic() < deadline:
        time.sleep(0.05)
        parts = [p for p in set(proxied.folder.iterdir()) - before if p.name.endswith(".sse.part")]
    assert len(parts) == 1 and proxied.recorded(before) == []
    whole = (FIXTURES / TEXT).read_bytes()
    assert whole.startswith(parts[0].read_bytes()) and len(parts[0].read_bytes()) < len(whole)


def test_upstream_down_is_a_502(tmp_path: Path) -> None:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with Running(ProxyApp(f"http://127.0.0.1:{port}", tmp_path), lifespan="on") as proxy:
        got = httpx2.post(f"{proxy.url}/v1/chat/completions", content=b"{}")
    assert got.status_code == 502
    error = got.json()["error"]
    assert error["type"] == "server_error" and error["code"] == "bad_gateway"
    assert f"upstream http://127.0.0.1:{port}/v1/chat/completions" in error["message"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("upstream", "path", "query", "url"),
    [
        ("https://api.example.test", "/v1/responses", b"", "https://api.example.test/v1/responses"),
        (
            "https://api.example.test/v1",
            "/v1/responses",
            b"",
            "https://api.example.test/v1/responses",
        ),
        ("https://h.test/openai/", "/v1/x", b"a=1&b=2", "https://h.test/openai/v1/x?a=1&b=2"),
    ],
)
def test_upstream_url(upstream: str, path: str, query: bytes, url: str) -> None:
    app = ProxyApp(upstream, Path("."))
    assert app.target({"path": path, "raw_path": path.encode(), "query_string": query}) == url


def test_a_part_file_swapped_mid_stream_is_left_alone(
    proxied: Proxy, upstream_app: ServeApp, tmp_path: Path
) -> None:
    """Someone replaces the recording's NAME.part with a symlink while the stream runs:
    the client still gets the whole stream, nothing is written through the symlink, and
    NAME is never made from what is not chatx's own file."""
    upstream_app.delay = 0.05
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched")
    before = set(proxied.folder.iterdir())
    got = b""
    with text_stream(proxied) as response:
        pieces = response.iter_raw()
        got += next(pieces)
        (part,) = [p for p in set(proxied.folder.iterdir()) - before if p.name.endswith(".part")]
        part.unlink()
        part.symlink_to(victim)
        got += b"".join(pieces)
    assert got == (FIXTURES / TEXT).read_bytes()
    assert victim.read_bytes() == b"untouched"
    assert proxied.recorded(before) == []

"""``chatx capture`` against a local upstream (``chatx serve`` in a thread): the files
hold what the upstream sent, byte for byte, and never a key; an HTTP error leaves no
file; an interrupted capture stays ``OUT.part``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

import chatx
from chatx.live.app import ServeApp
from chatx.live.served_captures import load
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, ROOT, TIMEOUT, Running, post

KEY = "sk-capture-test-SECRET-1234"
CHAT_ASK = {"model": "m-chat", "messages": [{"role": "user", "content": "say hello"}]}
TOOL_ASK = {"model": "m-tools", "messages": [{"role": "user", "content": "call tools"}]}
LLAMA_ASK = {"model_id": "m-llama", "messages": [{"role": "user", "content": "hello llama"}]}


class Seen:
    """Wraps the upstream app: keeps the headers of every request it gets."""

    def __init__(self, app: ServeApp) -> None:
        self.app = app
        self.headers: list[dict[bytes, bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.headers.append(dict(scope["headers"]))
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Seen]]:
    folder = tmp_path_factory.mktemp("upstream")
    for name, source, ask in (
        ("chat.sse", "chat-chunk/text.sse", CHAT_ASK),
        ("tools.sse", "chat-chunk/tool-call-parallel.sse", TOOL_ASK),
        ("llama.jsonl", "llama-stack-event/text.jsonl", LLAMA_ASK),
    ):
        shutil.copyfile(FIXTURES / source, folder / name)
        (folder / f"{name}.request.json").write_bytes(orjson.dumps({**ask, "stream": True}))
    seen = Seen(ServeApp(load([str(folder)])))
    with Running(seen) as running:
        yield running, seen


@pytest.fixture
def app(upstream: tuple[Running, Seen]) -> Iterator[ServeApp]:
    app = upstream[1].app
    yield app
    app.delay, app.status = 0.0, None


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def capture(url: str, out: Path, body: dict[str, Any], *args: str) -> Any:
    return run(
        [
            "capture",
            "--base-url",
            f"{url}/v1",
            "-d",
            orjson.dumps(body).decode(),
            "-o",
            str(out),
            *args,
        ]
    )


def sent_directly(url: str, path: str, body: dict[str, Any]) -> bytes:
    got = post(url + path, {**body, "stream": True})
    assert got.status_code == 200
    return got.content


def no_secret_in(folder: Path, *secrets: str) -> None:
    for path in folder.rglob("*"):
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, path


@pytest.mark.parametrize(
    ("api", "ask", "path"),
    [
        ("chat", CHAT_ASK, "/v1/chat/completions"),
        ("chat", TOOL_ASK, "/v1/chat/completions"),
        ("responses", CHAT_ASK, "/v1/responses"),
        ("llama-stack", LLAMA_ASK, "/v1/inference/chat-completion"),
    ],
)
def test_capture_writes_what_the_upstream_sent(
    upstream: tuple[Running, Seen], tmp_path: Path, key: str, api: str, ask: dict, path: str
) -> None:
    running, seen = upstream
    out = tmp_path / "got.sse"
    body = {**ask, "api_key": "sk-in-the-body-SECRET"}
    result = capture(running.url, out, body, "--api", api)
    assert_clean(result, {0})
    assert out.read_bytes() == sent_directly(running.url, path, ask)
    assert seen.headers[-2][b"authorization"] == f"Bearer {key}".encode()
    recorded = orjson.loads((tmp_path / "got.sse.request.json").read_bytes())
    assert recorded == {**ask, "stream": True}  # streaming forced on, the secret left out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "got.sse",
        "got.sse.request.json",
        "got.sse.timing",
    ]
    sidecar = orjson.loads((tmp_path / "got.sse.timing").read_bytes())
    assert sidecar["head"] >= 0 and sidecar["arrived"][-1][0] == out.stat().st_size
    no_secret_in(tmp_path, key, "sk-in-the-body-SECRET")
    assert f"into {out}" in result.err


def test_own_format_capture_is_the_recorded_file(
    upstream: tuple[Running, Seen], tmp_path: Path
) -> None:
    out = tmp_path / "chat.sse"
    result = capture(upstream[0].url, out, CHAT_ASK, "-q")
    assert_clean(result, {0})
    assert out.read_bytes() == (FIXTURES / "chat-chunk/text.sse").read_bytes()
    assert "OPENAI_API_KEY" not in result.err  # -q: errors only


def test_request_file_and_no_key(
    upstream: tuple[Running, Seen], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    asked = tmp_path / "ask.json"
    asked.write_bytes(orjson.dumps(TOOL_ASK))
    out = tmp_path / "tools.sse"
    result = run(
        ["capture", "--base-url", f"{upstream[0].url}/v1", "--request", str(asked), "-o", str(out)]
    )
    assert_clean(result, {0})
    assert "warning: $OPENAI_API_KEY is not set" in result.err
    assert b"authorization" not in upstream[1].headers[-1]
    assert out.read_bytes() == (FIXTURES / "chat-chunk/tool-call-parallel.sse").read_bytes()


def test_tee_converts_live(upstream: tuple[Running, Seen], tmp_path: Path) -> None:
    out = tmp_path / "tools.sse"
    result = capture(upstream[0].url, out, TOOL_ASK, "--tee", "responses")
    assert_clean(result, {0})
    assert result.stdout == chatx.convert(out.read_bytes(), dst="responses-event")
    assert result.stdout.startswith(b"event: response.created\n")


def test_http_error_leaves_no_file(
    upstream: tuple[Running, Seen], app: ServeApp, tmp_path: Path
) -> None:
    app.status = 401
    out = tmp_path / "got.sse"
    result = capture(upstream[0].url, out, CHAT_ASK)
    assert_clean(result, {2})
    assert "error: POST " in result.err and "HTTP 401 Unauthorized" in result.err
    assert '  {"error":{"message":"Incorrect API key provided.' in result.err
    assert list(tmp_path.iterdir()) == []


def test_unknown_route_is_an_http_error(upstream: tuple[Running, Seen], tmp_path: Path) -> None:
    result = run(
        [
            "capture",
            "--base-url",
            f"{upstream[0].url}/v2",
            "-d",
            "{}",
            "-o",
            str(tmp_path / "x.sse"),
        ]
    )
    assert_clean(result, {2})
    assert "HTTP 404 Not Found" in result.err
    assert list(tmp_path.iterdir()) == []


def test_cannot_connect(tmp_path: Path) -> None:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    result = run(
        [
            "capture",
            "--base-url",
            f"http://127.0.0.1:{port}/v1",
            "-d",
            "{}",
            "-o",
            str(tmp_path / "x.sse"),
        ]
    )
    assert_clean(result, {2})
    assert "cannot connect" in result.err
    assert list(tmp_path.iterdir()) == []


def test_read_timeout_keeps_what_arrived(
    upstream: tuple[Running, Seen], app: ServeApp, tmp_path: Path
) -> None:
    # The server's wait between events is far longer than the read timeout, and the read
    # timeout far longer than a loaded machine takes to send the first event: the outcome
    # does not depend on how fast this machine is (the server stops waiting when the
    # client hangs up).
    app.delay = 600.0
    out = tmp_path / "slow.sse"
    result = capture(upstream[0].url, out, CHAT_ASK, "--read-timeout", "5")
    assert_clean(result, {2})
    assert "read timed out" in result.err and "capture incomplete" in result.err
    assert not out.exists()
    part = tmp_path / "slow.sse.part"
    whole = (FIXTURES / "chat-chunk/text.sse").read_bytes()
    assert part.read_bytes() and whole.startswith(part.read_bytes())
    assert orjson.loads((tmp_path / "slow.sse.part.request.json").read_bytes())["stream"] is True


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "give the request body: --request FILE or -d JSON"),
        (["-d", "{}", "--request", "x.json"], "give the request body"),
        (["-d", "{nope"], "-d: invalid JSON"),
        (["-d", "[1]"], "-d: the request body is a JSON object"),
        (["-d", "{}", "--api", "chta"], "--api: unknown API 'chta'"),
        (["-d", "{}", "--tee", "nope"], "unknown format 'nope'"),
        (["-d", "{}", "--base-url", "ftp://x"], "--base-url: an http:// or https:// URL"),
    ],
)
def test_usage_errors(tmp_path: Path, args: list[str], says: str) -> None:
    base = [] if "--base-url" in args else ["--base-url", "http://127.0.0.1:9/v1"]
    result = run(["capture", *base, "-o", str(tmp_path / "x.sse"), *args])
    assert_clean(result, {2})
    assert says in result.err
    assert list(tmp_path.iterdir()) == []


def test_output_in_a_missing_directory(tmp_path: Path) -> None:
    out = tmp_path / "no" / "x.sse"
    result = run(["capture", "--base-url", "http://127.0.0.1:9/v1", "-d", "{}", "-o", str(out)])
    assert_clean(result, {2})
    assert f"no directory {tmp_path / 'no'}" in result.err


# -- Ctrl-C and SIGTERM: what arrived stays OUT.part -------------------------------------------


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_capture_is_kept_as_part(
    upstream: tuple[Running, Seen], app: ServeApp, tmp_path: Path, signum: int, code: int
) -> None:
    app.delay = 0.5
    out = tmp_path / "cut.sse"
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", "capture", "--base-url", f"{upstream[0].url}/v1"]
        + ["-d", orjson.dumps(CHAT_ASK).decode(), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "OPENAI_API_KEY": KEY},
    )
    part = tmp_path / "cut.sse.part"
    deadline = time.monotonic() + TIMEOUT
    while not (part.exists() and part.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=TIMEOUT)
    text = err.decode()
    assert proc.returncode == code, text
    assert "Traceback" not in text
    assert "capture incomplete (interrupted)" in text and f"{out} left as it was" in text
    assert not out.exists()
    whole = (FIXTURES / "chat-chunk/text.sse").read_bytes()
    kept = part.read_bytes()
    assert kept and len(kept) < len(whole) and whole.startswith(kept)
    assert (tmp_path / "cut.sse.part.request.json").exists()
    no_secret_in(tmp_path, KEY)


def test_anthropic_api_sends_its_key_as_x_api_key(
    upstream: tuple[Running, Seen], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    running, seen = upstream
    out = tmp_path / "claude.sse"
    ask = {**CHAT_ASK, "max_tokens": 64}
    result = capture(
        running.url, out, ask, "--api", "anthropic", "--api-key-env", "ANTHROPIC_API_KEY"
    )
    assert_clean(result, {0})
    headers = seen.headers[-1]
    assert headers[b"x-api-key"] == KEY.encode() and b"authorization" not in headers
    assert headers[b"anthropic-version"] == b"2023-06-01"
    assert out.read_bytes() == sent_directly(running.url, "/v1/messages", ask)
    assert out.read_bytes().startswith(b"event: message_start\n")
    no_secret_in(tmp_path, KEY)


def test_headers_given_are_sent_over_chatx_own_and_never_written(
    upstream: tuple[Running, Seen], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    running, seen = upstream
    out = tmp_path / "claude.sse"
    ask = {**CHAT_ASK, "max_tokens": 64}
    given = ["-H", "anthropic-version: 2024-10-22", "-H", "Anthropic-Beta:  tools-1 ",
             "--header", f"X-Api-Key: {KEY}"]  # fmt: skip
    result = capture(running.url, out, ask, "--api", "anthropic", *given)
    assert_clean(result, {0})
    assert "is not set" not in result.err  # the key came as a header
    headers = seen.headers[-1]
    assert headers[b"anthropic-version"] == b"2024-10-22"
    assert headers[b"anthropic-beta"] == b"tools-1"
    assert headers[b"x-api-key"] == KEY.encode()
    assert out.read_bytes() == sent_directly(running.url, "/v1/messages", ask)
    no_secret_in(tmp_path, KEY)


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("no-colon-here", "-H: a header is 'Name: value' (got 'no-colon-here', no colon)"),
        (": value", "-H: a header is 'Name: value' (got '')"),
        ("Bad Name: x", "-H: a header is 'Name: value' (got 'Bad Name')"),
    ],
)
def test_a_malformed_header_is_a_usage_error(tmp_path: Path, header: str, said: str) -> None:
    result = capture("http://127.0.0.1:9", tmp_path / "x.sse", CHAT_ASK, "-H", header)
    assert result.code == 2 and said in result.err and "Traceback" not in result.err
    assert list(tmp_path.iterdir()) == []

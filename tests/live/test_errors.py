"""Bad requests to ``chatx serve`` get an OpenAI-shaped error body with the right
status, never a traceback; bad command lines and captures stop it before it listens."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from chatx.errors import UsageError
from chatx.live import server
from chatx.live.app import ServeApp
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, TIMEOUT, Running, serving

LOG: list[str] = []


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Running, ServeApp]]:
    with serving([str(FIXTURES / "chat-chunk")], log=LOG.append) as pair:
        yield pair


def request(
    url: str, method: str, path: str, content: bytes = b"", **headers: str
) -> httpx2.Response:
    return httpx2.request(method, url + path, content=content, headers=headers, timeout=TIMEOUT)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "param", "says"),
    [
        ("POST", "/v1/chat/completions", b"", 400, None, "no body"),
        ("POST", "/v1/chat/completions", b"{nope", 400, None, "could not parse the JSON body"),
        ("POST", "/v1/chat/completions", b"[1, 2]", 400, None, "a JSON array, not an object"),
        ("POST", "/v1/responses", b'{"stream": "yes"}', 400, "stream", "expected a boolean"),
        ("POST", "/v1/responses", b'{"model": 3}', 400, "model", "expected a string"),
        ("POST", "/v1/inference/chat-completion", b'{"model_id": []}', 400, "model_id", "string"),
        ("GET", "/v1/chat/completions", b"", 405, None, "Invalid method"),
        ("DELETE", "/v1/models", b"", 405, None, "use GET or HEAD"),
        ("POST", "/v1/completions", b"{}", 404, None, "Unknown request URL: POST /v1/completions"),
        ("GET", "/", b"", 404, None, "Unknown request URL"),
    ],
)
def test_bad_request(
    served: tuple[Running, ServeApp],
    method: str,
    path: str,
    body: bytes,
    status: int,
    param: str | None,
    says: str,
) -> None:
    got = request(served[0].url, method, path, body)
    assert got.status_code == status
    assert got.headers["content-type"] == "application/json"
    error = got.json()["error"]
    if path == "/v1/inference/chat-completion":  # Llama Stack's server says only a detail
        assert set(error) == {"detail"} and says in error["detail"]
    else:
        assert set(error) == {"message", "type", "param", "code"}
        assert says in error["message"] and error["param"] == param
        assert error["type"] == "invalid_request_error"
    assert not any("Traceback" in line for line in LOG)


def test_body_too_large(served: tuple[Running, ServeApp]) -> None:
    app = served[1]
    app.max_body = 1000
    try:
        got = request(served[0].url, "POST", "/v1/chat/completions", b"{" + b" " * 2000 + b"}")
    finally:
        app.max_body = 32 << 20
    assert got.status_code == 413 and got.json()["error"]["code"] == "request_too_large"


def test_the_server_goes_on_after_bad_requests(served: tuple[Running, ServeApp]) -> None:
    request(served[0].url, "POST", "/v1/chat/completions", b"{nope")
    good = request(
        served[0].url,
        "POST",
        "/v1/chat/completions",
        b'{"stream": true}',
        **{"x-chatx-capture": "text"},
    )
    assert (
        good.status_code == 200 and good.content == (FIXTURES / "chat-chunk/text.sse").read_bytes()
    )


# -- the command line: refused before it listens ------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--status", "200"], "--status: an HTTP error status, 400 to 599 (not 200)"),
        (["--delay", "-1"], "--delay: milliseconds"),
        (["--cut-after", "-2"], "--cut-after: a number of events"),
        (["--port", "70000"], "--port: 0 to 65535"),
    ],
)
def test_bad_options(args: list[str], says: str) -> None:
    result = run(["serve", str(FIXTURES / "chat-chunk" / "text.sse"), *args])
    assert_clean(result, {2})
    assert says in result.err


def test_missing_path() -> None:
    result = run(["serve", "no/such/dir"])
    assert_clean(result, {2})
    assert "no/such/dir: no such file or directory" in result.err


def test_a_file_that_is_no_stream(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sse"
    bad.write_bytes(b'data: {"hello": 1}\n\n')
    result = run(["serve", str(bad)])
    assert_clean(result, {2})
    assert f"{bad}:1: " in result.err


def test_a_recorded_request_is_no_capture(tmp_path: Path) -> None:
    named = tmp_path / "x.sse.request.json"
    named.write_bytes(b"{}")
    result = run(["serve", str(named)])
    assert_clean(result, {2})
    assert "a recorded request, not a capture" in result.err


def test_a_directory_skips_what_is_no_capture(tmp_path: Path) -> None:
    from chatx.live.served_captures import load

    (tmp_path / "notes.json").write_bytes(b'{"hello": 1}')
    (tmp_path / "text.sse").write_bytes((FIXTURES / "chat-chunk/text.sse").read_bytes())
    (tmp_path / "text.sse.request.json").write_bytes(b'{"model": "m"}')
    (tmp_path / "cut.sse.part").write_bytes(b"data: {")
    skipped: list[str] = []
    found = load([str(tmp_path)], skipped)
    assert [c.name.split("/", 1)[1] for c in found] == ["text.sse"]
    assert found[0].model == "m"
    assert skipped == [
        f"{tmp_path}/notes.json: a JSON file of no stream format chatx knows,"
        " not a capture file: skipped"
    ]


def test_port_in_use() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = taken.getsockname()[1]
        result = run(["serve", str(FIXTURES / "chat-chunk" / "text.sse"), "--port", str(port)])
    finally:
        taken.close()
    assert_clean(result, {2})
    assert f"cannot listen on 127.0.0.1:{port}: " in result.err


def test_missing_extra_names_it() -> None:
    with pytest.raises(
        UsageError, match=r"chatx serve needs no_such_module_x: pip install 'chatx\[serve\]'"
    ):
        server.require("serve", "no_such_module_x")


def test_a_walk_says_at_most_five_skipped_files(tmp_path: Path) -> None:
    for number in range(8):
        (tmp_path / f"notes{number}.json").write_bytes(b'{"hello": 1}')
    result = run(["serve", str(tmp_path)])
    assert_clean(result, {2})
    lines = result.err.splitlines()
    assert [line.split(":")[1] for line in lines[:5]] == [" warning"] * 5
    assert lines[5] == "chatx: warning: 3 more files that are no capture skipped"
    assert lines[6].startswith(f"chatx: error: no captures in {tmp_path}")

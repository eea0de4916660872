"""Trust III, class 1: ``chatx proxy`` talks only to its upstream, and the credentials in
``--upstream`` or ``capture --base-url`` are never said.

Two real loopback HTTP servers run beside the proxy: the upstream, and a trap no request
should ever reach. Each hostile request goes to the proxy as raw bytes over a socket, so
no client library can tidy the request-target first. A request is either mapped onto the
upstream (its path under the upstream's base path, its Host, the configured credentials)
or refused with a 400 in the API's error shape; the trap never sees a connection.
"""

from __future__ import annotations

import base64
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from chatx.live.proxy import ProxyApp
from tests.inprocess import run
from tests.live.support import TIMEOUT, Running

USER = "gw-user"
PASSWORD = "pa$s:w@rd/SECRET-7781"  # needs every escape a URL has
QUOTED = "pa%24s%3Aw%40rd%2FSECRET-7781"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
# The forms of the password a leak could take: as typed, as decoded, inside the Basic token.
SECRETS = (PASSWORD, QUOTED, "SECRET-7781", BASIC.split()[1])
BASE = "/gateway"
BODY = b'{"model": "m", "stream": false}'


@dataclass
class Seen:
    """One request a :class:`Listener` read: its head and body, as the bytes came."""

    head: bytes
    body: bytes

    @property
    def target(self) -> str:
        return self.head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")

    def header(self, name: str) -> list[str]:
        lines = self.head.decode("latin-1").split("\r\n")[1:]
        wanted = name.lower()
        return [v.strip() for k, _, v in (x.partition(":") for x in lines) if k.lower() == wanted]


@dataclass
class Listener:
    """A loopback HTTP/1.1 server in a thread: it writes down each connection and request,
    and answers as ``answer`` says (one request per connection, then it closes)."""

    name: str
    answer: bytes | None = None  # None: read the request and never answer
    sock: socket.socket = field(init=False)
    connections: int = 0
    requests: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(TIMEOUT)
            try:
                self.requests.append(_read_request(conn))
                if self.answer is None:
                    self.release.wait(TIMEOUT)
                    return
                conn.sendall(self.answer)
            except OSError:
                pass

    def close(self) -> None:
        self.release.set()
        self.sock.close()


def _read_request(conn: socket.socket) -> Seen:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return Seen(data, b"")
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return Seen(head, body)


def answer(status: str, body: bytes, *headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", "content-type: application/json", *headers]
    lines += [f"content-length: {len(body)}", "connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


UPSTREAM_ANSWER = answer("200 OK", b'{"from": "upstream"}')
TRAP_ANSWER = answer("200 OK", b'{"from": "trap"}')


@dataclass
class Reply:
    status: int
    head: bytes
    body: bytes


def raw(port: int, request: bytes) -> Reply:
    """Send ``request`` as it is and read the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
        conn.sendall(request)
        data = b""
        while piece := conn.recv(65536):
            data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else 0
    if b"transfer-encoding: chunked" in head.lower():
        body = _unchunk(body)
    return Reply(status, head, body)


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size, _, data = data.partition(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if not n:
            break
        out, data = out + data[:n], data[n + 2 :]
    return out


def request(method: str, target: bytes, *headers: bytes, host: bytes = b"proxy") -> bytes:
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: " + host, *headers]
    lines += [
        b"Content-Type: application/json",
        b"Authorization: Bearer sk-client-key",
        f"Content-Length: {len(BODY)}".encode(),
        b"Connection: close",
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + BODY


@dataclass
class Bench:
    upstream: Listener
    trap: Listener
    proxy: Running
    app: ProxyApp
    log: list[str]
    folder: Path

    def send(self, data: bytes) -> Reply:
        return raw(int(self.proxy.url.rsplit(":", 1)[1]), data)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    upstream = Listener("upstream", UPSTREAM_ANSWER)
    trap = Listener("trap", TRAP_ANSWER)
    folder = tmp_path_factory.mktemp("recorded")
    log: list[str] = []
    configured = f"http://{USER}:{QUOTED}@127.0.0.1:{upstream.port}{BASE}"
    app = ProxyApp(configured, folder, log=log.append)
    try:
        with Running(app, lifespan="on") as proxy:
            yield Bench(upstream, trap, proxy, app, log, folder)
    finally:
        upstream.close()
        trap.close()
    assert trap.connections == 0


def refused(reply: Reply) -> str:
    """The message of a 400 in the API's error shape."""
    assert reply.status == 400, (reply.status, reply.body)
    error = orjson.loads(reply.body)["error"]
    assert error["type"] == "invalid_request_error"
    assert isinstance(error["message"], str) and error["message"]
    return str(error["message"])


def no_secret(text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    for secret in SECRETS:
        assert secret.encode() not in data


# Request-targets that leave the origin-form (a path from /) or could be read as naming
# another host, or a path out of the base: each refused. TRAP is the trap's port.
REFUSED = [
    ("at-sign", "POST", "@127.0.0.1:TRAP/v1/chat/completions"),
    ("at-sign-bare", "POST", "@127.0.0.1:TRAP"),
    ("userinfo-trick", "POST", "u:p@127.0.0.1:TRAP/v1/chat/completions"),
    ("backslash-first", "POST", "\\\\127.0.0.1:TRAP/v1/chat/completions"),
    ("backslash-after-slash", "POST", "/\\127.0.0.1:TRAP/v1/chat/completions"),
    ("backslash-inside", "POST", "/v1\\..\\..\\x"),
    ("network-path", "POST", "//127.0.0.1:TRAP/v1/chat/completions"),
    ("network-path-triple", "POST", "///127.0.0.1:TRAP/v1/chat/completions"),
    ("absolute-http", "POST", "http://127.0.0.1:TRAP/v1/chat/completions"),
    ("absolute-upper", "POST", "HTTP://127.0.0.1:TRAP/v1/chat/completions"),
    ("absolute-https", "POST", "https://127.0.0.1:TRAP/v1/chat/completions"),
    ("absolute-userinfo", "POST", "http://u:p@127.0.0.1:TRAP/v1/chat/completions"),
    ("absolute-ipv6", "POST", "http://[::1]:TRAP/v1/chat/completions"),
    ("absolute-no-slashes", "POST", "http:127.0.0.1:TRAP/v1"),
    ("absolute-unicode-host", "POST", "http://xn--e1afmkfd.example:TRAP/v1"),
    ("authority-connect", "CONNECT", "127.0.0.1:TRAP"),
    ("authority-connect-ipv6", "CONNECT", "[::1]:TRAP"),
    ("authority-post", "POST", "127.0.0.1:TRAP"),
    ("asterisk", "OPTIONS", "*"),
    ("encoded-at-first", "POST", "%40127.0.0.1:TRAP/v1/chat/completions"),
    ("encoded-slashes-first", "POST", "%2F%2F127.0.0.1:TRAP/v1"),
    ("encoded-network-path", "POST", "/%2F127.0.0.1:TRAP/v1/chat/completions"),
    ("encoded-network-path-lower", "POST", "/%2f%2f127.0.0.1:TRAP/v1"),
    ("encoded-backslash", "POST", "/%5C127.0.0.1:TRAP/v1/chat/completions"),
    ("encoded-backslash-lower", "POST", "/%5c%5c127.0.0.1:TRAP/v1"),
    ("dot-dot", "POST", "/../../admin"),
    ("dot-dot-inside", "POST", "/v1/../../admin"),
    ("dot", "POST", "/v1/./chat/completions"),
    ("dot-dot-end", "POST", "/v1/.."),
    ("encoded-dot-dot", "POST", "/v1/%2e%2e/%2E%2E/admin"),
    ("half-encoded-dot-dot", "POST", "/v1/.%2e/admin"),
    ("dot-dot-encoded-slash", "POST", "/v1/..%2F..%2Fadmin"),
    ("double-encoded-dot-dot", "POST", "/v1/%252e%252e/%252e%252e/admin"),
    ("double-encoded-slash", "POST", "/%252F127.0.0.1:TRAP/v1"),
    ("fragment", "POST", "/v1/chat/completions#@127.0.0.1:TRAP"),
    ("fragment-after-query", "POST", "/v1/chat/completions?a=1#x"),
    ("encoded-nul", "POST", "/v1/chat/completions%00.json"),
    ("encoded-crlf", "POST", "/v1/chat%0d%0aHost:%20127.0.0.1:TRAP%0d%0a"),
    ("encoded-tab", "POST", "/v1/chat%09completions"),
    ("long", "POST", "/v1/" + "a" * 9000),
]

# Targets that stay on the upstream: mapped under its base path, byte for byte.
MAPPED = [
    ("plain", "/v1/chat/completions", "/v1/chat/completions"),
    (
        "query-at",
        "/v1/chat/completions?x=@127.0.0.1:TRAP",
        "/v1/chat/completions?x=@127.0.0.1:TRAP",
    ),
    ("query-url", "/v1/x?next=http://127.0.0.1:TRAP/", "/v1/x?next=http://127.0.0.1:TRAP/"),
    ("at-in-path", "/@127.0.0.1:TRAP/v1", "/@127.0.0.1:TRAP/v1"),
    ("encoded-at", "/%40127.0.0.1:TRAP/v1", "/%40127.0.0.1:TRAP/v1"),
    ("params", "/v1;@127.0.0.1:TRAP/chat", "/v1;@127.0.0.1:TRAP/chat"),
    ("colon", "/:TRAP/v1", "/:TRAP/v1"),
    ("inner-double-slash", "/v1//127.0.0.1:TRAP/x", "/v1//127.0.0.1:TRAP/x"),
    ("inner-encoded-slashes", "/v1/%2F%2F127.0.0.1:TRAP", "/v1/%2F%2F127.0.0.1:TRAP"),
    ("dots-in-a-name", "/v1/files/a..b/...", "/v1/files/a..b/..."),
    ("percent-escapes", "/v1/a%20b%25c", "/v1/a%20b%25c"),
    ("empty-query", "/v1/models?", "/v1/models"),
]


def _at(text: str, bench: Bench) -> str:
    return text.replace("TRAP", str(bench.trap.port))


@pytest.mark.parametrize(
    ("method", "target"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_hostile_targets_are_refused(bench: Bench, method: str, target: str) -> None:
    before = len(bench.upstream.requests)
    reply = bench.send(request(method, _at(target, bench).encode()))
    refused(reply)
    assert len(bench.upstream.requests) == before
    assert bench.trap.connections == 0


@pytest.mark.parametrize(("target", "path"), [c[1:] for c in MAPPED], ids=[c[0] for c in MAPPED])
def test_odd_targets_stay_on_the_upstream(bench: Bench, target: str, path: str) -> None:
    before = len(bench.upstream.requests)
    reply = bench.send(request("POST", _at(target, bench).encode()))
    assert (reply.status, reply.body) == (200, b'{"from": "upstream"}')
    (seen,) = bench.upstream.requests[before:]
    assert seen.target == BASE + _at(path, bench)
    assert seen.header("host") == [f"127.0.0.1:{bench.upstream.port}"]
    assert seen.header("authorization") == [BASIC]
    assert seen.body == BODY
    assert bench.trap.connections == 0


@pytest.mark.parametrize(
    "target",
    [
        b"/v1/chat\tcompletions",
        b"/v1/chat\rcompletions",
        b"/v1/chat\x00completions",
        b"/v1/chat completions",
        "/v1/ch\u00e4t".encode(),
        "http://\u0435x.example:TRAP/v1".encode(),
        b"/v1/" + b"a" * 70000,
    ],
    ids=["tab", "cr", "nul", "space", "utf-8", "unicode-host", "overlong"],
)
def test_targets_http_cannot_carry_are_a_400(bench: Bench, target: bytes) -> None:
    """What HTTP/1.1 itself forbids in a request line is refused by the server before the
    proxy sees it: a 400, nothing sent on."""
    before = len(bench.upstream.requests)
    target = target.replace(b"TRAP", str(bench.trap.port).encode())
    reply = bench.send(request("POST", target))
    assert reply.status == 400
    assert len(bench.upstream.requests) == before
    assert bench.trap.connections == 0


@pytest.mark.parametrize(
    "headers",
    [
        [b"X-Forwarded-Host: 127.0.0.1:TRAP", b"Forwarded: host=127.0.0.1:TRAP"],
        [b"X-Original-URL: http://127.0.0.1:TRAP/", b"X-Rewrite-URL: //127.0.0.1:TRAP/"],
        [b"Proxy-Authorization: Basic dTpw", b"Proxy-Connection: keep-alive"],
    ],
    ids=["forwarded", "rewrite", "proxy-headers"],
)
def test_headers_naming_another_host_change_nothing(bench: Bench, headers: list[bytes]) -> None:
    before = len(bench.upstream.requests)
    port = str(bench.trap.port).encode()
    sent = [h.replace(b"TRAP", port) for h in headers]
    reply = bench.send(request("POST", b"/v1/chat/completions", *sent, host=b"127.0.0.1:" + port))
    assert reply.status == 200 and reply.body == b'{"from": "upstream"}'
    (seen,) = bench.upstream.requests[before:]
    assert seen.target == f"{BASE}/v1/chat/completions"
    assert seen.header("host") == [f"127.0.0.1:{bench.upstream.port}"]
    assert not seen.header("proxy-authorization") and not seen.header("proxy-connection")
    assert bench.trap.connections == 0


def test_a_smuggled_request_stays_body(bench: Bench) -> None:
    """Content-Length beside a chunked body: the proxy reads one request and sends one,
    framed by its own Content-Length, so no second request reaches the upstream."""
    smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    chunk = b'{"a": 1}' + b"\r\n\r\n" + smuggled
    body = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n0\r\n\r\n"
    head = [
        b"POST /v1/chat/completions HTTP/1.1",
        b"Host: proxy",
        b"Content-Length: 4",
        b"Transfer-Encoding: chunked",
        b"Connection: close",
    ]
    before = len(bench.upstream.requests)
    reply = bench.send(b"\r\n".join(head) + b"\r\n\r\n" + body)
    seen = bench.upstream.requests[before:]
    assert all(b"/smuggled" not in s.head.split(b"\r\n")[0] for s in seen)
    assert reply.status in (200, 400) and len(seen) <= 1
    if seen:
        assert seen[0].body == chunk
        assert seen[0].header("content-length") == [str(len(chunk))]
        assert not seen[0].header("transfer-encoding")


def test_a_redirect_is_passed_back_not_followed(tmp_path: Path) -> None:
    """An upstream's redirect goes to the client as it came: the proxy never follows it,
    so the upstream's credentials never go with a request to where it points."""
    trap = Listener("trap", TRAP_ANSWER)
    upstream = Listener(
        "upstream", answer("307 Temporary Redirect", b"{}", f"location: {trap.url}/v1/x")
    )
    try:
        app = ProxyApp(f"http://{USER}:{QUOTED}@127.0.0.1:{upstream.port}", tmp_path)
        with Running(app, lifespan="on") as proxy:
            reply = raw(int(proxy.url.rsplit(":", 1)[1]), request("POST", b"/v1/chat/completions"))
    finally:
        upstream.close()
        trap.close()
    assert reply.status == 307 and f"{trap.url}/v1/x".encode() in reply.head
    assert trap.connections == 0


# -- credentials ------------------------------------------------------------------------


def test_credentials_go_as_basic_auth_to_the_upstream_only(bench: Bench) -> None:
    before = len(bench.upstream.requests)
    reply = bench.send(request("POST", b"/v1/chat/completions"))
    assert reply.status == 200
    (seen,) = bench.upstream.requests[before:]
    # The configured credentials replace the client's own Authorization, as the user
    # asked by writing them into --upstream; they are never part of the request-target.
    assert seen.header("authorization") == [BASIC]
    no_secret(seen.head.split(b"\r\n")[0])
    no_secret("\n".join(bench.log))
    for path in bench.folder.rglob("*"):
        no_secret(path.read_bytes())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_upstream_down_says_no_credentials(tmp_path: Path) -> None:
    port = _free_port()
    log: list[str] = []
    app = ProxyApp(f"http://{USER}:{QUOTED}@127.0.0.1:{port}/v1", tmp_path, log=log.append)
    with Running(app, lifespan="on") as proxy:
        reply = raw(int(proxy.url.rsplit(":", 1)[1]), request("POST", b"/v1/chat/completions"))
    assert reply.status == 502
    error = orjson.loads(reply.body)["error"]
    assert error["code"] == "bad_gateway"
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in error["message"]
    no_secret(reply.head + reply.body)
    no_secret("\n".join(log))
    assert log and list(tmp_path.iterdir()) == []


def test_upstream_timeout_says_no_credentials(tmp_path: Path) -> None:
    upstream = Listener("upstream", None)  # reads the request, never answers
    log: list[str] = []
    configured = f"http://{USER}:{QUOTED}@127.0.0.1:{upstream.port}"
    app = ProxyApp(configured, tmp_path, read_timeout=1.0, log=log.append)
    try:
        with Running(app, lifespan="on") as proxy:
            reply = raw(int(proxy.url.rsplit(":", 1)[1]), request("POST", b"/v1/responses"))
    finally:
        upstream.close()
    assert reply.status == 504
    assert orjson.loads(reply.body)["error"]["code"] == "timeout"
    assert upstream.requests[0].header("authorization") == [BASIC]
    no_secret(reply.head + reply.body)
    no_secret("\n".join(log))
    assert list(tmp_path.iterdir()) == []


def test_proxy_command_never_says_the_password(tmp_path: Path) -> None:
    """The command line as a user runs it: its banner, its lines per request and its
    errors on stderr, and the files it records, with an upstream that is down."""
    port = _free_port()
    command = [sys.executable, "-m", "chatx", "proxy", "--port", "0", "--record", str(tmp_path)]
    command += ["--upstream", f"http://{USER}:{QUOTED}@127.0.0.1:{port}/v1"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        banner = process.stderr.readline()
        try:
            url = banner.split(" -> ")[0].rsplit(" ", 1)[1]
            assert banner.startswith("chatx: proxy: http://127.0.0.1:"), banner
            reply = raw(int(url.rsplit(":", 1)[1]), request("POST", b"/v1/chat/completions"))
        finally:
            process.terminate()
        err = banner + process.stderr.read()
    assert reply.status == 502
    assert f"-> http://127.0.0.1:{port}/v1 (Basic auth as {USER})" in banner
    assert f"POST /v1/chat/completions: 502 chatx proxy: upstream http://127.0.0.1:{port}" in err
    no_secret(err)
    no_secret(reply.body)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "url",
    [
        f"ftp://{USER}:{QUOTED}@127.0.0.1/v1",
        f"http://{USER}:{PASSWORD}@127.0.0.1/v1",  # not escaped: it cannot be read as one
        f"http://{USER}:{QUOTED}@/v1",
        f"http://{USER}:{QUOTED}@127.0.0.1/v1#x",
        f"http://{USER}:{QUOTED}@127.0.0.1:99999/v1",
    ],
    ids=["scheme", "unescaped", "no-host", "fragment", "port"],
)
@pytest.mark.parametrize("option", ["proxy", "capture"])
def test_a_bad_url_is_refused_without_saying_it(tmp_path: Path, url: str, option: str) -> None:
    if option == "proxy":
        args = ["proxy", "--upstream", url, "--record", str(tmp_path / "rec"), "--port", "0"]
    else:
        args = ["capture", "--base-url", url, "-d", "{}", "-o", str(tmp_path / "out.sse")]
    result = run(args)
    assert result.code == 2, result.err
    assert result.err.startswith("chatx: error: --")
    no_secret(result.err)
    assert list(tmp_path.iterdir()) == []


def test_capture_sends_the_credentials_and_never_says_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stream = b'data: {"choices": []}\n\ndata: [DONE]\n\n'
    upstream = Listener("upstream", answer("200 OK", stream, "x-kind: sse"))
    out = tmp_path / "out.sse"
    try:
        args = ["capture", "--base-url", f"http://{USER}:{QUOTED}@127.0.0.1:{upstream.port}/v1"]
        result = run([*args, "-d", '{"model": "m"}', "-o", str(out)])
    finally:
        upstream.close()
    assert result.code == 0, result.err
    (seen,) = upstream.requests
    assert seen.target == "/v1/chat/completions"
    assert seen.header("authorization") == [BASIC]
    assert out.read_bytes() == stream
    no_secret(result.err)
    for path in tmp_path.rglob("*"):
        no_secret(path.read_bytes())


@pytest.mark.parametrize("down", ["refused", "error-status"])
def test_capture_errors_never_say_the_credentials(tmp_path: Path, down: str) -> None:
    upstream = None
    if down == "refused":
        base = f"http://{USER}:{QUOTED}@127.0.0.1:{_free_port()}/v1"
    else:
        upstream = Listener("upstream", answer("500 Internal Server Error", b'{"error": {}}'))
        base = f"http://{USER}:{QUOTED}@127.0.0.1:{upstream.port}/v1"
    try:
        result = run(["capture", "--base-url", base, "-d", "{}", "-o", str(tmp_path / "o.sse")])
    finally:
        if upstream is not None:
            upstream.close()
    assert result.code == 2
    assert "error: POST http://127.0.0.1:" in result.err
    no_secret(result.err)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_answer_is_relayed_and_not_recorded(tmp_path: Path) -> None:
    """A 200 with no body is passed back as it came, and leaves no empty capture (nor a
    request file) behind in the recording directory."""
    upstream = Listener("upstream", answer("200 OK", b"", "x-kind: empty"))
    log: list[str] = []
    try:
        app = ProxyApp(f"http://127.0.0.1:{upstream.port}", tmp_path, log=log.append)
        with Running(app, lifespan="on") as proxy:
            reply = raw(int(proxy.url.rsplit(":", 1)[1]), request("POST", b"/v1/chat/completions"))
    finally:
        upstream.close()
    assert (reply.status, reply.body) == (200, b"")
    assert list(tmp_path.iterdir()) == []
    assert any("not recorded" in line for line in log), log

"""Trust III on the gateway's paths (``chatx proxy --upstream-api``): a translated request
goes to the upstream alone, to the upstream API's own path under its base, whatever the
client's target, headers or body name; the credentials in ``--upstream`` go to it alone
and are never said; no credential reaches a recorded file, the store or an answer; the
store is never opened through a symlink put where it goes.

The upstream and a trap are the raw loopback listeners of the proxy's own confinement
test; each hostile request goes to the gateway as raw bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from chatx.live.endpoints import by_name
from chatx.live.proxy import ProxyApp
from chatx.live.store import Store
from tests.live.support import Running
from tests.live.toy_requests import installing
from tests.trust.test_proxy_confinement import (
    BASE,
    BASIC,
    QUOTED,
    REFUSED,
    USER,
    Listener,
    Reply,
    answer,
    no_secret,
    raw,
    refused,
)

CLIENT_KEY = "sk-client-key-SECRET-4242"
CHAT_ANSWER = answer(
    "200 OK",
    orjson.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "from the upstream"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
        }
    ),
)


@dataclass
class Gate:
    upstream: Listener
    trap: Listener
    proxy: Running
    log: list[str]
    folder: Path
    store: Path

    def send(
        self, target: str, body: dict[str, object], *headers: bytes, method: str = "POST"
    ) -> Reply:
        data = orjson.dumps(body)
        lines = [f"{method} ".encode() + target.encode() + b" HTTP/1.1", b"Host: proxy", *headers]
        lines += [
            b"Content-Type: application/json",
            b"Authorization: Bearer " + CLIENT_KEY.encode(),
            f"Content-Length: {len(data)}".encode(),
            b"Connection: close",
        ]
        return raw(int(self.proxy.url.rsplit(":", 1)[1]), b"\r\n".join(lines) + b"\r\n\r\n" + data)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gate]:
    upstream = Listener("upstream", CHAT_ANSWER)
    trap = Listener("trap", CHAT_ANSWER)
    folder = tmp_path_factory.mktemp("recorded")
    store = tmp_path_factory.mktemp("state") / "responses.sqlite"
    log: list[str] = []
    configured = f"http://{USER}:{QUOTED}@127.0.0.1:{upstream.port}{BASE}"
    with installing():
        app = ProxyApp(
            configured,
            folder,
            log=log.append,
            upstream_api=by_name("chat"),
            store=Store(store),
            lost=log.append,
        )
        try:
            with Running(app, lifespan="on") as proxy:
                yield Gate(upstream, trap, proxy, log, folder, store)
        finally:
            upstream.close()
            trap.close()
    assert trap.connections == 0


def _at(text: str, gate: Gate) -> str:
    return text.replace("TRAP", str(gate.trap.port))


@pytest.mark.parametrize(
    ("method", "target"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_hostile_targets_are_refused_by_the_gateway(gate: Gate, method: str, target: str) -> None:
    before = len(gate.upstream.requests)
    reply = gate.send(_at(target, gate), {"model": "m", "input": "hi"}, method=method)
    refused(reply)
    assert len(gate.upstream.requests) == before


@pytest.mark.parametrize(
    "target",
    [
        "/v1/responses",
        "/v1/responses?next=http://127.0.0.1:TRAP/v1/chat/completions",
        "/v1/responses?@127.0.0.1:TRAP",
    ],
    ids=["plain", "query-url", "query-at"],
)
def test_a_translated_request_goes_to_the_upstream_apis_path_alone(gate: Gate, target: str) -> None:
    before = len(gate.upstream.requests)
    body = {
        "model": "http://127.0.0.1:TRAP/v1",
        "input": "@127.0.0.1:TRAP",
        "tools": [{"type": "mcp", "server_url": _at("http://127.0.0.1:TRAP/mcp", gate)}],
    }
    reply = gate.send(
        _at(target, gate), body, f"X-Forwarded-Host: 127.0.0.1:{gate.trap.port}".encode()
    )
    assert reply.status == 200, reply.body
    assert orjson.loads(reply.body)["output"][0]["content"][0]["text"] == "from the upstream"
    (seen,) = gate.upstream.requests[before:]
    assert seen.target == f"{BASE}/v1/chat/completions"
    assert seen.header("host") == [f"127.0.0.1:{gate.upstream.port}"]
    # the credentials of --upstream replace the client's key, to the upstream alone
    assert seen.header("authorization") == [BASIC]
    assert CLIENT_KEY.encode() not in seen.head
    assert gate.trap.connections == 0


def test_no_credential_reaches_a_file_the_store_or_a_line(gate: Gate) -> None:
    body = {
        "model": "m",
        "input": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": "sk-proj-SECRETSECRETSECRET12345"},
        ],
        "metadata": {"api_key": "sk-body-SECRET-0000000000"},
    }
    reply = gate.send("/v1/responses", body)
    assert reply.status == 200
    rid = orjson.loads(reply.body)["id"]
    files = [p for p in gate.folder.iterdir()] + [
        p for p in gate.store.parent.iterdir() if p.is_file()
    ]
    assert any(p.name.endswith(".request.json") for p in files)
    for path in files:
        data = path.read_bytes()
        no_secret(data)
        assert CLIENT_KEY.encode() not in data
        assert b"SECRETSECRETSECRET" not in data and b"sk-body-SECRET" not in data
    for line in gate.log:
        no_secret(line)
        assert CLIENT_KEY not in line
    no_secret(reply.body)
    kept = Store(gate.store).items(rid)
    assert kept is not None and {"role": "user", "content": "hi"} in kept


def test_an_unreachable_upstream_says_no_credentials(tmp_path: Path) -> None:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    log: list[str] = []
    configured = f"http://{USER}:{QUOTED}@127.0.0.1:{port}{BASE}"
    with installing():
        app = ProxyApp(configured, tmp_path, log=log.append, upstream_api=by_name("chat"))
        with Running(app, lifespan="on") as proxy:
            import httpx2

            got = httpx2.post(
                f"{proxy.url}/v1/responses",
                content=b'{"model": "m", "input": "hi"}',
                headers={"authorization": f"Bearer {CLIENT_KEY}"},
            )
    assert got.status_code == 502
    assert got.json()["error"]["code"] == "bad_gateway"
    for said in (got.text, *log):
        no_secret(said)
        assert CLIENT_KEY not in said
    assert list(tmp_path.iterdir()) == []


def test_the_store_is_never_opened_through_a_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched")
    planted = tmp_path / "responses.sqlite"
    planted.symlink_to(victim)
    with pytest.raises(OSError, match="symlink"):
        Store(planted)
    assert victim.read_bytes() == b"untouched"
    fifo = tmp_path / "fifo.sqlite"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO"):
        Store(fifo)


def test_the_store_is_its_owners_alone(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "responses.sqlite"
    Store(path).close()
    assert path.stat().st_mode & 0o777 == 0o600

"""Trust III for ``chatx serve --upstream``: a miss goes to the upstream and nowhere
else, under its base path, as the API's own path; the credentials in ``--upstream`` go
to it alone and the client's key is never written into the recording folder.

The same raw request-targets as ``chatx proxy``'s confinement test are sent to serve,
whose upstream and trap are real loopback servers; the trap never sees a connection."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatx.live.app import ServeApp
from chatx.live.served_captures import load
from chatx.live.upstream import Upstream
from tests.live.support import Running
from tests.trust.test_proxy_confinement import (
    BASE,
    BASIC,
    MAPPED,
    QUOTED,
    REFUSED,
    SECRETS,
    TRAP_ANSWER,
    UPSTREAM_ANSWER,
    USER,
    Listener,
    raw,
    request,
)

CLIENT_KEY = b"sk-client-key"


@dataclass
class Bench:
    upstream: Listener
    trap: Listener
    serve: Running
    folder: Path
    log: list[str]

    def send(self, method: str, target: str) -> int:
        target = target.replace("TRAP", str(self.trap.port))
        port = int(self.serve.url.rsplit(":", 1)[1])
        return raw(port, request(method, target.encode())).status


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    upstream = Listener("upstream", UPSTREAM_ANSWER)
    trap = Listener("trap", TRAP_ANSWER)
    folder = tmp_path_factory.mktemp("recorded")
    log: list[str] = []
    configured = f"http://{USER}:{QUOTED}@127.0.0.1:{upstream.port}{BASE}"
    app = ServeApp(
        load([str(folder)], none_is_fine=True),
        on_miss="upstream",
        upstream=Upstream.parse(configured, "--upstream"),
        record=folder,
        record_mode="new",
        log=log.append,
    )
    try:
        with Running(app, lifespan="on") as serve:
            yield Bench(upstream, trap, serve, folder, log)
    finally:
        upstream.close()
        trap.close()
    assert trap.connections == 0
    for path in folder.iterdir():  # what was recorded holds no key, the client's or ours
        data = path.read_bytes()
        assert CLIENT_KEY not in data
        for secret in SECRETS:
            assert secret.encode() not in data
    for line in log:
        for secret in SECRETS:
            assert secret not in line


@pytest.mark.parametrize(
    ("method", "target"),
    [c[1:] for c in REFUSED] + [("POST", c[1]) for c in MAPPED if "chat" not in c[1]],
    ids=[c[0] for c in REFUSED] + [f"mapped-{c[0]}" for c in MAPPED if "chat" not in c[1]],
)
def test_a_target_that_is_no_api_path_is_never_forwarded(
    bench: Bench, method: str, target: str
) -> None:
    before = len(bench.upstream.requests)
    assert bench.send(method, target) >= 400
    assert len(bench.upstream.requests) == before
    assert bench.trap.connections == 0


@pytest.mark.parametrize(
    "target",
    [
        "/v1/chat/completions",
        "/v1/chat/completions/",
        "/v1/chat/completions?x=@127.0.0.1:TRAP",
        "/v1/messages",
        "/v1/responses",
    ],
)
def test_a_miss_goes_to_the_upstream_under_its_base_with_its_credentials(
    bench: Bench, target: str
) -> None:
    before = len(bench.upstream.requests)
    assert bench.send("POST", target) == 200
    seen = bench.upstream.requests[before:]
    assert len(seen) == 1
    path = target.replace("TRAP", str(bench.trap.port)).rstrip("/")
    assert seen[0].target == BASE + path
    assert seen[0].header("authorization") == [BASIC]
    assert seen[0].header("host") == [f"127.0.0.1:{bench.upstream.port}"]
    assert bench.trap.connections == 0

"""Shared by the tests of ``chatx serve``, ``proxy`` and ``capture``: uvicorn serving an
app in a thread on a free port, and what a client reconstructs from a capture."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import orjson

from chatx.collect import DEFAULT_TARGET, collect
from chatx.collect.streams import streams_of
from chatx.live import server
from chatx.live.app import ServeApp
from chatx.live.endpoints import endpoints
from chatx.live.served_captures import load as load_captures
from chatx.reading.framing import load
from tests.paths import ROOT

ROOT = ROOT
FIXTURES = ROOT / "fixtures"
# The fixtures of every registered format that an API of chatx serve speaks.
DIRS = [str(FIXTURES / e.format) for e in endpoints() if (FIXTURES / e.format).is_dir()]
TIMEOUT = 30


class Running:
    """An ASGI app served by uvicorn in a thread, on a free port of 127.0.0.1."""

    def __init__(self, app: Any, lifespan: server.Lifespan = "off") -> None:
        self.sock = server.bind("127.0.0.1", 0)
        self.url = server.url(self.sock)
        self.server = server.make_server(app, "test", lifespan=lifespan)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Running:
        self.thread.start()
        deadline = time.monotonic() + TIMEOUT
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(TIMEOUT)
        self.sock.close()


@contextmanager
def serving(paths: list[str] | None = None, **options: Any) -> Iterator[tuple[Running, ServeApp]]:
    app = ServeApp(load_captures(paths or DIRS), **options)
    with Running(app) as running:
        yield running, app


def post(url: str, body: Any, capture: str | None = None, **headers: str) -> httpx2.Response:
    sent = dict(headers)
    if capture is not None:
        sent["x-chatx-capture"] = capture
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return httpx2.post(url, content=content, headers=sent, timeout=TIMEOUT)


def final(data: bytes, fmt: str, name: str = "<capture>") -> dict[str, Any]:
    """What ``chatx collect --as FMT`` builds from a capture's bytes."""
    side = load(data, name)
    return collect(streams_of(side)[0], DEFAULT_TARGET[fmt], source=side.format)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def plain(value: Any) -> Any:
    """A value as JSON says it, without what the SDK's types add when they rebuild one:
    fields left null, and ``parsed``/``parsed_arguments`` (structured outputs)."""
    if isinstance(value, dict):
        return {
            k: plain(v)
            for k, v in value.items()
            if v is not None and k not in ("parsed", "parsed_arguments")
        }
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value

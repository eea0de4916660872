"""A pytest plugin (installed with chatx: the ``pytest11`` entry point ``chatx``) that
serves captures to the test suite's own clients.

The fixture ``chatx_serve`` starts ``chatx serve`` in a thread on a free loopback port
over the captures a test names, and points the SDKs at it for the test's length:
``OPENAI_BASE_URL`` (``URL/v1``) and ``ANTHROPIC_BASE_URL`` (``URL``), and a placeholder
``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` where none is set, since the SDKs refuse to
start without one. The captures are named by the marker, closest first, else by the
``chatx_captures`` ini option (paths relative to the rootdir)::

    @pytest.mark.chatx_captures("tests/captures", on_miss="error")
    def test_weather_agent(chatx_serve):
        assert run_agent("weather in Paris?") == "sunny"

The marker's keywords are :class:`~chatx.live.app.ServeApp`'s: ``on_miss``, ``delay``
(seconds), ``cut_after``, ``status``, ``timing``, ``speed``, ``upstream`` with
``record_mode`` (record on miss into the first path, a directory). Nothing is imported
from chatx's server until the fixture is used: a suite that never asks for it pays for
nothing, and one without ``chatx[serve]`` is told to install it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MARKER = "chatx_captures"
_START = 30.0  # seconds the server gets to start


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        MARKER, "Captures chatx_serve replays when a test names none (paths).", type="paths"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*paths, **options): the captures (and chatx serve options) the "
        "chatx_serve fixture replays",
    )


class Served:
    """A running ``chatx serve``: ``url`` (``http://127.0.0.1:PORT``), ``base_url``
    (``url + "/v1"``, OpenAI's) and the app (its ``requests`` count, its captures)."""

    def __init__(self, app: Any) -> None:
        from chatx.live import server

        self.app = app
        self.sock = server.bind("127.0.0.1", 0)
        self.url = server.url(self.sock)
        self.base_url = f"{self.url}/v1"
        self.server = server.make_server(app, "serve", lifespan="on")
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + _START
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("chatx serve did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(_START)
        self.sock.close()


def _paths(request: pytest.FixtureRequest) -> tuple[list[str], dict[str, Any]]:
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None and marker.args:
        return [str(p) for p in marker.args], dict(marker.kwargs)
    given = request.config.getini(MARKER)
    options = dict(marker.kwargs) if marker is not None else {}
    if not given:
        raise pytest.UsageError(
            f"chatx_serve: name the captures, @pytest.mark.{MARKER}('DIR') or "
            f"{MARKER} = DIR in the pytest configuration"
        )
    return [str(p) for p in given], options


def _app(paths: list[str], options: dict[str, Any]) -> Any:
    from chatx.errors import ChatxError
    from chatx.live import served_captures, server
    from chatx.live.app import ServeApp
    from chatx.live.upstream import Upstream

    try:
        server.require("serve", "uvicorn", "anyio", "httpx2")
        upstream = options.pop("upstream", None)
        if upstream is not None:
            options["upstream"] = Upstream.parse(upstream, "chatx_captures upstream")
            options.setdefault("on_miss", "upstream")
            options.setdefault("record_mode", "new")
            options.setdefault("record", Path(paths[0]))
            Path(paths[0]).mkdir(parents=True, exist_ok=True)
        loaded = served_captures.load(paths, none_is_fine=upstream is not None)
        return ServeApp(loaded, **options)
    except ChatxError as exc:
        raise pytest.UsageError(f"chatx_serve: {exc}") from None


@pytest.fixture
def chatx_serve(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Served]:
    """``chatx serve`` over the test's captures, the SDKs pointed at it."""
    paths, options = _paths(request)
    served = Served(_app(paths, options))
    served.start()
    monkeypatch.setenv("OPENAI_BASE_URL", served.base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", served.url)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        if not os.environ.get(key):
            monkeypatch.setenv(key, "chatx-serve")
    try:
        yield served
    finally:
        served.stop()

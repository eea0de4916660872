"""``chatx proxy``: forward an app's requests to its provider and record every stream
(chatx.live.proxy)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chatx.cli.formats import HOST, ListenHost, ListenPort, QuietServer
from chatx.errors import UsageError
from chatx.textsafe import escape_text

if TYPE_CHECKING:
    from chatx.codecs.base import HttpApi
    from chatx.live.store import Store


def proxy(
    upstream: Annotated[
        str,
        typer.Option(
            "--upstream",
            help="The provider's base URL, e.g. https://api.openai.com (request paths are "
            "appended as they come; a base ending in /v1 is not doubled).",
            metavar="URL",
        ),
    ],
    record: Annotated[
        Path | None,
        typer.Option(
            "--record",
            help="Directory the captures are written into (none: nothing is recorded).",
            metavar="DIR",
        ),
    ] = None,
    upstream_api: Annotated[
        str | None,
        typer.Option(
            "--upstream-api",
            help="The API the upstream speaks (chat, responses, anthropic, llama-stack, gemini): "
            "requests of the other APIs are translated into it, their answers back.",
            metavar="API",
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="CLIENT=UPSTREAM: send the upstream this model for a request naming CLIENT "
            "(* matches any text; repeatable, the first rule that matches counts).",
            metavar="CLIENT=UPSTREAM",
        ),
    ] = None,
    upstream_key_env: Annotated[
        str | None,
        typer.Option(
            "--upstream-key-env",
            help="Send the upstream the key in this environment variable, in place of the "
            "client's.",
            metavar="VAR",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Refuse (400) a request that the upstream's API cannot hold whole, naming "
            "what it would lose.",
        ),
    ] = False,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="The SQLite file that keeps the responses served to Responses clients "
            "(previous_response_id, GET /v1/responses/ID), or none. Default: "
            "responses.sqlite in the user's data directory.",
            metavar="PATH|none",
        ),
    ] = None,
    host: ListenHost = HOST,
    port: ListenPort = 8080,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate", help="Print each stream's rule findings on stderr when it ends."
        ),
    ] = False,
    connect_timeout: Annotated[
        float,
        typer.Option("--connect-timeout", help="Seconds to connect to the upstream.", metavar="S"),
    ] = 10.0,
    read_timeout: Annotated[
        float,
        typer.Option(
            "--read-timeout",
            help="Seconds to wait for the upstream's next bytes (0: no limit).",
            metavar="S",
        ),
    ] = 600.0,
    quiet: QuietServer = False,
) -> int:
    from chatx.live import server
    from chatx.live.gateway_plan import ModelMap
    from chatx.live.proxy import ProxyApp
    from chatx.live.upstream import Upstream

    server.require("proxy", "uvicorn", "httpx2")
    target = Upstream.parse(upstream, "--upstream")  # before anything is created
    if connect_timeout <= 0 or read_timeout < 0:
        raise UsageError("--connect-timeout is more than 0 seconds, --read-timeout 0 or more")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port: 0 to 65535 (not {port})")
    gateway = _gateway(upstream_api, model or [], upstream_key_env, strict, store)
    if record is not None:
        try:
            record.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"--record {record}: cannot create it: {exc.strerror or exc}"
            ) from None
    kept = gateway.open_store()
    sock = server.bind(host, port)
    app = ProxyApp(
        target,
        record,
        validate=validate,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout or None,
        log=None if quiet else _say,
        findings=_line,
        upstream_api=gateway.api,
        models=ModelMap.parse(model or []),
        upstream_key=gateway.key,
        strict=strict,
        store=kept,
        lost=_say,
    )
    app.debug = server.debugging()
    recording = f"recording into {record}" if record is not None else "not recording"
    speaks = f" ({gateway.api.api}, every API translated)" if gateway.api is not None else ""
    banner = f"{server.url(sock)} -> {target.described}{speaks}, {recording}; Ctrl-C to stop"
    server.run(app, sock, "proxy", lifespan="on", ready=lambda: _say(banner))
    return 0


class _Gateway:
    """The gateway's options, checked before anything is created or bound."""

    def __init__(
        self, api: HttpApi | None, key: str | None, store: Path | None, kept: bool
    ) -> None:
        self.api, self.key, self.store, self.kept = api, key, store, kept

    def open_store(self) -> Store | None:
        import sqlite3

        from chatx.live.store import Store

        if self.api is None or not self.kept or self.store is None:
            return None
        try:
            return Store(self.store)
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"--store {self.store}: cannot open it: {exc}") from None


def _gateway(
    api: str | None, models: list[str], key_env: str | None, strict: bool, store: str | None
) -> _Gateway:
    from chatx.live.endpoints import by_name
    from chatx.live.gateway_plan import ModelMap
    from chatx.live.store import default_path

    if api is None:
        given = [
            name
            for name, value in (
                ("--model", models),
                ("--upstream-key-env", key_env),
                ("--strict", strict),
                ("--store", store),
            )
            if value
        ]
        if given:
            raise UsageError(f"{', '.join(given)}: only with --upstream-api")
        return _Gateway(None, None, None, False)
    try:
        endpoint = by_name(api)
    except UsageError as exc:
        raise UsageError(str(exc).replace("--api:", "--upstream-api:", 1)) from None
    ModelMap.parse(models)  # a bad rule is said before anything starts
    key = None
    if key_env is not None:
        key = os.environ.get(key_env)
        if not key:
            raise UsageError(f"--upstream-key-env: ${key_env} is not set")
    kept = store is None or store.lower() != "none"
    path = Path(store) if store is not None and kept else default_path()
    return _Gateway(endpoint, key, path, kept)


def _say(line: str) -> None:
    _line(f"chatx: proxy: {escape_text(line)}")


def _line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()

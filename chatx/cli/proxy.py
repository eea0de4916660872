"""``chatx proxy``: forward an app's requests to its provider and record every stream
(chatx.live.proxy)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from chatx.errors import UsageError
from chatx.textsafe import escape_text

HOST = "127.0.0.1"


def register(app: typer.Typer) -> None:
    app.command(
        "proxy",
        help="Forward requests to --upstream unchanged, stream the answers back, and record "
        "each one into --record DIR as a capture (its request beside it, secrets left out).",
    )(proxy)


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
        Path,
        typer.Option("--record", help="Directory the captures are written into.", metavar="DIR"),
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = HOST,
    port: Annotated[
        int, typer.Option("--port", "-p", help="Port to listen on (0: a free one, said on stderr).")
    ] = 8080,
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
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Do not print a line per request.")
    ] = False,
) -> int:
    from chatx.live import server
    from chatx.live.proxy import ProxyApp
    from chatx.live.upstream import Upstream

    server.require("proxy", "uvicorn", "httpx2")
    target = Upstream.parse(upstream, "--upstream")  # before anything is created
    if connect_timeout <= 0 or read_timeout < 0:
        raise UsageError("--connect-timeout is more than 0 seconds, --read-timeout 0 or more")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port: 0 to 65535 (not {port})")
    try:
        record.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--record {record}: cannot create it: {exc.strerror or exc}") from None
    sock = server.bind(host, port)
    app = ProxyApp(
        target,
        record,
        validate=validate,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout or None,
        log=None if quiet else _say,
        findings=_line,
    )
    app.debug = server.debugging()
    banner = f"{server.url(sock)} -> {target.described}, recording into {record}; Ctrl-C to stop"
    server.run(app, sock, "proxy", lifespan="on", ready=lambda: _say(banner))
    return 0


def _say(line: str) -> None:
    _line(f"chatx: proxy: {escape_text(line)}")


def _line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()

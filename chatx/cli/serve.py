"""``chatx serve``: an OpenAI-compatible server that replays captures (chatx.live.app)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from chatx.errors import UsageError
from chatx.textsafe import escape_text

HOST = "127.0.0.1"
_SKIPPED_SHOWN = 5  # files a walk found that are no capture, said one by one


def register(app: typer.Typer) -> None:
    app.command(
        "serve",
        help="Replay captures as an OpenAI-compatible server (chat, Responses, Llama Stack): "
        "each request gets a capture transcoded into the API it called.",
    )(serve)


def serve(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Capture files or directories (walked for *.sse, *.jsonl, *.ndjson, *.json; "
            "NAME.request.json beside a capture is its recorded request).",
            show_default=False,
            metavar="PATH...",
        ),
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = HOST,
    port: Annotated[
        int, typer.Option("--port", "-p", help="Port to listen on (0: a free one, said on stderr).")
    ] = 8000,
    delay: Annotated[
        int, typer.Option("--delay", help="Wait MS milliseconds between events.", metavar="MS")
    ] = 0,
    cut_after: Annotated[
        int | None,
        typer.Option(
            "--cut-after", help="Drop the connection after N events of a stream.", metavar="N"
        ),
    ] = None,
    status: Annotated[
        int | None,
        typer.Option(
            "--status",
            help="Answer every API request with this HTTP error (400-599) and an "
            "error body in the shape of the API called.",
            metavar="CODE",
        ),
    ] = None,
    on_miss: Annotated[
        str,
        typer.Option(
            "--on-miss",
            help="A request no capture's recorded request matches: next (the next capture "
            "of its model, else in order) or error (a 400 naming the closest capture and "
            "the first difference).",
            metavar="next|error",
        ),
    ] = "next",
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Do not print a line per request.")
    ] = False,
) -> int:
    from chatx.live import captures, server
    from chatx.live.app import ServeApp
    from chatx.live.choose import ON_MISS
    from chatx.live.endpoints import endpoints

    server.require("serve", "uvicorn", "anyio")
    if delay < 0:
        raise UsageError("--delay: milliseconds, 0 or more")
    if cut_after is not None and cut_after < 0:
        raise UsageError("--cut-after: a number of events, 0 or more")
    if status is not None and not 400 <= status <= 599:
        raise UsageError(f"--status: an HTTP error status, 400 to 599 (not {status})")
    if on_miss not in ON_MISS:
        raise UsageError(f"--on-miss: next or error (not {on_miss!r})")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port: 0 to 65535 (not {port})")
    skipped: list[str] = []
    try:
        loaded = captures.load(paths, skipped)
    finally:  # said also when no capture is left
        for line in skipped[:_SKIPPED_SHOWN]:
            sys.stderr.write(f"chatx: warning: {escape_text(line)}\n")
        if len(skipped) > _SKIPPED_SHOWN:
            more = len(skipped) - _SKIPPED_SHOWN
            sys.stderr.write(f"chatx: warning: {more} more files that are no capture skipped\n")
    sock = server.bind(host, port)
    app = ServeApp(
        loaded,
        delay=delay / 1000,
        cut_after=cut_after,
        status=status,
        on_miss=on_miss,
        log=None if quiet else _say,
    )
    app.debug = server.debugging()
    where = server.url(sock)
    routes = ", ".join(e.path for e in endpoints())
    banner = f"{len(loaded)} captures on {where}/v1 ({routes}, GET /v1/models); Ctrl-C to stop"
    server.run(app, sock, "serve", ready=lambda: _say(banner))
    return 0


def _say(line: str) -> None:
    sys.stderr.write(f"chatx: serve: {escape_text(line)}\n")
    sys.stderr.flush()

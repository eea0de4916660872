"""Run an ASGI app with uvicorn on a socket bound here (``--port 0`` picks a free port,
said on stderr before the first request can come).

Ctrl-C or SIGTERM stops taking connections, lets the responses under way finish (at
most :data:`GRACE` seconds; a second Ctrl-C does not wait) and ends the command as an
interrupted or terminated one (exit 130 or 143). Several clients are served at once:
one event loop, one task per connection. uvicorn says nothing but warnings, as ``chatx:``
lines; no date or server header is added to what the app sends.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from collections.abc import Callable
from typing import Any, Literal

from chatx.errors import UsageError
from chatx.textsafe import escape_text

Lifespan = Literal["on", "off"]
GRACE = 5  # seconds the responses under way get to finish at shutdown
# What uvicorn says of a response the app left unfinished: serve --cut-after does so on
# purpose, and the proxy when the upstream drops; each says so in its own words.
_CUT = "ASGI callable returned without completing response."
# What uvicorn says when shutdown's grace runs out, said in chatx's words.
_GRACE_OVER = "Cancel %s running task(s), timeout graceful shutdown exceeded"


def require(command: str, *modules: str) -> None:
    """A usage error naming the extra to install when a module the command needs is not
    there (``httpx2`` and ``uvicorn`` come with ``pip install 'chatx[serve]'``)."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"chatx {command} needs {' and '.join(missing)}: pip install 'chatx[serve]'"
        )


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port``."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, UnicodeError) as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {_why(exc)}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {_why(exc)}") from None
    return sock


def url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _why(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)


class _QuietLog(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() == _CUT:
            return False
        # A response cancelled at shutdown (the grace ran out, or a second Ctrl-C) is
        # no error of the app's: the cut is said once, below or by the app, no traceback.
        return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


def _logging(command: str) -> None:
    logger = logging.getLogger("uvicorn")
    if not any(isinstance(h, _Handler) for h in logger.handlers):
        handler = _Handler(command)
        handler.addFilter(_QuietLog())
        logger.addHandler(handler)
    logger.propagate = False


class _Handler(logging.StreamHandler):
    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(f"chatx: {self.command}: {_said(record)}\n")
            if record.exc_info and logging.getLogger("uvicorn").isEnabledFor(logging.DEBUG):
                sys.stderr.write(logging.Formatter().formatException(record.exc_info) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def _said(record: logging.LogRecord) -> str:
    if record.msg == _GRACE_OVER and isinstance(record.args, tuple) and record.args:
        count = record.args[0]
        what = "response" if count == 1 else "responses"
        return f"{count} {what} under way cut short: not finished in {GRACE:g} s"
    return escape_text(record.getMessage())


def config(app: Any, command: str, *, lifespan: Lifespan = "off", debug: bool = False) -> Any:
    import uvicorn

    _logging(command)
    return uvicorn.Config(
        app,
        http="h11",
        loop="asyncio",
        ws="none",
        lifespan=lifespan,
        interface="asgi3",
        log_config=None,
        log_level="debug" if debug else "warning",
        access_log=False,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=GRACE,
    )


def make_server(
    app: Any,
    command: str,
    *,
    lifespan: Lifespan = "off",
    debug: bool = False,
    ready: Callable[[], None] | None = None,
) -> Any:
    """A uvicorn server for ``app`` (``serve(sockets=[...])`` or ``run(sockets=[...])``);
    ``ready`` is called once it takes connections, its signal handlers in place."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and ready is not None:
                ready()

        # Said here, not in the signal handler: the signal may come in the middle of a
        # write to stderr, and a second write from the handler would fail.
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            sys.stderr.write(
                f"chatx: {command}: stopping: the responses under way finish "
                f"(up to {GRACE:g} s; Ctrl-C again to stop now)\n"
            )
            await super().shutdown(sockets)

    return Server(config(app, command, lifespan=lifespan, debug=debug))


def debugging() -> bool:
    """--traceback (or CHATX_DEBUG=1): a bug's traceback is shown, as everywhere."""
    return os.environ.get("CHATX_DEBUG") == "1"


def run(
    app: Any,
    sock: socket.socket,
    command: str,
    *,
    lifespan: Lifespan = "off",
    ready: Callable[[], None] | None = None,
) -> None:
    """Serve until Ctrl-C or SIGTERM; the signal is raised again once the server has
    stopped, so the command ends as an interrupted one."""
    try:
        server = make_server(app, command, lifespan=lifespan, debug=debugging(), ready=ready)
        server.run(sockets=[sock])
    finally:
        sock.close()
        sys.stderr.write(f"chatx: {command}: stopped\n")
        sys.stderr.flush()

"""The little of ASGI the two apps use: a request body, a whole response, a stream.

No framework: one route table per app is all there is, and every byte a response sends
is chosen here (no date or server header: two runs answer alike). Work that takes time
without waiting on a socket (reading and transcoding a capture, building a final object)
runs in :class:`Workers`' threads, never on the event loop: there it would hold up every
other client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from chatx.live.errors import ApiError

if TYPE_CHECKING:
    from chatx.codecs.base import HttpApi

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_BODY = 32 << 20  # a request body larger than this is refused (413)
# Threads for work off the event loop. A thread is held for one bounded step (a batch of
# events, one final object), never for a whole response: a client that reads slowly or
# not at all holds none. More threads than steps under way at once cost nothing; fewer
# would make a short request wait its turn behind the long ones.
WORKERS = 64
JSON = b"application/json"
EVENT_STREAM = b"text/event-stream; charset=utf-8"


T = TypeVar("T")


class Workers:
    """Runs a blocking function in a thread (anyio's pool, :data:`WORKERS` at a time) and
    awaits it. Cancelled (at shutdown), the await waits for the function to return, so
    what it works on (a stream's generator) is never used by two threads at once."""

    def __init__(self, tokens: int = WORKERS) -> None:
        self.tokens = tokens
        self.loop: asyncio.AbstractEventLoop | None = None
        self.limiter: Any = None

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        import anyio
        import anyio.to_thread

        loop = asyncio.get_running_loop()
        if self.loop is not loop:  # a limiter belongs to the loop that made it
            self.loop, self.limiter = loop, anyio.CapacityLimiter(self.tokens)
        return await anyio.to_thread.run_sync(func, *args, limiter=self.limiter)


class Disconnected(Exception):
    """The client went away before its request was read."""


async def read_body(receive: Receive, limit: int = MAX_BODY) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"the request body is larger than {limit >> 20} MiB")
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def parse_request(body: bytes, endpoint: HttpApi) -> dict[str, Any]:
    """The request body as a JSON object, or the 400 its API answers: what ``serve`` and
    the gateway both read a request with, before its API's own reading."""
    from chatx.containers.payload import request_json

    if not body.strip():
        raise ApiError(400, "the request has no body: a JSON object is expected")
    try:
        request = request_json(body)  # nested past MAX_DEPTH: refused, as invalid JSON is
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"We could not parse the JSON body of your request: {exc}") from None
    if not isinstance(request, dict):
        raise ApiError(400, f"the request body is a JSON {_kind(request)}, not an object")
    stream = request.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise ApiError(
            400,
            f"Invalid type for 'stream': expected a boolean, got {_kind(stream)}",
            param="stream",
        )
    model = request.get(endpoint.model_key)
    if model is not None and not isinstance(model, str):
        raise ApiError(
            400,
            f"Invalid type for '{endpoint.model_key}': expected a string, got {_kind(model)}",
            param=endpoint.model_key,
        )
    return request


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return {dict: "object", list: "array", str: "string", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )


async def respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: bytes = JSON,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """A whole response, its length said."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def respond_error(send: Send, error: ApiError, api: str | None = None) -> None:
    """The error in the shape of ``api`` (an ``--api`` name), with the headers its
    provider sends (``retry-after``...)."""
    await respond(send, error.status, error.body(api), headers=error.headers())


async def start_stream(send: Send, status: int, headers: Iterable[tuple[bytes, bytes]]) -> None:
    """The head of a response whose body follows in pieces (chunked: no length)."""
    await send({"type": "http.response.start", "status": status, "headers": list(headers)})


async def send_piece(send: Send, piece: bytes) -> None:
    await send({"type": "http.response.body", "body": piece, "more_body": True})


async def end_stream(send: Send) -> None:
    await send({"type": "http.response.body", "body": b"", "more_body": False})


class Tracked:
    """``send``, remembering whether the response has started (an error body can only
    go before it)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


class Watch:
    """Tells when the client hangs up, once its request has been read: a stream to a
    client that is gone stops instead of running on (uvicorn drops what is sent then)."""

    def __init__(self, receive: Receive) -> None:
        self.task = asyncio.ensure_future(self._wait(receive))

    @staticmethod
    async def _wait(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    @property
    def gone(self) -> bool:
        return self.task.done()

    async def wait(self, seconds: float) -> bool:
        """Wait ``seconds``, less if the client hangs up meanwhile; True when it has."""
        if seconds > 0 and not self.task.done():
            await asyncio.wait({self.task}, timeout=seconds)
        return self.task.done()

    def close(self) -> None:
        self.task.cancel()


async def lifespan(receive: Receive, send: Send, startup: Any = None, shutdown: Any = None) -> None:
    """The lifespan protocol: ``startup`` and ``shutdown`` are awaited when given."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            if startup is not None:
                await startup()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if shutdown is not None:
                await shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return

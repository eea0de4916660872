"""``chatx serve``'s ASGI app: OpenAI-compatible endpoints that replay captures.

``POST`` to each API of :mod:`chatx.live.endpoints` gets a capture (chosen by
:mod:`chatx.live.choose`) as that API's stream, or its final object for ``"stream":
false``; ``GET /v1/models`` lists the captures' models. Anything else, and any request
that cannot be read, gets an OpenAI-shaped error body with its status.

Faults for testing clients: ``delay`` seconds between events, ``cut_after`` events
then the connection is dropped (a stream of that many events or fewer is sent whole),
``status``: every request to an API is answered with that error.

Record on miss (``upstream``): a request no capture answers (``on_miss="upstream"``),
or every request (``record_mode="all"``), is forwarded to the upstream by
:class:`~chatx.live.proxy.ProxyApp`, as ``chatx proxy`` forwards one (only the API's
own path and the query go, under the upstream's base; the client's headers, the key
among them; nothing but the request body written), and with ``record_mode`` ``new`` or
``all`` the answer is recorded into ``record`` as a capture with its request beside it,
answered from by every request after.

Every client is served at once: the event loop only sends and waits (a delay, a client
that reads slowly), and the events are read and transcoded in worker threads a batch at
a time (:class:`~chatx.live.asgi.Workers`, :func:`~chatx.live.replay.take`), so a long
capture, a delay or a stalled client holds up no other request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from chatx.codecs.base import HttpApi
from chatx.errors import ChatxError
from chatx.live import asgi, replay
from chatx.live.arrays import json_array
from chatx.live.chaos import NONE, Chaos, Faults, error_event, malformed
from chatx.live.choose import HEADER, Chooser, header_value
from chatx.live.endpoints import by_path, endpoints, route, sse_asked
from chatx.live.errors import ApiError, fault
from chatx.live.served_captures import Capture, recorded
from chatx.live.timing import Paced
from chatx.live.upstream import Upstream

MODELS = "/v1/models"
RECORD_MODES = ("none", "new", "all")


def _fault(name: str, doc: str) -> Any:
    """A ServeApp attribute that is the field ``name`` of its chaos's faults, read and set
    as the app's own (the faults are frozen: setting one replaces them)."""

    def get(app: ServeApp) -> int | None:
        value: int | None = getattr(app.chaos.faults, name)
        return value

    def put(app: ServeApp, value: int | None) -> None:
        change: dict[str, Any] = {name: value}
        app.chaos.faults = replace(app.chaos.faults, **change)

    return property(get, put, doc=doc)


class ServeApp:
    def __init__(
        self,
        captures: list[Capture],
        *,
        delay: float = 0.0,
        cut_after: int | None = None,
        status: int | None = None,
        on_miss: str = "next",
        log: Callable[[str], None] | None = None,
        upstream: Upstream | None = None,
        record: Path | None = None,
        record_mode: str = "none",
        timing: str = "none",
        speed: float = 1.0,
        chaos: Chaos | None = None,
    ) -> None:
        self.captures = captures
        self.timing = timing
        self.speed = speed
        self.chooser = Chooser(captures, on_miss)
        self.record_mode = record_mode
        self.record = record
        self.proxy = None
        if upstream is not None:
            from chatx.live.proxy import ProxyApp

            self.proxy = ProxyApp(
                upstream,
                record if record_mode != "none" else None,
                log=log,
                recorded=self._recorded,
            )
        self.finals = replay.Finals()
        self.delay = delay
        self.chaos = chaos or Chaos(Faults(cut_after=cut_after, status=status))
        self.api_requests = 0
        self.log = log or (lambda line: None)
        self.requests = 0
        self.under_way = 0  # streams being sent
        self.workers = asgi.Workers()
        self.max_body = asgi.MAX_BODY
        self.debug = False  # --traceback: a bug's traceback, from uvicorn

    status = _fault("status", "``--status``: every API request answered with this error.")
    cut_after = _fault("cut_after", "``--cut-after``: every stream dropped after this many events.")

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        if scope["type"] == "lifespan":
            proxy = self.proxy
            await asgi.lifespan(receive, send, None, proxy._close if proxy else None)
            return
        if scope["type"] != "http":
            return
        self.requests += 1
        tracked = asgi.Tracked(send)
        try:
            await self._http(scope, receive, tracked)
        except ApiError as exc:
            self.log(f"{scope['method']} {scope['path']}: {exc.status} {exc.message}")
            await asgi.respond_error(tracked, exc, _api(scope))
        except asgi.Disconnected:
            pass
        except asyncio.CancelledError:  # shutdown's grace ran out: the client sees a drop
            self.log(f"{scope['method']} {scope['path']}: cut short at shutdown")
        except Exception as exc:  # a bug: one line on stderr, a 500 body for the client
            if not self.debug:
                self.log(f"{scope['method']} {scope['path']}: internal error: {exc!r}")
                if not tracked.started:
                    bug = ApiError(500, f"chatx serve: {exc!r}")
                    await asgi.respond_error(tracked, bug, _api(scope))
                return
            raise

    async def _http(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        method = scope["method"]
        path = scope["path"].rstrip("/") or "/"
        if path == MODELS:
            _allow(method, ("GET", "HEAD"), scope["path"])
            await asgi.respond(send, 200, self.models())
            return
        found = route(path)
        if found is None:
            raise ApiError(
                404,
                f"Unknown request URL: {method} {scope['path']}. chatx serve answers "
                f"{', '.join(e.path for e in endpoints())} and GET {MODELS}.",
                code="unknown_url",
            )
        endpoint = found.endpoint
        _allow(method, ("POST",), scope["path"])
        body = await asgi.read_body(receive, self.max_body)
        self.api_requests += 1
        faults = self.chaos.of(self.api_requests)
        if faults.status is not None:
            raise fault(faults.status, endpoint.api)
        request = asgi.parse_request(body, endpoint)
        if found.model is not None and endpoint.model_key not in request:
            request = {**request, endpoint.model_key: found.model}  # the path names it
        streaming = found.stream if found.stream is not None else request.get("stream") is True
        # Gemini's stream without alt=sse: one JSON array of the chunks, as Google sends it
        array = streaming and not sse_asked(endpoint, scope.get("query_string", b""))
        if self.proxy is not None and self.record_mode == "all":
            await self._forward(scope, receive, send, endpoint, body)
            return
        capture = self.chooser.choose(_header(scope, HEADER), request, endpoint)
        if capture is None:  # a miss: the upstream answers (and it is recorded)
            await self._forward(scope, receive, send, endpoint, body)
            return
        replay.check_choices(capture, endpoint, request)
        named = [(HEADER.encode(), header_value(capture.name))]
        if not streaming:
            how = _how(capture, endpoint, request)
            self.log(f"POST {path}: {capture.name} ({how}), final object")
            final = await self.workers.run(self.finals.get, capture, endpoint, request)
            # Made whole, as a provider answers it: after the head's and the body's
            # recorded time.
            wait = self._before_head(capture, whole=True)
            if wait > 0:
                watch = asgi.Watch(receive)
                try:
                    if await watch.wait(wait):
                        self.log(f"POST {path}: {capture.name}: the client left before the answer")
                        return
                finally:
                    watch.close()
            await asgi.respond(send, 200, final, headers=named)
            return
        await self._stream(send, receive, capture, endpoint, request, named, faults, array)

    def _before_head(self, capture: Capture, whole: bool) -> float:
        """The wait before the answer's head, with ``--timing recorded``: what the
        capture's head took to arrive (the whole answer's time for one sent ``whole``), at
        ``--speed``."""
        if self.timing != "recorded" or capture.timing is None:
            return 0.0
        return capture.timing.before_head(self.speed, whole)

    async def _forward(
        self,
        scope: asgi.Scope,
        receive: asgi.Receive,
        send: asgi.Send,
        endpoint: HttpApi,
        body: bytes,
    ) -> None:
        """The upstream's answer, relayed as ``chatx proxy`` relays it. Only the API's
        own path goes on (not the target as the client wrote it), with the query."""
        if self.proxy is None:
            raise ApiError(500, "chatx serve: a miss with no --upstream to forward it to")
        given = [body]

        async def replayed() -> asgi.Message:
            # The body, read already, once; then what the client does (a hang-up).
            if given:
                return {"type": "http.request", "body": given.pop(), "more_body": False}
            return await receive()

        # A route that names the model goes on as the client wrote it.
        own = endpoint.path if "{" not in endpoint.path else scope["path"]
        forwarded = {**scope, "path": own, "raw_path": own.encode()}
        await self.proxy(forwarded, replayed, send)

    def _recorded(self, path: Path) -> None:
        """A capture recorded from the upstream: answered from by the next request."""
        if self.record is None:
            return
        try:
            made = recorded(path, self.record)
        except ChatxError as exc:
            self.log(f"{path}: recorded, but not replayed: {exc}")
            return
        self.chooser.add(made)

    async def _stream(
        self,
        send: asgi.Send,
        receive: asgi.Receive,
        capture: Capture,
        endpoint: HttpApi,
        request: dict[str, Any],
        named: list[tuple[bytes, bytes]],
        faults: Faults = NONE,
        array: bool = False,
    ) -> None:
        framed: Callable[[Any], Any] = json_array if array else iter
        events: Any = framed(replay.stream(capture, endpoint, request))
        waits: list[float] | None = None
        if self.timing == "recorded" and capture.timing:
            # Each event when it arrived, as recorded (NAME.timing), at --speed.
            events.close()
            timed = framed(replay.timed(capture, endpoint, request))
            events = Paced(timed, capture.timing.arrived, self.speed)
            waits = events.waits
        how = f"POST {endpoint.path}: {capture.name} ({_how(capture, endpoint, request)})"
        kind = b"application/json" if array else asgi.EVENT_STREAM
        head = [(b"content-type", kind), (b"cache-control", b"no-cache"), *named]
        watch: asgi.Watch | None = None
        sent = 0
        self.under_way += 1
        try:
            # The first event alone, worked out before the response starts (a capture
            # that cannot be sent in this format is an error body) and sent at once.
            batch, error = await self.workers.run(replay.take, events, 1)
            if error is not None and not batch:
                raise replay.not_servable(error)
            watch = asgi.Watch(receive)
            wait = self._before_head(capture, whole=False)
            if wait > 0 and await watch.wait(wait):
                self.log(f"{how}: the client left before the answer's head")
                return
            await asgi.start_stream(send, 200, head)
            while batch:
                for event in batch:
                    pause = (self.delay if sent else 0.0) + (waits[sent] if waits else 0.0)
                    going = await self._send(send, watch, event, sent, pause, how, faults, endpoint)
                    if not going:
                        return
                    sent += 1
                if error is not None:
                    self.log(f"{how}: connection cut after {sent} events: {error}")
                    return
                batch, error = await self.workers.run(replay.take, events)
            await asgi.end_stream(send)
            self.log(f"{how}: {sent} events")
        except asyncio.CancelledError:  # shutdown's grace ran out: the client sees a drop
            self.log(f"{how}: cut short at shutdown after {sent} events")
        finally:
            self.under_way -= 1
            if watch is not None:
                watch.close()
            events.close()

    async def _send(
        self,
        send: asgi.Send,
        watch: asgi.Watch,
        event: bytes,
        sent: int,
        pause: float,
        how: str,
        faults: Faults,
        endpoint: HttpApi,
    ) -> bool:
        """Event number ``sent + 1`` sent, as the faults have it; False: the stream
        stops here (cut, ended by an error event, or the client left)."""
        number = sent + 1
        if not await self._pace(watch, sent, pause + faults.pause(number), how, faults):
            return False
        if faults.error_at == number:
            await asgi.send_piece(send, error_event(endpoint.api, number))
            await asgi.end_stream(send)
            self.log(f"{how}: an error event in place of event {number}, the end (chaos)")
            return False
        if faults.malformed_at == number:
            event = malformed(event)
            self.log(f"{how}: event {number} sent with its JSON cut in half (chaos)")
        await asgi.send_piece(send, event)
        return True

    async def _pace(
        self, watch: asgi.Watch, sent: int, pause: float, how: str, faults: Faults = NONE
    ) -> bool:
        """Whether the next event goes: not past --cut-after, nor to a client that left
        (while the pause before it ran: a client leaving is seen at once)."""
        if faults.cut_after is not None and sent >= faults.cut_after:
            self.log(f"{how}: connection cut after {sent} events (--cut-after)")
            return False  # uvicorn closes a response left unfinished: the client sees a drop
        if await watch.wait(pause):
            self.log(f"{how}: the client left after {sent} events")
            return False
        return True

    def models(self) -> bytes:
        seen: dict[str, None] = {}
        for capture in self.captures:
            if capture.model:
                seen.setdefault(capture.model)
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "chatx"} for m in seen]
        return orjson.dumps({"object": "list", "data": data})


def _allow(method: str, allowed: tuple[str, ...], path: str) -> None:
    if method not in allowed:
        raise ApiError(405, f"Invalid method for URL ({method} {path}): use {' or '.join(allowed)}")


def _api(scope: asgi.Scope) -> str | None:
    """The API a request was made to, whose shape its errors take."""
    endpoint = by_path(scope["path"].rstrip("/") or "/")
    return endpoint.api if endpoint is not None else None


def _header(scope: asgi.Scope, name: str) -> str | None:
    wanted = name.encode()
    for key, value in scope["headers"]:
        if key.lower() == wanted:
            return str(value.decode("utf-8", "replace"))
    return None


def _how(capture: Capture, endpoint: HttpApi, request: dict[str, Any]) -> str:
    if replay.is_verbatim(capture, endpoint, request):
        return "as recorded"
    return f"{capture.format} -> {endpoint.format}"

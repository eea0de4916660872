"""The gateway's last step: what the upstream answers, given back in the client's API.

- a stream goes through the live :class:`~chatx.Transcoder`, each event sent as soon as
  the upstream's bytes complete it (:class:`Outgoing` cuts them into events, puts renamed
  tools back and keeps a Responses stream's last response);
- a whole answer becomes the client's final object, as ``chatx collect`` builds it
  (:func:`final_object`);
- an HTTP error keeps its status and takes the client API's error shape
  (:func:`upstream_error`);
- a stream the upstream breaks off ends in the client format's error events
  (:func:`broken`).

What the upstream sent is recorded as ``proxy`` records it, and a Responses answer is put
in the gateway's store before the client has it, so that it can name it next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from chatx.codecs.base import EncodeOptions, HttpApi
from chatx.errors import ChatxError
from chatx.live import asgi
from chatx.live.arrays import JsonArray
from chatx.live.errors import ApiError
from chatx.live.replay import Events, recorded_error

if TYPE_CHECKING:
    from chatx.live.gateway_plan import Plan
    from chatx.live.recorded_files import Recording
    from chatx.live.store import Store
    from chatx.live.upstream import Upstream

LOST_HEADER = b"x-chatx-lost"
_LOST_SHOWN = 4096  # X-Chatx-Lost holds at most this many bytes; the rest is counted
_ERROR_READ = 1 << 20  # bytes of an upstream's error body read
_TERMINAL = (b"event: response.completed", b"event: response.incomplete", b"event: response.failed")
# The Responses events that carry the whole response, and with it its id.
_LIFECYCLE = (b"event: response.created", b"event: response.in_progress", *_TERMINAL)

# What an upstream stream that breaks off says, in each upstream format: fed to the
# transcoder like the upstream's own events, it ends the client's stream in its format's
# error events, which every encoder already writes.
_BROKEN: dict[str, Callable[[str], dict[str, Any]]] = {
    "chat-chunk": lambda m: {"error": {"message": m, "type": "server_error", "code": 502}},
    "llama-stack-event": lambda m: {"error": {"message": m, "type": "server_error", "code": 502}},
    "responses-event": lambda m: {"type": "error", "message": m, "code": "server_error"},
    "anthropic-event": lambda m: {"type": "error", "error": {"type": "api_error", "message": m}},
    "gemini-event": lambda m: {"error": {"code": 502, "message": m, "status": "UNAVAILABLE"}},
}


@dataclass(slots=True, kw_only=True)
class Answers:
    """Gives the client the answer of ``upstream`` (which speaks ``api``) to a planned
    request, in three ways: :meth:`error`, :meth:`stream` and :meth:`final`. ``recorder``
    records what the upstream sent (the proxy's :class:`~chatx.live.proxy.Recorder`),
    ``store`` (run in ``workers``) keeps Responses answers, ``log`` says each request's
    line (``line`` starts it) and ``said_lost`` what the client's API could not hold of
    the answer."""

    upstream: Upstream
    api: HttpApi
    recorder: Any
    workers: asgi.Workers
    store: Store | None
    log: Callable[[str], None]
    said_lost: Callable[[str], None]

    async def error(self, send: asgi.Send, response: Any, plan: Plan, line: str) -> None:
        """The upstream's error, its status kept, in the client API's shape."""
        data = b""
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= _ERROR_READ:
                break
        error = upstream_error(response.status_code, data)
        for secret in plan.secrets:  # an upstream that echoes the client's key
            error.message = error.message.replace(secret, "***")
        self.log(f"{line} -> {response.status_code}: {error.message}")
        headers = error.headers()
        retry = response.headers.get("retry-after")
        if retry is not None and response.status_code == 429:
            headers = [(b"retry-after", retry.encode("latin-1", "replace"))] + [
                h for h in headers if h[0] != b"retry-after"
            ]
        await asgi.respond(send, error.status, error.body(plan.client.api), headers=headers)

    async def stream(
        self,
        send: asgi.Send,
        receive: asgi.Receive,
        response: Any,
        plan: Plan,
        line: str,
        recording: Recording | None,
    ) -> None:
        from chatx.pipeline import Transcoder

        transcoder = Transcoder(
            plan.client.format,
            src=self.api.format,
            out_container="sse",
            options=EncodeOptions(request=plan.envelope),
            name=f"{self.upstream.shown}{self.api.path}",
            notes=plan.notes,
        )
        events = Outgoing(plan)
        kind = b"application/json" if plan.array else asgi.EVENT_STREAM
        head = [(b"content-type", kind), (b"cache-control", b"no-cache")]
        await asgi.start_stream(send, 200, head + lost_header(plan.lost))

        async def deliver(chunk: bytes) -> str | None:
            try:
                await self._pass(send, events.feed(transcoder.feed(chunk)), events, plan)
            except ChatxError as exc:
                return f"the upstream's stream cannot be read as {self.api.format}: {exc}"
            return None

        kept, whole, why = await self.recorder.relay(
            response.aiter_bytes(), recording, receive, deliver, self.upstream
        )
        if why == "the client left":
            self.log(f"{line}: {why}")
            return
        try:
            if not whole:  # the client's stream ends in its own error events
                said = broken(transcoder, self.api, why)
                await self._pass(send, events.feed(transcoder.feed(said)), events, plan)
            last = events.feed(transcoder.finish()) + events.finish()
            await self._pass(send, last, events, plan)
        except ChatxError as exc:
            self.log(f"{line}: {exc}; the connection is cut")
            return
        if events.array is not None:
            await asgi.send_piece(send, events.array.finish())
        await asgi.end_stream(send)
        self._said(plan, line, recording, kept, whole, why)

    async def _pass(
        self, send: asgi.Send, batch: list[bytes], events: Outgoing, plan: Plan
    ) -> None:
        """Send the client these events; a Responses answer is kept first, once its last
        event is among them, so that a next request naming it finds it."""
        if events.response is not None and not events.kept:
            events.kept = True
            await self._keep(plan, events.response)
        for event in batch:
            await asgi.send_piece(send, event)

    async def final(
        self,
        send: asgi.Send,
        response: Any,
        plan: Plan,
        line: str,
        recording: Recording | None,
    ) -> None:
        """A whole answer: read, recorded (``recording``, opened by the caller as the head
        arrived), made the client's final object."""
        import httpx2

        data = b""
        whole = False
        try:
            async for chunk in response.aiter_bytes():
                data += chunk
                if recording is not None:
                    recording.write(chunk)
                if len(data) > asgi.MAX_BODY:
                    raise ApiError(502, "chatx proxy: the upstream's answer is too large")
            whole = True
        except httpx2.HTTPError as exc:
            said = self.upstream.redact(f"{type(exc).__name__}: {exc}")
            raise ApiError(502, f"chatx proxy: the upstream stopped: {said}") from None
        finally:
            kept = self.recorder.finish(recording, whole)
        try:
            final = await self.workers.run(final_object, data, plan)
        except ApiError as exc:
            self.log(f"{line}: {exc.status} {exc.message}")
            await asgi.respond_error(send, exc, plan.client.api)
            return
        await self._keep(plan, final)  # before the client has it, and can name it
        await asgi.respond(send, 200, orjson.dumps(final), headers=lost_header(plan.lost))
        self._said(plan, line, recording, kept, True, "")

    def _said(
        self, plan: Plan, line: str, recording: Any, kept: Any, whole: bool, why: str
    ) -> None:
        if recording is not None and kept is not None:
            line += f", recorded {kept} ({recording.size} bytes{'' if whole else ', incomplete'})"
        self.log(line if whole else f"{line}: {why}; the client's stream ends in an error")
        self.recorder.check(kept)
        said = [n.message for n in plan.notes.summary() if n.kind == "lost"]
        if said:  # what the client's format could not hold of the answer
            self.said_lost(f"{line}: the answer lost: {'; '.join(dict.fromkeys(said))}")

    async def _keep(self, plan: Plan, response: dict[str, Any] | None) -> None:
        """A Responses answer kept for the next request's previous_response_id."""
        if self.store is None or plan.history is None or response is None:
            return
        rid = response.get("id")
        if not isinstance(rid, str):
            return
        output = response.get("output")
        items = [*plan.history, *(output if isinstance(output, list) else [])]
        await self.workers.run(self.store.put, rid, response, items)


class Outgoing:
    """The client's events as the transcoder writes them: cut into events, calls of
    renamed tools put back, and a Responses stream's last response kept for the store."""

    def __init__(self, plan: Plan) -> None:
        self.splitter = Events()
        self.renamer = plan.renamer
        self.rid = plan.rid
        self.response: dict[str, Any] | None = None
        self.kept = False  # the response is in the store
        self.array = JsonArray() if plan.array else None  # Gemini without alt=sse

    def feed(self, data: bytes) -> list[bytes]:
        if not data:
            return []
        events = self.splitter.feed(data)
        events = self._each(events) if self.renamer is not None or self.rid else events
        return self.array.feed(events) if self.array is not None else events

    def finish(self) -> list[bytes]:
        events = self._each(self.splitter.finish())
        return self.array.feed(events) if self.array is not None else events

    def _each(self, events: list[bytes]) -> list[bytes]:
        renamer = self.renamer
        out = []
        for event in events:
            if renamer is not None:
                event = renamer.event(event)
            if self.rid is not None and event.startswith(_LIFECYCLE):
                event = self._identified(event)
            out.append(event)
        return out

    def _identified(self, event: bytes) -> bytes:
        """A lifecycle event with the gateway's response id; the last one kept."""
        head, _, data = event.partition(b"\ndata: ")
        payload = orjson.loads(data)
        response = payload.get("response")
        if not isinstance(response, dict):
            return event
        response["id"] = self.rid
        if event.startswith(_TERMINAL):
            self.response = response
        return head + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


def final_object(data: bytes, plan: Plan) -> dict[str, Any]:
    """The client's final object for the upstream's whole answer: transcoded into the
    client's format, then collected as ``chatx collect`` does (into Responses with the
    envelope the request gives)."""
    from chatx.collect import DEFAULT_TARGET, collect
    from chatx.collect.streams import streams_of
    from chatx.pipeline import Transcoder
    from chatx.reading.framing import load

    target = DEFAULT_TARGET.get(plan.client.format)
    if target is None:
        raise ApiError(400, f"chatx proxy sends {plan.client.api} as a stream only: stream: true")
    name = f"{plan.upstream.api} answer"
    try:
        transcoder = Transcoder(
            plan.client.format,
            src=plan.upstream.format,
            out_container="sse",
            options=EncodeOptions(request=plan.envelope),
            name=name,
            notes=plan.notes,
        )
        sent = transcoder.feed(data) + transcoder.finish()
        streams = streams_of(load(sent, name, plan.client.format))
        if not streams:
            raise ApiError(502, "chatx proxy: the upstream's answer holds no events")
        built = collect(streams[0], target, source=plan.client.format, notes=plan.notes)
    except ChatxError as exc:
        raise ApiError(502, f"chatx proxy: the upstream's answer: {exc}") from None
    if streams[0].errors:
        raise recorded_error(streams[0].errors[0])
    if plan.renamer is not None:
        built = plan.renamer.response(built)
    if plan.rid is not None:
        built["id"] = plan.rid
    return built


def broken(transcoder: Any, api: HttpApi, why: str) -> bytes:
    """An error record in the upstream's format, framed as its stream came."""
    payload = orjson.dumps(_BROKEN.get(api.format, _BROKEN["chat-chunk"])(why))
    if transcoder.container == "sse":
        name = b"event: error\n" if api.format in ("responses-event", "anthropic-event") else b""
        return b"\n\n" + name + b"data: " + payload + b"\n\n"
    return b"\n" + payload + b"\n"


def lost_header(lost: list[str]) -> list[tuple[bytes, bytes]]:
    """``X-Chatx-Lost``: what the upstream could not hold, comma-separated, as printable
    ASCII (other characters percent-encoded), cut at 4 KiB with how many more."""
    if not lost:
        return []
    from urllib.parse import quote

    value = ""
    for number, path in enumerate(lost):
        piece = quote(path, safe=" !\"#$&'()*+,/:;<=>?@[]^_`{|}~")
        if len(value) + len(piece) + 2 > _LOST_SHOWN:
            value += f", … ({len(lost) - number} more)"
            break
        value = f"{value}, {piece}" if value else piece
    return [(LOST_HEADER, value.encode("ascii"))]


def upstream_error(status: int, data: bytes) -> ApiError:
    """The error an upstream answered, read from any API's error shape."""
    try:
        body: Any = orjson.loads(data)
    except orjson.JSONDecodeError:
        body = None
    message, kind, code, param = None, None, None, None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail")
        kind, code, param = error.get("type"), error.get("code"), error.get("param")
    elif isinstance(body, dict):
        message = body.get("detail") or body.get("message")
    elif isinstance(error, str):
        message = error
    if not isinstance(message, str) or not message:
        text = data[:500].decode("utf-8", "replace").strip()
        message = f"the upstream answered HTTP {status}" + (f": {text}" if text else "")
    return ApiError(
        status,
        message,
        param=param if isinstance(param, str) else None,
        code=code if isinstance(code, str) else None,
        kind=kind if isinstance(kind, str) else None,
    )

"""``chatx proxy --upstream-api API``: any client API over an upstream of another.

A request to another API's path than the upstream's is read with the client API's
request mapping, written with the upstream's (:class:`~chatx.codecs.base.RequestMapping`),
and sent to the upstream API's own path under ``--upstream``; the path is the
descriptor's, never the client's, so nothing a client sends chooses where it goes. What
the upstream answers comes back in the client's API:

- a stream goes through the live :class:`~chatx.Transcoder`, each event sent as soon as
  the upstream's bytes complete it;
- a whole answer becomes the client's final object, as ``chatx collect`` builds it;
- an HTTP error keeps its status and takes the client API's error shape;
- a stream the upstream breaks off ends in the client format's error events.

What the upstream API cannot hold is said: a ``lost:`` line on stderr and the
``X-Chatx-Lost`` header, or with ``--strict`` a 400 naming it. A Responses client's
``previous_response_id`` and ``store`` are kept by the gateway (:mod:`chatx.live.store`),
and its custom tools and tool sets come back as it named them
(:mod:`chatx.live.renamed`). The upstream's bytes are recorded as ``proxy`` records
them, the translated request beside them.

Each step on the event loop is bounded by one read of the upstream (transcoding one
chunk); the store is used in worker threads. No client waits for another.
"""

from __future__ import annotations

import fnmatch
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from chatx import codecs
from chatx.codecs.base import EncodeOptions, HttpApi
from chatx.errors import ChatxError, UsageError
from chatx.live import asgi
from chatx.live.endpoints import by_path, endpoints
from chatx.live.errors import ApiError
from chatx.live.renamed import Renamer
from chatx.live.replay import Events, recorded_error
from chatx.notes import Notes

if TYPE_CHECKING:
    from chatx.live.store import Store
    from chatx.live.upstream import Upstream
    from chatx.request import Request

LOST_HEADER = b"x-chatx-lost"
_LOST_SHOWN = 4096  # X-Chatx-Lost holds at most this many bytes; the rest is counted
_ERROR_READ = 1 << 20  # bytes of an upstream's error body read
RESPONSES = "responses"  # the API whose state the gateway keeps
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
}


class ModelMap:
    """``--model CLIENT=UPSTREAM``, repeatable: the first rule whose CLIENT (a name, or a
    pattern with ``*``) matches a request's model names the upstream's."""

    def __init__(self, rules: list[tuple[str, str]]) -> None:
        self.rules = rules

    @classmethod
    def parse(cls, specs: list[str]) -> ModelMap:
        rules = []
        for spec in specs:
            client, equals, upstream = spec.partition("=")
            if not equals or not client.strip() or not upstream.strip():
                raise UsageError(f"--model: CLIENT=UPSTREAM, e.g. 'gpt-5*=qwen3' (got {spec!r})")
            rules.append((client.strip(), upstream.strip()))
        return cls(rules)

    def __call__(self, model: str | None) -> str | None:
        for client, upstream in self.rules:
            if model is not None and fnmatch.fnmatchcase(model, client):
                return upstream
            if model is None and client == "*":
                return upstream
        return model


@dataclass(slots=True)
class Plan:
    """One translated request: who speaks what, the body each side sees, what was lost."""

    client: HttpApi
    upstream: HttpApi
    body: dict[str, Any]  # the client's body, its previous_response_id's history put in
    sent: dict[str, Any]  # the upstream's
    lost: list[str]
    stream: bool
    envelope: dict[str, Any] = field(default_factory=dict)  # what the answer says of its request
    renamer: Renamer | None = None
    history: list[Any] | None = None  # Responses input items, when the response is kept
    rid: str | None = None  # the id the gateway gives a Responses answer
    notes: Notes = field(default_factory=Notes)


class Gateway:
    """The translating half of the proxy: ``handles`` tells which requests are its, and
    :meth:`handle` answers one. ``recorder`` records what the upstream sent (the proxy's
    :class:`~chatx.live.proxy.Recorder`)."""

    def __init__(
        self,
        upstream: Upstream,
        api: HttpApi,
        recorder: Any,
        *,
        models: ModelMap | None = None,
        key: str | None = None,
        strict: bool = False,
        store: Store | None = None,
        log: Callable[[str], None] | None = None,
        lost: Callable[[str], None] | None = None,
    ) -> None:
        self.upstream = upstream
        self.api = api
        self.recorder = recorder
        self.models = models or ModelMap([])
        self.key = key
        self.strict = strict
        self.store = store
        self.log = log or (lambda line: None)
        self.said_lost = lost or self.log
        self.workers = asgi.Workers()

    # -- which requests are the gateway's ------------------------------------------------

    def handles(self, method: str, path: str) -> bool:
        """POST to another API than the upstream's, GET /v1/models, and the stored
        responses when the upstream keeps none."""
        endpoint = by_path(path)
        if endpoint is not None:
            return method == "POST" and endpoint.api != self.api.api
        if path == "/v1/models":
            return self.api.api not in ("chat", RESPONSES)
        return self._stored_id(path) is not None and self.api.api != RESPONSES

    @staticmethod
    def _stored_id(path: str) -> str | None:
        prefix = "/v1/responses/"
        rid = path[len(prefix) :] if path.startswith(prefix) else ""
        return rid if rid and "/" not in rid else None

    # -- the headers and body of a request in the upstream's own API ---------------------

    def upstream_headers(self, headers: list[tuple[bytes, bytes]], client: HttpApi) -> list[Any]:
        """What goes with a translated request: the upstream API's own headers and its key,
        the client's (or ``--upstream-key-env``'s) in the upstream's header."""
        sent = [(k.encode(), v.encode()) for k, v in self.api.headers]
        key = self.key if self.key is not None else client_key(headers, client)
        basic = self.upstream.authorization
        if basic is not None:  # the credentials written into --upstream, to it alone
            sent.append((b"authorization", basic.encode("latin-1")))
        elif key:
            value = f"Bearer {key}" if self.api.key_header == "authorization" else key
            sent.append((self.api.key_header.encode(), value.encode("latin-1", "replace")))
        return sent

    def same_api(
        self, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> tuple[list[tuple[bytes, bytes]], bytes]:
        """A request in the upstream's own API goes as it came, but for the model a
        ``--model`` rule renames and the key ``--upstream-key-env`` replaces."""
        if self.key is not None:
            header = self.api.key_header.encode()
            value = f"Bearer {self.key}" if header == b"authorization" else self.key
            headers = [(k, v) for k, v in headers if k.lower() != header]
            headers.append((header, value.encode("latin-1", "replace")))
        if self.models.rules and body:
            try:
                request = orjson.loads(body)
            except orjson.JSONDecodeError:
                return headers, body
            if isinstance(request, dict):
                model = request.get(self.api.model_key)
                mapped = self.models(model if isinstance(model, str) else None)
                if mapped != model:
                    body = orjson.dumps({**request, self.api.model_key: mapped})
        return headers, body

    # -- one request ---------------------------------------------------------------------

    async def handle(
        self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send, client: Any
    ) -> None:
        method, path = scope["method"], scope["path"]
        endpoint = by_path(path)
        if endpoint is None:
            await (
                self._models(scope, send, client)
                if path == "/v1/models"
                else self._stored(scope, send)
            )
            return
        try:
            body = await asgi.read_body(receive)
            plan = await self._plan(endpoint, body)
        except ApiError as exc:
            self.log(f"{method} {path}: {exc.status} {exc.message}")
            await asgi.respond_error(send, exc, endpoint.api)
            return
        try:
            await self._send(scope, receive, send, client, plan)
        except ApiError as exc:
            self.log(f"{method} {path}: {exc.status} {exc.message}")
            if not getattr(send, "started", False):
                await asgi.respond_error(send, exc, endpoint.api)

    async def _plan(self, client: HttpApi, raw: bytes) -> Plan:
        codec = codecs.get(client.format)
        target = codecs.get(self.api.format)
        if codec.requests is None or target.requests is None:
            which = client.api if codec.requests is None else self.api.api
            raise ApiError(
                400,
                f"chatx proxy: {which} requests cannot be translated (its format has no "
                f"request mapping); send {self.api.api} requests ({self.api.path})",
                code="not_translatable",
            )
        asked = body = _parse(raw, client)
        history = None
        if client.api == RESPONSES:
            body, history = await self._history(asked)
        try:
            read = codec.requests.read(body)
            request: Request = read.body
            request.model = self.models(request.model)
            written = target.requests.write(request)
        except ChatxError as exc:
            raise ApiError(400, f"chatx proxy: the {client.api} request: {exc}") from None
        lost = [*read.lost, *written.lost]
        if lost and self.strict:
            raise ApiError(
                400,
                f"chatx proxy --strict: the {self.api.api} API cannot hold "
                f"{', '.join(lost)} of this {client.api} request",
                param=lost[0],
                code="lost_in_translation",
            )
        plan = Plan(client, self.api, body, written.body, lost, body.get("stream") is True, asked)
        if client.api == RESPONSES:
            plan.renamer = Renamer(written.names) if written.names else None
            plan.history = history if body.get("store") is not False else None
            # The response says what the client asked and whether the gateway keeps it.
            plan.envelope = {**asked, "store": plan.history is not None}
            # An id of the gateway's own: a stateless upstream's ids need not be unique
            # (some count from 1 each start), and the store keeps responses by id.
            plan.rid = f"resp_{secrets.token_hex(24)}"
        return plan

    async def _history(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[Any] | None]:
        """The body with the history its ``previous_response_id`` names put before its
        input (the upstream keeps none), and the input items the conversation so far is,
        for the store; None when the gateway keeps nothing."""
        if self.store is None:
            if body.get("previous_response_id") is not None:
                raise ApiError(
                    400,
                    "chatx proxy: previous_response_id needs the gateway's store, which "
                    "--store none turned off",
                    param="previous_response_id",
                )
            return body, None
        items = _input_items(body.get("input"))
        previous = body.get("previous_response_id")
        if previous is None:
            return body, items
        if not isinstance(previous, str):
            raise ApiError(400, "previous_response_id is a string", param="previous_response_id")
        before = await self.workers.run(self.store.items, previous)
        if before is None:
            raise ApiError(
                400,
                f"Previous response with id '{previous}' not found.",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        history = [*before, *items]
        expanded = {k: v for k, v in body.items() if k != "previous_response_id"}
        expanded["input"] = history
        return expanded, history

    async def _send(
        self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send, client: Any, plan: Plan
    ) -> None:
        import httpx2

        path = scope["path"]
        url = self.upstream.url_for(self.api.path)
        line = f"POST {path} as {self.api.api}"
        if plan.lost:
            self.said_lost(f"{line}: lost: {', '.join(plan.lost)}")
        headers = self.upstream_headers(scope["headers"], plan.client)
        accept = b"text/event-stream" if plan.stream else b"application/json"
        headers += [
            (b"content-type", b"application/json"),
            (b"accept", accept),
            (b"accept-encoding", b"identity"),
        ]
        content = orjson.dumps(plan.sent)
        request = client.build_request("POST", url, headers=headers, content=content)
        try:
            response = await client.send(request, stream=True)
        except httpx2.HTTPError as exc:
            status = 504 if isinstance(exc, httpx2.TimeoutException) else 502
            said = self.upstream.redact(f"{type(exc).__name__}: {exc}")
            error = ApiError(status, f"chatx proxy: upstream {url}: {said}")
            self.log(f"{line}: {status} {error.message}")
            await asgi.respond_error(send, error, plan.client.api)
            return
        try:
            if not 200 <= response.status_code < 300:
                await self._error(send, response, plan, line)
            elif plan.stream:
                await self._stream(send, receive, response, plan, line, content)
            else:
                await self._final(send, response, plan, line, content)
        finally:
            await response.aclose()

    async def _error(self, send: asgi.Send, response: Any, plan: Plan, line: str) -> None:
        """The upstream's error, its status kept, in the client API's shape."""
        data = b""
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= _ERROR_READ:
                break
        error = upstream_error(response.status_code, data)
        self.log(f"{line} -> {response.status_code}: {error.message}")
        headers = error.headers()
        retry = response.headers.get("retry-after")
        if retry is not None and response.status_code == 429:
            headers = [(b"retry-after", retry.encode("latin-1", "replace"))] + [
                h for h in headers if h[0] != b"retry-after"
            ]
        await asgi.respond(send, error.status, error.body(plan.client.api), headers=headers)

    async def _stream(
        self,
        send: asgi.Send,
        receive: asgi.Receive,
        response: Any,
        plan: Plan,
        line: str,
        content: bytes,
    ) -> None:
        import httpx2

        from chatx.pipeline import Transcoder

        line += f" -> {response.status_code}"
        recording = self.recorder.open("POST", self.api.path, response, content)
        transcoder = Transcoder(
            plan.client.format,
            src=self.api.format,
            out_container="sse",
            options=EncodeOptions(request=plan.envelope),
            name=f"{self.upstream.shown}{self.api.path}",
            notes=plan.notes,
        )
        events = Outgoing(plan)
        head = [(b"content-type", asgi.EVENT_STREAM), (b"cache-control", b"no-cache")]
        await asgi.start_stream(send, 200, head + lost_header(plan.lost))
        watch = asgi.Watch(receive)
        whole, why = False, ""
        try:
            async for chunk in response.aiter_bytes():
                if recording is not None:
                    recording.write(chunk)
                await self._pass(send, events.feed(transcoder.feed(chunk)), events, plan)
                if watch.gone:
                    why = "the client left"
                    break
            else:
                whole = True
        except httpx2.HTTPError as exc:
            why = self.upstream.redact(f"the upstream stopped: {type(exc).__name__}: {exc}")
        except ChatxError as exc:
            why = f"the upstream's stream cannot be read as {self.api.format}: {exc}"
        finally:
            watch.close()
            kept = self.recorder.finish(recording, whole)
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

    async def _final(
        self, send: asgi.Send, response: Any, plan: Plan, line: str, content: bytes
    ) -> None:
        """A whole answer: read, recorded, made the client's final object."""
        import httpx2

        line += f" -> {response.status_code}"
        recording = self.recorder.open("POST", self.api.path, response, content)
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

    # -- the routes beside the APIs ------------------------------------------------------

    async def _stored(self, scope: asgi.Scope, send: asgi.Send) -> None:
        """``GET`` and ``DELETE /v1/responses/{id}``, answered from the store."""
        method = scope["method"]
        rid = self._stored_id(scope["path"]) or ""
        if method not in ("GET", "DELETE"):
            error = ApiError(405, f"Invalid method for URL ({method} {scope['path']})")
            await asgi.respond_error(send, error, RESPONSES)
            return
        found: Any = None
        if self.store is not None:
            if method == "GET":
                found = await self.workers.run(self.store.response, rid)
            elif await self.workers.run(self.store.delete, rid):
                found = orjson.dumps({"id": rid, "object": "response", "deleted": True})
        if found is None:
            missing = ApiError(404, f"Response with id '{rid}' not found.", param="response_id")
            await asgi.respond_error(send, missing, RESPONSES)
            return
        self.log(f"{method} {scope['path']}: from the store")
        await asgi.respond(send, 200, found)

    async def _models(self, scope: asgi.Scope, send: asgi.Send, client: Any) -> None:
        """``GET /v1/models`` of an upstream whose list is not OpenAI's, as OpenAI lists
        models (Anthropic's fields kept: its SDK reads the same list)."""
        import httpx2

        headers = self.upstream_headers(scope["headers"], endpoints()[0])
        url = self.upstream.url_for("/v1/models")
        try:
            response = await client.get(url, headers=headers)
        except httpx2.HTTPError as exc:
            said = self.upstream.redact(f"{type(exc).__name__}: {exc}")
            await asgi.respond_error(send, ApiError(502, f"chatx proxy: upstream {url}: {said}"))
            return
        if not 200 <= response.status_code < 300:
            error = upstream_error(response.status_code, response.content)
            await asgi.respond_error(send, error)
            return
        await asgi.respond(send, 200, orjson.dumps(model_list(response.content)))


class Outgoing:
    """The client's events as the transcoder writes them: cut into events, calls of
    renamed tools put back, and a Responses stream's last response kept for the store."""

    def __init__(self, plan: Plan) -> None:
        self.splitter = Events()
        self.renamer = plan.renamer
        self.rid = plan.rid
        self.response: dict[str, Any] | None = None
        self.kept = False  # the response is in the store

    def feed(self, data: bytes) -> list[bytes]:
        if not data:
            return []
        events = self.splitter.feed(data)
        return self._each(events) if self.renamer is not None or self.rid else events

    def finish(self) -> list[bytes]:
        return self._each(self.splitter.finish())

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


def client_key(headers: list[tuple[bytes, bytes]], client: HttpApi) -> str | None:
    """The API key as the client sent it: in its API's header first (``Authorization:
    Bearer`` or ``x-api-key``), else in the other."""
    found = {name.lower(): raw.decode("latin-1") for name, raw in headers}
    for header in (client.key_header.encode(), b"authorization", b"x-api-key"):
        said = found.get(header)
        if said:
            if header == b"authorization":
                scheme, _, token = said.partition(" ")
                return token.strip() if scheme.lower() == "bearer" else None
            return said.strip()
    return None


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


def model_list(data: bytes) -> dict[str, Any]:
    """An upstream's list of models as OpenAI's ``{"object": "list", "data": [...]}``:
    each with an ``id`` (Llama Stack's ``identifier``)."""
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        body = None
    listed = body.get("data") if isinstance(body, dict) else body
    out = []
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, dict):
            continue
        mid = entry.get("id") or entry.get("identifier") or entry.get("model_id")
        if isinstance(mid, str):
            out.append(
                {"object": "model", "created": 0, "owned_by": "upstream", **entry, "id": mid}
            )
    return {"object": "list", "data": out}


def _parse(raw: bytes, client: HttpApi) -> dict[str, Any]:
    """A request body as a JSON object, or the 400 its API answers (nested past what chatx
    reads refused as JSON that cannot be read is)."""
    from chatx.containers.payload import request_json

    try:
        body = request_json(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"We could not parse the JSON body of your request: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"the {client.api} request body is not a JSON object")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise ApiError(400, "Invalid type for 'stream': expected a boolean", param="stream")
    return body


def _input_items(value: Any) -> list[Any]:
    """A Responses request's ``input`` as a list of items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []

"""``chatx proxy --upstream-api API``: any client API over an upstream of another.

A request to another API's path than the upstream's is read with the client API's
request mapping, written with the upstream's (:class:`~chatx.codecs.base.RequestMapping`),
and sent to the upstream API's own path under ``--upstream``; the path is the
descriptor's, never the client's, so nothing a client sends chooses where it goes. What
the upstream answers comes back in the client's API.

The steps, each a module of its own, composed here by :class:`Gateway`:

- :mod:`chatx.live.gateway_plan`: the request planned across APIs (read, renamed,
  written; a Responses ``previous_response_id`` expanded from the store);
- :mod:`chatx.live.gateway_headers`: the upstream API's headers and key;
- this module: the request posted to the upstream;
- :mod:`chatx.live.gateway_answer`: the upstream's answer through the transcoder, as a
  stream, a final object or an error in the client's shape;
- :mod:`chatx.live.gateway_routes`: the models list and the stored responses.

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

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from chatx.codecs.base import HttpApi
from chatx.live import asgi
from chatx.live.endpoints import by_path, model_path, route, sse_asked
from chatx.live.errors import ApiError
from chatx.live.gateway_answer import Answers
from chatx.live.gateway_headers import UpstreamHeaders, client_secrets
from chatx.live.gateway_plan import RESPONSES, ModelMap, Plan, Planner
from chatx.live.gateway_routes import SideRoutes, stored_id

if TYPE_CHECKING:
    from chatx.live.store import Store
    from chatx.live.upstream import Upstream


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
        self.models = models or ModelMap([])
        self.store = store
        self.log = log or (lambda line: None)
        self.said_lost = lost or self.log
        workers = asgi.Workers()
        self.headers = UpstreamHeaders(upstream, api, key)
        self.planner = Planner(
            upstream=api, models=self.models, workers=workers, strict=strict, store=store
        )
        self.answers = Answers(
            upstream=upstream,
            api=api,
            recorder=recorder,
            workers=workers,
            store=store,
            log=self.log,
            said_lost=self.said_lost,
        )
        self.routes = SideRoutes(
            upstream=upstream, headers=self.headers, workers=workers, store=store, log=self.log
        )

    # -- which requests are the gateway's ------------------------------------------------

    def handles(self, method: str, path: str) -> bool:
        """POST to another API than the upstream's, GET /v1/models, and the stored
        responses when the upstream keeps none."""
        endpoint = by_path(path)
        if endpoint is not None:
            return method == "POST" and endpoint.api != self.api.api
        if path == "/v1/models":
            return self.api.api not in ("chat", RESPONSES)
        return stored_id(path) is not None and self.api.api != RESPONSES

    def same_api(
        self, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> tuple[list[tuple[bytes, bytes]], bytes]:
        """A request in the upstream's own API goes as it came, but for the model a
        ``--model`` rule renames and the key ``--upstream-key-env`` replaces."""
        headers = self.headers.same_api(headers)
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
        found = route(path)
        if found is None:
            await (
                self.routes.models(scope, send, client)
                if path == "/v1/models"
                else self.routes.stored(scope, send)
            )
            return
        endpoint = found.endpoint
        query = scope.get("query_string", b"")
        try:
            body = await asgi.read_body(receive)
            plan = await self.planner.plan(endpoint, body, found.model, found.stream)
        except ApiError as exc:
            self.log(f"{method} {path}: {exc.status} {exc.message}")
            await asgi.respond_error(send, exc, endpoint.api)
            return
        plan.array = plan.stream and not sse_asked(endpoint, query)
        plan.secrets = client_secrets(scope["headers"], query)
        try:
            await self._send(scope, receive, send, client, plan)
        except ApiError as exc:
            self.log(f"{method} {path}: {exc.status} {exc.message}")
            if not getattr(send, "started", False):
                await asgi.respond_error(send, exc, endpoint.api)

    def _target(self, plan: Plan) -> tuple[str, str]:
        """The upstream API's path and query: its descriptor's, the model put in where the
        path names it (Gemini's, percent-encoded into one segment: nothing in a model
        name reaches another path or host), the stream's route for a stream."""
        if "{model}" not in self.api.path:
            return self.api.path, ""
        if not plan.model:
            raise ApiError(
                400,
                f"chatx proxy: a {self.api.api} upstream takes the model in its path; "
                "the request names none (or --model CLIENT=UPSTREAM)",
                param="model",
            )
        path, _, query = model_path(self.api, plan.model, plan.stream).partition("?")
        return path, query

    async def _send(
        self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send, client: Any, plan: Plan
    ) -> None:
        """The planned request posted to the upstream API's own path, and its answer given
        back (a failure to reach the upstream is a 502, or a 504 when it is too slow)."""
        import httpx2

        path = scope["path"]
        url = self.upstream.url_for(*self._target(plan))
        line = f"POST {path} as {self.api.api}"
        if plan.lost:
            self.said_lost(f"{line}: lost: {', '.join(plan.lost)}")
        headers = self.headers.translated(
            scope["headers"], plan.client, scope.get("query_string", b"")
        )
        accept = b"text/event-stream" if plan.stream else b"application/json"
        headers += [
            (b"content-type", b"application/json"),
            (b"accept", accept),
            (b"accept-encoding", b"identity"),
        ]
        content = orjson.dumps(plan.sent)
        request = client.build_request("POST", url, headers=headers, content=content)
        sent = time.monotonic()  # the answer's head is recorded as this long after
        try:
            response = await client.send(request, stream=True)
        except httpx2.HTTPError as exc:
            status = 504 if isinstance(exc, httpx2.TimeoutException) else 502
            said = self.upstream.redact(f"{type(exc).__name__}: {exc}")
            error = ApiError(status, f"chatx proxy: upstream {url}: {said}")
            self.log(f"{line}: {status} {error.message}")
            await asgi.respond_error(send, error, plan.client.api)
            return
        answers = self.answers
        try:
            if not 200 <= response.status_code < 300:
                await answers.error(send, response, plan, line)
                return
            line += f" -> {response.status_code}"
            recording = answers.recorder.open("POST", answers.api.path, response, content, sent)
            if plan.stream:
                await answers.stream(send, receive, response, plan, line, recording)
            else:
                await answers.final(send, response, plan, line, recording)
        finally:
            await response.aclose()

"""``chatx proxy``'s ASGI app: forward every request, stream every response back, and
record what the upstream sent.

A request goes to the upstream as it came: method, path and query, headers (the API key
in ``Authorization`` included) and body; only the hop-by-hop headers are the proxy's own,
and ``Accept-Encoding`` asks for no compression, so that the bytes the client reads and
the bytes recorded are the upstream's. Each piece of the response is sent on as it
arrives. A successful answer to a ``POST`` (a stream, or a non-streaming JSON object) is
recorded as a capture named by time and endpoint (:class:`chatx.live.recorded_files.Namer`),
with its request body beside it, secrets left out.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from chatx.atomic import PlacementError
from chatx.containers.payload import TOO_DEEP, nests_too_deep
from chatx.live import asgi, endpoints
from chatx.live.errors import ApiError
from chatx.live.gateway import Gateway
from chatx.live.gateway_plan import ModelMap
from chatx.live.recorded_files import Namer, Recording
from chatx.live.upstream import Refused, Upstream, check_target

if TYPE_CHECKING:
    from chatx.codecs.base import HttpApi
    from chatx.live.store import Store
from chatx.textsafe import escape_text

# Headers about one connection, never forwarded (RFC 9110 7.6.1), and the ones the
# client library sets again for the upstream.
_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"trailers",
        b"transfer-encoding",
        b"upgrade",
    }
)
_SET_AGAIN = frozenset({b"host", b"content-length", b"accept-encoding"})

# Content types recorded, and the suffix each capture gets.
_SUFFIXES = {
    "text/event-stream": ".sse",
    "application/x-ndjson": ".jsonl",
    "application/ndjson": ".jsonl",
    "application/jsonl": ".jsonl",
    "application/json": ".json",
}
_STREAMED = (".sse", ".jsonl", ".sse.part", ".jsonl.part")


class Recorder:
    """Records successful answers into ``folder`` (None: records nothing) as captures
    named by :class:`~chatx.live.recorded_files.Namer`, the request beside each; ``check``
    (``--validate``) reads a finished stream's rule findings."""

    def __init__(
        self,
        folder: Path | None,
        log: Callable[[str], None],
        check: Callable[[Path], None] | None = None,
    ) -> None:
        self.namer = Namer(folder) if folder is not None else None
        self.log = log
        self.checker = check

    def open(
        self, method: str, path: str, response: Any, body: bytes, sent: float | None = None
    ) -> Recording | None:
        """A recording of the answer, or None (not recorded); ``sent``: when the request
        went (time.monotonic()), the answer's head having arrived now."""
        if self.namer is None or method != "POST" or not 200 <= response.status_code < 300:
            return None
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        suffix = _SUFFIXES.get(kind)
        if suffix is None:
            self.log(f"{method} {path}: {kind or 'no content type'}: not recorded")
            return None
        try:
            request: Any = orjson.loads(body)
        except orjson.JSONDecodeError:
            request = None  # not JSON: no request to write beside the capture
        return self.namer.open(path, suffix, request, sent)

    def finish(self, recording: Recording | None, whole: bool) -> Path | None:
        """The recording finished (or left ``NAME.part``); a part file something else
        replaced while it was written is left alone and said, the response still relayed."""
        if recording is None:
            return None
        try:
            if whole and recording.size == 0:  # an empty 200 is no capture: no empty file
                recording.discard()
                self.log("an empty body: not recorded")
                return None
            return recording.close(whole)
        except (OSError, PlacementError) as exc:
            self.log(f"not recorded: {exc}")
            return None

    async def relay(
        self,
        chunks: AsyncIterator[bytes],
        recording: Recording | None,
        receive: asgi.Receive,
        deliver: Callable[[bytes], Awaitable[str | None]],
        upstream: Upstream,
    ) -> tuple[Path | None, bool, str]:
        """Each chunk of an upstream's answer recorded and handed to ``deliver`` (the
        client's side, which says why it cannot go on, or None), until the answer ends
        or stops short: the client hangs up, the upstream fails (said as ``upstream``
        shows it), ``deliver`` cannot go on. Returns what :meth:`finish` kept of the
        recording, whether the answer came whole, and why not."""
        import httpx2

        watch = asgi.Watch(receive)
        whole, why = False, ""
        try:
            async for chunk in chunks:
                if recording is not None:
                    recording.write(chunk)
                why = await deliver(chunk) or ("the client left" if watch.gone else "")
                if why:
                    break
            else:
                whole = True
        except httpx2.HTTPError as exc:
            why = upstream.redact(f"the upstream stopped: {type(exc).__name__}: {exc}")
        finally:
            watch.close()
            kept = self.finish(recording, whole)
        return kept, whole, why

    def check(self, kept: Path | None) -> None:
        """``--validate``: the findings of a recorded stream, once it has ended."""
        if self.checker is not None and kept is not None and kept.name.endswith(_STREAMED):
            self.checker(kept)


class ProxyApp:
    """The proxy. With ``upstream_api`` (``--upstream-api``) it is also the translating
    gateway (:class:`~chatx.live.gateway.Gateway`): a request to another API's path is
    translated, everything else forwarded as it came."""

    def __init__(
        self,
        upstream: Upstream | str,
        record: Path | None,
        *,
        validate: bool = False,
        connect_timeout: float = 10.0,
        read_timeout: float | None = 600.0,
        log: Callable[[str], None] | None = None,
        findings: Callable[[str], None] | None = None,
        recorded: Callable[[Path], None] | None = None,
        upstream_api: HttpApi | None = None,
        models: ModelMap | None = None,
        upstream_key: str | None = None,
        strict: bool = False,
        store: Store | None = None,
        lost: Callable[[str], None] | None = None,
    ) -> None:
        self.upstream = (
            upstream if isinstance(upstream, Upstream) else Upstream.parse(upstream, "--upstream")
        )
        # ``recorded`` hears of each capture left whole (serve replays it from then on).
        self.recorded = recorded
        self.validate = validate
        self.timeouts = (connect_timeout, read_timeout)
        self.log = log or (lambda line: None)
        self.findings = findings or self.log
        self.recorder = Recorder(
            record, lambda line: self.log(line), self._validate if validate else None
        )
        self.gateway: Gateway | None = None
        if upstream_api is not None:
            self.gateway = Gateway(
                self.upstream,
                upstream_api,
                self.recorder,
                models=models,
                key=upstream_key,
                strict=strict,
                store=store,
                log=lambda line: self.log(line),
                lost=lost,
            )
        self.client: Any = None
        self.debug = False

    # -- lifespan: one upstream client, its connections reused ---------------------------

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        if scope["type"] == "lifespan":
            await asgi.lifespan(receive, send, self._open, self._close)
            return
        if scope["type"] != "http":
            return
        tracked = asgi.Tracked(send)
        try:
            await self._forward(scope, receive, tracked)
        except ApiError as exc:
            self.log(f"{scope['method']} {scope['path']}: {exc.status} {exc.message}")
            await asgi.respond_error(tracked, exc, _api_of(scope["path"]))
        except asgi.Disconnected:
            pass
        except Exception as exc:  # a bug: one line on stderr, a 500 body for the client
            if self.debug:
                raise
            said = self.upstream.redact(repr(exc))
            self.log(f"{scope['method']} {scope['path']}: internal error: {said}")
            if not tracked.started:
                failed = ApiError(500, f"chatx proxy: {said}")
                await asgi.respond_error(tracked, failed, _api_of(scope["path"]))

    async def _open(self) -> None:
        import httpx2

        connect, read = self.timeouts
        timeout = httpx2.Timeout(connect=connect, read=read, write=connect, pool=None)
        self.client = httpx2.AsyncClient(timeout=timeout, follow_redirects=False)

    async def _close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        if self.gateway is not None and self.gateway.store is not None:
            self.gateway.store.close()

    # -- one request ---------------------------------------------------------------------

    def target(self, scope: asgi.Scope) -> str:
        """The upstream URL of a request: the upstream's own origin and base path, then
        the path and query the client sent, checked (:func:`check_target`) so that no
        request-target can name another host or climb out of the base path."""
        raw = scope.get("raw_path") or scope["path"].encode()
        try:
            path, query = check_target(raw, scope.get("query_string", b""))
        except Refused as exc:
            raise ApiError(400, f"chatx proxy: {exc}") from None
        return self.upstream.url_for(path, query)

    async def _forward(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        import httpx2

        if self.client is None:  # served without lifespan (a test calling the app)
            await self._open()
        method = scope["method"]
        url = self.target(scope)  # refused before the body is read or anything is sent
        gateway = self.gateway
        if gateway is not None and gateway.handles(method, scope["path"]):
            await gateway.handle(scope, receive, send, self.client)
            return
        body = await asgi.read_body(receive)
        if nests_too_deep(body):  # refused before relaying: never a 200, then a cut
            raise ApiError(400, f"chatx proxy: the request body is {TOO_DEEP}")
        headers = [
            (key, value)
            for key, value in scope["headers"]
            if key.lower() not in _HOP and key.lower() not in _SET_AGAIN
        ]
        headers.append((b"accept-encoding", b"identity"))
        if gateway is not None:  # --model and --upstream-key-env apply to the upstream's API too
            headers, body = gateway.same_api(headers, body)
        basic = self.upstream.authorization
        if basic is not None:  # the credentials written into --upstream, to it alone
            headers = [(k, v) for k, v in headers if k.lower() != b"authorization"]
            headers.append((b"authorization", basic.encode("latin-1")))
        request = self.client.build_request(method, url, headers=headers, content=body)
        sent = time.monotonic()  # the answer's head is recorded as this long after
        try:
            response = await self.client.send(request, stream=True)
        except httpx2.HTTPError as exc:
            status = 504 if isinstance(exc, httpx2.TimeoutException) else 502
            said = self.upstream.redact(f"{type(exc).__name__}: {exc}")
            raise ApiError(
                status, self.upstream.redact(f"chatx proxy: upstream {url}: {said}")
            ) from None
        try:
            await self._relay(scope, receive, send, response, body, sent)
        finally:
            await response.aclose()

    async def _relay(
        self,
        scope: asgi.Scope,
        receive: asgi.Receive,
        send: asgi.Send,
        response: Any,
        body: bytes,
        sent: float | None = None,
    ) -> None:
        method, path = scope["method"], scope["path"]
        line = f"{method} {path} -> {response.status_code}"
        # A server that compressed all the same: the client gets the bytes decoded.
        encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
        dropped = _HOP | ({b"content-encoding", b"content-length"} if encoded else frozenset())
        head = [(k, v) for k, v in response.headers.raw if k.lower() not in dropped]
        recording = self.recorder.open(method, path, response, body, sent)
        await asgi.start_stream(send, response.status_code, head)

        async def deliver(chunk: bytes) -> None:
            await asgi.send_piece(send, chunk)

        chunks = response.aiter_bytes() if encoded else response.aiter_raw()
        kept, whole, why = await self.recorder.relay(
            chunks, recording, receive, deliver, self.upstream
        )
        if whole:
            await asgi.end_stream(send)
        if recording is not None and kept is not None:
            line += f", recorded {kept} ({recording.size} bytes{'' if whole else ', incomplete'})"
            if whole and self.recorded is not None:
                self.recorded(kept)
        # An unfinished response is left so: uvicorn drops the connection.
        self.log(line if whole else f"{line}: {why}; the connection is cut")
        self.recorder.check(kept)

    def _validate(self, path: Path) -> None:
        import chatx
        from chatx.errors import ChatxError

        try:
            found = chatx.validate(path.read_bytes(), file=str(path))
        except ChatxError as exc:
            self.findings(f"chatx: proxy: {escape_text(str(exc))}")
            return
        for f in found:  # as chatx validate prints them, after the chatx prefix
            self.findings(
                f"chatx: proxy: {escape_text(f.file)}:{f.line}: {f.rule} {f.severity} "
                f"{escape_text(f.message)}"
            )
        if not found:
            self.findings(f"chatx: proxy: {escape_text(str(path))}: no findings")


def _api_of(path: str) -> str | None:
    """The API whose path the client asked (``/v1/messages``: Anthropic's), so that an
    error chatx makes (the upstream unreachable, a refused target) comes in the shape that
    client reads; OpenAI's for any other path."""
    found = endpoints.by_path(path)
    return found.api if found is not None else None

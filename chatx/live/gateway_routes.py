"""The gateway's routes beside the APIs: ``GET /v1/models`` of an upstream whose list is
not OpenAI's, and ``GET`` / ``DELETE /v1/responses/{id}`` answered from the gateway's
store when the upstream keeps no responses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from chatx.live import asgi
from chatx.live.endpoints import endpoints
from chatx.live.errors import ApiError
from chatx.live.gateway_answer import upstream_error
from chatx.live.gateway_plan import RESPONSES

if TYPE_CHECKING:
    from chatx.live.gateway_headers import UpstreamHeaders
    from chatx.live.store import Store
    from chatx.live.upstream import Upstream


def stored_id(path: str) -> str | None:
    """The id in a path ``/v1/responses/{id}``, or None for another path."""
    prefix = "/v1/responses/"
    rid = path[len(prefix) :] if path.startswith(prefix) else ""
    return rid if rid and "/" not in rid else None


@dataclass(slots=True, kw_only=True)
class SideRoutes:
    """Answers the routes beside the APIs: the models list from ``upstream`` (asked with
    ``headers``), the stored responses from ``store`` (run in ``workers``)."""

    upstream: Upstream
    headers: UpstreamHeaders
    workers: asgi.Workers
    store: Store | None
    log: Callable[[str], None]

    async def stored(self, scope: asgi.Scope, send: asgi.Send) -> None:
        """``GET`` and ``DELETE /v1/responses/{id}``, answered from the store."""
        method = scope["method"]
        rid = stored_id(scope["path"]) or ""
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

    async def models(self, scope: asgi.Scope, send: asgi.Send, client: Any) -> None:
        """``GET /v1/models`` of an upstream whose list is not OpenAI's, as OpenAI lists
        models (Anthropic's fields kept: its SDK reads the same list)."""
        import httpx2

        headers = self.headers.translated(scope["headers"], endpoints()[0])
        api = self.headers.api
        # Gemini lists its models under its own version: /v1beta/models
        listed = api.path.split("/models/")[0] + "/models" if "{model}" in api.path else ""
        url = self.upstream.url_for(listed or "/v1/models")
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


def model_list(data: bytes) -> dict[str, Any]:
    """An upstream's list of models as OpenAI's ``{"object": "list", "data": [...]}``:
    each with an ``id`` (Llama Stack's ``identifier``, Gemini's ``name`` without its
    ``models/``)."""
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        body = None
    listed = body.get("data", body.get("models")) if isinstance(body, dict) else body
    out = []
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, dict):
            continue
        mid = entry.get("id") or entry.get("identifier") or entry.get("model_id")
        if mid is None and isinstance(entry.get("name"), str):
            mid = entry["name"].removeprefix("models/")
        if isinstance(mid, str):
            out.append(
                {"object": "model", "created": 0, "owned_by": "upstream", **entry, "id": mid}
            )
    return {"object": "list", "data": out}

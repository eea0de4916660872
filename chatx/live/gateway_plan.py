"""The gateway's first step: a client's request planned across APIs.

A body in the client API is read with its request mapping and written with the
upstream's (:class:`~chatx.codecs.base.RequestMapping`); ``--model`` renames the model on
the way (:class:`ModelMap`), and ``--strict`` refuses what the upstream API cannot hold.
A Responses client's ``previous_response_id`` is expanded here from the gateway's store
into the history it names, since the upstream keeps none. The :class:`Plan` is what the
later steps (:mod:`chatx.live.gateway_answer`) need to answer in the client's API.
"""

from __future__ import annotations

import fnmatch
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chatx import codecs
from chatx.codecs.base import HttpApi
from chatx.errors import ChatxError, UsageError
from chatx.live.asgi import parse_request
from chatx.live.errors import ApiError
from chatx.live.renamed import Renamer
from chatx.notes import Notes

if TYPE_CHECKING:
    from chatx.live.asgi import Workers
    from chatx.live.store import Store
    from chatx.request import Request

RESPONSES = "responses"  # the API whose state the gateway keeps


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
    model: str | None = None  # the upstream's model: its path names it where the API's does
    array: bool = False  # a Gemini stream asked for without alt=sse: one JSON array
    secrets: tuple[
        str, ...
    ] = ()  # the client's keys, said as *** wherever the upstream echoes them


@dataclass(slots=True, kw_only=True)
class Planner:
    """Makes the :class:`Plan` of one request to the ``upstream`` API: ``models`` renames
    its model, ``strict`` refuses a request the upstream cannot hold whole, ``store`` (run
    in ``workers``, off the event loop) gives a ``previous_response_id``'s history."""

    upstream: HttpApi
    models: ModelMap
    workers: Workers
    strict: bool = False
    store: Store | None = None

    async def plan(
        self, client: HttpApi, raw: bytes, model: str | None = None, stream: bool | None = None
    ) -> Plan:
        """The plan of a request body ``raw`` in the ``client`` API, or the
        :class:`~chatx.live.errors.ApiError` (400) the client is answered. ``model`` and
        ``stream``: what the client's path says, where its API's path says them
        (Gemini's ``/v1beta/models/{model}:streamGenerateContent``)."""
        codec = codecs.get(client.format)
        target = codecs.get(self.upstream.format)
        if codec.requests is None or target.requests is None:
            which = client.api if codec.requests is None else self.upstream.api
            raise ApiError(
                400,
                f"chatx proxy: {which} requests cannot be translated (its format has no "
                f"request mapping); send {self.upstream.api} requests ({self.upstream.path})",
                code="not_translatable",
            )
        asked = body = parse_request(raw, client)
        history = None
        if client.api == RESPONSES:
            body, history = await self._history(asked)
        try:
            read = codec.requests.read(body)
            request: Request = read.body
            if model is not None:
                request.model = model
            if stream is not None:
                request.stream = stream
            request.model = self.models(request.model)
            written = target.requests.write(request)
        except ChatxError as exc:
            raise ApiError(400, f"chatx proxy: the {client.api} request: {exc}") from None
        lost = [*read.lost, *written.lost]
        if lost and self.strict:
            raise ApiError(
                400,
                f"chatx proxy --strict: the {self.upstream.api} API cannot hold "
                f"{', '.join(lost)} of this {client.api} request",
                param=lost[0],
                code="lost_in_translation",
            )
        streams = request.stream if stream is not None else body.get("stream") is True
        plan = Plan(client, self.upstream, body, written.body, lost, streams, asked)
        plan.model = request.model
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


def _input_items(value: Any) -> list[Any]:
    """A Responses request's ``input`` as a list of items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []

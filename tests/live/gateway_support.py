"""Shared by the gateway's tests: an upstream that answers what a test scripts and
records every request it gets, streams in each upstream API's shape, and the gateway
(``chatx proxy --upstream-api``) running in front of it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chatx.live.endpoints import by_name
from chatx.live.gateway_plan import ModelMap
from chatx.live.proxy import ProxyApp
from chatx.live.store import Store
from tests.live.support import TIMEOUT, Running


@dataclass
class Answer:
    """What the upstream sends for one request: its status, its body in pieces (each sent
    as it is), and ``cut``: the connection dropped after the pieces."""

    chunks: list[bytes]
    status: int = 200
    content_type: bytes = b"text/event-stream"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    cut: bool = False
    # The rest waits, after ``gate_after`` pieces, until the test opens the gate: what
    # the client reads by then came through the gateway before the upstream ended.
    gate: threading.Event | None = None
    gate_after: int = 1


@dataclass
class Got:
    method: str
    path: str
    headers: dict[bytes, bytes]
    body: Any


class Scripted:
    """An upstream on loopback: answers each request with the next of ``answers`` (the
    last one again when they run out) and keeps what it got."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.got: list[Got] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            parsed = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = body
        self.got.append(Got(scope["method"], scope["path"], dict(scope["headers"]), parsed))
        if scope["method"] == "GET":  # a client looking at the models: not an answer's turn
            listed = {"object": "list", "data": [{"id": "upstream-model", "object": "model"}]}
            answer = Answer([orjson.dumps(listed)], content_type=b"application/json")
        else:
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        head = [(b"content-type", answer.content_type), *answer.headers]
        await send({"type": "http.response.start", "status": answer.status, "headers": head})
        for number, chunk in enumerate(answer.chunks):
            if answer.gate is not None and number == answer.gate_after:
                deadline = time.monotonic() + TIMEOUT
                while not answer.gate.is_set() and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if not answer.cut:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def sse(*payloads: Any, names: bool = False) -> list[bytes]:
    """Each payload as one SSE event (``event:`` lines from its type when ``names``);
    ``"[DONE]"`` as chat's last line."""
    out = []
    for payload in payloads:
        if payload == "[DONE]":
            out.append(b"data: [DONE]\n\n")
            continue
        head = f"event: {payload['type']}\n".encode() if names else b""
        out.append(head + b"data: " + orjson.dumps(payload) + b"\n\n")
    return out


def chat_chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-gw1",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "upstream-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **more,
    }


USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def chat_text(*pieces: str, usage: dict[str, Any] | None = None) -> list[bytes]:
    """A chat stream saying ``pieces``, then stop and usage."""
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({"content": piece}) for piece in pieces]
    chunks.append(chat_chunk({}, "stop"))
    chunks.append({**chat_chunk({}), "choices": [], "usage": usage or USAGE})
    return sse(*chunks, "[DONE]")


def chat_call(call_id: str, name: str, *pieces: str, reasoning: str = "") -> list[bytes]:
    """A chat stream that calls ``name`` with the arguments ``pieces`` (joined)."""
    chunks = [chat_chunk({"role": "assistant", "content": None})]
    if reasoning:
        chunks.append(chat_chunk({"reasoning_content": reasoning}))
    start = {"index": 0, "id": call_id, "type": "function", "function": {"name": name}}
    chunks.append(
        chat_chunk({"tool_calls": [{**start, "function": {"name": name, "arguments": ""}}]})
    )
    for piece in pieces:
        chunks.append(chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    chunks.append(chat_chunk({}, "tool_calls"))
    chunks.append({**chat_chunk({}), "choices": [], "usage": USAGE})
    return sse(*chunks, "[DONE]")


@contextmanager
def gateway(
    upstream: Scripted,
    api: str,
    record: Path | None = None,
    *,
    models: list[str] | None = None,
    key: str | None = None,
    strict: bool = False,
    store: Path | None = None,
) -> Iterator[tuple[Running, list[str]]]:
    """The upstream on a free loopback port and the gateway in front of it; the lines it
    says (lost lines among them)."""
    said: list[str] = []
    with Running(upstream) as up:
        app = ProxyApp(
            up.url,
            record,
            log=said.append,
            upstream_api=by_name(api),
            models=ModelMap.parse(models or []),
            upstream_key=key,
            strict=strict,
            store=Store(store) if store is not None else None,
            lost=said.append,
        )
        with Running(app, lifespan="on") as proxy:
            yield proxy, said


# -- what an upstream received is a request of its API: the SDKs' own request types ----------

_PARAMS = {
    "chat": ("openai.types.chat.completion_create_params", "CompletionCreateParams"),
    "responses": ("openai.types.responses.response_create_params", "ResponseCreateParams"),
    "anthropic": ("anthropic.types.message_create_params", "MessageCreateParams"),
}


_ADAPTERS: dict[str, Any] = {}


def assert_valid(api: str, body: Any) -> None:
    """``body`` passes the SDK's request type of ``api``. Its messages, tools and parts
    are ``Iterable``s that pydantic checks only when walked, so the result is walked."""
    from importlib import import_module

    from pydantic import TypeAdapter

    adapter = _ADAPTERS.get(api)
    if adapter is None:  # kept: a lazy iterator needs its adapter alive while it is walked
        module, name = _PARAMS[api]
        adapter = _ADAPTERS[api] = TypeAdapter(getattr(import_module(module), name))
    _walk(adapter.validate_python(body))


def _walk(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _walk(item)
    elif isinstance(value, str | bytes | int | float | bool) or value is None:
        return
    elif hasattr(value, "__iter__"):
        for item in value:
            _walk(item)

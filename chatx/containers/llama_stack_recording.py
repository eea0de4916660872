"""Llama Stack's inference recorder: one JSON object per recorded upstream call,
``{test_id, request: {method, url, body, endpoint, model…}, response: {body,
is_streaming}}``.

A streamed response is a list of the SDK objects the client received, each
``{"__type__": "…ChatCompletionChunk", "__data__": {…}}`` (the SDK's ``model_dump()``:
every optional field present, null or not). Their ``__data__`` are written back as JSON
lines, one payload per line as the recorder kept them (there is no ``[DONE]`` to
restore); a non-streamed object as its JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chatx.containers import exact
from chatx.containers.bodies import Entry, json_object
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError


def entries(data: bytes) -> Iterator[Entry]:
    """The one call a recording holds."""
    document = _document(data)
    request = document.get("request") if isinstance(document, dict) else None
    response = document.get("response") if isinstance(document, dict) else None
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise InputError("not a Llama Stack recording: no request and response", line=1)
    method, url = request.get("method"), request.get("url")
    body = response.get("body")
    yield Entry(
        0,
        1,
        method=method if isinstance(method, str) else None,
        url=url if isinstance(url, str) else None,
        request=json_object(request.get("body")),
        load=lambda: _bytes(body, response.get("is_streaming") is True),
    )


def _document(data: bytes) -> Any:
    """The recording's JSON, integers beyond 64 bits read exactly (orjson makes them
    doubles): a chunk's payload keeps them, as the same chunk read bare does."""
    return exact.document(data)


def _bytes(body: Any, streaming: bool) -> bytes:
    if streaming and isinstance(body, list) and all(isinstance(line, str) for line in body):
        # The current recorder keeps a stream it did not parse (Anthropic's /v1/messages)
        # as its SSE lines, "event: …", "data: {…}", "" between events.
        return "\n".join(body).encode("utf-8", "surrogatepass") + b"\n"
    if streaming and isinstance(body, list):
        return b"".join(lenient_dumps(_data(item)) + b"\n" for item in body)
    if body is None:
        return b""
    return lenient_dumps(_data(body))


def _data(item: Any) -> Any:
    """An SDK object's fields, as the recorder stored them beside their type's name."""
    if isinstance(item, dict) and "__data__" in item:
        return item["__data__"]
    return item

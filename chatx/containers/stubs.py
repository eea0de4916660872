"""Recorded exchanges kept as request/response JSON by test tools that stand in for a
server: one exchange per file, or a list of them.

- **One exchange** ``{request, response}`` (kind ``exchange``): Datadog's test agent VCR
  proxy (``ddapm-test-agent``, as dd-trace-py records through it) writes
  ``{request: {method, url, headers, body}, response: {status: {code, message},
  headers, body}}``; a WireMock stub mapping file is ``{request: {method, url |
  urlPath | urlPattern, bodyPatterns}, response: {status, headers, body | base64Body |
  jsonBody}}``.
- **WireMock's list of mappings** ``{mappings: [...]}`` (kind ``wiremock``), as its
  ``/__admin/mappings`` export and ``--record-mappings`` write them.
- **A Hoverfly simulation** ``{data: {pairs: [{request, response}]}, meta}`` (kind
  ``hoverfly``): the request's fields are lists of matchers
  (``path: [{matcher: "exact", value: "/v1/…"}]``), the response's body is text, or
  base64 with ``encodedBody: true``.

A body kept as text is the bytes the server sent (an SSE stream, JSON); WireMock's
``jsonBody`` is a JSON value written back as bytes, its ``bodyFileName`` a file under
``__files`` beside the ``mappings`` folder (:mod:`chatx.containers.bodyfile`). A recorded ``Content-Encoding`` is
undone through the bounded decompression every body goes through.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chatx.containers import bodyfile, exact
from chatx.containers.bodies import (
    Entry,
    b64,
    decoded,
    header,
    json_object,
    status_code,
    text_bytes,
)
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError


def entries(kind: str, data: bytes, path: str | None = None) -> Iterator[Entry]:
    """The exchanges of a file of ``kind`` (``exchange``, ``wiremock``, ``hoverfly``);
    ``path`` is where the file is (None for stdin), for WireMock's ``bodyFileName``."""
    document = _document(data)
    if kind == "exchange":
        items: Any = [document]
    elif kind == "wiremock":
        items = document.get("mappings")
    else:
        items = (document.get("data") or {}).get("pairs")
    if not isinstance(items, list):
        raise InputError(f"not a {kind} file: no list of exchanges", line=1)
    for index, item in enumerate(items):
        yield _hoverfly(index, item) if kind == "hoverfly" else _exchange(index, item, path)


def _document(data: bytes) -> dict[str, Any]:
    document = exact.document(data)
    if not isinstance(document, dict):
        raise InputError("not a file of exchanges: not a JSON object", line=1)
    return document


def _parts(item: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    item = item if isinstance(item, dict) else {}
    request, response = item.get("request"), item.get("response")
    return (
        request if isinstance(request, dict) else {},
        response if isinstance(response, dict) else {},
    )


def _exchange(index: int, item: Any, path: str | None) -> Entry:
    """A Datadog cassette or a WireMock mapping: the same two objects, named alike."""
    request, response = _parts(item)
    headers = response.get("headers")
    method = request.get("method")
    url = next(
        (request[k] for k in ("url", "urlPath", "urlPattern", "urlPathPattern") if k in request),
        None,
    )
    return Entry(
        index,
        None,
        method=method.upper() if isinstance(method, str) and method != "ANY" else None,
        url=url if isinstance(url, str) else None,
        status=status_code(response.get("status")),
        content_type=header(headers, "content-type"),
        request=_request(request),
        load=lambda: decoded(_body(response, path), header(headers, "content-encoding")),
    )


def _request(request: dict[str, Any]) -> dict[str, Any] | None:
    """The recorded request body (Datadog's ``body``), or the JSON a WireMock mapping
    matches the whole body against (``bodyPatterns: [{equalToJson: …}]``)."""
    if "body" in request:
        return json_object(request["body"])
    for pattern in request.get("bodyPatterns") or ():
        if isinstance(pattern, dict) and "equalToJson" in pattern:
            return json_object(pattern["equalToJson"])
    return None


def _body(response: dict[str, Any], path: str | None) -> bytes:
    if "base64Body" in response:
        return b64(str(response["base64Body"]))
    if "jsonBody" in response:
        return lenient_dumps(response["jsonBody"])
    if "bodyFileName" in response and "body" not in response:
        return bodyfile.read(response["bodyFileName"], path)
    return text_bytes(response.get("body"))


def _hoverfly(index: int, item: Any) -> Entry:
    request, response = _parts(item)
    headers = response.get("headers")
    host, path = _matched(request.get("destination")), _matched(request.get("path"))
    scheme = _matched(request.get("scheme")) or "https"
    url = f"{scheme}://{host}{path or ''}" if host else path
    method = _matched(request.get("method"))
    body = response.get("body")
    encoded = response.get("encodedBody") is True
    return Entry(
        index,
        None,
        method=method.upper() if method else None,
        url=url,
        status=status_code(response.get("status")),
        content_type=header(headers, "content-type"),
        request=json_object(_matched(request.get("body"))),
        load=lambda: decoded(
            b64(str(body)) if encoded else text_bytes(body), header(headers, "content-encoding")
        ),
    )


def _matched(matchers: Any) -> str | None:
    """What an exact matcher asks for (Hoverfly v5: a list of ``{matcher, value}``; older
    simulations: the value itself); None for a pattern (glob, regex) or nothing."""
    if isinstance(matchers, str):
        return matchers
    for matcher in matchers if isinstance(matchers, list) else ():
        if isinstance(matcher, dict) and matcher.get("matcher") in ("exact", "json"):
            value = matcher.get("value")
            return value if isinstance(value, str) else None
    return None

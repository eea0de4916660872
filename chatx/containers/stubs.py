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

A file too big to hold is walked as it is read (:func:`json_document.document`): a response
body's string there (text or base64) is decoded in pieces into a temporary file.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from chatx.containers import bodies, bodyfile, json_document
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError

# Where each kind keeps its response bodies' strings: those walked out of a file too big
# to hold (see json_document.document), standing there as a bodies.Walked.
_RESPONSE = (("response", "body"), ("response", "base64Body"))
_BODIES = {
    "exchange": frozenset(_RESPONSE),
    "wiremock": frozenset(("mappings", None, *keys) for keys in _RESPONSE),
    "hoverfly": frozenset({("data", "pairs", None, "response", "body")}),
}


def entries(kind: str, source: bytes | BinaryIO, path: str | None = None) -> Iterator[bodies.Entry]:
    """The exchanges of a file of ``kind`` (``exchange``, ``wiremock``, ``hoverfly``);
    ``path`` is where the file is (None for stdin), for WireMock's ``bodyFileName``."""
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    document = _document(json_document.document(stream, _BODIES[kind], bodies.Walked))
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


def _document(document: Any) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise InputError("not a file of exchanges: not a JSON object", line=1)
    return document


def _exchange(index: int, item: Any, path: str | None) -> bodies.Entry:
    """A Datadog cassette or a WireMock mapping: the same two objects, named alike."""
    request, response = bodies.objects(item, "request", "response")
    method = request.get("method")
    url = next(
        (request[k] for k in ("url", "urlPath", "urlPattern", "urlPathPattern") if k in request),
        None,
    )
    return bodies.exchange(
        index,
        response.get("headers"),
        lambda: _body(response, path),
        lambda: _request(request),
        method=bodies.verb(method) if method != "ANY" else None,
        url=url if isinstance(url, str) else None,
        status=bodies.status_code(response.get("status")),
        pieces=_walked(response),
    )


def _walked(response: dict[str, Any]) -> Callable[[], Iterator[bytes]] | None:
    """The pieces of the body :func:`_body` reads, when it was walked out of a file too
    big to hold; None for one read with the rest of the file."""
    if "base64Body" in response:
        return _pieces(response["base64Body"], base64=True)
    if "jsonBody" in response or "bodyFileName" in response and "body" not in response:
        return None
    return _pieces(response.get("body"))


def _pieces(body: Any, base64: bool = False) -> Callable[[], Iterator[bytes]] | None:
    if not isinstance(body, bodies.Walked):
        return None
    return bodies.Walked(body.text, base64=True).pieces if base64 else body.pieces


def _request(request: dict[str, Any]) -> dict[str, Any] | None:
    """The recorded request body (Datadog's ``body``), or the JSON a WireMock mapping
    matches the whole body against (``bodyPatterns: [{equalToJson: …}]``)."""
    if "body" in request:
        return bodies.json_object(request["body"])
    for pattern in request.get("bodyPatterns") or ():
        if isinstance(pattern, dict) and "equalToJson" in pattern:
            return bodies.json_object(pattern["equalToJson"])
    return None


def _body(response: dict[str, Any], path: str | None) -> bytes:
    if "base64Body" in response:
        return bodies.b64(str(response["base64Body"]))
    if "jsonBody" in response:
        return lenient_dumps(response["jsonBody"])
    if "bodyFileName" in response and "body" not in response:
        return bodyfile.read(response["bodyFileName"], path)
    return bodies.text_bytes(response.get("body"))


def _hoverfly(index: int, item: Any) -> bodies.Entry:
    request, response = bodies.objects(item, "request", "response")
    host, path = _matched(request.get("destination")), _matched(request.get("path"))
    scheme = _matched(request.get("scheme")) or "https"
    url = f"{scheme}://{host}{path or ''}" if host else path
    method = _matched(request.get("method"))
    body = response.get("body")
    encoded = response.get("encodedBody") is True
    return bodies.exchange(
        index,
        response.get("headers"),
        lambda: bodies.b64(str(body)) if encoded else bodies.text_bytes(body),
        lambda: bodies.json_object(_matched(request.get("body"))),
        method=method.upper() if method else None,
        url=url,
        status=bodies.status_code(response.get("status")),
        pieces=_pieces(body, base64=encoded),
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

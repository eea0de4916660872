"""Recordings written by Node's nock (``nock.back`` fixtures, ``nock.recorder`` with
``output_objects``): a JSON array of ``{scope, method, path, body, status, response,
rawHeaders, responseIsBinary}``.

``scope`` is the origin (``https://api.anthropic.com:443``), ``path`` the rest of the
URL. ``response`` is the body as nock read it: a string (text), a JSON value (nock
parses a JSON body), or, for bytes it could not keep as text (a gzip body), a list of
hex strings, one per chunk received. ``rawHeaders`` is the flat ``[name, value, …]``
list Node gives (newer nock: an object), so a recorded ``content-encoding`` is undone
through the bounded decompression every body goes through.

A recording too big to hold is walked as it is read (:func:`json_document.document`): a
``response`` that is a string there is decoded in pieces into a temporary file.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, BinaryIO

from chatx.containers import bodies, json_document
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError

# A response kept as text, walked out of a file too big to hold (see json_document.document).
_BODIES = frozenset({(None, "response")})


def entries(source: bytes | BinaryIO) -> Iterator[bodies.Entry]:
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    document = json_document.document(stream, _BODIES, bodies.Walked)
    if not isinstance(document, list):
        raise InputError("not a nock recording: not a JSON array", line=1)
    for index, item in enumerate(document):
        yield _entry(index, item if isinstance(item, dict) else {})


def _entry(index: int, item: dict[str, Any]) -> bodies.Entry:
    headers = _headers(item.get("rawHeaders", item.get("headers")))
    method, scope, path = item.get("method"), item.get("scope"), item.get("path")
    url = (_origin(scope) if isinstance(scope, str) else "") + (
        path if isinstance(path, str) else ""
    )
    response = item.get("response")
    return bodies.exchange(
        index,
        headers,
        lambda: _body(response),
        lambda: bodies.json_object(item.get("body")),
        method=bodies.verb(method),
        url=url or None,
        status=bodies.status_code(item.get("status")),
        pieces=response.pieces if isinstance(response, bodies.Walked) else None,
    )


def _origin(scope: str) -> str:
    """The scope without the port its scheme implies (nock writes ``:443``)."""
    for scheme, port in (("https://", ":443"), ("http://", ":80")):
        if scope.startswith(scheme) and scope.endswith(port):
            return scope.removesuffix(port)
    return scope


def _headers(raw: Any) -> Any:
    """Node's flat ``[name, value, name, value]`` as a mapping ``header`` reads."""
    if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        return dict(zip(raw[::2], raw[1::2], strict=False))
    return raw


def _body(response: Any) -> bytes:
    if isinstance(response, str):
        return response.encode("utf-8", "surrogatepass")
    if isinstance(response, list) and response and all(isinstance(x, str) for x in response):
        try:  # the chunks nock kept as hex because they were not text
            return b"".join(bytes.fromhex(chunk) for chunk in response)
        except ValueError:
            raise bodies.BodyError("bad hex in a binary response chunk") from None
    if response is None:
        return b""
    return lenient_dumps(response)

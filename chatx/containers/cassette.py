"""VCR cassettes: VCR.py and pytest-recording (``interactions:``), Ruby VCR
(``http_interactions:``), as YAML or as JSON.

A YAML cassette is read with PyYAML (:mod:`chatx.containers.bounded_yaml`): each writer
picks its own scalar style for a body (literal ``|``, folded ``>``, single- or
double-quoted, wrapped) and only a YAML parser reads them all back to the same text.

Response bodies come as ``body: {string: …}`` (text, or bytes from ``!!binary``), Ruby's
``{encoding, string: !binary …}`` or ``{base64_string: …}``, a plain string, or a
``parsed_body`` a serializer stored already parsed: a JSON object, a list of SSE events
(``{event, data}``), or a list of payloads. Parsed bodies are written back as the bytes
a server sends: SSE for events, JSON lines for payloads, JSON for an object.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from chatx.containers import bodies, json_document, yaml_walk
from chatx.containers.bounded_yaml import Undecodable, as_json
from chatx.containers.lines import BOM
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError

_SSE_KEYS = {"event", "data", "id", "retry"}


def entries(source: bytes | BinaryIO) -> Iterator[bodies.Entry]:
    """The interactions of a cassette read from ``source`` (its bytes, or a stream)."""
    document = _load(io.BytesIO(source) if isinstance(source, bytes) else source)
    items, name = None, "interactions"
    if isinstance(document, dict):
        name = "interactions" if "interactions" in document else "http_interactions"
        items = document.get(name)
    if not isinstance(items, list):
        raise InputError("not a VCR cassette: no list of interactions", line=1)
    for index, item in enumerate(items):
        yield _entry(index, item if isinstance(item, dict) else {}, f"{name}[{index}]")


def _load(stream: BinaryIO) -> Any:
    head = b""  # up to the first byte that is no blank: JSON's "{", or YAML
    while len(head) < len(BOM) or not head.removeprefix(BOM).lstrip():
        read = stream.read(1 << 16)
        if not read:
            break
        head += read
    if head.removeprefix(BOM).lstrip()[:1] == b"{":  # a JSON cassette
        return _load_json(bodies.again(head.removeprefix(BOM), stream))
    return _load_yaml(bodies.again(head, stream))


def _load_yaml(stream: BinaryIO) -> Any:
    """A YAML cassette; one too big to hold is walked (see :mod:`yaml_walk`)."""
    return yaml_walk.load(stream)


# Where a JSON cassette's response bodies are: a string, or a string under ``string`` or
# Ruby's ``base64_string``. One longer than json_document.KEEP in a file larger than
# json_walk.BIG is walked into a spool, and stands there as a bodies.Walked.
_BODIES = frozenset(
    (name, None, "response", *keys)
    for name in ("interactions", "http_interactions")
    for keys in (("body",), ("body", "string"), ("body", "base64_string"))
)


def _load_json(stream: BinaryIO) -> Any:
    """A JSON cassette; integers beyond 64 bits read exactly, as a stream's are. One
    too big to hold is walked (see :func:`json_document.document`), read as it comes."""
    return json_document.document(stream, _BODIES, bodies.Walked)


def _entry(index: int, item: dict[str, Any], path: str) -> bodies.Entry:
    request, response = bodies.objects(item, "request", "response")
    return bodies.exchange(
        index,
        response.get("headers"),
        lambda: _body(response, f"{path}.response"),
        lambda: _request(request, f"{path}.request"),
        method=bodies.verb(request.get("method")),
        url=_str(request.get("uri") or request.get("url")),
        status=bodies.status_code(response.get("status")),
        pieces=_walked(response),
    )


def _walked(response: dict[str, Any]) -> Callable[[], Iterator[bytes]] | None:
    """The pieces of a response body walked out of a file too big to hold (see
    :class:`bodies.Walked`); None for one read with the rest of the file."""
    body = None if "parsed_body" in response else response.get("body")
    if isinstance(body, dict) and "base64_string" in body:
        said = body["base64_string"]
        return bodies.Walked(said.text, base64=True).pieces if _is_walked(said) else None
    if isinstance(body, dict):
        body = body.get("string")
    return body.pieces if isinstance(body, bodies.Walked) else None


def _is_walked(value: Any) -> bool:
    return isinstance(value, bodies.Walked) and not value.base64


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _request(request: dict[str, Any], path: str) -> dict[str, Any] | None:
    if "parsed_body" in request:
        return bodies.json_object(as_json(request["parsed_body"], f"{path}.parsed_body"))
    try:
        return bodies.json_object(_raw(request.get("body")))
    except bodies.BodyError:
        return None


def _body(response: dict[str, Any], path: str) -> bytes:
    if "parsed_body" in response:
        return _unparsed(as_json(response["parsed_body"], f"{path}.parsed_body"))
    return _raw(response.get("body"))


def _raw(body: Any) -> bytes:
    """A recorded body's bytes, from every shape the writers use."""
    if isinstance(body, dict):
        if "base64_string" in body:
            said = body["base64_string"]
            return bodies.b64(b"".join(said.text.pieces()) if _is_walked(said) else str(said))
        body = body.get("string")
    if isinstance(body, bodies.Walked):  # a request's: parsed whole, as any request is
        return b"".join(body.pieces())
    if isinstance(body, Undecodable):
        bodies.b64(body.text)  # raises BodyError, saying why
    return bodies.text_bytes(body)


def _unparsed(value: Any) -> bytes:
    """A ``parsed_body`` written back as the bytes a server sends."""
    if isinstance(value, str | bytes):
        return bodies.text_bytes(value)
    if isinstance(value, list) and value and all(_sse_event(item) for item in value):
        return b"".join(_sse(item) for item in value)
    if isinstance(value, list):
        return b"".join(lenient_dumps(item) + b"\n" for item in value)
    return lenient_dumps(value)


def _sse_event(item: Any) -> bool:
    return isinstance(item, dict) and "data" in item and set(item) <= _SSE_KEYS


def _sse(item: dict[str, Any]) -> bytes:
    out = b""
    for name in ("event", "id", "retry"):
        if item.get(name) is not None:
            out += f"{name}: {item[name]}\n".encode()
    data = item["data"]
    payload = bodies.text_bytes(data) if isinstance(data, str) else lenient_dumps(data)
    for line in payload.split(b"\n"):
        out += b"data: " + line + b"\n"
    return out + b"\n"

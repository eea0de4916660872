"""VCR cassettes: VCR.py and pytest-recording (``interactions:``), Ruby VCR
(``http_interactions:``), as YAML or as JSON.

YAML is read with PyYAML, imported here only, when a cassette is read: each writer picks
its own scalar style for a body (literal ``|``, folded ``>``, single- or double-quoted,
wrapped) and only a YAML parser reads them all back to the same text.

Response bodies come as ``body: {string: …}`` (text, or bytes from ``!!binary``), Ruby's
``{encoding, string: !binary …}`` or ``{base64_string: …}``, a plain string, or a
``parsed_body`` a serializer stored already parsed: a JSON object, a list of SSE events
(``{event, data}``), or a list of payloads. Parsed bodies are written back as the bytes
a server sends: SSE for events, JSON lines for payloads, JSON for an object.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from chatx.containers.bodies import (
    BodyError,
    Entry,
    b64,
    decoded,
    header,
    json_object,
    status_code,
    text_bytes,
)
from chatx.errors import InputError

_SSE_KEYS = {"event", "data", "id", "retry"}


def entries(data: bytes) -> Iterator[Entry]:
    """The interactions of a cassette held in ``data``."""
    document = _load(data)
    items = None
    if isinstance(document, dict):
        items = document.get("interactions", document.get("http_interactions"))
    if not isinstance(items, list):
        raise InputError("not a VCR cassette: no list of interactions", line=1)
    for index, item in enumerate(items):
        yield _entry(index, item if isinstance(item, dict) else {})


def _load(data: bytes) -> Any:
    if data.lstrip()[:1] == b"{":  # a JSON cassette
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    import yaml

    try:
        return yaml.load(data, Loader=_loader())  # noqa: S506 - a safe loader, see _loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = ", ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError(f"not valid YAML: {what}", line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}") from None


_LOADER: Any = None


def _loader() -> Any:
    """PyYAML's safe loader (libyaml's when there is one), that also reads Ruby VCR's
    tags: ``!binary`` (base64 bytes) and ``!ruby/…`` objects (read as plain values).
    Bad base64 under ``!binary`` or ``!!binary`` fails that body only, not the file."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    def binary(loader: Any, node: Any) -> bytes:
        try:
            return b64(loader.construct_scalar(node))
        except BodyError:
            return _Undecodable(loader.construct_scalar(node))  # said when the body is read

    def ruby(loader: Any, suffix: str, node: Any) -> Any:
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    Loader.add_constructor("!binary", binary)
    Loader.add_constructor("tag:yaml.org,2002:binary", binary)
    Loader.add_multi_constructor("!ruby/", ruby)
    _LOADER = Loader
    return Loader


class _Undecodable(bytes):
    """A ``!binary`` scalar that is not base64: kept, and said when its body is read."""

    text: str

    def __new__(cls, text: str) -> _Undecodable:
        made = super().__new__(cls, b"")
        made.text = text
        return made


def _entry(index: int, item: dict[str, Any]) -> Entry:
    request = item.get("request")
    response = item.get("response")
    request = request if isinstance(request, dict) else {}
    response = response if isinstance(response, dict) else {}
    headers = response.get("headers")
    method = request.get("method")
    return Entry(
        index,
        None,
        method=method.upper() if isinstance(method, str) else None,
        url=_str(request.get("uri") or request.get("url")),
        status=status_code(response.get("status")),
        content_type=header(headers, "content-type"),
        request=_request(request),
        load=lambda: decoded(_body(response), header(headers, "content-encoding")),
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _request(request: dict[str, Any]) -> dict[str, Any] | None:
    if "parsed_body" in request:
        return json_object(request["parsed_body"])
    try:
        return json_object(_raw(request.get("body")))
    except BodyError:
        return None


def _body(response: dict[str, Any]) -> bytes:
    if "parsed_body" in response:
        return _unparsed(response["parsed_body"])
    return _raw(response.get("body"))


def _raw(body: Any) -> bytes:
    """A recorded body's bytes, from every shape the writers use."""
    if isinstance(body, dict):
        if "base64_string" in body:
            return b64(str(body["base64_string"]))
        body = body.get("string")
    if isinstance(body, _Undecodable):
        b64(body.text)  # raises BodyError, saying why
    return text_bytes(body)


def _unparsed(value: Any) -> bytes:
    """A ``parsed_body`` written back as the bytes a server sends."""
    if isinstance(value, str | bytes):
        return text_bytes(value)
    if isinstance(value, list) and value and all(_sse_event(item) for item in value):
        return b"".join(_sse(item) for item in value)
    if isinstance(value, list):
        return b"".join(orjson.dumps(item) + b"\n" for item in value)
    return orjson.dumps(value)


def _sse_event(item: Any) -> bool:
    return isinstance(item, dict) and "data" in item and set(item) <= _SSE_KEYS


def _sse(item: dict[str, Any]) -> bytes:
    out = b""
    for name in ("event", "id", "retry"):
        if item.get(name) is not None:
            out += f"{name}: {item[name]}\n".encode()
    data = item["data"]
    payload = text_bytes(data) if isinstance(data, str) else orjson.dumps(data)
    for line in payload.split(b"\n"):
        out += b"data: " + line + b"\n"
    return out + b"\n"

"""Static mocks of Rust's httpmock, as rig's cassettes record them: a YAML stream of
documents (``---`` before each), one exchange each, ``{when: {scheme, host, port, path,
method, header, body, json_body, …}, then: {status, header: [{name, value}], body |
body_base64 | json_body, delay}}``.

``when`` is what the mock matches a request against, so the request it recorded is its
``body`` (or ``json_body``) and its method, path and host; ``then`` is the response as
the server sent it. The documents are read with the bounded YAML loader
(:func:`chatx.containers.bounded_yaml.load_yaml_documents`), whose bounds on aliases and
nesting hold over the whole file.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from chatx.containers import bodies, bounded_yaml, yaml_walk
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError


def entries(source: bytes | BinaryIO) -> Iterator[bodies.Entry]:
    """One exchange per document, ``#N`` its place in the file (its bytes, or a stream:
    one too big to hold is walked, see :mod:`chatx.containers.yaml_walk`)."""
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    seen = False
    for index, document in enumerate(yaml_walk.load_documents(stream)):
        seen = True
        yield _entry(index, document if isinstance(document, dict) else {})
    if not seen:
        raise InputError("not an httpmock file: no document", line=1)


def _entry(index: int, document: dict[str, Any]) -> bodies.Entry:
    when, then = bodies.objects(document, "when", "then")
    path = f"document {index}"
    return bodies.exchange(
        index,
        then.get("header"),
        lambda: _body(then, f"{path}.then"),
        lambda: _request(when, f"{path}.when"),
        method=bodies.verb(when.get("method")),
        url=_url(when),
        status=bodies.status_code(then.get("status")),
        pieces=_walked(then),
    )


def _walked(then: dict[str, Any]) -> Callable[[], Iterator[bytes]] | None:
    """The pieces of a body walked out of a file too big to hold; None for one held."""
    said = then.get("body_base64", then.get("body"))
    if not isinstance(said, bodies.Walked):
        return None
    return bodies.Walked(said.text, base64=True).pieces if "body_base64" in then else said.pieces


def _url(when: dict[str, Any]) -> str | None:
    """The URL the mock answers: its path, after its scheme, host and port when given."""
    path, host = when.get("path"), when.get("host")
    path = path if isinstance(path, str) else ""
    if not isinstance(host, str) or not host:
        return path or None
    scheme = when.get("scheme") if isinstance(when.get("scheme"), str) else "http"
    port = when.get("port")
    default = {"http": 80, "https": 443}.get(str(scheme))
    at = f":{port}" if isinstance(port, int) and port != default else ""
    return f"{scheme}://{host}{at}{path}"


def _request(when: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The body the mock matched, exactly (``body``, or ``json_body`` as text or as a
    YAML mapping); a partial match (``json_body_includes``) is no request."""
    if "json_body" in when and not isinstance(when["json_body"], str | bytes):
        return bodies.json_object(bounded_yaml.as_json(when["json_body"], f"{path}.json_body"))
    for name in ("body", "json_body"):
        value = when.get(name)
        if isinstance(value, bodies.Walked):  # a request's: parsed whole, as any is
            value = b"".join(value.pieces())
        if isinstance(value, str | bytes) and value:
            return bodies.json_object(value)
    return None


def _body(then: dict[str, Any], path: str) -> bytes:
    if isinstance(then.get("body_base64"), str):
        return bodies.b64(then["body_base64"])
    # Older httpmock wrote a JSON answer as then.json_body (text, or a YAML mapping).
    body = then.get("body", then.get("json_body"))
    if body is None or isinstance(body, str | bytes):
        return bodies.text_bytes(body)
    return lenient_dumps(bounded_yaml.as_json(body, f"{path}.body"))

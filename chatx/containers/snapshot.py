"""External files of inline-snapshot (``external("….json")``), as the anthropic SDK's
tests keep recorded HTTP in them:

- a JSON array of strings, the pieces of one streamed body (SSE) in order: one stream,
  ``FILE#0``;
- an ``http_snapshot``: a JSON array of ``{request: {method, url, headers, body},
  response: {status_code, headers, body}}``, one exchange each.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chatx.containers import exact
from chatx.containers.bodies import Entry, decoded, header, json_object, status_code, text_bytes
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError


def entries(data: bytes) -> Iterator[Entry]:
    document = exact.document(data)
    if not isinstance(document, list):
        raise InputError("not an inline-snapshot file: not a JSON array", line=1)
    if all(isinstance(item, str) for item in document):
        body = "".join(document).encode("utf-8", "surrogatepass")
        yield Entry(0, None, content_type="text/event-stream", load=lambda: body)
        return
    for index, item in enumerate(document):
        yield _exchange(index, item if isinstance(item, dict) else {})


def _exchange(index: int, item: dict[str, Any]) -> Entry:
    request, response = item.get("request"), item.get("response")
    request = request if isinstance(request, dict) else {}
    response = response if isinstance(response, dict) else {}
    headers = response.get("headers")
    method, url, body = request.get("method"), request.get("url"), response.get("body")
    return Entry(
        index,
        None,
        method=method.upper() if isinstance(method, str) else None,
        url=url if isinstance(url, str) else None,
        status=status_code(response.get("status_code")),
        content_type=header(headers, "content-type"),
        request=json_object(request.get("body")),
        load=lambda: decoded(
            text_bytes(body) if isinstance(body, str) or body is None else lenient_dumps(body),
            header(headers, "content-encoding"),
        ),
    )

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

from chatx.containers import bodies, exact
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError


def entries(data: bytes) -> Iterator[bodies.Entry]:
    document = exact.document(data)
    if not isinstance(document, list):
        raise InputError("not an inline-snapshot file: not a JSON array", line=1)
    if all(isinstance(item, str) for item in document):
        body = "".join(document).encode("utf-8", "surrogatepass")
        yield bodies.Entry(0, None, content_type="text/event-stream", load=lambda: body)
        return
    for index, item in enumerate(document):
        yield _exchange(index, item if isinstance(item, dict) else {})


def _exchange(index: int, item: dict[str, Any]) -> bodies.Entry:
    request, response = bodies.objects(item, "request", "response")
    url, body = request.get("url"), response.get("body")
    return bodies.exchange(
        index,
        response.get("headers"),
        lambda: (
            bodies.text_bytes(body)
            if isinstance(body, str) or body is None
            else lenient_dumps(body)
        ),
        lambda: bodies.json_object(request.get("body")),
        method=bodies.verb(request.get("method")),
        url=url if isinstance(url, str) else None,
        status=bodies.status_code(response.get("status_code")),
    )

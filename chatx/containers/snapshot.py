"""External files of inline-snapshot (``external("….json")``), as the anthropic SDK's
tests keep recorded HTTP in them:

- a JSON array of strings, the pieces of one streamed body (SSE) in order: one stream,
  ``FILE#0``;
- an ``http_snapshot``: a JSON array of ``{request: {method, url, headers, body},
  response: {status_code, headers, body}}``, one exchange each.

A file too big to hold is walked as it is read (:func:`json_document.document`): an
``http_snapshot``'s response body strings are decoded in pieces into a temporary file.
An array of strings is read whole still: its body is many small strings, none worth
walking out, and a walk of them token by token would take twice the time.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from chatx.containers import bodies, exact, json_document, string_array
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError

# An http_snapshot's response body as text, walked out of a file too big to hold.
_BODIES = frozenset({(None, "response", "body")})


# Up to an array's first element, and the opening of one that is a string.
_OPENING = re.compile(rb"\s*(?:\[\s*)?")
_STRINGS = re.compile(rb'\s*\[\s*"')


def entries(source: bytes | BinaryIO) -> Iterator[bodies.Entry]:
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    head = _head(stream)
    if _STRINGS.match(head):  # pieces of one body: read as they come, into their text
        joined = string_array.joined(bodies.again(head, stream))
        if isinstance(joined, bodies.Spool):
            yield bodies.Entry(0, None, content_type="text/event-stream",
                               load=lambda: b"".join(joined.pieces()), stream=joined.pieces)  # fmt: skip
            return
        document = exact.document(joined)
    else:
        document = json_document.document(stream, _BODIES, bodies.Walked, head=head)
    if not isinstance(document, list):
        raise InputError("not an inline-snapshot file: not a JSON array", line=1)
    if all(isinstance(item, str) for item in document):
        body = "".join(document).encode("utf-8", "surrogatepass")
        yield bodies.Entry(0, None, content_type="text/event-stream", load=lambda: body)
        return
    for index, item in enumerate(document):
        yield _exchange(index, item if isinstance(item, dict) else {})


def _head(stream: BinaryIO) -> bytes:
    """The stream's bytes up to the first one of its array's first element (or fewer,
    past 64 KiB of blanks)."""
    head = b""
    while True:
        read = stream.read(1 << 12)
        head += read
        if not read or len(head) > 1 << 16 or _OPENING.match(head).end() < len(head):  # type: ignore[union-attr]  # matches ''
            return head


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
        pieces=body.pieces if isinstance(body, bodies.Walked) else None,
    )

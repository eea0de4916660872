"""httprr traces (Go, ``golang.org/x/oscar/internal/httprr`` and its copies): a line
``httprr trace v1``, then per exchange a line ``<request bytes> <response bytes>`` and
exactly that many bytes of raw HTTP request and raw HTTP response, with nothing between.

The byte counts are what frame the file: a hand-edited request line may end in a bare
LF, so nothing here splits the file into lines. Each message's head ends at its first
empty line (CRLF or LF); a chunked response body is joined from its chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from chatx.containers.bodies import BodyError, Entry, decoded, json_object

_HEADER = b"httprr trace v1\n"
_COUNTS = re.compile(rb"(\d+) (\d+)\n")
_HEAD_END = re.compile(rb"\r?\n\r?\n")


def entries(stream: BinaryIO) -> Iterator[Entry]:
    from chatx.errors import InputError

    data = stream.read()
    if not data.startswith(_HEADER):
        raise InputError("not an httprr trace: no 'httprr trace v1' line", line=1)
    at, index = len(_HEADER), 0
    while at < len(data):
        line = 1 + data.count(b"\n", 0, at)
        counts = _COUNTS.match(data, at)
        if counts is None:
            raise InputError(
                f"exchange {index}: no '<request bytes> <response bytes>' line", line=line
            )
        request_size, response_size = int(counts.group(1)), int(counts.group(2))
        start = counts.end()
        end = start + request_size + response_size
        if end > len(data):
            raise InputError(
                f"truncated trace: exchange {index} says {request_size + response_size} bytes,"
                f" {len(data) - start} are left",
                line=line,
            )
        request = data[start : start + request_size]
        response = data[start + request_size : end]
        yield _entry(index, line, request, response)
        at, index = end, index + 1


def _entry(index: int, line: int, request: bytes, response: bytes) -> Entry:
    first, _, request_body = _message(request)
    parts = first.split(b" ")
    status_head, headers, _ = _message(response)
    status = status_head.split(b" ")
    code = int(status[1]) if len(status) > 1 and status[1].isdigit() else None
    return Entry(
        index,
        line,
        method=parts[0].decode("latin-1") if parts[0] else None,
        url=parts[1].decode("latin-1") if len(parts) > 1 else None,
        status=code,
        content_type=headers.get("content-type"),
        request=json_object(request_body),
        load=lambda: _body(response),
    )


def _message(raw: bytes) -> tuple[bytes, dict[str, str], bytes]:
    """The start line, the headers (lower-case names) and the body of an HTTP message."""
    end = _HEAD_END.search(raw)
    head, body = (raw[: end.start()], raw[end.end() :]) if end else (raw, b"")
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    headers: dict[str, str] = {}
    for text in lines[1:]:
        name, colon, value = text.partition(b":")
        if colon:
            headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return lines[0], headers, body


def _body(response: bytes) -> bytes:
    _, headers, body = _message(response)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = _dechunk(body)
    return decoded(body, headers.get("content-encoding"))


def _dechunk(body: bytes) -> bytes:
    out: list[bytes] = []
    at = 0
    while True:
        end = body.find(b"\n", at)
        if end < 0:
            raise BodyError("bad chunked body: a chunk without its size line")
        size_text = body[at:end].split(b";")[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BodyError(f"bad chunked body: chunk size {size_text!r}") from None
        if size == 0:
            return b"".join(out)
        out.append(body[end + 1 : end + 1 + size])
        at = end + 1 + size
        at += 2 if body[at : at + 2] == b"\r\n" else 1

"""mitmproxy's flow files (``mitmdump -w FILE``, mitmweb's "save"): one typed
tnetstring per flow, back to back, each the flow's state as a dict, ``{type: "http",
request: {method, scheme, host, port, path, headers: [[name, value]…], content},
response: {status_code, reason, headers, content}, …}``.

Read here without mitmproxy: the package brings a TLS stack, a Rust extension and some
twenty dependencies to read what is plain values in a documented framing. A typed
tnetstring is ``LENGTH:PAYLOAD`` and a type mark: ``,`` bytes, ``;`` text, ``#`` an
integer, ``^`` a float, ``!`` a boolean, ``~`` null, ``]`` a list, ``}`` a dict of
alternating keys and values. The fields read have kept their names since flow format 7
(mitmproxy 4); a flow's ``content`` is the body as sent, its ``Content-Encoding`` still
applied, undone as every recorded body is. Bounds: a length has at most 12 digits and
never runs past the file, nesting stops at MAX_DEPTH; a file that breaks either is
refused where it does.

A flow file on disk larger than :data:`BIG` is not read into memory: its values are
read where they are in the file (``os.pread``), and a body longer than BIG is read from
there in pieces as it is asked for. Piped in, or compressed, a file is read whole (to
hold it elsewhere would write its requests' headers, credentials among them, to disk).
"""

from __future__ import annotations

import io
import os
import re
import weakref
from collections.abc import Iterator
from typing import Any, BinaryIO

from chatx.containers import bodies
from chatx.errors import InputError
from chatx.limits import MAX_DEPTH

# A flow file's first bytes: the first flow's length, then its first key (a text or
# bytes tnetstring naming a field of the flow's state). No stream starts with digits and
# a colon twice over (SSE starts with a field name, JSON with a bracket).
HEAD = re.compile(rb"\d{1,12}:\d{1,2}:[a-z_]{1,32}[;,]")
_DIGITS = 12


def looks_like(head: bytes) -> bool:
    """Whether ``head`` starts a flow file."""
    return HEAD.match(head) is not None


BIG = 8 << 20
_PIECE = 64 << 10


def entries(source: bytes | BinaryIO) -> Iterator[bodies.Entry]:
    """The flows of a flow file (its bytes, or a stream: one on disk and larger than BIG
    is read where its values are)."""
    data: bytes | _OnDisk = source if isinstance(source, bytes) else _opened(source)
    at, index = 0, 0
    end = data.stripped() if isinstance(data, _OnDisk) else len(data.rstrip())
    while at < end:
        flow, at = _value(data, at, end, 0)
        yield _entry(index, flow if isinstance(flow, dict) else {})
        index += 1


def _opened(stream: BinaryIO) -> bytes | _OnDisk:
    """A file on disk past BIG as it is there; any other stream's bytes."""
    try:
        fd, start = stream.fileno(), stream.tell()
        size = os.fstat(fd).st_size - start if stream.seekable() else -1
    except (OSError, AttributeError, io.UnsupportedOperation):
        size = -1
    if size <= BIG:
        return stream.read()
    return _OnDisk(fd, start, size)


class _OnDisk:
    """A flow file read where its bytes are in it, as :func:`_value` reads bytes: a
    slice (``data[a:b]``) and ``find``, each read with ``os.pread``."""

    def __init__(self, fd: int, start: int, size: int) -> None:
        # Its own descriptor: a body is read after the file it came from is closed.
        self.fd, self.start, self.size = os.dup(fd), start, size
        self.close = weakref.finalize(self, os.close, self.fd)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, cut: slice) -> bytes:
        begin, end, _ = cut.indices(self.size)
        return os.pread(self.fd, max(0, end - begin), self.start + begin)

    def find(self, sub: bytes, begin: int, end: int) -> int:
        at = self[begin:end].find(sub)
        return begin + at if at >= 0 else -1

    def stripped(self) -> int:
        """Its length without the blanks at its end (as ``len(data.rstrip())``)."""
        end = self.size
        while end > 0:
            tail = self[max(0, end - _PIECE) : end]
            kept = tail.rstrip()
            if kept:
                return end - len(tail) + len(kept)
            end -= len(tail)
        return 0

    def pieces(self, begin: int, end: int) -> Iterator[bytes]:
        for at in range(begin, end, _PIECE):
            yield self[at : min(end, at + _PIECE)]


class _Body:
    """A body longer than BIG in a flow file on disk: read from there in pieces."""

    def __init__(self, data: _OnDisk, start: int, stop: int) -> None:
        self.data, self.start, self.stop = data, start, stop

    def pieces(self) -> Iterator[bytes]:
        return self.data.pieces(self.start, self.stop)


def _value(data: Any, at: int, end: int, depth: int) -> tuple[Any, int]:
    """The tnetstring at ``data[at:]``, its type mark before ``end``, and where the next
    begins."""
    if depth > MAX_DEPTH:
        raise InputError(f"not a flow file: nested deeper than {MAX_DEPTH} levels (byte {at})")
    colon = data.find(b":", at, min(end, at + _DIGITS + 1))
    if colon <= at or not data[at:colon].isdigit():
        raise InputError(f"not a flow file: no tnetstring length at byte {at}")
    start = colon + 1
    stop = start + int(data[at:colon])
    if stop >= end:  # its type mark must come before its container's (or the file's) end
        raise InputError(f"not a flow file: a value at byte {at} runs past its end")
    kind = data[stop : stop + 1]
    return _typed(data, kind, start, stop, depth, at), stop + 1


def _typed(data: Any, kind: bytes, start: int, stop: int, depth: int, at: int) -> Any:
    if kind in (b"]", b"}"):
        return _container(data, kind, start, stop, depth)
    if kind == b"," and stop - start > BIG and isinstance(data, _OnDisk):
        return _Body(data, start, stop)
    payload = data[start:stop]
    if kind == b",":
        return payload
    if kind == b";":
        return payload.decode("utf-8", "surrogateescape")
    if kind == b"#":
        return int(payload) if payload.lstrip(b"-").isdigit() else None
    if kind == b"^":
        try:
            return float(payload)
        except ValueError:
            return None
    if kind == b"!":
        return payload == b"true"
    if kind == b"~":
        return None
    raise InputError(f"not a flow file: unknown tnetstring type {kind!r} at byte {at}")


def _container(data: Any, kind: bytes, start: int, stop: int, depth: int) -> Any:
    items = []
    pos = start
    while pos < stop:
        item, pos = _value(data, pos, stop, depth + 1)
        items.append(item)
    if kind == b"]":
        return items
    return {_text(k): v for k, v in zip(items[::2], items[1::2], strict=False)}


def _text(value: Any) -> str:
    if isinstance(value, _Body):  # a value past BIG where text is looked for: read
        value = b"".join(value.pieces())
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return value if isinstance(value, str) else str(value)


def _entry(index: int, flow: dict[str, Any]) -> bodies.Entry:
    request, response = bodies.objects(flow, "request", "response")
    method = _text(request.get("method") or b"")
    content = response.get("content")
    status = response.get("status_code", response.get("code"))  # "code" before format 1.0
    sent = request.get("content")
    if isinstance(sent, _Body):  # a request's: parsed whole, as any request is
        sent = b"".join(sent.pieces())
    return bodies.exchange(
        index,
        _headers(response.get("headers")),
        lambda: content if isinstance(content, bytes) else b"",
        lambda: bodies.json_object(sent),
        method=method.upper() or None,
        url=_url(request),
        status=status if isinstance(status, int) else None,
        pieces=content.pieces if isinstance(content, _Body) else None,
    )


def _url(request: dict[str, Any]) -> str | None:
    scheme, host = _text(request.get("scheme") or b""), _text(request.get("host") or b"")
    path = _text(request.get("path") or b"")
    if not host:
        return path or None
    port = request.get("port")
    default = {"http": 80, "https": 443}.get(scheme)
    at = f":{port}" if isinstance(port, int) and port != default else ""
    return f"{scheme or 'http'}://{host}{at}{path}"


def _headers(raw: Any) -> list[dict[str, str]]:
    """``[[name, value], …]`` as the ``{name, value}`` list :func:`header` reads."""
    out = []
    for pair in raw if isinstance(raw, list) else ():
        if isinstance(pair, list) and len(pair) == 2:
            out.append({"name": _text(pair[0]), "value": _text(pair[1])})
    return out

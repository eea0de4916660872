"""An httprr trace is read as it comes, a response too big to hold kept in a temporary
file and its body read from there in pieces, de-chunked and decompressed as it goes.
Every trace reads so (``httprr.BIG`` 0, read a few bytes at a time) exactly as it reads
held: the same exchanges, bodies, errors and lines."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

import pytest

from chatx.containers import httprr
from chatx.containers.bodies import BodyError
from chatx.errors import InputError
from tests.containers.common import FIXTURES, SAMPLES
from tests.containers.test_big_har import peak_rss
from tests.containers.test_har_walk_commands import SSE

REQUEST = b'POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.com\r\n\r\n{"model":"m"}'


def read(data: bytes) -> list[Any]:
    out: list[Any] = []
    try:
        for entry in httprr.entries(io.BytesIO(data)):
            try:
                body: Any = b"".join(entry.pieces())
            except BodyError as exc:
                body = ("BodyError", str(exc))
            out.append((entry.index, entry.line, entry.method, entry.url, entry.status,
                        entry.content_type, entry.request, body))  # fmt: skip
    except InputError as exc:
        out.append(("InputError", str(exc), exc.line))
    return out


def same(data: bytes, monkeypatch: pytest.MonkeyPatch, read_size: int = 7) -> list[Any]:
    """``data`` read held, then with every response spooled and read ``read_size``
    bytes at a time: the same."""
    held = read(data)
    with monkeypatch.context() as patch:
        patch.setattr(httprr, "BIG", 0)
        patch.setattr(httprr, "_READ", read_size)
        patch.setattr(httprr, "_HEAD", 5)
        walked = read(data)
    assert walked == held
    return held


def trace(*responses: bytes) -> bytes:
    out = b"httprr trace v1\n"
    for response in responses:
        out += f"{len(REQUEST)} {len(response)}\n".encode() + REQUEST + response
    return out


def response(body: bytes, *headers: str, end: bytes = b"\r\n") -> bytes:
    head = end.join([b"HTTP/1.1 200 OK", *(h.encode() for h in headers)])
    return head + end + end + body


def chunked(body: bytes, size: int = 50, end: bytes = b"\r\n", ext: bytes = b"") -> bytes:
    out = []
    for at in range(0, len(body), size):
        piece = body[at : at + size]
        out.append(f"{len(piece):x}".encode() + ext + end + piece + end)
    return b"".join(out) + b"0" + end + end


def test_every_trace_reads_spooled_as_held(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = sorted(FIXTURES.glob("*.httprr"))
    if SAMPLES.is_dir():
        paths += sorted(SAMPLES.rglob("*.httprr"))
    assert paths
    for path in paths:
        for size in (1, 7, 4096):
            held = same(path.read_bytes(), monkeypatch, size)
            assert held and held[0][0] != "InputError", path


CASES = {
    "plain": trace(response(SSE, "Content-Type: text/event-stream")),
    "LF heads": trace(response(SSE, "Content-Type: text/event-stream", end=b"\n")),
    "chunked": trace(response(chunked(SSE), "Transfer-Encoding: chunked")),
    "chunked, LF": trace(response(chunked(SSE, 7, b"\n"), "Transfer-Encoding: chunked")),
    "chunk extensions": trace(
        response(chunked(SSE, 33, ext=b";a=b"), "Transfer-Encoding: chunked")
    ),
    "gzip": trace(response(gzip.compress(SSE, mtime=0), "Content-Encoding: gzip")),
    "gzip, chunked": trace(
        response(
            chunked(gzip.compress(SSE, mtime=0), 40),
            "Transfer-Encoding: chunked",
            "Content-Encoding: gzip",
        )
    ),  # fmt: skip
    "two exchanges": trace(response(b"{}"), response(SSE, "Content-Type: text/event-stream")),
    "no head end": trace(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"),
    "empty response": trace(b""),
    "bad chunk size": trace(response(b"zz\r\nabc\r\n0\r\n\r\n", "Transfer-Encoding: chunked")),
    "negative chunk size": trace(response(b"-1\r\nabc\r\n0\r\n\r\n", "Transfer-Encoding: chunked")),
    "no size line": trace(response(b"3\r\nabc", "Transfer-Encoding: chunked")),
    "a chunk cut short": trace(response(b"ff\r\nabc", "Transfer-Encoding: chunked")),
    "bad gzip": trace(response(b"\x1f\x8b\x08\x00garbage", "Content-Encoding: gzip")),
    "truncated": trace(response(SSE))[:-10],
    "counts past the end": b"httprr trace v1\n5 99999999999999999999\nabcde",
    "no counts line": trace(response(SSE)) + b"junk\n",
    "not a trace": b"httprr trace v2\n",
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("size", [1, 7, 1 << 20])
def test_each_shape_reads_spooled_as_held(
    monkeypatch: pytest.MonkeyPatch, name: str, size: int
) -> None:
    same(CASES[name], monkeypatch, size)


def test_bodies_read_spooled_are_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("plain", "chunked", "chunked, LF", "chunk extensions", "gzip, chunked"):
        assert same(CASES[name], monkeypatch)[0][-1] == SSE, name


def test_listing_a_trace_with_a_huge_response_holds_pieces_of_it(tmp_path: Path) -> None:
    stream = SSE * (40_000_000 // len(SSE))
    small, large = tmp_path / "small.httprr", tmp_path / "large.httprr"
    small.write_bytes(trace(response(SSE, "Content-Type: text/event-stream")))
    large.write_bytes(trace(response(chunked(stream, 4096), "Transfer-Encoding: chunked")))
    base, code, err = peak_rss(["ls", str(small)])
    assert code == 0, err
    peak, code, err = peak_rss(["ls", str(large)])
    assert code == 0, err
    # Held, the response would be there twice (read, de-chunked), and its text once more.
    assert peak - base < 24 << 20, (peak >> 20, base >> 20)

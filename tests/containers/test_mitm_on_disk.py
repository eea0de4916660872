"""A mitmproxy flow file on disk past ``mitmflow.BIG`` is read where its values are, a
long body read from the file in pieces when it is asked for: the same flows, bodies and
errors as the file read whole, by every command, and a body read after the file that
held it was closed. Piped in, a file is read whole (its requests' headers are never
copied elsewhere)."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

import pytest

from chatx.containers import mitmflow
from chatx.containers.bodies import BodyError
from chatx.errors import InputError
from tests.containers.common import commands_alike
from tests.containers.test_big_har import peak_rss
from tests.containers.test_har_walk_commands import SSE
from tests.containers.test_stub_layouts import _tnetstring, mitmproxy


def flow(content: bytes, *, status: int = 200, encoding: bytes | None = None) -> bytes:
    headers = [[b"content-type", b"text/event-stream"]]
    if encoding:
        headers.append([b"content-encoding", encoding])
    return _tnetstring({
        "version": 21, "type": "http", "id": "f",
        "request": {"host": "api.openai.com", "port": 443, "method": b"POST",
                    "scheme": b"https", "path": b"/v1/chat/completions",
                    "headers": [[b"authorization", b"Bearer sk-test"]],
                    "content": b'{"model":"gpt-x","stream":true}'},
        "response": {"status_code": status, "reason": b"OK", "headers": headers,
                     "content": content},
    })  # fmt: skip


def read(source: bytes | Any) -> list[Any]:
    out: list[Any] = []
    try:
        for entry in mitmflow.entries(source):
            try:
                body: Any = b"".join(entry.pieces())
            except BodyError as exc:
                body = ("BodyError", str(exc))
            out.append((entry.method, entry.url, entry.status, entry.request, body))
    except InputError as exc:
        out.append(("InputError", str(exc)))
    return out


FILES = {
    "layout": mitmproxy(),
    "plain": flow(SSE),
    "two": flow(b"{}", status=404) + flow(SSE),
    "gzip": flow(gzip.compress(SSE, mtime=0), encoding=b"gzip"),
    "blanks after": flow(SSE) + b"\n \n",
    "blanks between": flow(SSE) + b"\n" + flow(SSE),
    "cut short": flow(SSE)[:-40],
    "a length past the end": b"99999999:" + flow(SSE),
    "no length": b"abc" + flow(SSE),
    "unknown type": flow(SSE)[:-1] + b"?",
    "nested deep": b"".join(b"%d:" % (n * 3) for n in range(5)) + b"0:]" + b"]" * 5,
}


@pytest.mark.parametrize("name", FILES)
def test_each_file_reads_on_disk_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    data = FILES[name]
    path = tmp_path / "flows.mitm"
    path.write_bytes(data)
    whole = read(data)
    monkeypatch.setattr(mitmflow, "BIG", 0)
    monkeypatch.setattr(mitmflow, "_PIECE", 7)
    with path.open("rb") as stream:
        on_disk = read(stream)
    assert on_disk == whole
    piped = read(io.BytesIO(data))  # no file descriptor: read whole
    assert piped == whole


def test_every_command_reads_on_disk_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for name in ("layout", "two", "gzip", "cut short"):
        path = tmp_path / f"{name.replace(' ', '-')}.mitm"
        path.write_bytes(FILES[name])
        paths.append(str(path))
    commands_alike(paths, monkeypatch, mitmflow, BIG=0, _PIECE=16)


def test_listing_a_flow_file_with_a_huge_body_holds_pieces_of_it(tmp_path: Path) -> None:
    small, large = tmp_path / "small.mitm", tmp_path / "large.mitm"
    small.write_bytes(flow(SSE))
    large.write_bytes(flow(SSE * (40_000_000 // len(SSE))))
    base, code, err = peak_rss(["ls", str(small)])
    assert code == 0, err
    # Held, the file and the body would each be 40 MB (a conversion holds its own
    # templates and state beside: the HAR test's bound).
    for args, bound in (
        (["ls", str(large)], 24),
        (["convert", f"{large}#0", "-q", "-o", str(tmp_path / "o")], 48),
    ):
        peak, code, err = peak_rss(args)
        assert code == 0, err
        assert peak - base < bound << 20, (args[0], peak >> 20, base >> 20)


def test_a_file_read_from_where_its_stream_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "flows.mitm"
    path.write_bytes(b"skipped" + FILES["two"])
    monkeypatch.setattr(mitmflow, "BIG", 0)
    with path.open("rb") as stream:
        stream.seek(len(b"skipped"))
        assert read(stream) == read(FILES["two"])

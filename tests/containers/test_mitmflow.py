"""mitmproxy's flow files beyond tests/containers/test_stub_layouts.py: what a cut,
deep or malformed file is (exit 2 saying where, never a traceback), and a flow that
got no response (listed, no stream)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatx.limits import MAX_DEPTH
from tests.containers.common import chatx
from tests.containers.test_stub_layouts import _tnetstring, mitmproxy


def _deep(levels: int) -> bytes:
    """A flow whose request holds a list nested ``levels`` deep."""
    inner = _tnetstring([])
    for _ in range(levels):
        inner = str(len(inner)).encode() + b":" + inner + b"]"
    payload = _tnetstring("type") + _tnetstring("http") + _tnetstring("request") + inner
    return str(len(payload)).encode() + b":" + payload + b"}"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (mitmproxy()[:-40], "runs past its end"),
        (b"14:7:version;x:1#}", "no tnetstring length"),
        (b"12:7:version;1:1?}", "unknown tnetstring type"),
    ],
)
def test_a_broken_file_is_refused_where_it_breaks(tmp_path: Path, data: bytes, said: str) -> None:
    path = tmp_path / "flows.mitm"
    path.write_bytes(data)
    done = chatx("ls", str(path))
    assert done.code == 2
    assert said in done.err and "Traceback" not in done.err


def test_nesting_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "deep.mitm"
    path.write_bytes(_deep(MAX_DEPTH + 50))
    done = chatx("ls", str(path))
    assert done.code == 2
    assert f"nested deeper than {MAX_DEPTH} levels" in done.err


def test_a_flow_without_a_response_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "flows.mitm"
    path.write_bytes(
        _tnetstring({"type": "http", "request": {"method": b"POST", "scheme": b"https",
                     "host": "api.openai.com", "port": 443, "path": b"/v1/responses"},
                     "response": None, "error": {"msg": "connection closed"}}) + mitmproxy()
    )  # fmt: skip
    done = chatx("ls", str(path))
    assert done.code == 0, done.err
    first, *_ = done.stdout.decode().splitlines()
    assert first.split()[:5] == [
        f"{path}#0",
        "-",
        "-",
        "POST",
        "https://api.openai.com/v1/responses",
    ]
    assert first.endswith("not a stream: empty")


def test_an_old_flow_names_its_status_code(tmp_path: Path) -> None:
    """Flows of mitmproxy 0.x (format 0.10, 0.11) say the status as ``code``."""
    path = tmp_path / "old.mitm"
    path.write_bytes(_tnetstring({
        "version": [0, 10, 1],
        "request": {"method": b"GET", "scheme": b"http", "host": b"example.com", "port": 80,
                    "path": b"/", "headers": [], "content": b""},
        "response": {"code": 200, "msg": b"OK", "headers": [[b"Content-Type", b"text/html"]],
                     "content": b"<html></html>", "httpversion": [1, 1]},
    }))  # fmt: skip
    done = chatx("ls", str(path))
    assert done.stdout.decode().split()[:6] == [
        f"{path}#0",
        "-",
        "-",
        "GET",
        "http://example.com/",
        "200",
    ]

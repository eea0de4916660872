"""``chatx serve`` and ``chatx proxy`` as processes: Ctrl-C and SIGTERM stop them
gracefully (the responses under way finish), exit 130 and 143, no traceback."""

from __future__ import annotations

import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest

from tests.live.support import FIXTURES, ROOT, TIMEOUT

LISTENING = re.compile(rb"(http://127\.0\.0\.1:\d+)")


def start(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    """The command running, and the URL it said it listens on."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    said = b""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            line = proc.stderr.readline()  # type: ignore[union-attr]
            said += line
            found = LISTENING.search(line)
            if found:
                return proc, found.group(1).decode()
            if not line:
                break
    proc.kill()
    raise AssertionError(said.decode(errors="replace"))


def stop(proc: subprocess.Popen[bytes], signum: int) -> str:
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=TIMEOUT)
    text = err.decode(errors="replace")
    assert "Traceback" not in text and "Exception" not in text, text
    return text


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_stops_on_a_signal(signum: int, code: int) -> None:
    proc, url = start("serve", str(FIXTURES / "chat-chunk"))
    try:
        got = httpx2.post(f"{url}/v1/chat/completions", content=b"{}", timeout=TIMEOUT)
        assert got.status_code == 200 and got.json()["object"] == "chat.completion"
    finally:
        text = stop(proc, signum)
    assert proc.returncode == code, text
    assert "chatx: serve: stopping" in text and text.endswith("chatx: serve: stopped\n")


def test_a_stream_under_way_finishes_before_the_server_stops() -> None:
    proc, url = start("serve", str(FIXTURES / "chat-chunk"), "--delay", "150")
    pieces: list[bytes] = []
    first = threading.Event()

    def read() -> None:
        with httpx2.stream(
            "POST",
            f"{url}/v1/chat/completions",
            content=b'{"stream": true}',
            headers={"x-chatx-capture": "text.sse"},
            timeout=TIMEOUT,
        ) as response:
            for piece in response.iter_raw():
                pieces.append(piece)
                first.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert first.wait(TIMEOUT)
    finally:
        text = stop(proc, signal.SIGTERM)
        reader.join(TIMEOUT)
    assert proc.returncode == 143, text
    assert b"".join(pieces) == (FIXTURES / "chat-chunk/text.sse").read_bytes()
    assert len(pieces) == 8  # one event at a time, the last sent after the signal


def test_proxy_stops_on_sigterm(tmp_path: Path) -> None:
    proc, _ = start("proxy", "--upstream", "http://127.0.0.1:9", "--record", str(tmp_path))
    text = stop(proc, signal.SIGTERM)
    assert proc.returncode == 143, text
    assert text.endswith("chatx: proxy: stopped\n")

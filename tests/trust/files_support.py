"""Shared by the trust tests: a one-answer upstream for ``capture``, and running chatx."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from tests.paths import ROOT

TIMEOUT = 60


class Fixed:
    """An ASGI app answering every request with one status, content type and body; it
    keeps the bodies it was sent."""

    def __init__(self, body: bytes, status: int = 200, kind: bytes = b"text/event-stream") -> None:
        self.body, self.status, self.kind = body, status, kind
        self.received: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        got = b""
        while True:
            message = await receive()
            got += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.received.append(got)
        headers = [(b"content-type", self.kind), (b"content-length", b"%d" % len(self.body))]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def chatx(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Any:
    """``python -m chatx ARGS`` as a process (what a user runs), from the checkout."""
    return subprocess.run(
        [sys.executable, "-m", "chatx", *args],
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )

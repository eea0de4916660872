"""The files a recording leaves: the body as it arrived, and its request beside it.

``NAME`` holds the response body byte for byte; ``NAME.request.json`` the request body,
with every field named like a secret left out (headers are never written). While the
body arrives it goes to ``NAME.part``, flushed after every read; only a body that ended
as HTTP ends one is renamed to ``NAME``. One that did not (Ctrl-C, a dropped connection,
a read timeout) stays ``NAME.part``, with ``NAME.part.request.json`` beside it: no file
that a directory walk reads as a capture is ever incomplete.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from chatx.outdir import REQUEST_SUFFIX

PART_SUFFIX = ".part"

# Field names that hold credentials, compared lower-cased without - and _.
_SECRETS = frozenset(
    {
        "authorization",
        "proxyauthorization",
        "apikey",
        "xapikey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "bearertoken",
        "sessiontoken",
        "secret",
        "clientsecret",
        "password",
        "cookie",
    }
)


def is_secret(key: str) -> bool:
    norm = key.lower().replace("-", "").replace("_", "")
    return norm in _SECRETS or norm.endswith("apikey")


def scrub(value: Any) -> Any:
    """``value`` without the fields named like secrets, at any depth (an MCP tool's
    ``headers``/``authorization`` in a Responses request included)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if not (isinstance(k, str) and is_secret(k))}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def request_path(path: str | Path) -> Path:
    return Path(f"{path}{REQUEST_SUFFIX}")


def request_bytes(body: Any) -> bytes:
    """The request as written beside a capture: scrubbed, indented, one newline."""
    return orjson.dumps(scrub(body), option=orjson.OPT_INDENT_2) + b"\n"


class Recording:
    """One body written as it arrives into ``path + ".part"``; :meth:`close` renames it
    to ``path`` when it is whole. ``request`` (a parsed JSON body, or None) is written
    beside whichever name the body ends under."""

    def __init__(self, path: Path, request: Any, *, exclusive: bool = False) -> None:
        self.path = path
        self.part = Path(f"{path}{PART_SUFFIX}")
        self.request = request
        self.size = 0
        self.file: BinaryIO = open(self.part, "xb" if exclusive else "wb")  # noqa: SIM115

    def write(self, chunk: bytes) -> None:
        self.file.write(chunk)
        self.file.flush()
        self.size += len(chunk)

    def close(self, whole: bool) -> Path:
        """Close; the path the body is left under."""
        self.file.close()
        final = self.path if whole else self.part
        if self.request is not None:
            _write(request_path(final), request_bytes(self.request))
        if whole:
            os.replace(self.part, self.path)
        return final

    def discard(self) -> None:
        """Nothing worth keeping arrived (an error before the body): leave no file."""
        self.file.close()
        self.part.unlink(missing_ok=True)


def _write(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


# -- names of the proxy's recordings ---------------------------------------------------------

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(path: str) -> str:
    """``/v1/chat/completions`` -> ``chat-completions``."""
    words = _SLUG.sub("-", path.lower().removeprefix("/v1/")).strip("-")
    return words[:60].rstrip("-") or "root"


class Namer:
    """Names recordings by time and endpoint: ``20260101T120000_000001Z-0001-responses.sse``.

    The time (UTC, to the microsecond) sorts the names in the order the requests came;
    the counter keeps two in the same microsecond apart, and an existing name is never
    reused (the part file is created exclusively). The clock is read here only: what is
    recorded is the upstream's bytes, never anything chatx makes of them.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.counter = itertools.count(1)
        self.lock = threading.Lock()

    def open(self, route: str, suffix: str, request: Any) -> Recording:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S_%fZ")
        while True:
            with self.lock:
                number = next(self.counter)
            path = self.folder / f"{stamp}-{number:04d}-{slug(route)}{suffix}"
            if path.exists():
                continue
            try:
                return Recording(path, request, exclusive=True)
            except FileExistsError:
                continue

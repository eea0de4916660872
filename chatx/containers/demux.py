"""Files that hold recorded HTTP exchanges (HAR, VCR cassettes, Llama Stack recordings,
httprr traces): demuxers in FFmpeg's sense. Each yields :class:`Entry` objects, one per
exchange, whose response body is the bytes a bare stream would have; the framing
readers (SSE, JSON lines, JSON) then read those bytes as they read a file.

Detection is by content, from the first bytes, as the framing containers are told
apart. A demuxer reads its file from a binary stream and decodes one entry's body only
when asked (:meth:`Entry.body`), so a large file is never held decoded all at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from chatx.containers.bodies import BodyError, Entry
from chatx.containers.lines import BOM
from chatx.errors import InputError

__all__ = ["KINDS", "BodyError", "Entry", "decidable", "detect", "entries"]

KINDS = {
    "har": "HAR 1.2 (browser devtools, Playwright, Polly.JS, proxies)",
    "vcr": "VCR cassette (VCR.py, pytest-recording, Ruby VCR), YAML or JSON",
    "llama-stack-recording": "Llama Stack inference recorder JSON",
    "httprr": "httprr trace (Go)",
}


# -- detection --------------------------------------------------------------------------

_FIRST_KEY = re.compile(rb'\{\s*"((?:[^"\\]|\\.){0,64})"')
_YAML_KEY = re.compile(rb"^(http_interactions|interactions)\s*:", re.M)
_HTTPRR = b"httprr trace v1\n"


def _content(head: bytes) -> bytes:
    return head.removeprefix(BOM).lstrip()


def decidable(head: bytes) -> bool:
    """True when ``head`` is enough to :func:`detect` from (the caller also stops at the
    end of the input, or after a few KiB): a JSON object's first key, a YAML document's
    first key, or a whole first line."""
    text = _content(head)
    if not text:
        return False
    if text[:1] == b"{":
        return bool(_FIRST_KEY.match(text)) or re.match(rb"\{\s*[^\s\"]", text) is not None
    if text.startswith((b"---", b"%YAML", b"#")):
        return _YAML_KEY.search(text) is not None or text.count(b"\n") >= 8
    return b"\n" in text


def detect(head: bytes) -> str | None:
    """The kind of file that starts with ``head``, or None for a bare stream."""
    text = _content(head)
    if text.startswith(_HTTPRR):
        return "httprr"
    if text[:1] == b"{":
        key = _FIRST_KEY.match(text)
        if key is None:
            return None
        name = key.group(1)
        if name == b"log":
            return "har"
        if name in (b"interactions", b"http_interactions"):
            return "vcr"
        if name in (b"test_id", b"request") and b'"response"' in text or name == b"test_id":
            return "llama-stack-recording"
        return None
    first = _first_yaml_key(text)
    if first in (b"interactions", b"http_interactions"):
        return "vcr"
    return None


def _first_yaml_key(text: bytes) -> bytes | None:
    """The first mapping key of a YAML document (after ``---``, directives, comments)."""
    for line in text.splitlines()[:16]:
        stripped = line.strip()
        if not stripped or stripped.startswith((b"#", b"%")) or stripped == b"---":
            continue
        match = re.match(rb"([A-Za-z_]+)\s*:", stripped)
        return match.group(1) if match else None
    return None


def entries(kind: str, stream: BinaryIO) -> Iterator[Entry]:
    """The exchanges of a file of ``kind`` read from ``stream``, in order."""
    if kind == "har":
        from chatx.containers import har

        return har.entries(stream)
    if kind == "vcr":
        from chatx.containers import cassette

        return cassette.entries(stream.read())
    if kind == "llama-stack-recording":
        from chatx.containers import recording

        return recording.entries(stream.read())
    if kind == "httprr":
        from chatx.containers import httprr

        return httprr.entries(stream)
    raise InputError(f"unknown kind of file {kind!r}")

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from chatx.containers.lines import BOM
from chatx.errors import InputError

if TYPE_CHECKING:  # a bare stream loads nothing of the bodies exchanges hold
    from chatx.containers.bodies import Entry

__all__ = ["KINDS", "decidable", "detect", "entries"]

KINDS = {
    "har": "HAR 1.2 (browser devtools, Playwright, Polly.JS, proxies)",
    "vcr": "VCR cassette (VCR.py, pytest-recording, Ruby VCR), YAML or JSON",
    "llama-stack-recording": "Llama Stack inference recorder JSON",
    "httprr": "httprr trace (Go)",
    "exchange": "one recorded exchange as JSON: Datadog test agent cassette, WireMock mapping",
    "wiremock": "WireMock stub mappings ({mappings: [...]})",
    "hoverfly": "Hoverfly simulation ({data: {pairs: [...]}})",
    "nock": "nock recording (Node): a JSON array of {scope, method, status, response}",
    "inline-snapshot": "inline-snapshot external file: SSE body strings, or http_snapshot",
    "httpmock": "httpmock static mocks (Rust, as rig records them): YAML {when, then} documents",
    "llama-stack-mock": "Llama Stack's recordable mock (2025): {call arguments: {chunks | value}}",
    "mitmproxy": "mitmproxy flow file (mitmdump -w): typed tnetstrings, one flow each",
}


# -- detection --------------------------------------------------------------------------
#
# A file of exchanges is told by its structure, never by the order of its keys (a HAR
# with a comment before "log", a cassette with "version" first, a recording re-saved
# with sorted keys): the head's first JSON value, or YAML document, is read for the keys
# at its top and one level down, and each kind scores what it finds. A kind is chosen
# past PASS points; a bare stream (a chat chunk, a Responses event with its "response",
# a JSON array of chunks) scores nothing, as no stream format has these keys at its top.

PASS = 50
_HTTPRR = b"httprr trace v1\n"
# Outside strings: a whole string, or a lone quote (a string the head cuts), or a bracket.
_TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|["{}\[\]:,]')
_HAR_KEYS = {"entries", "version", "creator", "browser", "pages"}
_EXCHANGE_KEYS = {"request", "response", "recorded_at"}
_VCR_LISTS = {"interactions", "http_interactions"}
# A YAML document's top-level key (column 0), and the SSE field names that look like one.
_YAML_KEY = re.compile(rb"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)")
_SSE_FIELDS = {b"data", b"event", b"id", b"retry"}


@dataclass(slots=True)
class Shape:
    """What the head's first JSON value says at its top: each key with the kind of its
    value ("object", "array", "string", "scalar"; None while the head is cut before
    it), the keys of an object value, and the keys of an array value's first object."""

    keys: dict[str, str | None] = field(default_factory=dict)
    inner: dict[str, set[str]] = field(default_factory=dict)
    closed: bool = False  # the first value ended within the head


def json_shape(text: bytes) -> Shape:
    """The :class:`Shape` of the JSON object ``text`` starts with (as far as it goes)."""
    shape = Shape()
    frames: list[_Frame] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        char = token[:1]
        if char == b'"' and len(token) == 1:
            break  # a string the head cuts
        frame = frames[-1] if frames else None
        if frame is None:
            if char != b"{":
                break
            frames.append(_Frame(True, ()))
            continue
        if len(frames) == 1 and frame.value_of is not None:
            shape.keys[frame.value_of] = _KINDS.get(char, "scalar")
            frame.value_of = None
        if char in b"{[":
            key = frame.key if frame.is_object else frame.index
            frames.append(_Frame(char == b"{", (*frame.path, key)))
        elif char in b"}]":
            frames.pop()
            if not frames:
                shape.closed = True
                break
        else:
            _token(shape, frames, frame, token)
    return shape


_KINDS = {b"{": "object", b"[": "array", b'"': "string"}


def _token(shape: Shape, frames: list[_Frame], frame: _Frame, token: bytes) -> None:
    """A string, a colon or a comma in ``frame``."""
    char = token[:1]
    if char == b'"':
        if frame.is_object and frame.expecting_key:
            frame.expecting_key = False
            frame.key = token[1:-1].decode("utf-8", "replace")
            _said(shape, frames, frame.key)
    elif char == b":":
        if len(frames) == 1:
            frame.value_of = frame.key
    else:  # a comma
        frame.expecting_key = frame.is_object
        frame.index += 1


@dataclass(slots=True)
class _Frame:
    """One open object or array of :func:`json_shape`, at ``path`` from the top."""

    is_object: bool
    path: tuple[Any, ...]
    expecting_key: bool = True
    key: str | None = None
    index: int = 0  # an array's element
    value_of: str | None = None  # the top-level key whose value comes next


def _said(shape: Shape, frames: list[_Frame], key: str) -> None:
    """Note ``key``: a top-level key, a key of a top-level key's object, or of the first
    element of its array."""
    path = frames[-1].path
    if not path:
        shape.keys[key] = None
    elif len(path) == 1 or len(path) == 2 and path[1] == 0:
        shape.inner.setdefault(path[0], set()).add(key)


def scores(head: bytes) -> dict[str, int]:
    """How sure each kind is that a file starting with ``head`` is one (0..100)."""
    text = _content(head)
    if text.startswith(_HTTPRR):
        return {"httprr": 100}
    if text[:1].isdigit():
        from chatx.containers import mitmflow

        return {"mitmproxy": 100 if mitmflow.looks_like(text) else 0}
    if text[:1] == b"{":
        return _json_scores(json_shape(text))
    if text[:1] == b"[":
        first = _first_element(text)
        if _SSE_STRING.match(first):
            return {"inline-snapshot": 100}
        shape = json_shape(first)
        return {"nock": _nock_score(shape), "inline-snapshot": _snapshot_score(shape)}
    found = _yaml_verdict(text.splitlines())
    return {"vcr": 0} if found is None else {found[0]: found[1]}


_NOCK_KEYS = {"scope", "method", "status"}
# inline-snapshot's pieces of a streamed body: an array whose first string is SSE.
_SSE_STRING = re.compile(rb'"(?:event|data|id|retry|:)')


def _snapshot_score(shape: Shape) -> int:
    """An http_snapshot exchange: a response with ``status_code`` (httpx's name)."""
    if shape.keys.get("request") == "object" and shape.keys.get("response") == "object":
        return 100 if "status_code" in shape.inner.get("response", set()) else 0
    return 0


def _first_element(text: bytes) -> bytes:
    """A JSON array's first element (and what follows it), for :func:`json_shape`."""
    return text[1:].lstrip()


def _nock_score(shape: Shape) -> int:
    """A nock recording's first element names its scope, method and status; a bare JSON
    array of chunks or events has none of them at its top."""
    return 100 if shape.keys.keys() >= _NOCK_KEYS else 0


def _json_scores(shape: Shape) -> dict[str, int]:
    keys, inner = shape.keys, shape.inner
    har = vcr = 0
    if keys.get("log") == "object":
        har = 100 if inner.get("log", set()) & _HAR_KEYS else 60
    for name in _VCR_LISTS:
        if keys.get(name) == "array":
            vcr = max(vcr, 100 if inner.get(name, set()) & _EXCHANGE_KEYS else 60)
    recording, exchange = _exchange_scores(keys, inner)
    wiremock = (
        100
        if keys.get("mappings") == "array" and _EXCHANGE_KEYS & inner.get("mappings", set())
        else 0
    )
    hoverfly = 100 if keys.get("data") == "object" and "pairs" in inner.get("data", set()) else 0
    mock = 100 if any(_mock_call(key, kind, inner.get(key)) for key, kind in keys.items()) else 0
    return {
        "har": har,
        "vcr": vcr,
        "llama-stack-recording": recording,
        "exchange": exchange,
        "wiremock": wiremock,
        "hoverfly": hoverfly,
        "llama-stack-mock": mock,
    }


_MOCK_VALUE = {"chunks", "type", "value"}


def _mock_call(key: str, kind: str | None, inner: set[str] | None) -> bool:
    """A recordable mock's call: a key that is arguments (a JSON list or a Python
    tuple), its value an object of ``chunks`` or ``value`` beside ``type``."""
    if key[:1] not in ("[", "(") or kind != "object" or not inner:
        return False
    return inner <= _MOCK_VALUE


def _exchange_scores(keys: dict[str, str | None], inner: dict[str, set[str]]) -> tuple[int, int]:
    """A Llama Stack recording and one exchange as JSON both are ``{request, response}``:
    a response with a ``status`` (Datadog's, WireMock's) and none of the recorder's marks
    is the second. A recording's request decides; its response alone does not (a
    Responses event has a "response" object at its top too)."""
    recording = 60 if keys.get("request") == "object" else 0
    recording += 40 if keys.get("response") == "object" else 0
    llama = "test_id" in keys or "id_normalization_mapping" in keys
    llama = llama or "is_streaming" in inner.get("response", set())
    if recording == 100 and not llama and "status" in inner.get("response", set()):
        return 0, 100
    return min(recording + (60 if llama else 0), 100), 0


def _yaml_verdict(lines: list[bytes]) -> tuple[str, int] | None:
    """A YAML cassette has a top-level ``interactions:`` (Ruby's ``http_interactions:``)
    after nothing but other top-level keys, their values, comments and directives; an
    httpmock file a top-level ``when:`` holding a matcher (``method:``, ``path:``…).
    (kind, 100) when ``lines`` show one, (kind, 0) when a line shows this is neither,
    None when they do not tell yet."""
    top = None
    for line in lines:
        if not line.strip() or line.startswith((b"#", b"%", b"---")):
            continue  # blank, a comment, a directive or a document's start
        if line.startswith((b" ", b"\t", b"-")):  # inside a top-level key's value
            if top == b"when" and _HTTPMOCK_WHEN.match(line):
                return "httpmock", 100
            continue
        key = _YAML_KEY.match(line)
        if key is None or key.group(1) in _SSE_FIELDS:
            return "vcr", 0
        top = key.group(1)
        if top.decode() in _VCR_LISTS:
            return "vcr", 100
    return None


# What httpmock's ``when`` matches on, one level in: no cassette has a top-level "when".
_HTTPMOCK_WHEN = re.compile(
    rb"[ \t]+(?:method|path|scheme|host|port|body|json_body|header|query_param)[ \t]*:(?:[ \t]|$)"
)


def decidable(head: bytes) -> bool:
    """True when ``head`` is enough to :func:`detect` from (the caller also stops at the
    end of the input, or after a few KiB): a JSON object whose first value ends or whose
    kind is certain, a YAML document's ``interactions:`` or a line no cassette has, or
    a bare stream's first line."""
    text = _content(head)
    if not text:
        return False
    if text[:1] == b"{":
        shape = json_shape(text)
        return shape.closed or max(_json_scores(shape).values()) == 100
    if text[:1] == b"[" and _SSE_STRING.match(_first_element(text)):
        return True
    if text[:1].isdigit():  # a flow file's first key comes within its first bytes
        return len(text) >= 64 or b";" in text or b"," in text
    if text[:1] == b"[" and _first_element(text)[:1] == b"{":
        shape = json_shape(_first_element(text))
        return shape.closed or _nock_score(shape) == 100 or _snapshot_score(shape) == 100
    first = _YAML_KEY.match(text)
    if (
        first is not None
        and first.group(1) not in _SSE_FIELDS
        or text.startswith((b"---", b"%YAML", b"#"))
    ):
        lines = text.splitlines()
        if not text.endswith((b"\n", b"\r")):
            lines.pop()  # cut by the read
        return _yaml_verdict(lines) is not None
    return b"\n" in text


def _content(head: bytes) -> bytes:
    return head.removeprefix(BOM).lstrip()


def detect(head: bytes) -> str | None:
    """The kind of file that starts with ``head``, or None for a bare stream."""
    found = scores(head)
    best = max(found, key=found.__getitem__)
    return best if found[best] > PASS else None


def entries(kind: str, stream: BinaryIO, path: str | None = None) -> Iterator[Entry]:
    """The exchanges of a file of ``kind`` read from ``stream``, in order; ``path`` is
    where the file is (None for stdin), for a body kept in a file beside it."""
    if kind == "har":
        from chatx.containers import har

        return har.entries(stream)
    if kind == "vcr":
        from chatx.containers import cassette

        return cassette.entries(stream)
    if kind == "llama-stack-recording":
        from chatx.containers import llama_stack_recording

        return llama_stack_recording.entries(stream)
    if kind == "httprr":
        from chatx.containers import httprr

        return httprr.entries(stream)
    if kind in ("exchange", "wiremock", "hoverfly"):
        from chatx.containers import stubs

        return stubs.entries(kind, stream, path)
    if kind == "nock":
        from chatx.containers import nock

        return nock.entries(stream)
    if kind == "inline-snapshot":
        from chatx.containers import snapshot

        return snapshot.entries(stream)
    if kind == "llama-stack-mock":
        from chatx.containers import recordable

        return recordable.entries(stream)
    if kind == "mitmproxy":
        from chatx.containers import mitmflow

        return mitmflow.entries(stream)
    if kind == "httpmock":
        from chatx.containers import httpmock

        return httpmock.entries(stream)
    raise InputError(f"unknown kind of file {kind!r}")

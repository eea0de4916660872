"""A stub server's file (Datadog exchange, WireMock mapping or mappings, Hoverfly
simulation), an inline-snapshot ``http_snapshot`` and a nock recording too big to hold
are walked (json_document.document): their response bodies' strings, text or base64, are
decoded in pieces into a spool. Walked with every threshold forced small, each file must
read as the one read whole: the same entries, body bytes or body errors, and the same
error for a file that is no JSON."""

from __future__ import annotations

import base64
import gzip
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chatx.containers import bodies, demux, exact, json_document, nock, snapshot, stubs
from tests.containers import test_stub_layouts as layouts
from tests.containers.common import read_walked
from tests.containers.test_big_har import peak_rss

Reader = Callable[[io.BytesIO], Iterator[bodies.Entry]]
READERS: dict[str, Reader] = {
    "exchange": lambda stream: stubs.entries("exchange", stream),
    "wiremock": lambda stream: stubs.entries("wiremock", stream),
    "hoverfly": lambda stream: stubs.entries("hoverfly", stream),
    "nock": nock.entries,
    "inline-snapshot": snapshot.entries,
}


def read(kind: str, data: bytes, big: int | None = None, piece: int | None = None,
         keep: int | None = None, block: int | None = None) -> Any:  # fmt: skip
    return read_walked(READERS[kind], data, big, piece, keep, block)


def walked_too(kind: str, data: bytes) -> Any:
    """Walked with every body string spooled, or those past a length, in pieces and reads
    of each size, the file reads as it reads whole; that is returned."""
    whole = read(kind, data)
    for piece in (16, 17, 23, 64):
        for block in (None, 1, 7):
            assert read(kind, data, 0, piece, 0, block) == whole, (piece, block)
    for keep in (40, 300, 1 << 20):  # values this short copied whole, the others walked
        for block in (None, 7):
            assert read(kind, data, 0, 16, keep, block) == whole, (keep, block)
    return whole


def spooled(kind: str, data: bytes) -> int:
    """How many strings a walk with every threshold at 0 spools out of ``data``."""
    made: list[bodies.Spool] = []
    real = json_document.Shared.part

    def counted(self: json_document.Shared) -> bodies.Spool:
        made.append(real(self))
        return made[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_document.Shared, "part", counted)
        read(kind, data, 0, 16, 0)
    return len(made)


SSE = layouts.SSE
# Escapes, a surrogate pair as two escapes, UTF-8 of 2, 3 and 4 bytes, an escaped quote
# and backslashes: at every offset, some piece is cut at or near each.
HARD = 'data: {"t":"\\"q\\\\ \u00e9\u20ac\U0001f600 \\ud83d\\ude00 \\n"}\n\n' * 7


def hard(text: str) -> str:
    """JSON of ``text`` with its surrogates kept as escapes, as a JSON writer may."""
    return json.dumps(text, ensure_ascii=False).replace("\\\\ud", "\\ud")


def b64(data: bytes, width: int = 0) -> str:
    text = base64.b64encode(data).decode()
    return "\n".join(text[at : at + width] for at in range(0, len(text), width)) if width else text


def dumped(value: Any) -> bytes:
    return json.dumps(value, indent=2).encode()


def layouts_of_kind() -> Iterator[tuple[str, str, bytes]]:
    """Every layout of test_stub_layouts of a kind walked here, as it detects."""
    for name, _, make, _, _ in layouts.LAYOUTS:
        content = make()
        data = content if isinstance(content, bytes) else (
            content.encode() if isinstance(content, str) else dumped(content))  # fmt: skip
        kind = demux.detect(data[: 1 << 16])
        if kind in READERS:
            yield name, kind, data
    yield "snapshot-sse", "inline-snapshot", dumped(layouts.snapshot_sse())


LAYOUTS = list(layouts_of_kind())


def test_every_kind_walked_has_a_layout() -> None:
    assert {kind for _, kind, _ in LAYOUTS} == set(READERS)
    assert len(LAYOUTS) == 7


@pytest.mark.parametrize(("name", "kind", "data"), LAYOUTS, ids=[n for n, _, _ in LAYOUTS])
def test_every_layout_walked_reads_as_read_whole(name: str, kind: str, data: bytes) -> None:
    whole = walked_too(kind, data)
    assert isinstance(whole, list) and whole, whole
    streams = [entry for entry in whole if SSE.encode() in entry[-1]]
    if name != "nock":  # nock's stream is gzip kept as hex: no string to walk
        assert streams, whole
    # Each body string is walked (the SSE pieces' array is read whole: see snapshot.py).
    assert spooled(kind, data) == SPOOLED.get(name, 1)


# Body strings in a layout: the 404's and the stream's, or none (gzip as hex, pieces).
SPOOLED = {"hoverfly": 2, "http-snapshot": 2, "nock": 0, "snapshot-sse": 0}


def exchange(response: dict[str, Any], **request: Any) -> dict[str, Any]:
    return {"request": {"method": "POST", "url": "/v1/messages", **request},
            "response": response}  # fmt: skip


SSE_TYPE = {"Content-Type": "text/event-stream"}
GZIP = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}


def made() -> Iterator[tuple[str, str, bytes]]:
    """Adversarial files of each kind: hard escapes, base64 (wrapped, gzip, broken), a body
    before the fields that say what it is, empty and missing bodies."""
    packed = gzip.compress(SSE.encode(), mtime=0)
    for name, response in (
        ("text", {"status": 200, "headers": SSE_TYPE, "body": SSE}),
        ("body-first", {"body": SSE, "headers": SSE_TYPE, "status": {"code": 200}}),
        ("base64", {"status": 200, "headers": SSE_TYPE, "base64Body": b64(SSE.encode(), 60)}),
        ("base64-gzip", {"base64Body": b64(packed), "headers": GZIP, "status": 200}),
        ("base64-bad", {"status": 200, "base64Body": "not base64!" * 9}),
        ("base64-beside-body", {"body": SSE, "base64Body": b64(b"other" * 30)}),
        ("json-beside-body", {"body": SSE, "jsonBody": {"a": [1, 2]}}),
        ("empty", {"status": 204, "body": ""}),
        ("number", {"status": 200, "body": 12}),
    ):
        yield f"exchange-{name}", "exchange", dumped(exchange(response))
    hard_exchange = dumped(exchange({"status": 200, "headers": SSE_TYPE, "body": "@"}))
    yield "exchange-hard", "exchange", hard_exchange.replace(b'"@"', hard(HARD).encode())
    # A lone surrogate read as JSON.parse reads it, where 19 digits make the read exact.
    lone = hard(HARD + "\\ud800" + HARD).encode()
    yield (
        "exchange-lone-exact",
        "exchange",
        hard_exchange.replace(b'"@"', lone).replace(
            b'"status": 200', b'"status": 200, "id": 12345678901234567890'
        ),
    )
    yield "exchange-lone", "exchange", hard_exchange.replace(b'"@"', lone)
    mapping = exchange({"status": 200, "base64Body": b64(SSE.encode())})
    yield ("wiremock-bodies", "wiremock", dumped({"mappings": [
        mapping, exchange({"body": SSE, "status": 200}), {"request": {}, "response": {}},
        exchange({"body": HARD * 3}), {"mappings": [mapping]}, 7]}))  # fmt: skip

    def pair(response: dict[str, Any]) -> dict[str, Any]:
        return {"request": {"method": [{"matcher": "exact", "value": "POST"}]},
                "response": response}  # fmt: skip

    yield ("hoverfly-bodies", "hoverfly", dumped({"data": {"pairs": [
        pair({"body": b64(SSE.encode()), "status": 200, "encodedBody": True}),
        pair({"encodedBody": True, "body": b64(packed), "headers": {"Content-Encoding": ["gzip"]}}),
        pair({"body": "?" * 90, "encodedBody": True}),
        pair({"body": HARD * 3, "encodedBody": False}),
        pair({"body": SSE}),
    ]}, "meta": {}}))  # fmt: skip
    yield ("nock-text", "nock", dumped([
        {"scope": "https://api.anthropic.com:443", "method": "POST", "path": "/v1/messages",
         "status": 200, "response": SSE, "rawHeaders": ["Content-Type", "text/event-stream"]},
        {"response": HARD * 3, "status": 200, "body": {"response": SSE}},
        {"response": {"body": SSE}, "status": 500},
        {"response": [packed.hex()], "rawHeaders": ["Content-Encoding", "gzip"]},
    ]))  # fmt: skip
    yield ("snapshot-bodies", "inline-snapshot", dumped([
        {"response": {"body": SSE, "status_code": 200, "headers": {"content-type": "text/event-stream"}},
         "request": {"method": "POST", "url": "https://x/v1", "body": SSE}},
        {"request": {}, "response": {"body": HARD * 3}},
        {"request": {}, "response": {"body": {"body": SSE}}},
        "a string among exchanges",
    ]))  # fmt: skip


MADE = list(made())


@pytest.mark.parametrize(("name", "kind", "data"), MADE, ids=[n for n, _, _ in MADE])
def test_every_made_file_walked_reads_as_read_whole(name: str, kind: str, data: bytes) -> None:
    whole = walked_too(kind, data)
    assert isinstance(whole, list) == (name != "exchange-lone"), whole


def test_the_made_files_say_what_they_were_made_to_say() -> None:
    said = {name: read(kind, data) for name, kind, data in MADE}
    assert said["exchange-base64-gzip"][0][-1] == SSE.encode()
    assert said["exchange-base64-bad"][0][-1][0] == "BodyError"
    assert said["exchange-base64-beside-body"][0][-1] == b"other" * 30
    assert said["exchange-hard"][0][-1].count("\U0001f600".encode()) == 14
    assert b"\xed\xa0\x80" in said["exchange-lone-exact"][0][-1]  # U+D800, surrogatepass
    assert said["exchange-lone"][0] == "InputError"
    assert said["exchange-body-first"][0][-1] == SSE.encode()
    hoverfly = said["hoverfly-bodies"]
    assert [entry[-1] for entry in hoverfly[:2]] == [SSE.encode()] * 2
    assert hoverfly[2][-1][0] == "BodyError"


def broken() -> Iterator[tuple[str, str, bytes]]:
    """Files that are no JSON, or whose body never ends, cut at places of each kind."""
    for name, kind, data in [*LAYOUTS, *MADE[-4:]]:
        if name == "snapshot-sse" or exact.may_hold_big_int(data):  # read whole / see below
            continue
        at = data.index(SSE[:40].encode()) if SSE[:40].encode() in data else len(data) // 2
        yield f"{name}-cut-in-body", kind, data[: at + 100]
        yield f"{name}-cut", kind, data[: len(data) - 3]
        yield f"{name}-after", kind, data + b"\n}"
        yield f"{name}-bad-escape", kind, data.replace(b"data: ", b"\\q", 1)
        yield f"{name}-control", kind, data.replace(b"data: ", b"da\x01a", 1)
        yield f"{name}-not-utf-8", kind, data.replace(b"data: ", b"\xff", 1)
    yield "not-json", "exchange", b"{" + b"x" * 200
    yield "no-object", "exchange", b'["a", "b"]'
    yield "blank", "nock", b"  \n "
    yield "lone-high-surrogate", "nock", b'[{"response": "' + b"a" * 50 + b'\\ud800"}]'


BROKEN = list(broken())


@pytest.mark.parametrize(("name", "kind", "data"), BROKEN, ids=[n for n, _, _ in BROKEN])
def test_a_broken_file_walked_fails_as_read_whole(name: str, kind: str, data: bytes) -> None:
    walked_too(kind, data)


def test_a_broken_file_with_19_digits_walked_fails_too() -> None:
    """Where a run of 19 digits makes the read exact (the standard library's parser), the
    walk says a broken file's fault as orjson words it, with its line: not the standard
    library's words and offset, which only the whole file held would give (as for a JSON
    cassette walked)."""
    data = dict((name, data) for name, _, data in MADE)["nock-text"]
    assert exact.may_hold_big_int(data)
    for broken_data in (data[:-3], data + b"\n}", data.replace(b"data: ", b"\\q", 1)):
        whole = read("nock", broken_data)
        assert whole[0] == "InputError", whole
        for block in (None, 7):
            walked = read("nock", broken_data, 0, 16, 0, block)
            assert walked[0] == "InputError" and walked[1].startswith("not valid JSON: "), walked


def test_a_big_stub_file_is_read_in_little_memory(tmp_path: Path) -> None:
    """A Datadog exchange whose one body is 40 MB: its peak above a small one's stays well
    under the body (read whole, the file and its string cost several times it)."""

    def stream(deltas: int) -> str:
        name, delta = layouts.EVENTS[2]
        event = f"event: {name}\ndata: {json.dumps(delta)}\n\n"
        return layouts.SSE.replace(event, event * deltas)

    small, big = stream(10), stream(400_000)
    assert len(big) > 40 << 20
    small_path, big_path = tmp_path / "small.json", tmp_path / "big.json"

    def write(path: Path, body: str) -> None:
        response = {"status": 200, "headers": {"content-type": "text/event-stream"}, "body": body}
        path.write_text(json.dumps(exchange(response)))

    write(small_path, small)
    write(big_path, big)
    base, code, err = peak_rss(["ls", str(small_path)])
    assert code == 0, err
    peak, code, err = peak_rss(["ls", str(big_path)])
    assert code == 0, err
    assert peak - base < 32 << 20, (peak >> 20, base >> 20)

"""An entry too big to hold is walked (chatx/containers/har.py, with ``json_walk.Walk``): its body's
string decoded in pieces into a spool, the rest parsed by orjson. Every entry walked,
with pieces and reads forced small, must read as the entry parsed whole reads: the same
fields, the same body bytes or the same body error; and an entry that is no JSON is an
error naming the entry and its line either way (the same one where it has one fault in
its body's string or its nesting; with several, the walk says the first it meets)."""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx.containers import bodies, har, json_walk
from chatx.errors import InputError
from tests.containers import make_fixtures as made
from tests.containers.common import Slow, outcome


def read(data: bytes, big: int | None = None, piece: int | None = None,
         block: int | None = None) -> list[tuple[Any, ...]]:  # fmt: skip
    return [outcome(entry) for entry in har.entries(Slow(data, block), big, piece)]


def walked_too(entries: list[Any], pieces: tuple[int, ...] = (16, 17, 23, 64)) -> None:
    """Every entry walked, and every body held read in pieces, reads as the entries
    parsed whole read."""
    data = made.har(entries)
    whole = read(data)
    assert [e[0] for e in whole] == list(range(len(entries)))
    for piece in pieces:
        for block in (None, 1, 7):
            assert read(data, 0, piece, block) == whole, (piece, block)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(har, "PIECES", 0)
        for piece in (1, 5, 64):
            patch.setattr(har, "PIECE", piece)
            assert read(data) == whole, piece


def content_entry(content: dict[str, Any], headers: list[dict[str, str]] | None = None) -> Any:
    return made.har_entry("POST", "https://api.openai.com/v1/chat/completions",
                          {"model": "m", "stream": True}, 200, content, headers)  # fmt: skip


SSE = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"h\\"é😀\\n"}}]}\n\n' * 3
TEXTS = [
    SSE,
    "",
    "plain ascii with no escape at all " * 3,
    'quotes " and backslashes \\ and \\\\" and slashes /',
    "controls \n\r\t\b\f\x00\x01\x1f",
    "ünïcødé é ß ✓ 😀 𝄞 中文 " * 3,
    "\U0001f600" * 20,
    "\u2028\u2029 separators",
]


@pytest.mark.parametrize("text", TEXTS)
def test_plain_text_reads_the_same(text: str) -> None:
    walked_too([content_entry({"mimeType": "text/event-stream", "text": text})])


@pytest.mark.parametrize("text", TEXTS)
def test_text_escaped_to_ascii_reads_the_same(text: str) -> None:
    # json.dumps escapes every non-ASCII character (pairs of \\uXXXX above the BMP).
    entry = content_entry({"mimeType": "text/event-stream", "text": text})
    data = json.dumps({"log": {"entries": [entry]}}).encode()
    whole = read(data)
    for piece in (16, 17, 18, 19, 20, 21, 22, 29):
        assert read(data, 0, piece) == whole, piece


def test_each_escape_cut_at_every_place() -> None:
    """An escape, a surrogate pair written as two escapes, a UTF-8 character: each at
    every offset from a piece's end."""
    for tail in ["\\u00e9", "\\ud83d\\ude00", '\\"', "\\\\", "\\n", "é", "😀", "中", "\\/"]:
        for offset in range(40):
            raw = ("x" * offset + tail) * 3
            data = ('{"log": {"entries": [{"response": {"content": {"text": "'
                    + raw + '"}}}]}}').encode()  # fmt: skip
            whole = read(data)
            for piece in range(16, 30):
                assert read(data, 0, piece) == whole, (tail, offset, piece)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(max_size=80),
    ascii_only=st.booleans(),
    piece=st.integers(16, 40),
    block=st.sampled_from([None, 1, 3, 11]),
)
def test_any_text_any_escaping(text: str, ascii_only: bool, piece: int, block: int | None) -> None:
    entry = content_entry({"mimeType": "text/plain", "text": text})
    data = json.dumps({"log": {"entries": [entry]}}, ensure_ascii=ascii_only).encode()
    assert read(data, 0, piece, block) == read(data)


def b64(data: bytes, width: int | None = None) -> str:
    text = base64.b64encode(data).decode()
    if width:  # line breaks, as some recorders write base64
        text = "\n".join(text[at : at + width] for at in range(0, len(text), width))
    return text


BODY = SSE.encode()


@pytest.mark.parametrize(
    "content",
    [
        {"encoding": "base64", "text": b64(BODY)},
        {"encoding": "base64", "text": b64(BODY, 76)},
        {"encoding": "base64", "text": b64(b"x")},
        {"encoding": "base64", "text": b64(b"xy")},
        {"encoding": "base64", "text": b64(BODY) + "===="},
        {"encoding": "base64", "text": b64(BODY)[:-1]},
        {"encoding": "base64", "text": b64(BODY)[:-2]},
        {"encoding": "base64", "text": b64(b"xy") + b64(b"z")},
        {"encoding": "base64", "text": "=" + b64(BODY)},
        {"encoding": "base64", "text": b64(BODY) + "é"},
        {"encoding": "base64", "text": "é" + b64(BODY)},
        {"encoding": "base64", "text": b64(BODY).replace("A", "*", 1)},
        {"encoding": "base64", "text": json.dumps([b64(b"data: 1\n\n"), b64(b"data: 2\n\n")])},
        {"encoding": "base64", "text": "  [" + json.dumps(b64(b"data: 1\n\n")) + ", 3]"},
        {"encoding": "base64", "text": "[not json"},
        {"encoding": "utf8", "text": SSE},
        {"text": 12},
        {"text": None},
        {"text": {"nested": SSE}},
        {},
    ],
)
def test_base64_and_odd_content_read_the_same(content: dict[str, Any]) -> None:
    walked_too([content_entry({"mimeType": "text/event-stream", **content})])


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="QUFBab+/=\n =é", max_size=40),
    piece=st.integers(16, 24),
)
def test_any_base64_text_decodes_or_fails_the_same(text: str, piece: int) -> None:
    entry = content_entry({"encoding": "base64", "text": text})
    data = made.har([entry])
    assert read(data, 0, piece) == read(data)


@settings(max_examples=300, deadline=None)
@given(
    text=st.binary(max_size=60).map(base64.b64encode) | st.text("QUFBab+/=\n \x00").map(str.encode),
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12),
)
def test_base64_in_pieces_is_base64_whole(text: bytes, sizes: list[int]) -> None:
    parts, at = [], 0
    while at < len(text):
        size = sizes[len(parts) % len(sizes)]
        parts.append(text[at : at + size])
        at += size
    try:
        whole: Any = bodies.b64(text)
    except bodies.BodyError as exc:
        whole = str(exc)
    try:
        pieces: Any = b"".join(bodies.b64_pieces(parts))
    except bodies.BodyError as exc:
        pieces = str(exc)
    assert pieces == whole


GZIP = [{"name": "Content-Encoding", "value": "gzip"}]


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)  # the same bytes in every test worker


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (_gz(BODY), GZIP),
        (_gz(_gz(BODY)), [{"name": "content-encoding", "value": "gzip, gzip"}]),
        (_gz(_gz(_gz(_gz(BODY)))), GZIP),
        (_gz(BODY)[:-5], GZIP),
        (_gz(BODY) + b"junk", GZIP),
        (zlib.compress(BODY), [{"name": "content-encoding", "value": "deflate"}]),
        (zlib.compress(BODY)[2:-4], [{"name": "content-encoding", "value": "deflate"}]),
        (BODY, [{"name": "content-encoding", "value": "deflate"}]),  # decoded already
        (b"\x00\x01 not deflate", [{"name": "content-encoding", "value": "deflate"}]),
    ],
    ids=[
        "gzip",
        "gzip-gzip",
        "gzip-x4",
        "gzip-cut",
        "gzip-junk",
        "deflate",
        "raw-deflate",
        "decoded",
        "no-deflate",
    ],
)
def test_compressed_bodies_read_the_same(body: bytes, headers: list[dict[str, str]]) -> None:
    walked_too([content_entry({"encoding": "base64", "text": b64(body)}, headers)], (16, 40))


def test_a_bomb_stops_at_the_limit_in_pieces_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("chatx.limits.MAX_DECOMPRESSED", 1000)
    bomb = _gz(b"\0" * 100_000)
    walked_too([content_entry({"encoding": "base64", "text": b64(bomb)}, GZIP)], (16, 64))
    body = bodies.decoded_pieces([bomb[:10], bomb[10:]], "gzip")
    with pytest.raises(bodies.BodyError, match="decompresses to more than 1000 bytes"):
        b"".join(body)


def test_the_body_before_or_after_the_other_fields() -> None:
    first = {"response": {"content": {"text": SSE, "mimeType": "text/event-stream",
                                      "encoding": "base64"}}}  # fmt: skip
    first["response"]["content"]["text"] = b64(BODY)
    first["response"]["headers"] = [{"name": "content-type", "value": "text/event-stream"}]
    first["request"] = {"method": "POST", "url": "https://e.test/v1/chat/completions",
                        "postData": {"text": json.dumps({"model": "m"})}}  # fmt: skip
    last = dict(reversed(list(content_entry({"text": SSE, "mimeType": "x/y"}).items())))
    walked_too([first, last, content_entry({"text": SSE})])


def test_duplicate_keys_keep_what_orjson_keeps() -> None:
    for raw in [
        '{"response": {"content": {"text": "one", "text": "two"}}}',
        '{"response": {"content": {"text": "one"}, "content": {"mimeType": "x"}}}',
        '{"response": {"content": {"text": "one"}}, "response": {"content": {"text": "two"}}}',
        '{"response": {"content": {"text": "one", "text": 3}}}',
        '{"response": {"content": {"te\\u0078t": "escaped key"}}}',
        '{"response": {"content": {"text": "a", "encoding": "base64", "text": "QUFB"}}}',
        '{"response": {"content": [{"text": "in an array"}]}}',
        '{"request": {"content": {"text": "not the response"}}}',
        '{"response": {"x": {"content": {"text": "deeper"}}}}',
    ]:
        data = ('{"log": {"entries": [' + raw + "]}}").encode()
        assert read(data, 0, 16) == read(data), raw


def error(data: bytes, big: int | None = None, piece: int | None = None) -> InputError:
    with pytest.raises(InputError) as caught:
        read(data, big, piece)
    return caught.value


def test_entries_beside_the_walked_one_read_the_same() -> None:
    entries = [content_entry({"text": f"body {n} " + SSE}) for n in range(4)]
    entries.insert(2, {"request": {"url": [[[1]]]}, "response": None})
    data = made.har(entries)[:-3] + b', 7, "x", [1]]}}'  # elements that are no entries
    assert read(data, 0, 16) == read(data)


@pytest.mark.parametrize(
    "bad",
    [
        "\\x",  # no such escape
        "\\u12",  # a short \\u escape
        "\\ud83d",  # a lone high surrogate
        "\\ude00",  # a lone low surrogate
        "\\ud83dx",
        "\x01",  # a control character as it is
        "\n",  # a line break inside a string
    ],
)
def test_a_bad_body_string_is_the_entry_s_error_walked_or_not(bad: str) -> None:
    for offset in (0, 5, 14, 30):
        data = ('{"log": {"entries": [{"response": {"content": {"text": "'
                + "y" * offset + bad + 'z"}}}]}}').encode()  # fmt: skip
        whole = error(data)
        for piece in (16, 21):
            walked = error(data, 0, piece)
            assert walked.message.startswith("not valid JSON in log.entries[0]: ")
            assert (walked.message, walked.line) == (whole.message, whole.line), (bad, offset)


def test_bad_utf8_in_the_body_is_an_error_walked_or_not() -> None:
    for bad in (b"\xff", b"\xc3", b"\xe4\xb8", b"\xed\xa0\x80", b"\xc3(\x80"):
        data = b'{"log": {"entries": [{"response": {"content": {"text": "' + b"a" * 20
        data += bad + b'"}}}]}}'
        assert error(data).message.startswith("not valid JSON in log.entries[0]: ")
        walked = error(data, 0, 16)
        assert walked.message.startswith("not valid JSON in log.entries[0]: "), bad
        assert walked.line == 1


def test_a_body_that_never_ends_is_truncated_json() -> None:
    data = b'{"log": {"entries": [\n{"response": {"content": {"text": "' + b"abc\\n" * 5000
    whole = error(data)
    walked = error(data, 0, 64)
    assert (
        walked.message
        == whole.message
        == ("truncated JSON: the input ends inside log.entries[0] (opened at line 2)")
    )
    assert walked.line == whole.line == 2


def test_a_huge_entry_that_is_no_json_is_said_early() -> None:
    # Bytes no JSON holds between tokens: said where they are, without reading on.
    data = b'{"log": {"entries": [\n{"request": {"url": "u"},\n @@@' + b"x" * 100_000
    walked = error(data, 0, 64)
    assert walked.message.startswith("not valid JSON in log.entries[0]: ")
    assert walked.line == 3
    # Tokens that make no JSON (a key with no value): the skeleton is checked as it grows.
    data = b'{"log": {"entries": [{"a" "b" ' + b'"c", ' * 300_000 + b"}]}}"
    walked = error(data, 0, 64)
    assert walked.message.startswith("not valid JSON in log.entries[0]: ")


def test_nesting_beside_the_body() -> None:
    for depth in (50, 1000):
        deep = "[" * depth + "]" * depth
        data = ('{"log": {"entries": [{"x": ' + deep + ', "response": {"content": {"text": '
                + json.dumps(SSE) + "}}}]}}").encode()  # fmt: skip
        assert read(data, 0, 16) == read(data)
    deep = "[" * 1100 + "]" * 1100
    data = ('{"log": {"entries": [{"x": ' + deep + ', "response": {"content": {"text": "'
            + "t" * 100 + '"}}}]}}').encode()  # fmt: skip
    whole, walked = error(data), error(data, 0, 16)
    assert (walked.message, walked.line) == (whole.message, whole.line)
    assert "depth limit exceeded" in walked.message


def test_an_entry_past_the_threshold_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the threshold small, entries past it are walked and read as before; one
    whose end a window finds first is not."""
    walks: list[int] = []
    real = json_walk.Walk.value

    def counted(self: Any) -> Any:
        walks.append(self.line)
        return real(self)

    monkeypatch.setattr(json_walk.Walk, "value", counted)
    entries = [content_entry({"text": "small"}), content_entry({"text": SSE * 40}),
               content_entry({"text": "small"})]  # fmt: skip
    data = made.har(entries)
    whole = read(data)
    assert walks == []
    monkeypatch.setattr(har, "_BLOCK", 512)
    assert read(data, 2048, 64) == whole
    assert len(walks) == 1

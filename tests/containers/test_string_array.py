"""A JSON array of strings too big to hold (inline-snapshot's pieces of one streamed body)
is read as it comes into the text they join to, exactly as the whole array read and
joined; any array this reading does not follow is given back whole, byte for byte."""

from __future__ import annotations

import io
import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx.containers import bodies, string_array
from tests.containers.common import commands_alike
from tests.containers.test_har_walk_commands import SSE


def whole(data: bytes) -> bytes | None:
    """The whole read: the joined text of an array of strings; None for any other."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "".join(value).encode("utf-8", "surrogatepass")
    return None


def walked(data: bytes, monkeypatch: pytest.MonkeyPatch, read: int = 7) -> bytes | None:
    """The array read as it comes (every file past BIG, read ``read`` bytes at a time):
    its joined text, or None when given back whole (and then the bytes given)."""
    with monkeypatch.context() as patch:
        patch.setattr(string_array, "BIG", 0)
        patch.setattr(string_array, "_READ", read)
        patch.setattr(string_array, "ELEMENT", 256)
        got = string_array.joined(io.BytesIO(data))
    if isinstance(got, bodies.Spool):
        return b"".join(got.pieces())
    assert got == data  # given back whole, byte for byte
    return None


PIECES = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(['"', "\\", "\n"]),
            max_size=12),
    max_size=30,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(pieces=PIECES, indent=st.booleans(), read=st.sampled_from([1, 3, 7, 4096]))
def test_any_pieces_join_as_whole(pieces: list[str], indent: bool, read: int) -> None:
    data = json.dumps(pieces, indent=2 if indent else None, ensure_ascii=read % 2 == 1).encode()
    with pytest.MonkeyPatch.context() as patch:
        got = walked(data, patch, read)
    assert got is None or got == whole(data)
    if pieces:
        assert got == whole(data)  # every array of strings is read as it comes


@pytest.mark.parametrize(
    "data",
    [
        b'["\\ud83d", "\\ude00", "a"]',  # a surrogate pair cut between two pieces
        b'["a\\u0000b", "\\"", "\\\\", "\\n"]',
        b'  [ "a" ,\n"b"\n]\n\n',
        b'["' + "é😀".encode() + b'"]',
    ],
)
def test_shapes_join_as_whole(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert walked(data, monkeypatch) == whole(data)


@pytest.mark.parametrize(
    "data",
    [
        b"[]",
        b'["a", 1]',
        b'["a", {"b": "c"}]',
        b'["a", "b"] trailing',
        b'["a", "b"',  # cut short
        b'["a" "b"]',
        b'["\\q"]',  # a bad escape
        b'["' + b"x" * 300 + b'"]',  # longer than ELEMENT
        b'\xef\xbb\xbf["a"]',  # a BOM
        b'{"a": "b"}',
        b"",
    ],
)
def test_what_is_not_followed_is_given_back_whole(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert walked(data, monkeypatch) is None


def test_a_small_file_is_given_back_whole() -> None:
    data = b'["a", "b"]'
    assert string_array.joined(io.BytesIO(data)) == data


def test_every_command_reads_a_snapshot_of_pieces_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inline-snapshot's pieces of one body: the same by every command, read as they come."""
    pieces = tmp_path / "pieces.json"
    pieces.write_text(json.dumps([SSE.decode()[at : at + 40] for at in range(0, len(SSE), 40)]))
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(["data: {}\n\n", {"request": {}, "response": {}}]))
    commands_alike([str(pieces), str(mixed)], monkeypatch, string_array, BIG=0, _READ=5)
    monkeypatch.setattr(string_array, "ELEMENT", 1)  # each piece too long: read whole
    commands_alike([str(pieces)], monkeypatch, string_array, BIG=0)

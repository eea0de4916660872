"""Container registry and detection from the first bytes."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chatx.containers
from chatx.containers import CONTAINERS, Container, detect, get
from chatx.errors import InputError, UsageError
from tests.paths import SHARED

CAPTURES = SHARED / "captures"
BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    "head, name",
    [
        (b'data: {"a":1}\n\n', "sse"),
        (b"data:{}", "sse"),
        (b"event: response.created\ndata: {}\n\n", "sse"),
        (b": OPENROUTER PROCESSING\n\ndata: {}\n\n", "sse"),
        (b"id: 1\n", "sse"),
        (b"retry: 100\n", "sse"),
        (b"\r\n\r\ndata: [DONE]", "sse"),
        (BOM + b"data: {}", "sse"),
        (b'{"a":1}\n{"a":2}\n', "jsonl"),
        (BOM + b'  \n{"a":1', "jsonl"),
        (b'[{"a":1}]', "json"),
        (b'\n\t [\n  {"a": 1}', "json"),
    ],
)
def test_detect(head, name):
    assert detect(head) == name
    assert CONTAINERS[name].probe(head) == 100


@pytest.mark.parametrize("head", [b"", b" \n\r\t", BOM, BOM + b"\n  "])
def test_detect_empty_input(head):
    with pytest.raises(InputError) as info:
        detect(head)
    assert info.value.message == "empty input"
    assert "JSON lines" in info.value.expected


@pytest.mark.parametrize("head", [b"<!DOCTYPE html>\n<html>", b"HTTP/1.1 200 OK\r\n", b"\xff\xfe",
                                  b"Data: {}", b" hello"])  # fmt: skip
def test_detect_not_a_stream(head):
    with pytest.raises(InputError) as info:
        detect(head)
    assert info.value.message.startswith("not a stream: starts with ")
    assert info.value.expected == "SSE (data: lines), JSON lines or a JSON array"


def test_not_a_stream_message_shows_a_short_first_line():
    with pytest.raises(InputError) as info:
        detect(b"x" * 500 + b"\nmore")
    assert len(info.value.message) < 80
    assert "more" not in info.value.message


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_detect_only_raises_input_error(head):
    with contextlib.suppress(InputError):
        assert detect(head) in CONTAINERS


def test_captures_are_detected_by_their_extension():
    if not CAPTURES.is_dir():
        pytest.skip(f"no captures folder at {CAPTURES}")
    files = sorted(CAPTURES.rglob("*.sse")) + sorted(CAPTURES.rglob("*.jsonl"))
    assert files
    for path in files:
        with path.open("rb") as f:
            head = f.read(4096)
        assert detect(head) == {".sse": "sse", ".jsonl": "jsonl"}[path.suffix], path.name


def test_registry():
    assert list(CONTAINERS) == ["sse", "jsonl", "json"]
    for name, container in CONTAINERS.items():
        assert isinstance(container, Container)
        assert container.name == name and container.description
        assert get(name) is container
        reader, writer = container.reader(), container.writer(event_names=True)
        assert reader.feed(b"") == [] and isinstance(writer.finish(), bytes)
    with pytest.raises(dataclasses.FrozenInstanceError):
        CONTAINERS["sse"].name = "x"


def test_get_unknown_lists_the_known_ones():
    with pytest.raises(UsageError, match=r"unknown container 'xml' \(known: sse, jsonl, json\)"):
        get("xml")


def test_containers_never_import_codecs():
    package = Path(chatx.containers.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not [n for n in names if n.startswith("chatx.codecs")], path.name

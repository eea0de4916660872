"""A checker takes the records that repeat one it checked, but for their text, by their
bytes (``Checker.knows``, ``validation.base.Known``): the findings must be those of
parsing and checking every record, whatever the stream does around or inside a run."""

from __future__ import annotations

import re
from pathlib import Path
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx.reading import framing
from chatx.reading.framing import frame_bytes
from chatx.record import Record
from chatx.validation import base, validate_records
from tests.paths import FIXTURES, SHARED

FORMATS = (
    "chat-chunk",
    "responses-event",
    "anthropic-event",
    "llama-stack-event",
    "gemini-event",
)


def _parsed(data: bytes, fmt: str) -> list[dict[str, object]]:
    """The findings of every record parsed by the reader and checked one by one."""
    ignored: list[tuple[int, str]] = []
    container, records = frame_bytes(data, None, ignored, "x")
    listed = list(records)  # read whole first: the reader is never asked for raw payloads
    found = validate_records(listed, fmt, container=container, file="x", ignored=ignored)
    return [f.as_dict() for f in found]


def _known(data: bytes, fmt: str, block: int = 200) -> list[dict[str, object]]:
    """The findings when the payloads after the first come unparsed and a checker takes
    the records it knows by their bytes. The reader is fed 200 bytes at a time, so that
    the payloads after the first block come unparsed in a stream this small too (a
    block's payloads are parsed before the reader is asked); with a larger ``block``, a
    read's plain records come as one region of lines (chatx.record.RawRegion)."""
    with mock.patch.object(framing, "_BLOCK", block):
        return [f.as_dict() for f in validate_records(data, fmt, file="x")]


def _streams(fmt: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / fmt).glob("*") if p.suffix in (".sse", ".jsonl"))


def _blocks(data: bytes) -> tuple[list[bytes], bytes]:
    """The SSE blocks (or JSON lines) of a stream, and what joins them (lines end in
    "\\n" here: Google's end in "\\r\\n")."""
    data = data.replace(b"\r\n", b"\n")
    if b"data:" in data[:200] or data.startswith(b"event:"):
        return [b for b in data.split(b"\n\n") if b.strip()], b"\n\n"
    return [b for b in data.split(b"\n") if b.strip()], b"\n"


def _compact(blocks: list[bytes]) -> list[bytes]:
    """Each payload written again as orjson writes it (Google's captures are spaced):
    the bytes a template is made of, as chatx's own streams have them."""
    out = []
    for block in blocks:
        lines = block.split(b"\n")
        for k, line in enumerate(lines):
            payload = line[6:] if line.startswith(b"data: ") else line
            try:
                value = orjson.loads(payload)
            except orjson.JSONDecodeError:
                continue
            lines[k] = line[: len(line) - len(payload)] + orjson.dumps(value)
        out.append(b"\n".join(lines))
    return out


def _renumber(blocks: list[bytes]) -> list[bytes]:
    """Responses' sequence numbers made 0, 1, 2… again, so a repeated delta stays valid."""
    out = []
    for n, block in enumerate(blocks):
        out.append(re.sub(rb'"sequence_number":\d+', b'"sequence_number":%d' % n, block))
    return out


MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            ["repeat", "drop", "swap", "done", "comment", "junk", "retext", "rename", "renumber"]
        ),
        st.integers(0, 10_000),
        st.integers(1, 12),
    ),
    max_size=5,
)


def _mutate(blocks: list[bytes], mutations: list[tuple[str, int, int]]) -> list[bytes]:
    blocks = list(blocks)
    for what, at, times in mutations:
        if not blocks:
            break
        k = at % len(blocks)
        block = blocks[k]
        if what == "repeat":  # a run: the same record again and again
            blocks[k + 1 : k + 1] = [block] * times
        elif what == "drop":
            del blocks[k]
        elif what == "swap" and k + 1 < len(blocks):
            blocks[k], blocks[k + 1] = blocks[k + 1], block
        elif what == "done":
            blocks.insert(k, b"data: [DONE]")
        elif what == "comment":  # an ignored line inside a run (STR002 at its record)
            blocks[k] = b": keep-alive\n" + block if block.startswith(b"data") else block
        elif what == "junk":  # a record cut short: not JSON
            blocks[k] = block[: max(1, len(block) // 2)]
        elif what == "retext":  # a text that is no string, or an escaped one
            replaced = re.sub(rb'"(text|delta|content|thinking)":"', rb'"\1":"\\u00e9\\"', block)
            blocks[k] = replaced if times % 2 else re.sub(rb'"(delta)":"[^"]*"', rb'"\1":7', block)
        elif what == "rename" and block.startswith(b"event: "):
            blocks[k] = b"event: other" + block[block.index(b"\n") :]
        elif what == "renumber":
            blocks = _renumber(blocks)
    return blocks


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_fixtures_find_the_same(fmt: str) -> None:
    for path in _streams(fmt):
        data = path.read_bytes()
        assert _known(data, fmt) == _parsed(data, fmt), path.name


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_capture_finds_the_same(fmt: str) -> None:
    folder = SHARED / "captures" / fmt
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent: ../shared holds the real captures")
    paths = sorted(p for p in folder.rglob("*") if p.suffix in (".sse", ".jsonl"))
    assert paths, folder
    for path in paths:
        data = path.read_bytes()
        try:
            parsed = _parsed(data, fmt)
        except Exception as exc:  # not a stream of the format: both ways say so alike
            with pytest.raises(type(exc)):
                _known(data, fmt)
            continue
        assert _known(data, fmt) == parsed, path.name


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations=MUTATIONS, pick=st.integers(0, 1000))
def test_a_mutated_stream_finds_the_same(fmt: str, mutations: list, pick: int) -> None:
    paths = _streams(fmt)
    blocks, joint = _blocks(paths[pick % len(paths)].read_bytes())
    # Long runs of each delta first (their sequence numbers made valid again), then the
    # stream broken around and inside them.
    blocks = [block for k, block in enumerate(blocks) for _ in range(6 if k % 3 else 1)]
    blocks = _mutate(_renumber(_compact(blocks) if pick % 2 else blocks), mutations)
    data = joint.join(blocks) + joint
    try:
        parsed = _parsed(data, fmt)
    except Exception as exc:
        with pytest.raises(type(exc)):
            _known(data, fmt)
        return
    assert _known(data, fmt) == parsed
    assert _known(data, fmt, 4096) == parsed


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_long_run_is_taken_by_its_bytes(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The records of a long run are taken by their bytes, never parsed: the path this
    # file checks is the one taken.
    parsed: list[int] = []
    parse = base.parse

    def counted(data: bytes, event: str | None, line: int) -> Record:
        parsed.append(line)
        return parse(data, event, line)

    monkeypatch.setattr(base, "parse", counted)
    records = 0
    for path in _streams(fmt):
        blocks, joint = _blocks(path.read_bytes())
        blocks = _renumber(_compact([block for block in blocks for _ in range(20)]))
        data = joint.join(blocks) + joint
        mark = len(parsed)
        assert _known(data, fmt, 4096) == _parsed(data, fmt), path.name
        del parsed[mark:]  # the records below are counted in 200-byte reads
        assert _known(data, fmt) == _parsed(data, fmt), path.name
        records += len(blocks)
    # Those not parsed here: the first block's (parsed by the reader, before it is asked
    # for raw payloads: a record or two a file) and the runs' (most deltas).
    assert records - len(parsed) > max(100, records // 10), (fmt, len(parsed), records)


def test_unnamed_blocks_after_a_named_delta_are_checked_each():
    """A delta block named ``content_block_delta`` makes a template of its bytes; the
    blocks after it say the same without an ``event:`` line, so they come as one region
    of plain lines (chatx.record.RawRegion), and none of them is the template's record:
    each is checked, as when every record is parsed."""
    delta = b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%d"}}'
    head = (FIXTURES / "anthropic-event" / "cache-usage.sse").read_bytes()
    head = head[: head.index(b"event: content_block_delta")]
    named = b"event: content_block_delta\ndata: " + delta % 0 + b"\n\n"
    plain = b"".join(b"data: " + delta % k + b"\n\n" for k in range(1, 200))
    data = head + named + plain
    assert _known(data, "anthropic-event", 4096) == _parsed(data, "anthropic-event")

"""Raw records read as one region (:class:`~chatx.record.RawRegion`): the SSE and
JSON-lines readers hand a read's records as their lines where every one is a plain
record, and those must be exactly the records the line-by-line reading gives, whatever
the bytes and however they are cut."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx.containers import sse
from chatx.containers.jsonl import JSONLReader
from chatx.containers.payload import parse
from chatx.containers.sse import SSEReader
from chatx.errors import InputError
from chatx.record import RawRegion, Record


def raw_read(reader: SSEReader | JSONLReader, data: bytes, cuts: list[int]) -> tuple[list, list]:
    """The records of ``data`` fed in pieces cut at ``cuts`` to a raw reader, each as
    the parsed record of its payload, and the kinds of what each read returned."""
    reader.raw = True
    out: list[Record] = []
    kinds = []
    prev = 0
    for cut in [*sorted(cuts), len(data)]:
        got = reader.feed(data[prev:cut])
        kinds.append(type(got).__name__)
        out += got
        prev = max(prev, cut)
    out += reader.finish()
    return [parse(r.raw, r.event, r.line) if r.raw is not None else r for r in out], kinds


def parsed_read(reader: SSEReader | JSONLReader, data: bytes) -> list[Record]:
    return reader.feed(data) + reader.finish()


def same(a: list[Record], b: list[Record]) -> None:
    assert [(r.line, r.event, r.done, r.error, r.data) for r in a] == [
        (r.line, r.event, r.done, r.error, r.data) for r in b
    ]


# -- SSE ------------------------------------------------------------------------------

_payload = st.one_of(
    st.builds(orjson.dumps, st.dictionaries(st.text(max_size=3), st.text(max_size=5), max_size=3)),
    st.sampled_from([b"[DONE]", b"", b"not json", b'{"a":"\x03"}', b"{\x00}", b"data: x", b"1"]),
)
_line = st.one_of(
    st.builds(lambda p: b"data: " + p, _payload),
    st.builds(lambda p: b"data:" + p, _payload),  # no space: the field still
    st.sampled_from(
        [
            b": keepalive",
            b"event: delta",
            b"event:",
            b"id: 7",
            b"retry: 30",
            b"bogus: x",
            b"data",
            b"",
            b" data: {}",
            b"\xef\xbb\xbf",
            b"data: \x03",
            b"\x03",
        ]
    ),  # fmt: skip
)


@st.composite
def _sse(draw: st.DrawFn) -> bytes:
    """Any bytes an event stream may hold: mostly one-line data blocks, and now and
    then another field, a comment, a block of many lines, a stray blank line or CR."""
    out = []
    if draw(st.booleans()):
        out.append(b"\xef\xbb\xbf")
    for _ in range(draw(st.integers(0, 40))):
        if draw(st.integers(0, 3)):
            out.append(b"data: " + draw(_payload) + b"\n\n")
        else:
            lines = draw(st.lists(_line, min_size=1, max_size=3))
            end = draw(st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"]))
            out.append(end.join(lines) + end + draw(st.sampled_from([b"", end])))
    return b"".join(out)


@settings(max_examples=400, deadline=None)
@given(_sse(), st.lists(st.integers(0, 3000), max_size=6))
def test_sse_raw_records_are_the_parsed_reader_s_records(data, cuts):
    reader, oracle = SSEReader(), SSEReader()
    got, _ = raw_read(reader, data, cuts)
    same(got, parsed_read(oracle, data))
    assert reader.ignored == oracle.ignored
    assert (reader.last_event_id, reader.retry) == (oracle.last_event_id, oracle.retry)


def test_sse_plain_blocks_come_as_one_region_with_their_lines():
    data = b"".join(b'data: {"n":%d}\n\n' % n for n in range(50))
    reader = SSEReader()
    reader.raw = True
    # The first read is read line by line: it decides whether the stream has a BOM.
    assert [r.raw for r in reader.feed(b"data: {}\n\n")] == [b"{}"]
    region = reader.feed(data[:-1])  # the last block's blank line has not come
    assert type(region) is RawRegion
    assert [r.line for r in region] == list(range(3, 100, 2))
    assert [r.raw for r in region] == [b'{"n":%d}' % n for n in range(49)]
    rest = [*reader.feed(b"\n"), *reader.finish()]
    assert [(r.line, r.raw) for r in rest] == [(101, b'{"n":49}')]


@pytest.mark.parametrize(
    "odd",
    [
        b": comment\n\n",
        b"event: x\ndata: {}\n\n",
        b"id: 1\n\n",
        b"\n",
        b'data:{"b":2}\n\n',  # no space after the colon: the payload is all after it
        b"data: {}\ndata: {}\n\n",
        b" data: {}\n\n",
        b"dat: {}\n\n",
    ],
)
def test_sse_a_read_with_any_other_line_is_read_line_by_line(odd):
    data = b'data: {"a":1}\n\n' + odd + b'data: {"a":2}\n\n'
    reader = SSEReader()
    reader.raw = True
    first = reader.feed(b'data: {"a":0}\n\n')
    got = reader.feed(data)
    assert type(got) is list
    records = [parse(r.raw, r.event, r.line) for r in [*first, *got, *reader.finish()]]
    same(records, parsed_read(SSEReader(), b'data: {"a":0}\n\n' + data))


def test_sse_after_a_cr_every_read_is_line_by_line():
    reader = SSEReader()
    reader.raw = True
    assert type(reader.feed(b"data: 1\r\n\r\n")) is list
    assert type(reader.feed(b"data: 2\n\n")) is list


def test_sse_bytes_waiting_for_their_blank_line_are_bounded(monkeypatch):
    """Bytes with no blank line wait apart only up to a bound: past it the line splitter
    holds them, and says a line is too long as soon as it is (a 100 MB line is never
    held whole, nor copied at its end)."""
    monkeypatch.setattr(sse, "_CARRIED", 100)
    reader = SSEReader()
    reader.raw = True
    reader._lines.max_line = 1000
    assert reader.feed(b"data: {}\n\n")
    for _ in range(3):
        assert reader.feed(b"x" * 300) == []
    with pytest.raises(InputError, match="longer than"):
        reader.feed(b"x" * 300)


def test_sse_a_block_after_a_long_wait_is_read():
    reader = SSEReader()
    reader.raw = True
    reader.feed(b"data: {}\n\n")
    pieces = [reader.feed(b"data: " + b"x" * 700_000), reader.feed(b"y" * 700_000 + b"\n\n")]
    got = [*pieces[0], *pieces[1], *reader.finish()]
    assert [r.raw for r in got] == [b"x" * 700_000 + b"y" * 700_000]


def test_sse_a_huge_read_of_plain_blocks_is_not_held_whole_as_one_line():
    reader = SSEReader()
    reader.raw = True
    reader._lines.max_line = 100
    data = b'data: {"n":1}\n\n' * 20  # 300 bytes: more than a line may hold, none long
    got = reader.feed(data) + reader.finish()
    assert [r.raw for r in got] == [b'{"n":1}'] * 20


# -- JSON lines ---------------------------------------------------------------------------

_jsonl_line = st.one_of(
    _payload,
    st.sampled_from(
        [b"", b" ", b"\t", b" {}", b"\x0b", b"\x0c{}", b"[DONE]", b"\x03", b"\xef\xbb\xbf{}"]
    ),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(_jsonl_line, st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"])), max_size=40),
    st.lists(st.integers(0, 2000), max_size=6),
)
def test_jsonl_raw_records_are_the_parsed_reader_s_records(lines, cuts):
    data = b"".join(line + end for line, end in lines)
    got, _ = raw_read(JSONLReader(), data, cuts)
    same(got, parsed_read(JSONLReader(), data))


def test_jsonl_blank_lines_keep_a_read_out_of_a_region():
    reader = JSONLReader()
    reader.raw = True
    assert type(reader.feed(b"{}\n{}\n")) is RawRegion
    assert type(reader.feed(b"{}\n{}\n")) is RawRegion
    for blank in (b"\n", b"  \n", b"\t\n"):
        assert type(reader.feed(b"{}\n" + blank + b"{}\n")) is list


# -- the region as a sequence of records ------------------------------------------------


def test_region_records_are_made_when_asked_for():
    region = RawRegion([b"data: 1", b"data: 22", b"data: 333"], 5, 2, b"data: ")
    assert len(region) == 3
    assert region[0] is region[0]  # the one asked for last is given again
    assert [(r.line, r.raw) for r in region] == [(5, b"1"), (7, b"22"), (9, b"333")]
    assert (region[-1].line, region[-1].raw) == (9, b"333")
    assert [r.raw for r in region[1:]] == [b"22", b"333"]
    assert region.payloads(0, 2) == [b"1", b"22"]
    with pytest.raises(IndexError):
        region[3]
    with pytest.raises(IndexError):
        region[-4]


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_a_read_of_another_bytes_type_is_read_the_same(kind):
    sse = b'data: {"a":1}\n\n' * 3
    jsonl = b'{"a":1}\n' * 3
    for reader, data in ((SSEReader(), sse), (JSONLReader(), jsonl)):
        reader.raw = True
        got = [*reader.feed(kind(data)), *reader.feed(kind(data)), *reader.finish()]
        assert [r.raw for r in got] == [b'{"a":1}'] * 6
        assert all(type(r.raw) is bytes for r in got[3:])

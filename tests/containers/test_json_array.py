"""A JSON array is read element by element as it arrives (containers/jsonarray.py).

* The records are those the reader that held the whole array gave (tests/array_oracle.py),
  errors and lines included, for any array, damaged or not, in any chunking.
* Each element's record comes out when the element is whole, not at the end.
* Memory holds the element being read, not the array.
"""

from __future__ import annotations

import json
import re
import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx.containers.jsonarray import JSONArrayReader
from chatx.containers.payload import parse
from chatx.record import Record
from tests.array_oracle import WholeArrayReader
from tests.builders.chat_chunk import chat_text
from tests.inprocess import run
from tests.streams import CHAT, convert


def read(reader_class: Callable[[], Any], data: bytes, size: int) -> list[Record]:
    reader = reader_class()
    out = []
    for at in range(0, len(data), size):
        out += reader.feed(data[at : at + size])
    return out + reader.finish()


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.sampled_from([1.5, -0.25])
    | st.text(alphabet='ab,]}[{"\\\n é😀:', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='ab,]"', max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


def layout(items: list, how: int) -> bytes:
    if how == 0:
        return json.dumps(items).encode()
    if how == 1:  # one element a line, as chatx and recorders write it
        lines = (json.dumps(i, ensure_ascii=False, separators=(",", ":")) for i in items)
        return b"[\n" + ",\n".join(lines).encode() + b"\n]\n"
    if how == 2:
        return json.dumps(items, indent=2).encode()
    return json.dumps(items).replace(", ", ",\r\n").encode()  # CRLF, a blank line or two


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    items=st.lists(values, max_size=5),
    how=st.integers(0, 3),
    edits=st.lists(
        st.tuples(st.integers(0, 300), st.integers(0, 3), st.binary(max_size=2)), max_size=3
    ),
    cut=st.one_of(st.none(), st.integers(0, 300)),
    size=st.sampled_from([1, 2, 3, 5, 8, 64, 1 << 20]),
)
def test_the_records_are_those_of_the_array_read_whole(items, how, edits, cut, size):
    data = bytearray(layout(items, how))
    for at, length, put in edits:
        data[at : at + length] = put
    if cut is not None:
        del data[cut:]
    data = bytes(data)
    if b"\\u" in data or re.search(rb"\d{19}", data):
        return  # read as JavaScript reads them now: tests/containers/test_json_values.py
    assert read(JSONArrayReader, data, size) == read(WholeArrayReader, data, 1 << 20)


def raw_reader() -> JSONArrayReader:
    """A reader that leaves each one-line element unparsed (``raw``), as ``convert`` asks
    for a codec that finds runs."""
    reader = JSONArrayReader()
    reader.raw = True
    return reader


def read_raw(data: bytes, size: int) -> list[Record]:
    """The records of a :func:`raw_reader`, parsed as the decoder parses them."""
    return [
        parse(r.raw, r.event, r.line) if r.raw is not None and r.data is None else r
        for r in read(raw_reader, data, size)
    ]


def raw_layout(items: list, how: int) -> bytes:
    """Lines that look like one element each and are not: two on a line, one begun
    compact and ended on the next lines, spaces and CRLF around the commas."""
    one = [json.dumps(i, ensure_ascii=False, separators=(",", ":")) for i in items]
    if how == 0:  # pairs on a line
        pairs = [",".join(one[k : k + 2]) for k in range(0, len(one), 2)]
        return ("[\n" + ",\n".join(pairs) + "\n]").encode()
    if how == 1:  # each begun on its line and ended on the next
        cut = [json.dumps(i, indent=1).replace("\n", "", 1) for i in items]
        return ("[\n" + ",\n".join(cut) + "\n]").encode()
    if how == 2:  # blanks around the commas
        return ("[ \n" + " ,  \r\n ".join(one) + "\n]").encode()
    return ("[\n" + ",\n".join(one) + ",\n]").encode()  # a comma after the last


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    items=st.lists(values, max_size=8),
    how=st.integers(0, 7),
    cut=st.one_of(st.none(), st.integers(0, 300)),
    size=st.sampled_from([1, 3, 8, 64, 1 << 20]),
)
def test_elements_left_raw_are_those_read_parsed(items, how, cut, size):
    data = layout(items, how) if how < 4 else raw_layout(items, how - 4)
    if cut is not None:
        data = data[:cut]
    if b"\\u" in data or re.search(rb"\d{19}", data):
        return  # read as JavaScript reads them now: tests/containers/test_json_values.py
    assert read_raw(data, size) == read(WholeArrayReader, data, 1 << 20)


def test_a_line_that_is_not_one_element_is_read_as_what_it_is():
    """Lines each ending in a comma whose elements are cut otherwise: one element over
    two lines, then two on one line. As many elements as lines, each line starting and
    ending a brace: only reading each line as JSON tells them apart."""
    data = b'[\n{"a":[{"b":1},\n{"c":2}]},\n{},{},\n{"d":3}\n]\n'
    expected = [{"a": [{"b": 1}, {"c": 2}]}, {}, {}, {"d": 3}]
    for size in (1, 7, len(data)):
        assert [r.data for r in read_raw(data, size)] == expected
        assert read_raw(data, size) == read(WholeArrayReader, data, 1 << 20)


def test_one_element_a_line_comes_raw():
    lines = [orjson.dumps({"n": n, "t": "a,\n]" * n}) for n in range(50)]
    data = b"[\n" + b",\n".join(lines) + b"\n]\n"
    reader = raw_reader()
    records = reader.feed(data) + reader.finish()
    assert [r.raw for r in records] == lines
    assert [r.line for r in records] == list(range(2, 52))


def test_cases_the_whole_reader_had_words_for():
    for data in [b"[", b"[,]", b"[1,]", b"[1,2] x", b"[] x", b"\x0c[]", b"[1 2]", b"[1}",
                 b"[}", b'[1, "x,y', b'[1, "x\\', b"[1,,2]", b"[[DONE]]", b"\xef\xbb[]",
                 b"[\r\n1\r\n,\r2\r]", b'\n{\n  "a": 1\n}\n', b'\n"a"', b"  \n"]:  # fmt: skip
        for size in (1, 2, 7, 100):
            assert read(JSONArrayReader, data, size) == read(WholeArrayReader, data, 100), data


def test_each_element_comes_out_when_it_is_whole():
    reader = JSONArrayReader()
    assert reader.feed(b'[\n{"a": 1},\n{"b"') == [Record({"a": 1}, None, 2)]
    assert reader.feed(b': "x,]"}') == []  # whole, but a comma or "]" may still follow
    assert reader.feed(b"\n, [1,") == [Record({"b": "x,]"}, None, 3)]
    assert reader.feed(b" 2]]") == [Record([1, 2], None, 4)]
    assert reader.finish() == []


def test_a_compact_array_comes_out_element_by_element_too():
    reader = JSONArrayReader()
    assert reader.feed(b'[{"a":"],"},{"b":[') == [Record({"a": "],"}, None, 1)]
    assert reader.feed(b"2]}]") == [Record({"b": [2]}, None, 1)]


def test_memory_holds_one_element_not_the_array():
    element = orjson.dumps({"id": "x", "choices": [{"delta": {"content": "word " * 40}}]})
    count = 20_000  # about 4.6 MB of array
    tracemalloc.start()
    try:
        reader = JSONArrayReader()
        reader.feed(b"[\n")
        records = 0
        block = b"".join(element + b",\n" for _ in range(250))
        for _ in range(count // 250):
            records += len(reader.feed(block))
        records += len(reader.feed(element + b"\n]\n")) + len(reader.finish())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert records == count + 1
    # The array is 5 MB; the records one block gives, and that block, are what is held.
    assert peak < (count // 250) * len(block) / 5


def test_a_long_string_across_many_chunks_is_read_once():
    text = "x" * 300_000 + '\\"' + "y" * 300_000
    data = b'[{"t": "' + text.encode() + b'"}, 1]'
    records = read(JSONArrayReader, data, 4096)
    assert [r.data for r in records] == [{"t": text.replace('\\"', '"')}, 1]


def test_converting_an_array_gives_what_its_sse_gives():
    chunks = chat_text("Hello", ", world", "!")
    array = b"[\n" + b",\n".join(orjson.dumps(c) for c in chunks) + b"\n]\n"
    sse = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    assert convert(array, CHAT)[0] == convert(sse, CHAT)[0]
    result = run(["convert", "-", "--to", "responses-event"], array[:-40])
    assert result.code == 2  # the cut element is skipped, the rest converted
    assert re.search(r"skipped: <stdin>:7: .*half-written", result.err), result.err
    assert b'"delta":"!"' in result.stdout

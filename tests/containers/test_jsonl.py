"""JSON lines and JSON array containers: readers, writers, round trips."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx.containers.jsonarray import JSONArrayReader, JSONArrayWriter, element_lines
from chatx.containers.jsonl import JSONLReader, JSONLWriter
from chatx.errors import InputError
from chatx.record import DONE, Record
from tests.captures import capture_files


def read(data: bytes, size: int | None = None, reader_class=JSONLReader) -> list[Record]:
    """All records of ``data`` fed whole, or in ``size``-byte chunks."""
    reader = reader_class()
    size = size or max(len(data), 1)
    out = []
    for i in range(0, len(data), size):
        out += reader.feed(data[i : i + size])
    return out + reader.finish()


def read_array(data: bytes, size: int | None = None) -> list[Record]:
    return read(data, size, JSONArrayReader)


# -- JSON lines ------------------------------------------------------------------------


def test_one_record_per_line():
    assert read(b'{"a":1}\n[2]\n"s"\n') == [Record({"a": 1}, None, 1), Record([2], None, 2),
                                             Record("s", None, 3)]  # fmt: skip


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_line_ends_and_blank_lines(end):
    data = end.join([b"{}", b"", b"  \t", b"1", b""])
    assert read(data) == [Record({}, None, 1), Record(1, None, 4)]
    assert read(data, 1) == read(data)


def test_last_line_without_line_end():
    assert read(b"1\n2") == [Record(1, None, 1), Record(2, None, 2)]


def test_leading_bom_is_ignored():
    assert read(b"\xef\xbb\xbf{}\n", 1) == [Record({}, None, 1)]


def test_done_line_is_tolerated():
    assert read(b"1\n[DONE]\n") == [Record(1, None, 1), Record(None, None, 2, True)]


def test_bad_lines_become_error_records():
    records = read(b'{"a":\n\xff\n{"a":1}\n{"choices":[{"delta"')
    assert [(r.line, r.error, r.data) for r in records] == [
        (1, "invalid JSON: unexpected end of data (half-written line?)", None),
        (2, "invalid UTF-8 at byte 0", None),
        (3, None, {"a": 1}),
        (4, "invalid JSON: unexpected end of data (half-written line?)", None),
    ]


def test_unicode_line_separators_stay_inside_values():
    assert read('"a\u2028b\x85c"\n'.encode()) == [Record("a\u2028b\x85c", None, 1)]


def test_captures_read_cleanly_in_any_chunking():
    for path in capture_files("*.jsonl"):
        data = path.read_bytes()
        whole = read(data)
        assert whole, path.name
        assert not [r for r in whole if r.error], path.name
        assert read(data, 7) == whole, path.name


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.integers(1, 16))
def test_random_bytes_never_raise_and_chunking_never_matters(data, size):
    for reader_class in (JSONLReader, JSONArrayReader):
        try:
            whole = read(data, None, reader_class)
        except InputError:
            continue
        assert read(data, size, reader_class) == whole


def test_writer_one_line_per_payload_and_no_done():
    writer = JSONLWriter()
    assert writer.write([{"a": "x\ny"}, DONE, [1]]) + writer.finish() == b'{"a":"x\\ny"}\n[1]\n'


# -- JSON array ------------------------------------------------------------------------


def test_array_elements_with_their_lines():
    data = b'[\n  {"a": [1, {"b": "],{"}]},\n  2,\n\n  "x,[" ,\r\n  null\n]\n'
    assert read_array(data, 3) == [Record({"a": [1, {"b": "],{"}]}, None, 2),
                                   Record(2, None, 3), Record("x,[", None, 5),
                                   Record(None, None, 6)]  # fmt: skip


def test_compact_array_is_all_line_one():
    assert read_array(b'\xef\xbb\xbf[{"a":1},{"b":"\\"]"}]') == [
        Record({"a": 1}, None, 1), Record({"b": '"]'}, None, 1)]  # fmt: skip


def test_empty_inputs():
    assert read_array(b"") == []
    assert read_array(b" \n") == []
    assert read_array(b"[]") == []
    assert read_array(b"[ \n ]") == []


def test_top_level_non_array_is_an_error_record():
    assert read_array(b'\n"a"') == [
        Record(None, None, 2, error="expected a JSON array of events, found a string")
    ]


def test_top_level_object_is_one_record():
    # A non-streaming response printed over several lines: its decoder reads it whole.
    assert read_array(b'\n{\n  "a": 1\n}\n') == [Record({"a": 1}, None, 2)]


def test_invalid_array_is_read_element_by_element():
    # The elements that parse are kept; the bad one is an error record at its own line.
    assert read_array(b"[1,\n2,\n x]") == [
        Record(1, None, 1),
        Record(2, None, 2),
        Record(
            None,
            None,
            3,
            error="invalid JSON: unexpected character, expected a JSON value at column 2",
        ),
    ]
    first, cut = read_array(b'[{"a":1},\n{"b":')
    assert first == Record({"a": 1}, None, 1)
    assert (cut.line, cut.error) == (2, "invalid JSON: unexpected end of data (half-written line?)")
    (only,) = read_array(b'[{"b":')
    assert only.error == "invalid JSON: unexpected end of data (half-written line?)"


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_json, max_size=6))
def test_element_lines_of_pretty_and_one_per_line_arrays(items):
    pretty = orjson.dumps(items, option=orjson.OPT_INDENT_2).decode().split("\n")
    # Top-level elements are the lines indented by exactly two spaces, minus closers.
    expected = [n for n, text in enumerate(pretty, 1)
                if text[:2] == "  " and text[2:3] not in (" ", "]", "}")]  # fmt: skip
    assert element_lines("\n".join(pretty).encode()) == expected
    one_per_line = b"[" + b",\n".join(orjson.dumps(i) for i in items) + b"]"
    assert element_lines(one_per_line) == list(range(1, len(items) + 1))
    assert [r.data for r in read_array(one_per_line, 3)] == items


# -- writers round trip ----------------------------------------------------------------

ITEMS = [{"type": "x", "text": "a\nb\r\u2028"}, [], "s", None, 1.5, {"nested": {"k": [1]}}]


@pytest.mark.parametrize("writer_class, reader_class", [(JSONLWriter, JSONLReader),
                                                        (JSONArrayWriter, JSONArrayReader)])  # fmt: skip
def test_writer_round_trip(writer_class, reader_class):
    writer = writer_class(event_names=True)
    data = (
        writer.write(ITEMS[:2]) + writer.write([DONE]) + writer.write(ITEMS[2:]) + writer.finish()
    )
    records = read(data, 5, reader_class)
    assert [r.data for r in records] == ITEMS
    first = 1 if reader_class is JSONLReader else 2  # the array's "[" has a line of its own
    assert [r.line for r in records] == list(range(first, first + len(ITEMS)))


def test_array_writer_empty_and_layout():
    writer = JSONArrayWriter()
    assert writer.write([DONE]) + writer.finish() == b"[]\n"
    writer = JSONArrayWriter()
    assert writer.write([1, 2]) + writer.finish() == b"[\n1,\n2\n]\n"

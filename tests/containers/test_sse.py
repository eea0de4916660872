"""SSE container: the WHATWG event-stream rules, chunking invariance, the writer."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx.containers.sse import SSEReader, SSEWriter
from chatx.errors import InputError
from chatx.record import DONE, Record
from tests.captures import capture_files


def read(data: bytes, size: int | None = None) -> list[Record]:
    """All records of ``data`` fed whole, or in ``size``-byte chunks."""
    reader = SSEReader()
    size = size or max(len(data), 1)
    out = []
    for i in range(0, len(data), size):
        out += reader.feed(data[i : i + size])
    return out + reader.finish()


def read_split(data: bytes, at: int) -> list[Record]:
    reader = SSEReader()
    return reader.feed(data[:at]) + reader.feed(data[at:]) + reader.finish()


def payloads(records: list[Record]) -> list:
    return [r.data for r in records]


# -- framing rules ---------------------------------------------------------------------


def test_one_event_per_block_with_line_numbers():
    records = read(b'data: {"a":1}\n\ndata: {"b":2}\n\n')
    assert records == [Record({"a": 1}, None, 1), Record({"b": 2}, None, 3)]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_line_ends(end):
    data = b"event: x" + end + b"data: 1" + end + end + b"data: 2" + end + end
    assert read(data) == [Record(1, "x", 1), Record(2, None, 4)]


def test_mixed_line_ends():
    assert read(b"data: 1\r\n\rdata: 2\n\r\n") == [Record(1, None, 1), Record(2, None, 3)]


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c"])
def test_only_cr_and_lf_end_lines(char):
    records = read(f'data: "a{char}b"\n\ndata: 2\n\n'.encode())
    assert [r.line for r in records] == [1, 3]
    if char > "\x1f":  # JSON strings refuse raw control characters
        assert records[0].data == f"a{char}b"


def test_cr_at_chunk_end_waits_for_lf():
    # Read as CR then LF, the LF would be a blank line and dispatch "[1," alone.
    reader = SSEReader()
    out = reader.feed(b"data: [1,\r") + reader.feed(b"\ndata: 2]\r") + reader.feed(b"\n\r")
    assert out + reader.finish() == [Record([1, 2], None, 1)]


def test_cr_at_chunk_end_then_other_byte():
    reader = SSEReader()
    out = reader.feed(b"data: 1\r") + reader.feed(b"\r") + reader.feed(b"data: 2\r")
    assert out + reader.finish() == [Record(1, None, 1), Record(2, None, 3)]


def test_one_space_after_colon_is_stripped():
    data = b"event:x\ndata:1\n\nevent:  y\ndata:  2\n\nevent: \ndata: 3\n\n"
    assert read(data) == [Record(1, "x", 1), Record(2, " y", 4), Record(3, None, 7)]


def test_line_without_colon_is_a_field_with_empty_value():
    # "data" adds an empty data line; "event" empties the event name.
    data = b"event: x\nevent\ndata\ndata: 1\n\n"
    assert read(data) == [Record(1, None, 1)]


def test_data_lines_are_joined_with_lf():
    assert read(b"data: [1\ndata: ,2]\n\n") == [Record([1, 2], None, 1)]
    (joined,) = read(b"data: 1\ndata: 2\n\n")  # "1\n2", not "12"
    assert joined.error.startswith("invalid JSON: unexpected content")


def test_many_data_lines():
    data = b"data: [0\n" + b"".join(b"data: ,%d\n" % i for i in range(1, 1000)) + b"data: ]\n\n"
    assert read(data) == [Record(list(range(1000)), None, 1)]


def test_comments_are_ignored_and_do_not_start_a_block():
    data = b": OPENROUTER PROCESSING\n\n:\n: ping\ndata: [1\n: mid\ndata: ,2]\n\n"
    assert read(data) == [Record([1, 2], None, 5)]


def test_blank_lines_alone_dispatch_nothing():
    assert read(b"\n\n\r\n\r\r\n") == []


def test_last_block_without_blank_line_is_dispatched_by_finish():
    assert read(b"data: 1\n\ndata: 2") == [Record(1, None, 1), Record(2, None, 3)]
    assert read(b"data: 1\n\ndata: 2\n") == [Record(1, None, 1), Record(2, None, 3)]
    assert read(b"event: x\ndata: 3\r") == [Record(3, "x", 1)]


def test_leading_bom_is_ignored_once():
    bom = b"\xef\xbb\xbf"
    assert read(bom + b"data: 1\n\n") == [Record(1, None, 1)]
    # A second BOM is part of the field name: an unknown field, ignored.
    assert read(bom + bom + b"data: 1\n\n") == []
    assert read(b"data: 1\n\n" + bom + b"data: 2\n\n") == [Record(1, None, 1)]


def test_partial_bom_is_content():
    assert read(b"\xef\xbb") == []
    assert read(b"\xef\xbbdata: 1\n\n") == []  # field name "\xef\xbbdata"
    assert read(b"\xefdata: 1\n\n", 1) == []


def test_event_after_data_names_the_block():
    # AWS Bedrock Mantle writes data: first, then event:.
    data = b'data: {"type":"a"}\nevent: response.created\n\ndata: 2\n\n'
    assert read(data) == [Record({"type": "a"}, "response.created", 1), Record(2, None, 4)]


def test_event_name_does_not_leak_into_next_block():
    assert read(b"event: x\n\ndata: 1\n\n") == [Record(1, None, 3)]


def test_block_without_data_is_not_dispatched():
    assert read(b"event: ping\n\nid: 7\n\nretry: 10\n\n") == []


def test_unknown_fields_are_ignored_but_start_the_block():
    assert read(b"foo: bar\ndata: 1\nDATA: 2\nData: 3\n\n") == [Record(1, None, 1)]


def test_id_and_retry_are_parsed_not_recorded():
    reader = SSEReader()
    records = reader.feed(b"id: 42\nretry: 3000\ndata: 1\n\n") + reader.finish()
    assert records == [Record(1, None, 1)]
    assert (reader.last_event_id, reader.retry) == ("42", 3000)
    reader.feed(b"id: a\0b\nretry: 1s\nretry:\nretry: " + b"9" * 5000 + b"\n\n")
    assert (reader.last_event_id, reader.retry) == ("42", 3000)
    reader.feed(b"id\n\n")
    assert reader.last_event_id == ""


def test_done_sentinel():
    data = b'data: {"a":1}\n\ndata: [DONE]\n\ndata:[DONE]\n\n'
    assert read(data) == [Record({"a": 1}, None, 1), Record(None, None, 3, True),
                          Record(None, None, 5, True)]  # fmt: skip


def test_bad_payloads_become_error_records():
    records = read(b'data: {"a":\n\ndata: {"a":1}x\n\ndata: "\xff"\n\ndata:\n\ndata: 1')
    assert [(r.line, r.error) for r in records] == [
        (1, "invalid JSON: unexpected end of data (half-written line?)"),
        (3, "invalid JSON: unexpected content after document at column 8"),
        (5, "invalid UTF-8 at byte 1"),
        (7, "invalid JSON: empty payload"),
        (9, None),
    ]


def test_half_written_last_line():
    (record,) = read('data: {"choices":[{"delta":{"content":"héllo wörld'.encode())
    assert record.error == "invalid JSON: unexpected end of data (half-written line?)"


def test_event_name_keeps_invalid_utf8_as_replacement():
    assert read(b"event: a\xffb\ndata: 1\n\n") == [Record(1, "a\ufffdb", 1)]


def test_nul_bytes_and_huge_line():
    assert read(b"data: \0\n\n")[0].error.startswith("invalid JSON")
    big = b'data: "' + b"x" * 3_000_000 + b'"\n\n'
    assert read(big, 65536) == [Record("x" * 3_000_000, None, 1)]


# -- chunking invariance ---------------------------------------------------------------

TRICKY = (
    b"\xef\xbb\xbf: comment\r\n"
    b'event: message.delta\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'
    b'data: {"type":"x"}\revent: late\r\r'
    b"data: [DONE]\n\n"
    b"id: 1\nretry: 5\n\n"
    b"data: [1,\n\rdata: 2]\r\n\n"
    b'data: "\xe2\x80\xa8"\n'
    b"\n"
    b'data: {"half":'
)


@pytest.mark.parametrize("data", [TRICKY, TRICKY.replace(b"\r\n", b"\r"),
                                  TRICKY.replace(b"\n", b"\r\n")], ids=["mixed", "cr", "crlf"])  # fmt: skip
def test_split_at_every_position_gives_same_records(data):
    whole = read(data)
    assert len(whole) >= 5
    for at in range(len(data) + 1):
        assert read_split(data, at) == whole, at
    assert read(data, 1) == whole


def test_captures_read_cleanly_in_any_chunking():
    for path in capture_files("*.sse"):
        data = path.read_bytes()
        whole = read(data)
        assert whole, path.name
        assert not [r for r in whole if r.error], path.name
        assert read(data, 7) == whole, path.name


def test_mantle_capture_names_every_block():
    files = [p for p in capture_files("*.sse") if "bedrock_mantle" in p.name]
    if not files:
        pytest.skip("no Bedrock Mantle capture")
    for path in files:
        for record in read(path.read_bytes()):
            if not record.done:
                assert record.event == record.data["type"], path.name


# -- properties ------------------------------------------------------------------------


_PIECES = [b"data:", b"data: ", b"event: ", b"id:", b"retry: 1", b":", b"\r", b"\n", b"\r\n",
           b"{", b'"a":', b"}", b"[DONE]", b"1", b"\xef\xbb\xbf", b"\xff", b"\0", b" "]  # fmt: skip
_noise = st.lists(st.sampled_from(_PIECES) | st.binary(max_size=4), max_size=60).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | _noise, st.integers(1, 20))
def test_random_bytes_never_raise_and_chunking_never_matters(data, size):
    try:
        whole = read(data)
    except InputError:
        return
    assert read(data, size) == whole


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_name = st.text(
    st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=10
)
_end = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def _sse_streams(draw):
    """A valid event stream and the records it must give."""
    out, expected, line, prev = [], [], 1, b""

    def end() -> bytes:
        nonlocal prev
        prev = draw(_end) if prev != b"\r" else draw(_end.filter(lambda e: e != b"\n"))
        return prev

    if draw(st.booleans()):
        out.append(b"\xef\xbb\xbf")
    for payload in draw(st.lists(_json, max_size=6)):
        lines = [b": keepalive"] if draw(st.booleans()) else []
        event = draw(st.none() | _name)
        data = [b"data: " + orjson.dumps(payload)]
        if event is not None:
            field = b"event: " + event.encode()
            data = data + [field] if draw(st.booleans()) else [field] + data
        lines += data
        for text in lines:
            out += [text, end()]
        out.append(end())  # a CR then an LF would be one CRLF, not a blank line
        expected.append(Record(payload, event or None, line + (len(lines) > len(data))))
        line += len(lines) + 1
    return b"".join(out), expected


@settings(max_examples=200, deadline=None)
@given(_sse_streams(), st.lists(st.integers(0, 400), max_size=8))
def test_random_rechunking_of_valid_sse(stream, cuts):
    data, expected = stream
    assert read(data) == expected
    reader, out, prev = SSEReader(), [], 0
    for cut in sorted(cuts) + [len(data)]:
        out += reader.feed(data[prev:cut])
        prev = max(prev, cut)
    assert out + reader.finish() == expected


# -- writer ----------------------------------------------------------------------------


def test_writer_frames_data_and_done():
    writer = SSEWriter(event_names=False)
    out = writer.write([{"type": "a"}, DONE]) + writer.finish()
    assert out == b'data: {"type":"a"}\n\ndata: [DONE]\n\n'


@pytest.mark.parametrize("container", ["sse", "jsonl", "json"])
def test_large_payloads_come_out_alone_and_the_rest_joined(container):
    """A payload past LARGE is its own piece (so a writer of the pieces never holds a
    joined copy of it); small ones around it are joined; the bytes are the same."""
    from chatx import containers
    from chatx.containers.payload import LARGE

    big = {"type": "big", "text": "x" * (LARGE + 1)}
    payloads = [{"type": "a"}, {"type": "b"}, big, {"type": "c"}, DONE]
    pieces = containers.get(container).writer(True).frames(payloads)
    whole = containers.get(container).writer(True).write(payloads)
    assert b"".join(pieces) == whole
    assert len(pieces) == 3
    assert [len(p) > LARGE for p in pieces] == [False, True, False]
    assert containers.get(container).writer(True).frames(payloads[:2]) == [
        containers.get(container).writer(True).write(payloads[:2])
    ]


def test_writer_event_names_from_type():
    writer = SSEWriter(event_names=True)
    out = writer.write([{"type": "response.created"}, {"type": 3}, [1], {"type": "a\nb"}, DONE])
    assert out == (b'event: response.created\ndata: {"type":"response.created"}\n\n'
                   b'data: {"type":3}\n\ndata: [1]\n\ndata: {"type":"a\\nb"}\n\ndata: [DONE]\n\n')  # fmt: skip


@pytest.mark.parametrize("event_names", [False, True])
def test_writer_round_trip(event_names):
    items = [{"type": "x.y", "text": "a\nb\r\u2028"}, {"id": 1}, [], "s", None, DONE]
    writer = SSEWriter(event_names=event_names)
    records = read(writer.write(items[:3]) + writer.write(items[3:]) + writer.finish())
    assert [DONE if r.done else r.data for r in records] == items
    assert [r.event for r in records][0] == ("x.y" if event_names else None)


@pytest.mark.parametrize("size", [1, 5, 1 << 16])
def test_event_names_whatever_the_chunking_and_raw_records(size):
    """event: lines name their block, read in one piece or across chunks (a bytearray),
    in a parsed or a raw reader; an empty name is no name."""
    body = (
        b"event: r\xc3\xa9ponse\ndata: 1\n\nevent: r\xc3\xa9ponse\ndata: 2\n\n"
        b"event: \ndata: 3\n\ndata: 4\nevent:x\n\n"
    )
    for raw in (False, True):
        reader = SSEReader()
        reader.raw = raw
        records = []
        for at in range(0, len(body), size):
            records += reader.feed(body[at : at + size])
        records += reader.finish()
        assert [r.event for r in records] == ["réponse", "réponse", None, "x"]
        assert [r.raw if raw else r.data for r in records] == (
            [b"1", b"2", b"3", b"4"] if raw else [1, 2, 3, 4]
        )
        assert [r.line for r in records] == [1, 4, 7, 10]


def test_event_names_past_the_cache_and_after_an_empty_one():
    """The names of event: lines are kept for the first 256 distinct lines and asked
    again past them; a kept name, an empty name and a name never kept each name only
    their own block."""
    names = [f"e{i}" for i in range(300)]
    blocks = [f"event: {name}\ndata: {i}\n\n" for i, name in enumerate(names)]
    blocks += ["event: e0\ndata: 0\n\nevent: \ndata: 1\n\nevent: e299\ndata: 2\n\ndata: 3\n\n"]
    records = read("".join(blocks).encode())
    assert [r.event for r in records] == [*names, "e0", None, "e299", None]

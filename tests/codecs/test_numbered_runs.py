"""Runs of numbered records (a Responses ``sequence_number``) read by the block reader:
many records a comparison, where they were matched one by one. The block reader must
give what :meth:`ByteTemplate.match` gives record by record, or fall back to it: never
take a record match refuses, never refuse one it takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx.codecs.block_reader import BlockReader
from chatx.codecs.byte_template import NUMBER, OBFUSCATION, TEXT, ByteTemplate
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.record import Record
from tests.captures import CAPTURES
from tests.paths import ROOT
from tests.streams import responses_delta

SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=400)

# Where the number hole is among the string holes, and the literal fields around them:
# "t" text, "o" obfuscation, "n" the number, "x" a literal field.
LAYOUTS = {
    "responses": "tonx",  # Responses writes the number last, a type-only field after
    "last": "ton",  # the payload's very last bytes
    "first": "nto",
    "first-alone": "nt",
    "head-of-payload": "nxt",
    "between": "tno",  # no block reader: record by record
}


def template_of(layout: str) -> ByteTemplate:
    # A % in the literal bytes: the digits expected are written with a %-format.
    payload: dict[str, Any] = {"type": "response.output_text.delta", "item_id": "msg_%d%"}
    stand_ins = {"t": TEXT, "o": OBFUSCATION, "n": NUMBER}
    for n, key in enumerate(layout):
        payload[f"{key}{n}"] = stand_ins.get(key, [n, None, "100%s"])
    wanted = [TEXT, OBFUSCATION, NUMBER] if "o" in layout else [TEXT, NUMBER]
    template = ByteTemplate.make(payload, wanted)
    assert template is not None
    return template


def record(template: ByteTemplate, values: list[bytes]) -> bytes:
    """The payload of ``template`` with ``values`` (each hole's bytes as written, in byte
    order) in its holes."""
    out = template.head
    for (_, after, _), value in zip(template.rest, values, strict=True):
        out += value + after
    return out


def read_both(
    template: ByteTemplate, raws: list[bytes], number: int
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    records = [Record(raw=raw, line=10 + 2 * k) for k, raw in enumerate(raws)]
    obfuscation_at = template.at[1] if len(template.at) == 3 else None
    text_at = template.at[0]
    each = template.read_each(records, 0, None, text_at, obfuscation_at, number)
    block = template.read(records, 0, text_at, obfuscation_at, number)
    return each, block


# Sequence numbers where a width changes, and where 64 bits end.
STARTS = st.one_of(
    st.sampled_from(
        [0, 1, 5, 8, 9, 10, 95, 98, 99, 100, 995, 999, 9995, 10**18 - 4, 10**19 - 4]
        + [2**63 - 4, 2**64 - 4, 2**64, 2**70]
    ),
    st.integers(-3, 2**66),
)


def number_bytes(kind: str, expected: int) -> bytes:
    """A record's number: the one expected, or written otherwise."""
    forms = {
        "next": b"%d" % expected,
        "gap": b"%d" % (expected + 1),
        "repeat": b"%d" % (expected - 1),
        "down": b"%d" % (expected - 2),
        "zero-led": b"0%d" % expected,
        "minus-zero": b"-0",
        "exponent": b"1e2",
        "fraction": b"%d.0" % expected,
        "huge": b"%d" % (2**64 + expected % 7),
        "spaced": b" %d" % expected,
        "spaced-after": b"%d " % expected,
        "plus": b"+%d" % expected,
        "wider": b"%d0" % expected,
    }
    return forms[kind]


NUMBER_KINDS = st.sampled_from(
    ["next"] * 12
    + ["gap", "repeat", "down", "zero-led", "minus-zero", "exponent", "fraction"]
    + ["huge", "spaced", "spaced-after", "plus", "wider"]
)
TEXTS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["a\\", "\\\\", 'q"', "é", "😀", "\x7f", "\u2028", "\x03", "\x04", "x\n"]),
)
# What is done to one hole's bytes: a marker byte inside, a backslash before its closing
# quote, a space around it, or nothing.
EDITS = st.sampled_from(
    ["none"] * 10
    + ["marker-03", "marker-04", "marker-05", "backslash-end", "space-before", "space-after"]
)


def edited(value: bytes, edit: str, is_number: bool) -> bytes:
    if edit.startswith("marker"):
        marker = bytes([int(edit[-2:], 16)])
        return value[:1] + marker + value[1:] if not is_number else marker + value
    if edit == "backslash-end":
        return value[:-1] + b"\\" + value[-1:]
    if edit == "space-before":
        return b" " + value
    if edit == "space-after":
        return value + b" "
    return value


@SETTINGS
@given(
    layout=st.sampled_from(sorted(LAYOUTS)),
    start=STARTS,
    rows=st.lists(
        st.tuples(NUMBER_KINDS, TEXTS, TEXTS, EDITS, st.integers(0, 2)), min_size=1, max_size=40
    ),
    byte_edit=st.one_of(
        st.none(),
        st.tuples(
            st.integers(0, 39), st.integers(0, 300), st.integers(0, 2), st.binary(max_size=2)
        ),
    ),
)
def test_the_block_reader_reads_numbered_records_as_match_does(layout, start, rows, byte_edit):
    """Generated Responses-like records, their numbers crossing width boundaries, with
    gaps, repeats, numbers going down, leading zeros, ``-0``, ``1e2``, ``1.0``, integers
    beyond 64 bits, spaces; marker bytes in holes, a backslash at a hole's end; the
    number before, after or between string holes: a run read by blocks is the run read
    record by record, and a block's values are match()'s or None."""
    template = template_of(LAYOUTS[layout])
    raws = []
    for k, (kind, text, obfuscation, edit, which) in enumerate(rows):
        strings = iter([orjson.dumps(text), orjson.dumps(obfuscation)])
        values = []
        for hole_at, (is_number, _, _) in enumerate(template.rest):
            value = number_bytes(kind, start + k) if is_number else next(strings)
            values.append(edited(value, edit, is_number) if hole_at == which else value)
        raws.append(record(template, values))
    if byte_edit is not None:
        k, at, cut, put = byte_edit
        if k < len(raws):
            raw = bytearray(raws[k])
            raw[at : at + cut] = put
            raws[k] = bytes(raw)
    each, block = read_both(template, raws, start)
    assert block == each
    reader = template.block
    assert (reader is None) == (layout == "between")
    if reader is None or not 0 <= start < 2**64:
        return
    # The first stretch of one width, read at once: match()'s values, or None.
    count = min(len(raws), 10 ** len(str(start)) - start, 2**64 - start)
    got = reader.values(raws[:count], start)
    if got is not None:
        matched = [template.match(raw, start + k) for k, raw in enumerate(raws[:count])]
        assert None not in matched
        assert got == [v for found in matched for v in found if type(v) is str]  # type: ignore[union-attr]


def numbered(template: ByteTemplate, start: int, count: int) -> list[bytes]:
    """``count`` plain records, numbered from ``start`` on."""
    raws = []
    for k in range(count):
        strings = iter([orjson.dumps(f'w{k} "q" \\ é'), orjson.dumps(f"o{k}")])
        raws.append(
            record(
                template, [b"%d" % (start + k) if n else next(strings) for n, _, _ in template.rest]
            )
        )
    return raws


@pytest.mark.parametrize("layout", ["responses", "last", "first", "head-of-payload"])
@pytest.mark.parametrize("start", [0, 7, 95, 990, 9990, 2**63 - 100, 2**64 - 300])
def test_plain_numbered_records_are_read_by_blocks_of_one_width(monkeypatch, layout, start):
    """A long run of plain records crossing 9 → 10, 99 → 100, 999 → 1000 is read whole,
    by blocks (never record by record), each block of numbers of one width; at 2**64
    (beyond 64 bits, where parsing says a note) the run ends."""
    template = template_of(LAYOUTS[layout])
    reader = template.block
    assert reader is not None
    blocks: list[tuple[int, int]] = []
    values = BlockReader.strings

    def spied(self: BlockReader, raws: list[bytes], number: int = 0) -> Any:
        got = values(self, raws, number)
        blocks.append((number, len(raws)) if got is not None else (number, -1))
        return got

    read_each = ByteTemplate.read_each

    def each(*args: Any) -> Any:
        # The first record alone (one match() where most calls find no run), no other.
        assert args[2:4] == (0, 1), "read record by record"
        return read_each(*args)

    raws = numbered(template, start, 600)
    records = [Record(raw=raw, line=k) for k, raw in enumerate(raws)]
    monkeypatch.setattr(BlockReader, "strings", spied)
    fitting = min(600, 2**64 - start)
    if fitting == 600:
        monkeypatch.setattr(ByteTemplate, "read_each", each)
    obfuscated = "o" in LAYOUTS[layout]
    obfuscation_at = template.at[1] if obfuscated else None
    texts, obfuscations, lines = template.read(records, 0, template.at[0], obfuscation_at, start)
    assert texts == [f'w{k} "q" \\ é' for k in range(fitting)]
    assert obfuscations == [f"o{k}" if obfuscated else None for k in range(fitting)]
    assert lines == list(range(fitting))
    assert all(count > 0 for _, count in blocks), blocks
    assert sum(count for _, count in blocks) == fitting - 1
    for number, count in blocks:
        assert len(str(number)) == len(str(number + count - 1))


def one(template: ByteTemplate, number: bytes) -> bytes:
    """A record of ``template`` with ``number`` as written in its number hole."""
    strings = iter([b'"d"', b'"o"'])
    return record(template, [number if n else next(strings) for n, _, _ in template.rest])


@pytest.mark.parametrize(
    "kind",
    ["gap", "repeat", "down", "zero-led", "minus-zero", "exponent", "fraction", "huge"]
    + ["spaced", "spaced-after", "plus", "wider"],
)
@pytest.mark.parametrize("at", [0, 1, 2, 3, 4, 5, 63, 64, 200])
def test_a_run_ends_at_a_number_written_otherwise(kind, at):
    """The run ends at the record whose number is not the very digits expected, at a
    width change too (the start is 95: 99 → 100 at the fifth record)."""
    template = template_of(LAYOUTS["responses"])
    raws = numbered(template, 95, 300)
    raws[at] = one(template, number_bytes(kind, 95 + at))
    each, block = read_both(template, raws, 95)
    assert block == each and len(block[0]) == at


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'"d"', b'"d\x04"'),  # the marker byte of the separator, inside a hole
        (b'"d"', b'"\x03d"'),  # the marker byte between records
        (b'"o"', b'"o\x05"'),
        (b'"d"', b'"d\\"'),  # a backslash at the hole's end escapes its quote
        (b'"o"', b'"o\\\\\\"'),  # an odd number of them
        (b',"o1', b', "o1'),  # an extra space
        (b'"n2":', b'"n2": '),
        (b'"n2":', b'"n2" :'),
        (b'","o1":"', b"\x04"),  # the separator replaced by its marker byte
    ],
)
@pytest.mark.parametrize("at", [0, 3, 130])
def test_adversarial_records_end_the_run(old, new, at):
    template = template_of(LAYOUTS["responses"])
    raws = numbered(template, 10, 300)
    raw = one(template, b"%d" % (10 + at))
    assert raw.count(old) == 1
    raws[at] = raw.replace(old, new)
    each, block = read_both(template, raws, 10)
    assert block == each and len(block[0]) == at


# -- whole streams -------------------------------------------------------------------

RESPONSES_TEXT = (ROOT / "fixtures/responses-event/text.sse").read_bytes()
HEAD, TAIL = RESPONSES_TEXT.split(b"event: response.output_text.done")


def by_record(template: ByteTemplate, records: Any, start: int, *args: Any) -> Any:
    """:meth:`ByteTemplate.read` as it was for a numbered template: record by record."""
    return template.read_each(records, start, None, *args)


def delta_event(text: str, number: bytes) -> bytes:
    data = responses_delta(NUMBER, text, obfuscation="ab")
    data = data.replace(orjson.dumps(NUMBER), number)
    return b"event: response.output_text.delta\ndata: " + data + b"\n\n"


@settings(SETTINGS, max_examples=60)
@given(
    start=st.sampled_from([7, 7, 7, 7, 95, 9995, 2**63 - 3, 2**64 - 3]),
    lead=st.integers(0, 100),
    rows=st.lists(st.tuples(NUMBER_KINDS, TEXTS), min_size=1, max_size=30),
    dst=st.sampled_from(["chat-chunk", "responses-event"]),
)
def test_a_generated_responses_stream_converts_as_record_by_record_reading_did(
    start, lead, rows, dst
):
    """The fixture's Responses stream with deltas numbered from ``start`` on, ``lead``
    plain ones then ``rows`` (some numbers written otherwise): converted whole and in
    7-byte blocks, it gives the bytes and notes of numbered runs matched record by
    record. A number out of sequence says a note only the first time, and a jump from
    the fixture's 7 is one: from 7, a number a run took wrongly would lose that note."""
    plain = [("next", f"p{k}") for k in range(lead)]
    deltas = b"".join(
        delta_event(text, number_bytes(kind, start + k))
        for k, (kind, text) in enumerate(plain + rows)
    )
    body = HEAD + deltas + b"event: response.output_text.done" + TAIL
    whole = converted(body, dst, None, len(HEAD))
    assert converted(body, dst, 7) == whole
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ByteTemplate, "read", by_record)
        assert converted(body, dst, None, len(HEAD)) == whole


# -- real captures -----------------------------------------------------------------------

FIXTURES = [
    "vercel-ai__xai-issue-13836-xai-responses-missing-tail.jsonl",  # 2129 deltas: 999 → 1000
    "vercel-ai__xai-xai-x-search-tool.jsonl",
    "openllmetry__openai-responses_streaming__i0.sse",
]


def converted(body: bytes, dst: str, step: int | None, first: int = 0) -> tuple[bytes, list[Any]]:
    """``body`` converted, fed whole or in ``step``-byte blocks (after its ``first``
    bytes: records that come after the format is known reach the decoder raw)."""
    notes = Notes()
    transcoder = Transcoder(dst, notes=notes)
    rest = body[first:]
    pieces = [rest] if step is None else [rest[i : i + step] for i in range(0, len(rest), step)]
    pieces.insert(0, body[:first])
    out = b"".join(transcoder.feed(piece) for piece in pieces) + transcoder.finish()
    return out, [(n.kind, n.message, n.line) for n in notes.items]


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("dst", ["chat-chunk", "responses-event"])
def test_a_real_capture_converts_as_record_by_record_reading_did(monkeypatch, name, dst):
    """A capture converted whole and in 7-byte blocks gives the bytes and notes it gave
    when numbered runs were matched record by record, and its runs were read by blocks."""
    path = Path(CAPTURES) / "responses-event" / name
    body = path.read_bytes()
    read = ByteTemplate.read
    blocks: list[int] = []
    values = BlockReader.strings

    def spied(self: BlockReader, raws: list[bytes], number: int = 0) -> Any:
        got = values(self, raws, number)
        blocks.append(len(raws) if got is not None else 0)
        return got

    monkeypatch.setattr(BlockReader, "strings", spied)
    # Fed whole, every record is read (parsed) before the format is known; after the
    # first lines, the others reach the decoder raw, many at once.
    cut = body.index(b"\n", min(3000, len(body) // 2)) + 1
    whole = converted(body, dst, None)
    assert converted(body, dst, 7) == whole
    assert converted(body, dst, None, cut) == whole
    if "13836" in name:
        assert sum(blocks) > 1000
    with monkeypatch.context() as m:
        m.setattr(ByteTemplate, "read", by_record)
        assert converted(body, dst, None) == whole
        assert converted(body, dst, 7) == whole
        assert converted(body, dst, None, cut) == whole
    assert read is ByteTemplate.read

"""JSON read as JavaScript reads it (chatx/containers/exact.py and the decoders).

* An integer beyond 64 bits is carried exactly where the output can hold it, and said
  once per field in a warning naming the line; never written as 0 or rounded.
* A surrogate pair cut between two records (``"…\\ud83d"`` then ``"\\ude00…"``) joins into
  its character; any other lone surrogate becomes U+FFFD with a note. The record is
  never skipped, and the output is the same however the bytes arrive.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx import codecs, ir
from chatx.codecs.base import open_decoder
from chatx.containers.payload import lenient_dumps, parse
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.reading.framing import read_records
from chatx.record import Record
from tests.builders.chat_chunk import chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.inprocess import run
from tests.meaning import summarize
from tests.streams import CHAT, RESPONSES, convert, jsonl, payloads, sse

LLAMA = "llama-stack-event"
BIG = 123456789012345678901234567890
BIG_CHUNK = (
    b'data: {"id":"x","object":"chat.completion.chunk","created":%d,"model":"m",'
    b'"choices":[]}\n\n' % BIG
)


def text_of(data: bytes, src: str | None = None) -> str:
    return summarize(data, src)[0]["lanes"][0]["text"]  # type: ignore[no-any-return]


def said(notes: Notes) -> list[tuple[str, int | None, str]]:
    return [(n.kind, n.line, n.message) for n in notes.summary()]


# -- integers beyond 64 bits --------------------------------------------------------------


def test_a_big_integer_goes_through_chat_to_chat_exactly_with_a_warning():
    out, notes = convert(BIG_CHUNK, CHAT)
    assert b'"created":123456789012345678901234567890,' in out
    assert (
        "warning",
        1,
        "integer beyond 64 bits at created: 123456789012345678901234567890 is carried "
        "exactly (JavaScript and most JSON readers round it to 1.2345678901234568e+29)",
    ) in said(notes)


def test_a_big_created_is_never_written_as_0_in_responses():
    out, notes = convert(BIG_CHUNK, RESPONSES)
    created = [p for p in payloads(out) if p["type"] == "response.created"][0]
    assert created["response"]["created_at"] == BIG
    assert b'"created_at":123456789012345678901234567890,' in out
    assert any(k == "warning" and "beyond 64 bits" in m for k, _, m in said(notes))


@pytest.mark.parametrize("container", ["sse", "jsonl", "json"])
def test_every_container_carries_it_through_the_cli(container):
    chunks = chat_text("Hi")
    chunks[-1]["usage"]["prompt_tokens"] = -(2**70)  # below the signed 64-bit range too
    result = run(["convert", "-", "--to", "chat-chunk", "--out-container", container], sse(chunks))
    assert result.code == 0, result.err
    assert b'"prompt_tokens":-1180591620717411303424,' in result.stdout
    assert "warning: <stdin>:7: integer beyond 64 bits at usage.prompt_tokens" in result.err


def test_it_is_said_once_per_field_however_many_records_repeat_it():
    chunks = [chunk({"role": "assistant", "content": ""}, created=BIG)]
    chunks += [chunk({"content": str(n)}, created=BIG) for n in range(5)]
    chunks.append(chunk({}, "stop", created=BIG, seed=2**65))
    out, notes = convert(sse(chunks), CHAT)
    assert [p["created"] for p in payloads(out)] == [BIG] * 7
    warnings = [(line, m.split(":")[0]) for k, line, m in said(notes) if k == "warning"]
    assert warnings == [
        (1, "integer beyond 64 bits at created"),
        (13, "integer beyond 64 bits at seed"),
    ]


def test_collect_and_the_library_records_keep_it():
    result = run(["collect", "-"], BIG_CHUNK)
    assert result.code == 0, result.err
    assert b'"created": 123456789012345678901234567890,' in result.stdout
    record = parse(BIG_CHUNK[6:-2], None, 1)
    assert record.data["created"] == BIG


def test_digits_in_a_string_or_a_fraction_are_not_taken_for_one():
    data = sse(chat_text("1234567890123456789012345", "0.12345678901234567890123"))
    out, notes = convert(data, CHAT)
    assert not [n for n in said(notes) if "64 bits" in n[2]]
    assert payloads(out) == payloads(data)


def test_lenient_dumps_writes_big_integers_digit_for_digit():
    value = {"a": [2**64, -(2**63) - 1, 2**64 - 1, 1.5], 7: BIG}
    assert lenient_dumps(value) == (
        b'{"a":[18446744073709551616,-9223372036854775809,18446744073709551615,1.5],'
        b'"7":123456789012345678901234567890}'
    )
    assert json.loads(lenient_dumps(value)) == {"a": value["a"], "7": BIG}


# -- surrogates ---------------------------------------------------------------------------

SPLIT = ["a\ud83d", "\ude00b"]  # 😀 cut between its UTF-16 units


def chat_texts(out: bytes) -> list[str | None]:
    return [p["choices"][0]["delta"].get("content") for p in payloads(out) if p["choices"]]


def test_a_pair_cut_between_chat_chunks_joins_in_the_next_one():
    out, notes = convert(sse(chat_text(*SPLIT)), CHAT)
    assert chat_texts(out) == ["", "a", "😀b", None]
    assert said(notes) == []


def test_the_joined_character_reaches_every_target():
    data = sse(chat_text(*SPLIT))
    for dst in (RESPONSES, LLAMA):
        out, notes = convert(data, dst)
        assert text_of(out, dst) == "a😀b"
        assert not [n for n in said(notes) if n[0] in ("skipped", "repaired")]
    out, _ = convert(data, RESPONSES)
    deltas = [p["delta"] for p in payloads(out) if p["type"] == "response.output_text.delta"]
    assert deltas == ["a", "😀b"]


def test_a_responses_source_and_a_llama_source_join_it_too():
    responses = ResponsesBuilder().message(*SPLIT).end().bytes()
    out, notes = convert(responses, CHAT)
    assert chat_texts(out)[1:3] == ["a", "😀b"]
    assert said(notes) == []
    llama = jsonl(
        [{"event": {"event_type": "start", "delta": {"type": "text", "text": ""}}}]
        + [
            {"event": {"event_type": "progress", "delta": {"type": "text", "text": t}}}
            for t in SPLIT
        ]
        + [{"event": {"event_type": "complete", "delta": {"type": "text", "text": ""},
                      "stop_reason": "end_of_turn"}}]
    )  # fmt: skip
    out, notes = convert(llama, CHAT)
    assert "".join(t or "" for t in chat_texts(out)) == "a😀b"
    assert "😀b" in chat_texts(out)


def test_a_lone_surrogate_elsewhere_becomes_u_fffd_with_a_note():
    chunks = chat_text("x\udc00y\ud800z", "\ude00lead")
    out, notes = convert(sse(chunks), CHAT)
    assert chat_texts(out) == ["", "x\ufffdy\ufffdz", "\ufffdlead", None]
    assert said(notes) == [
        ("repaired", 3, "2 lone UTF-16 surrogates in choices[0].delta.content: written as U+FFFD"),
        ("repaired", 5, "1 lone UTF-16 surrogate in choices[0].delta.content: written as U+FFFD"),
    ]


def test_half_a_pair_not_continued_is_u_fffd_where_the_text_goes_on():
    out, notes = convert(sse(chat_text("a\ud83d", "b", "c\ud83d")), CHAT)
    assert chat_texts(out) == ["", "a", "\ufffdb", "c", None]
    assert said(notes) == [
        (
            "repaired",
            3,
            "lone UTF-16 surrogate \\ud83d at the end of choices[0].delta.content: the "
            "string there on line 5 does not start with its other half; written as U+FFFD",
        ),
        (
            "repaired",
            7,
            "lone UTF-16 surrogate \\ud83d at the end of choices[0].delta.content, and no "
            "later record goes on with that string: left out",
        ),
    ]


def test_choices_keep_their_own_halves():
    """Two choices interleaved: each one's cut pair joins in its own next chunk."""
    chunks = [
        chunk({"role": "assistant", "content": ""}, index=0),
        chunk({"role": "assistant", "content": ""}, index=1),
        chunk({"content": "a\ud83d"}, index=0),
        chunk({"content": "b\ud83d"}, index=1),
        chunk({"content": "\ude00c"}, index=0),
        chunk({"content": "\ude01d"}, index=1),
        chunk({}, "stop", index=0),
        chunk({}, "stop", index=1),
    ]
    out, notes = convert(sse(chunks), CHAT)
    texts = [
        (p["choices"][0]["index"], p["choices"][0]["delta"].get("content")) for p in payloads(out)
    ]
    assert texts[2:6] == [(0, "a"), (1, "b"), (0, "😀c"), (1, "😁d")]
    assert said(notes) == []


def test_show_collect_and_diff_read_the_joined_text(tmp_path):
    data = sse(chat_text(*SPLIT))
    result = run(["collect", "-"], data)
    assert result.code == 0, result.err
    assert orjson.loads(result.stdout)["choices"][0]["message"]["content"] == "a😀b"
    cut, joined = tmp_path / "cut.sse", tmp_path / "joined.sse"
    cut.write_bytes(data)
    joined.write_bytes(sse(chat_text("a", "😀b")))
    result = run(["diff", str(cut), str(joined), "--semantic"])
    assert result.code == 0, result.stdout + result.stderr
    result = run(["show", str(cut)])
    assert result.code == 0 and "a😀b" in result.stdout.decode(), result.err


def test_strict_stops_at_a_lone_surrogate_but_not_at_a_cut_pair():
    assert run(["convert", "-", "--to", "chat-chunk", "--strict"], sse(chat_text(*SPLIT))).code == 0
    result = run(["convert", "-", "--to", "chat-chunk", "--strict"], sse(chat_text("a\udc00")))
    assert result.code == 1
    assert "repaired: 1 lone UTF-16 surrogate" in result.err


def test_the_raw_and_the_parsed_paths_read_it_alike():
    """The reader hands a payload orjson refuses raw beside its value, so a decoder reads
    it the same way before and after the source format is known."""
    record = parse(json.dumps(chunk({"content": "a\ud83d"})).encode(), None, 3)
    assert record.raw is not None and record.error is None
    assert record.data["choices"][0]["delta"]["content"] == "a\ud83d"


def utf16_pieces(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at UTF-16 units (as a server that counts them would cut it)."""
    units = text.encode("utf-16-le")
    bounds = sorted({0, len(units), *(2 * c for c in cuts if 0 < 2 * c < len(units))})
    return [
        units[a:b].decode("utf-16-le", "surrogatepass")
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    text=st.text(alphabet="ab😀😁é\n", min_size=1, max_size=12),
    cuts=st.lists(st.integers(1, 24), max_size=8),
    feed=st.lists(st.integers(1, 40), max_size=30),
    dst=st.sampled_from([CHAT, RESPONSES, LLAMA]),
)
def test_text_cut_at_utf16_units_arrives_whole_however_fed(text, cuts, feed, dst):
    pieces = utf16_pieces(text, cuts)
    data = sse(chat_text(*pieces))
    whole, notes = convert(data, dst)
    assert text_of(whole, dst) == text
    assert [n for n in said(notes) if n[0] != "lost"] == []
    transcoder = Transcoder(dst, notes=Notes())
    out, at = [], 0
    for size in feed:
        out.append(transcoder.feed(data[at : at + size]))
        at += size
    out.append(transcoder.feed(data[at:]))
    out.append(transcoder.finish())
    assert b"".join(out) == whole
    if dst == CHAT:  # each record valid on its own, none joined to another
        assert len(chat_texts(whole)) == len(pieces) + 2


def test_template_holes_refuse_what_the_parse_path_mends():
    """A text hole with a lone surrogate is no match: the parsing path mends it, so the
    raw and parsed records give the same events."""
    notes = Notes()
    decoder: Any = open_decoder(codecs.get("chat-chunk"), notes)
    decoder.feed(Record(chunk({"role": "assistant", "content": ""}), line=1))
    for n, text in enumerate(["x", "y", "z"]):
        decoder.feed(Record(raw=orjson.dumps(chunk({"content": text})), line=3 + 2 * n))
    assert decoder.hook.template is not None
    raw = json.dumps(chunk({"content": "q\ud83d"}), separators=(",", ":")).encode()
    events: Any = decoder.feed(Record(raw=raw, line=9))
    assert [e.text for e in events if type(e) is ir.TextDelta] == ["q"]
    events = decoder.feed(Record(raw=orjson.dumps(chunk({"content": "r"})), line=11))
    assert [e.text for e in events if type(e) is ir.TextDelta] == ["\ufffdr"]


def test_validate_and_the_library_records_read_the_joined_character():
    result = run(["validate", "-"], ResponsesBuilder().message(*SPLIT).end().bytes())
    assert result.code == 0, result.stdout  # the done text is what the deltas join to
    _, records = read_records(sse(chat_text(*SPLIT)))
    assert [r.data["choices"][0]["delta"].get("content") for r in records[:4]] == [
        "",
        "a",
        "😀b",
        None,
    ]


@pytest.mark.parametrize("extra", [[], ["--output", "json"], ["--semantic"]])
def test_diff_shows_big_integers_as_they_are(tmp_path, extra):
    sides = []
    for name, tokens in (("a", 2**70), ("b", 2**70 + 1)):
        chunks = chat_text("Hi")
        chunks[-1]["usage"]["prompt_tokens"] = tokens
        sides.append(tmp_path / f"{name}.sse")
        sides[-1].write_bytes(sse(chunks))
    result = run(["diff", *map(str, sides), *extra])
    assert result.code == 1, result.err
    assert b"1180591620717411303425" in result.stdout


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pieces=st.lists(st.text(alphabet="a😀\ud83d\ude00\udc01", max_size=4), min_size=1, max_size=6),
    feed=st.lists(st.integers(1, 60), max_size=20),
    dst=st.sampled_from([CHAT, RESPONSES, LLAMA]),
    created=st.sampled_from([1700000000, 2**64, -(2**70)]),
)
def test_any_surrogates_and_integers_give_the_same_bytes_and_notes_however_fed(
    pieces, feed, dst, created
):
    chunks = chat_text(*pieces)
    for c in chunks:
        c["created"] = created
    data = sse(chunks)
    whole, notes = convert(data, dst)
    assert not [n for n in said(notes) if n[0] == "skipped"]
    split_notes = Notes()
    transcoder = Transcoder(dst, notes=split_notes)
    out, at = [], 0
    for size in feed:
        out.append(transcoder.feed(data[at : at + size]))
        at += size
    out.append(transcoder.feed(data[at:]))
    out.append(transcoder.finish())
    assert b"".join(out) == whole
    assert said(split_notes) == said(notes)

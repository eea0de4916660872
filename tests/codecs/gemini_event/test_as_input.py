"""A Gemini source's runs into Gemini, written as their input bytes: each record of a
run goes out as the bytes it came in where those are what the encoder writes of it, so
the output is byte for byte what replaying each record's batch gives, notes included
(:mod:`tests.as_input` compares the two paths)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.gemini_event.encode import GeminiEncoder
from chatx.notes import Notes
from chatx.record import Record
from tests import as_input
from tests.captures import capture_params
from tests.paths import ROOT
from tests.streams import dumped

from .test_run_hook import chunk, last, primed, sse

GEMINI = "gemini-event"
FIXTURES = sorted((ROOT / "fixtures" / GEMINI).iterdir())


def convert(body: bytes, size: int, **setup: Any) -> tuple[bytes, list[str], int]:
    return as_input.convert(body, size, setup.pop("dst", GEMINI), **setup)


def same_as_replayed(body: bytes, sizes: tuple[int, ...] = (4096, 7, 64), **setup: Any) -> int:
    return as_input.same_as_replayed(body, setup.pop("dst", GEMINI), sizes, **setup)


def text_chunks(texts: list[str], **kwargs: Any) -> list[dict[str, Any]]:
    return [chunk(text, **kwargs) for text in texts]


def test_a_long_stream_goes_out_as_its_input_bytes():
    texts = [f" word{n}" for n in range(400)]
    body = sse([chunk("Hi"), *text_chunks(texts), last()])
    # All but the first (parsed) and the one that made the template (decoded).
    assert same_as_replayed(body) == 400 - 1
    out, _, copied = convert(body, 4096)
    assert copied == 400 - 28  # the first block's are parsed: the format is not known yet
    # The input's bytes but the last chunk's key order (the decoder's residue).
    assert out.split(b"\n\n")[:-2] == body.replace(b"\r\n", b"\n").split(b"\n\n")[:-2]


def test_thoughts_then_text_after_a_signature():
    thoughts = text_chunks([f" step{n}" for n in range(80)], thought=True)
    signed = chunk(" so")
    signed["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = "c2lnbmF0dXJl"
    body = sse([*thoughts, signed, *text_chunks([f" w{n}" for n in range(80)]), last()])
    assert same_as_replayed(body) > 150


@pytest.mark.parametrize(
    "escape,kept",
    [
        (b"\\u00e9", False),  # orjson writes é as its UTF-8 bytes
        (b"\\/", False),  # and / alone
        (b"\\ud83d\\ude00", False),  # a pair of surrogates as its UTF-8 bytes
        (b"\\u001f", True),  # a control character: orjson writes this escape
        (b'\\"', True),
        (b"\\\\", True),
        (b"\\n", True),
    ],
)
def test_a_text_with_an_escape_goes_out_as_orjson_writes_it(escape, kept):
    """A record whose text's string holds an escape: its bytes where orjson writes the
    same escape, else the record replayed (the output as orjson writes the text)."""
    texts = [f" w{n}" for n in range(120)]
    body = sse([chunk("Hi"), *text_chunks(texts), last()])
    marked = [b'"text":" w%d"' % n for n in range(40, 120, 10)]
    for mark in marked:
        assert body.count(mark) == 1
        body = body.replace(mark, mark[:-1] + escape + b'"')
    copied = same_as_replayed(body)
    assert copied == 120 - 1 - (0 if kept else len(marked))
    assert (escape in convert(body, 64)[0]) == kept


def test_a_lone_surrogate_and_a_pair_split_across_records():
    texts = [f" w{n}" for n in range(60)]
    body = sse([chunk("Hi"), *text_chunks(texts), last()])
    body = body.replace(b'" w20"', b'" w20\\ud83d"').replace(b'" w21"', b'"\\ude00 w21"')
    body = body.replace(b'" w40"', b'" w40\\udc00"')
    assert same_as_replayed(body) > 40


def test_a_run_broken_by_a_usage_chunk():
    usage = {"promptTokenCount": 3, "candidatesTokenCount": 40, "totalTokenCount": 43}
    body = sse(
        [
            chunk("Hi"),
            *text_chunks([f" a{n}" for n in range(60)]),
            chunk(" mid", usageMetadata=usage),
            *text_chunks([f" b{n}" for n in range(60)]),
            last(),
        ]
    )
    assert same_as_replayed(body) > 110


def test_a_citation_after_a_run_counts_the_run_s_text():
    """Citations' spans count the bytes of the candidate's text: the run's text is held
    for them as each record's was, into Gemini and into chat (where a span cites)."""
    texts = [f" é{n}" for n in range(80)]
    cited = last()
    said = "".join(["Hi", *texts]).encode()
    cited["candidates"][0]["citationMetadata"] = {
        "citationSources": [{"startIndex": 10, "endIndex": len(said), "uri": "https://e.x/a"}]
    }
    body = sse([chunk("Hi"), *text_chunks(texts), cited])
    assert same_as_replayed(body) > 70
    for dst in ("chat-chunk", "responses-event", "anthropic-event"):
        same_as_replayed(body, (64,), dst=dst)


@pytest.mark.parametrize("choice", [None, 0, 1])
def test_two_candidates(choice):
    """Each candidate in chunks of its own, then both in one chunk: --choice 1 says the
    chosen candidate as index 0, which its input bytes do not, so its runs replay."""
    chunks = text_chunks([f" a{n}" for n in range(50)], index=0)
    chunks += text_chunks([f" b{n}" for n in range(50)], index=1)
    chunks += [text for n in range(30) for text in (chunk(f" c{n}"), chunk(f" d{n}", index=1))]
    body = sse([*chunks, last(index=0), last(index=1)])
    copied = same_as_replayed(body, choice=choice)
    # The first candidate's chunks, and the second's without --choice.
    assert copied == {None: 48 + 48, 0: 48, 1: 0}[choice]


@pytest.mark.parametrize("out_container", ["jsonl", "json"])
def test_other_containers_write_the_same(out_container):
    body = sse([chunk("Hi"), *text_chunks([f" w{n}é\\n" for n in range(100)]), last()])
    assert same_as_replayed(body, (64,), out_container=out_container) > 90


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in FIXTURES])
def test_fixtures(path: Path):
    same_as_replayed(path.read_bytes())


@pytest.mark.parametrize("path", capture_params(GEMINI))
def test_captures(path: Path):
    same_as_replayed(path.read_bytes())


def test_json_lines_with_a_line_begun_in_an_earlier_block():
    """Records read as JSON lines, a block boundary inside most of them (a line the
    reader hands on as a bytearray)."""
    lines = [chunk("Hi"), *text_chunks([f" w{n}" for n in range(100)]), last()]
    body = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    assert same_as_replayed(body, (50, 333), container="jsonl") > 90


def test_an_integer_beyond_64_bits_beside_a_run():
    """A chunk orjson cannot write plainly (an integer beyond 64 bits) in the block of a
    run: the writer writes the block again its lenient way, the fragments as they are."""
    usage = {"promptTokenCount": 3, "totalTokenCount": 3}
    body = sse([chunk("Hi"), *text_chunks([f" w{n}" for n in range(60)]), last()])
    body = body.replace(
        b'"responseId":"r1"}\r\n\r\ndata: {"candidates":[{"content":{"parts":[{"text":" w31"',
        b'"responseId":"r1","usageMetadata":'
        + orjson.dumps(usage).replace(b"3}", b"123456789012345678901234567890}")
        + b'}\r\n\r\ndata: {"candidates":[{"content":{"parts":[{"text":" w31"',
    )
    assert b"123456789012345678901234567890" in body
    assert same_as_replayed(body) > 50
    assert b"123456789012345678901234567890" in convert(body, 4096)[0]


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=60)
@given(strings=as_input.strings_written('"\\/ aé\x00\x1f\u2028😀'))
def test_any_text_written_any_way_goes_out_as_replayed(strings):
    chunks = [orjson.dumps(chunk(f" w{n}")) for n in range(30)]
    for written in strings:
        chunks.append(orjson.dumps(chunk("\x00")).replace(b'"\\u0000"', written))
    body = b"".join(b"data: " + c + b"\n\n" for c in [*chunks, orjson.dumps(last())])
    same_as_replayed(body, (64,))


def test_a_signature_waiting_in_the_lane_is_replayed():
    """A signature the encoder holds for the lane's next part (a Gemini source's
    batches never leave one, an encoder fed by hand may) goes on the run's first
    record: the run is replayed, not written as its input bytes."""
    decoder, _ = primed()
    records = [Record(None, None, 9 + n, raw=orjson.dumps(chunk(f"x{n}"))) for n in range(5)]
    run = decoder.run(records, 0)
    assert run is not None and run.raws is not None
    written = []
    for signed in (True, False):
        encoder = GeminiEncoder(Notes(), EncodeOptions(source_format=GEMINI))
        encoder.feed([ir.StreamStart("r1", "gemini-2.5-flash")])
        if signed:
            encoder.feed([ir.ItemEnd(0, "reasoning", signature="c2ln")])
        written.append(dumped(encoder.feed_run(run)))
        assert encoder.inputs.written_as_input == (0 if signed else 5)
    assert written[0] != written[1] and b"".join(written[0]).count(b"c2ln") == 1
    assert written[1] == run.raws

"""The stop sequence a message stopped at (``stop_reason: stop_sequence``): the IR's
Finish carries it, anthropic output and the final message keep it, and the formats
with no place for it say it is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatx import ir
from chatx.codecs.anthropic_event.decode import AnthropicDecoder
from chatx.notes import Notes
from chatx.record import Record
from tests.builders.anthropic_event import ANTHROPIC, message_delta, sse_events, stream, text
from tests.inprocess import run
from tests.streams import RESPONSES, convert, payloads

LLAMA = "llama-stack-event"
FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / ANTHROPIC / "stop-sequence.sse"


def stopped(sequence: str) -> list[dict]:
    events = stream(text(0, "Counting: 1, 2, 3, "), stop="stop_sequence")
    events[-2] = message_delta("stop_sequence", {"output_tokens": 9}, stop_sequence=sequence)
    return events


def finishes(events: list[dict]) -> list[ir.Finish]:
    decoder = AnthropicDecoder(Notes())
    out = [decoder.feed(Record(e, e["type"], n)) for n, e in enumerate(events, 1)]
    return [event for batch in out for event in batch if type(event) is ir.Finish]


def test_the_finish_carries_the_stop_sequence_and_no_residue_repeats_it():
    (finish,) = finishes(stopped("4"))
    assert (finish.reason, finish.raw, finish.stop_sequence) == ("stop", "stop_sequence", "4")
    assert "delta" not in finish.extra  # the canonical message_delta says it
    (plain,) = finishes(stream(text(0, "a")))
    assert plain.stop_sequence is None and "delta" not in plain.extra


def test_a_stop_sequence_that_is_not_a_string_stays_residue():
    events = stopped("4")
    events[-2]["delta"]["stop_sequence"] = 4
    (finish,) = finishes(events)
    assert finish.stop_sequence is None and finish.extra["delta"] == {"stop_sequence": 4}
    out, _ = convert(sse_events(events), ANTHROPIC, ANTHROPIC)
    assert payloads(out)[-2]["delta"]["stop_sequence"] == 4


def test_anthropic_output_writes_the_stop_sequence_back():
    data = sse_events(stopped("\n\nHuman:"))
    out, notes = convert(data, ANTHROPIC, ANTHROPIC)
    assert payloads(out) == payloads(data)
    assert payloads(out)[-2]["delta"] == {
        "stop_reason": "stop_sequence",
        "stop_sequence": "\n\nHuman:",
    }
    assert notes.summary() == []


# Chat has a place for it: tests/codecs/chat_chunk/test_stop_reason.py.
@pytest.mark.parametrize("dst", [RESPONSES, LLAMA])
def test_other_formats_say_the_stop_sequence_is_lost(dst: str):
    _, notes = convert(sse_events(stopped("4")), dst, ANTHROPIC)
    assert notes.lost_fields["finish.stop_sequence"] == 1
    assert not any(
        "stop_sequence" in path for path in notes.lost_fields if path != "finish.stop_sequence"
    )
    _, plain = convert(sse_events(stream(text(0, "a"))), dst, ANTHROPIC)
    assert "finish.stop_sequence" not in plain.lost_fields


def test_collect_as_anthropic_keeps_the_stop_sequence():
    result = run(["collect", str(FIXTURE), "--as", "anthropic"])
    assert result.code == 0, result.err
    message = json.loads(result.stdout)
    assert (message["stop_reason"], message["stop_sequence"]) == ("stop_sequence", "4")


@pytest.mark.parametrize("target", ["responses", "llama-stack"])
def test_collect_as_another_format_says_the_stop_sequence_is_lost(target: str):
    result = run(["collect", str(FIXTURE), "--as", target])
    assert result.code == 0, result.err
    # In convert's words, as collect --as X says what it leaves out (chatx/collect/notes.py).
    said = "field finish.stop_sequence has no place in the target format (1 record)"
    assert "lost: " in result.err and said in result.err
    other = Path(__file__).resolve().parents[3] / "fixtures" / ANTHROPIC / "text.sse"
    assert "stop sequence" not in run(["collect", str(other), "--as", target]).err

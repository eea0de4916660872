"""Helpers for the llama-stack-event tests (imported by the other tests of this package),
and the probe tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.llama_stack_event import CODEC, probe
from chatx.codecs.llama_stack_event.decode import LlamaStackDecoder
from chatx.codecs.llama_stack_event.encode import LlamaStackEncoder
from chatx.notes import Notes
from chatx.record import Record
from tests.paths import ROOT

ROOT = ROOT
FIXTURES = ROOT / "fixtures" / "llama-stack-event"
CAPTURES = ROOT.parent / "shared" / "captures"
LLAMA_CAPTURES = sorted((CAPTURES / "llama-stack-event").glob("*.jsonl"))
OWN = EncodeOptions(source_format=CODEC.name)
OTHER = EncodeOptions(source_format="chat-chunk")

needs_captures = pytest.mark.skipif(
    not LLAMA_CAPTURES, reason=f"no Llama Stack captures in {CAPTURES} (shared folder absent)"
)


def fixture(name: str) -> Path:
    path = FIXTURES / f"{name}.jsonl"
    assert path.exists(), f"missing fixture {path}"
    return path


def read_jsonl(path: Path) -> list[Record]:
    """One payload per non-empty line, as the captures are stored."""
    lines = path.read_bytes().splitlines()
    return [Record(orjson.loads(line), line=n) for n, line in enumerate(lines, 1) if line.strip()]


def records(*payloads: Any) -> list[Record]:
    return [Record(p, line=n) for n, p in enumerate(payloads, 1)]


def decode(recs: list[Record], notes: Notes | None = None) -> list[list[ir.Event]]:
    """One batch per record, then the drain batch."""
    decoder = LlamaStackDecoder(notes if notes is not None else Notes())
    batches = [decoder.feed(rec) for rec in recs]
    return [*batches, decoder.finish()]


def encode(
    batches: list[list[ir.Event]], options: EncodeOptions = OTHER, notes: Notes | None = None
) -> list[Any]:
    encoder = LlamaStackEncoder(notes if notes is not None else Notes(), options)
    out: list[Any] = []
    for batch in batches:
        out.extend(encoder.feed(batch))
    return out + encoder.finish()


def flat(batches: list[list[ir.Event]]) -> list[ir.Event]:
    return [event for batch in batches for event in batch]


@dataclass
class Said:
    """What a stream says, in any format: the meaning round trips must keep."""

    text: str = ""
    calls: list[tuple[str | None, str | None, Any]] = field(default_factory=list)
    usage: tuple[int | None, int | None, int | None] | None = None
    finish: str | None = None
    errors: list[str | None] = field(default_factory=list)


def said(events: list[ir.Event], lane: int = 0) -> Said:
    out = Said()
    text: list[str] = []
    calls: dict[Any, list[Any]] = {}
    for event in events:
        kind = type(event)
        if kind is ir.TextDelta and event.lane == lane:
            text.append(event.text)
        elif kind is ir.ItemStart and event.kind == "tool_call" and event.lane == lane:
            calls[event.call] = [event.call_id, event.name, []]
        elif kind is ir.ToolArgsDelta and event.lane == lane:
            calls.setdefault(event.call, [None, None, []])[2].append(event.fragment)
        elif kind is ir.Usage:
            out.usage = (event.input, event.output, event.total)
        elif kind is ir.Finish and event.lane == lane:
            out.finish = event.reason
        elif kind is ir.Error:
            out.errors.append(event.message)
    out.text = "".join(text)
    out.calls = [(cid, name, _json("".join(frags))) for cid, name, frags in calls.values()]
    return out


def _json(text: str) -> Any:
    try:
        return orjson.loads(text) if text else {}
    except orjson.JSONDecodeError:
        return text


# --- probe --------------------------------------------------------------------------------


def test_probe_claims_llama_stack_events() -> None:
    recs = read_jsonl(fixture("text"))
    assert probe(recs) == 100
    assert CODEC.probe is probe


@pytest.mark.parametrize(
    "payload",
    [
        {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []},
        {"type": "response.created", "sequence_number": 0},
        {"event": "message"},
        {"error": {"message": "boom"}},
        [1, 2],
    ],
)
def test_probe_refuses_other_formats(payload: Any) -> None:
    assert probe(records(payload)) == 0


def test_probe_skips_sentinels_and_handles_nothing() -> None:
    assert probe([]) == 0
    done = Record(done=True)
    assert probe([done, *read_jsonl(fixture("text"))]) == 100


def test_codec_descriptor() -> None:
    assert CODEC.name == "llama-stack-event"
    assert CODEC.container == "sse"
    assert not CODEC.sse_event_names
    assert CODEC.single_lane

"""collect and diff --semantic find runs as convert does (records known by their bytes,
never parsed, reaching the Assembler as one DeltaRun): what they build and say is what
decoding every record parsed, one at a time, builds and says.

Performance itself is measured by ``make bench`` (``bench/cpu.py``), never here.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from chatx import ir
from chatx.codecs.template import DeltaRun
from chatx.collect import collect, collect_side, target_for
from chatx.collect.assembler import Assembler, assemble
from chatx.collect.streams import other_items, streams_of
from chatx.pipeline import convert
from chatx.reading.decoding import decode
from chatx.reading.framing import Side, load
from tests.bench_streams import generate
from tests.paths import FIXTURES

FORMATS = ("chat-chunk", "responses-event", "anthropic-event", "llama-stack-event", "gemini-event")


def _by_record(side: Side) -> tuple[list[Any], list[tuple[str, str, int | None]]]:
    """collect as it was before runs: every record parsed by the reader, decoded alone."""
    side.decode_only()
    target = target_for(None, side.format)
    streams = assemble(decode(side.records(), side.format, side.notes), other_items)
    built = [
        collect(s, target, source=side.format, notes=side.notes, request=side.request)
        for s in streams
    ]
    return built, _said(side)


def _by_run(side: Side) -> tuple[list[Any], list[tuple[str, str, int | None]]]:
    return collect_side(side), _said(side)


def _said(side: Side) -> list[tuple[str, str, int | None]]:
    return [(n.kind, n.message, n.line) for n in side.notes.summary()]


def _same(data: bytes, name: str = "stream") -> tuple[list[Any], list[Any]]:
    runs = _by_run(load(data, name))
    records = _by_record(load(data, name))
    assert orjson.dumps(runs[0]) == orjson.dumps(records[0])
    assert runs[1] == records[1]
    return runs


def _stream(kind: str, fmt: str, n: int = 1200) -> bytes:
    chat = generate.chat_bytes(kind, n)
    return chat if fmt == "chat-chunk" else convert(chat, dst=fmt, src="chat-chunk")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", generate.KINDS)
def test_runs_build_what_records_build(kind: str, fmt: str) -> None:
    _same(_stream(kind, fmt))


def test_every_fixture_builds_the_same() -> None:
    checked = 0
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix in (".md", ".json") or "expected" in path.parts:
            continue
        try:
            load(path.read_bytes(), path.name)
        except Exception:  # noqa: BLE001 - not a stream collect reads; other tests say why
            continue
        try:
            runs: Any = _by_run(load(path.read_bytes(), path.name))
        except Exception as exc:  # noqa: BLE001 - the same error either way
            runs = repr(exc)
        try:
            records: Any = _by_record(load(path.read_bytes(), path.name))
        except Exception as exc:  # noqa: BLE001
            records = repr(exc)
        assert orjson.dumps(runs, default=repr) == orjson.dumps(records, default=repr), path
        checked += 1
    assert checked > 100


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _text_of(built: list[Any]) -> str:
    message = built[0]["choices"][0]["message"]
    return message["content"]


@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_a_bad_record_in_a_run_is_skipped_at_its_line(where: float) -> None:
    """A record that is no JSON, in the middle of 1200 text deltas the template knows:
    said skipped at its own line, every other delta's text kept."""
    data = _stream("text", "chat-chunk")
    lines = _lines(data)
    at = int(len(lines) * where) // 2 * 2  # a data: line (blocks are data line, blank)
    assert lines[at].startswith(b"data: {")
    lines[at] = lines[at][:40]  # cut short: not JSON
    built, said = _same(b"\n".join(lines))
    skipped = [s for s in said if s[0] == "skipped"]
    assert [s[2] for s in skipped] == [at + 1]
    kept = (
        orjson.loads(line[6:])
        for n, line in enumerate(_lines(data))
        if n != at and line.startswith(b"data: {")
    )
    whole = "".join(
        p["choices"][0]["delta"].get("content") or ""
        for p in kept
        if isinstance(p, dict) and p.get("choices")
    )
    assert _text_of(built) == whole


def test_a_record_unlike_the_run_in_its_middle_is_read_whole() -> None:
    """A delta with a field the others lack (a refusal), mid-run: kept, and the texts on
    either side of it too."""
    data = _stream("text", "chat-chunk")
    lines = _lines(data)
    at = len(lines) // 4 * 2
    payload = orjson.loads(lines[at][6:])
    payload["choices"][0]["delta"]["refusal"] = "no"
    lines[at] = b"data: " + orjson.dumps(payload)
    built, _ = _same(b"\n".join(lines))
    assert built[0]["choices"][0]["message"]["refusal"] == "no"


def test_an_ignored_line_in_a_run_is_said_in_order() -> None:
    """An SSE line that is no field, three records after a record that is no JSON, in the
    middle of a run: the skipped record is said first, then the line, where they came
    (the records read together to find runs are decoded before the line is said)."""
    data = _stream("text", "chat-chunk")
    lines = _lines(data)
    bad = len(lines) // 4 * 2
    assert lines[bad].startswith(b"data: {")
    lines[bad] = lines[bad][:30]
    lines.insert(bad + 6, b"Data: not a field")
    _, said = _same(b"\n".join(lines))
    kinds = [(s[0], s[2]) for s in said if s[0] in ("warning", "skipped")]
    assert kinds == [("skipped", bad + 1), ("warning", bad + 7)]


def _meta(lane: int | None, **extra: Any) -> ir.Meta:
    return ir.Meta(lane, dict(extra))


SHARED = {
    "none": (None, None, None),
    "stream and lane": (_meta(None, fp="a"), _meta(0, filter={"x": 1}), None),
    "two on one lane": (None, _meta(0, filter={"x": 1}), _meta(0, filter={"x": 2}, y=3)),
    "two of the stream": (_meta(None, fp="a"), None, _meta(None, fp="b")),
    "a delta to add up": (None, ir.Meta(0, {}, delta={"n": 1, "s": "a"}), None),
    "own": (ir.Meta(None, {}, own=ir.Own()), None, None),
    "citations": (None, _meta(0, citations=[{"c": 1}]), None),
}


@pytest.mark.parametrize("shared", SHARED, ids=list(SHARED))
@pytest.mark.parametrize(
    "proto",
    [
        ir.TextDelta(0, ""),
        ir.ReasoningDelta(0, "", source_field="reasoning"),
        ir.ToolArgsDelta(0, 0, ""),
    ],
    ids=["text", "reasoning", "args"],
)
def test_feed_run_is_feeding_each_record(shared: str, proto: Any) -> None:
    """Assembler.feed_run leaves the Assembler as each record's batch fed in turn does,
    whatever the shared events (those that add up or keep a list are fed each time)."""
    before, after, tail = SHARED[shared]
    texts = [f"t{k} " for k in range(3000)]
    run = DeltaRun(proto, texts, [None] * 3000, list(range(3000)), before, after, tail)
    opening = [ir.StreamStart("s", "m", 1), ir.LaneStart(0)]
    if type(proto) is ir.ToolArgsDelta:
        opening.append(ir.ItemStart(0, "tool_call", call=0, call_id="c", name="f"))
    fast, slow = Assembler(other_items), Assembler(other_items)
    fast.feed(opening)
    slow.feed(opening)
    fast.feed_run(run)
    for batch in run.batches():
        slow.feed(batch)
    assert _state(fast) == _state(slow)


def _state(a: Assembler) -> Any:
    lanes = [
        (
            n,
            lane.text,
            lane.reasoning,
            lane.residue,
            lane.delta,
            [(i.kind, [c.citation for c in i.citations]) for i in lane.items],
            {k: (c.arguments, c.name) for k, c in lane.tool_calls.items()},
        )
        for n, lane in a.lanes.items()
    ]
    return (lanes, a.residue, a.meta, a.owns, dict(a.counts))


def test_diff_semantic_reads_runs_too() -> None:
    """diff --semantic's sides are assembled from runs: the same text as record by record."""
    data = _stream("mixed", "responses-event")
    (fast,) = streams_of(load(data, "a"))
    side = load(data, "b")
    (slow,) = assemble(decode(side.records(), side.format, side.notes), other_items)
    assert fast.choices[0].text == slow.choices[0].text
    assert fast.choices[0].reasoning == slow.choices[0].reasoning
    assert [c.arguments for c in fast.choices[0].tool_calls.values()] == [
        c.arguments for c in slow.choices[0].tool_calls.values()
    ]
    assert dict(fast.counts) == dict(slow.counts)


def test_runs_are_found_in_a_generated_stream() -> None:
    """The run path is taken (else the tests above compare the record path with itself):
    a 1200-delta chat stream reaches the Assembler in few batches."""
    side = load(_stream("text", "chat-chunk"), "s")
    side.decode_only(raw=True)
    from chatx.reading.decoding import decode_groups

    batches = list(decode_groups(side.groups(), side.format, side.notes))
    runs = [b for b in batches if isinstance(b, DeltaRun)]
    assert sum(len(r.texts) for r in runs) > 900
    assert len(batches) < 300

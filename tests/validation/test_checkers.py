"""The checkers on their own: real-world shapes that are valid, and the streaming API."""

from __future__ import annotations

import json

import pytest

from chatx.reading.framing import read_records
from chatx.record import Record
from chatx.validation import make_checker, validate_records
from tests.paths import ROOT

FIXTURES = ROOT / "fixtures" / "validate"


def records(name: str) -> list[Record]:
    return read_records((FIXTURES / name).read_bytes())[1]


def rules(recs: list[Record], fmt: str = "responses-event", container: str = "sse") -> set[str]:
    return {f.rule for f in validate_records(recs, fmt, container=container)}


def renumber(recs: list[Record]) -> list[Record]:
    """Give records consecutive lines, as if they were one file."""
    return [Record(r.data, r.event, n, r.done, r.error) for n, r in enumerate(recs, 1)]


def test_concatenated_streams_are_separate_streams() -> None:
    # vercel/ai fixtures put several turns in one file; sequence numbers restart at 0.
    one = records("RSP023.good.sse")
    assert rules(renumber(one + one + one)) == set()


def test_a_truncated_stream_before_the_next_one_is_reported_once() -> None:
    one = records("RSP023.good.sse")
    findings = validate_records(renumber(one[:-1] + one), "responses-event")
    assert [f.rule for f in findings] == ["RSP007"]
    assert findings[0].line == len(one) - 1  # the last event of the first stream


def test_resumed_background_stream_is_only_a_warning() -> None:
    recs = records("RSP006.bad.sse")
    findings = validate_records(recs, "responses-event", container="sse")
    assert [(f.rule, f.severity) for f in findings] == [("RSP006", "W")]


def test_open_responses_reasoning_names_are_known() -> None:
    # Open Responses says response.reasoning.*, the openai SDK response.reasoning_text.*.
    out = []
    for name in ("response.reasoning", "response.reasoning_text"):
        lines = (FIXTURES / "RSP023.good.sse").read_text()
        lines = lines.replace('"type":"message","role":"assistant"', '"type":"reasoning"')
        lines = lines.replace('"output_text"', '"reasoning_text"')
        lines = lines.replace("response.output_text", name)
        sse = "\n".join(x for x in lines.splitlines() if not x.startswith("event:"))
        out.append(rules(read_records(sse.encode(), "sse")[1]))
    assert out == [set(), set()]


def test_missing_sequence_numbers_are_reported_once_per_stream() -> None:
    recs = records("RSP023.good.sse")
    for record in recs:
        record.data.pop("sequence_number")
    findings = validate_records(recs, "responses-event")
    assert [f.rule for f in findings] == ["RSP004"]


def test_done_sentinel_rule_applies_to_sse_only() -> None:
    recs = [r for r in records("CHK015.good.jsonl")]
    assert rules(recs, "chat-chunk", "jsonl") == set()
    assert rules(recs, "chat-chunk", "sse") == {"CHK015"}


def test_azure_preamble_and_both_reasoning_fields_are_valid() -> None:
    base = [r.data for r in records("CHK015.good.jsonl")]
    preamble = {
        "id": "",
        "object": "",
        "created": 0,
        "model": "",
        "choices": [],
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
    }
    base[1]["choices"][0]["delta"] = {"reasoning_content": "hm", "content": "Hello"}
    base.insert(2, json.loads(json.dumps(base[1])))
    base[2]["choices"][0]["delta"] = {"reasoning": "hm"}
    recs = [Record(d, line=n) for n, d in enumerate([preamble, *base], 1)]
    assert rules(recs, "chat-chunk", "jsonl") == set()


def test_groq_error_event_without_done_is_a_warning_only() -> None:
    # Groq: `event: error` + data {"error": {...}} and then nothing, no [DONE].
    recs = records("CHK017.bad.sse")
    findings = validate_records(recs, "chat-chunk", container="sse")
    assert [(f.rule, f.severity) for f in findings] == [("CHK017", "W")]


def test_llama_stack_lone_succeeded_after_text_is_valid() -> None:
    assert rules(records("LLS004.good.jsonl"), "llama-stack-event", "jsonl") == set()


def test_checker_streams_and_keeps_no_closed_item_text() -> None:
    checker = make_checker("responses-event", container="sse")
    recs = records("RSP023.good.sse")
    for record in recs[:-1]:
        checker.feed(record)
    item = checker.items.items[0]  # type: ignore[attr-defined]
    assert item.done and item.parts == {} and item.values == {}
    checker.feed(recs[-1])
    assert checker.finish() == []


def test_findings_carry_file_line_and_index() -> None:
    (finding,) = validate_records(records("RSP014.bad.sse"), "responses-event", file="x.sse")
    assert (finding.file, finding.line, finding.index) == ("x.sse", 16, 5)
    assert finding.as_dict()["rule"] == "RSP014"


def test_every_sdk_event_type_is_known() -> None:
    """A type the openai SDK defines is never reported as an extension (RSP029)."""
    pytest.importorskip("openai")
    from chatx.codecs.responses_event.check import KNOWN_TYPES
    from chatx.codecs.responses_event.schema import responses_classes

    assert set(responses_classes()) <= KNOWN_TYPES


def _long_text_stream(length: int) -> list[Record]:
    """A Responses stream whose message is ``length`` characters long, from chatx."""
    from chatx import convert
    from tests.builders.chat_chunk import chat_text
    from tests.streams import sse

    words = ["naïve 🙂 " * (length // 16)] * 2
    return read_records(convert(sse(chat_text(*words)), dst="responses-event"))[1]


def _edit_text(rec: Record, edit) -> Record:  # noqa: ANN001
    data = json.loads(json.dumps(rec.data))
    edit(data)
    return Record(data, rec.event, rec.line)


@pytest.mark.parametrize("length", [100, 200_000])
def test_long_texts_are_compared_in_full(length: int) -> None:
    """A closed item's long text is kept as a digest until the terminal event: a stream
    that agrees is clean, and one character changed anywhere is still found."""
    recs = _long_text_stream(length)
    assert rules(recs) == set()
    kinds = [r.data.get("type") for r in recs]
    last = kinds.index("response.completed")

    def change_output(data):  # noqa: ANN001, ANN202
        part = data["response"]["output"][0]["content"][0]
        part["text"] = part["text"][:-1] + "x"

    changed = [*recs[:last], _edit_text(recs[last], change_output)]
    assert rules(changed) == {"RSP026"}
    item_done = kinds.index("response.output_item.done")

    def change_item(data):  # noqa: ANN001, ANN202
        part = data["item"]["content"][0]
        part["text"] = "x" + part["text"][1:]

    changed = [*recs[:item_done], _edit_text(recs[item_done], change_item), *recs[item_done + 1 :]]
    assert "RSP025" in rules(changed)

"""Anthropic streams through chatx and back.

* anthropic → anthropic gives back the JSON values record for record, on chatx's own
  fixtures and on every real capture (``../shared/captures/anthropic-event``, skipped
  when absent); a malformed one comes back repaired, and chatx says so.
* anthropic → B → anthropic says the same (``tests.meaning.summarize``) for every other
  format B, but for what B cannot say, listed below with the reason.
* B → anthropic → B says the same for the other formats' fixtures and captures, but for
  what an Anthropic message cannot say or must say, each with the note chatx gives.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx import codecs
from tests.builders.anthropic_event import (
    ANTHROPIC,
    MESSAGE_STOP,
    block_delta,
    message_delta,
    message_start,
)
from tests.captures import capture_choices, capture_params
from tests.meaning import summarize
from tests.streams import CHAT, RESPONSES, convert, payloads, sse

LLAMA = "llama-stack-event"
OTHERS = (CHAT, RESPONSES, LLAMA)
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"

# Inputs that are not well formed, so anthropic output repairs them: the note says so.
REPAIRED = {
    "missing-block-stop.sse": "content block 0 was not stopped before message_delta",
    "anthropic-sdk-python__incomplete_partial_json_response.sse": (
        "content block 1 was not stopped before message_delta"
    ),
}
# A non-streaming message: anthropic output is the stream it stands for.
WHOLE = {"nonstream-message.json"}


def fixture_params(fmt: str) -> list[Any]:
    return [pytest.param(p, id=p.name) for p in sorted((FIXTURES / fmt).glob("*.*"))]


def sources() -> list[Any]:
    return [*fixture_params(ANTHROPIC), *capture_params(ANTHROPIC)]


# -- A → A ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sources())
def test_anthropic_to_anthropic_gives_back_the_json_values(path: Path) -> None:
    data = path.read_bytes()
    out, notes = convert(data, ANTHROPIC, ANTHROPIC)
    repaired = [n.message for n in notes.items if n.kind == "repaired"]
    if path.name in WHOLE:
        assert out == convert(out, ANTHROPIC, ANTHROPIC)[0]
        return
    if path.name in REPAIRED:
        assert payloads(out) != payloads(data)
        assert any(REPAIRED[path.name] in message for message in repaired), repaired
        return
    assert payloads(out) == payloads(data)
    assert repaired == []
    assert [n for n in notes.summary() if n.kind == "lost"] == []


# -- A → B → A -----------------------------------------------------------------------------

# What each target cannot say at all, so no round trip through it brings it back.
CANNOT_SAY = {LLAMA: ({"reasoning"}, "Llama Stack events have no reasoning")}
# What one source's round trip through one target cannot keep, and why.
EXPECTED_DIFFERENCES: dict[tuple[str, str], tuple[set[str], str]] = {
    **{
        (name, dst): ({"finish"}, "pause_turn has no chat or Llama Stack word (said lost)")
        for name in (
            "pause-turn.sse",
            "pydantic-ai__anthropic-pause_turn_web_search_streaming_vcr__i0.sse",
        )
        for dst in (CHAT, LLAMA)
    },
    **{
        (name, LLAMA): (
            {"calls", "text"},
            "the call's input was cut at max_tokens: not JSON, so Llama Stack's failed call, "
            "whose raw text is message text",
        )
        for name in (
            "missing-block-stop.sse",
            "anthropic-sdk-python__incomplete_partial_json_response.sse",
        )
    },
}


def differences(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> set[str]:
    """Which parts of two summaries differ: streams, usage, errors, or a lane field."""
    if len(before) != len(after):
        return {"streams"}
    out: set[str] = set()
    for one, two in zip(before, after, strict=True):
        out |= {key for key in ("usage", "errors") if one[key] != two[key]}
        for lane in set(one["lanes"]) | set(two["lanes"]):
            a, b = one["lanes"].get(lane, {}), two["lanes"].get(lane, {})
            out |= {key for key in set(a) | set(b) if a.get(key) != b.get(key)}
    return out


@pytest.mark.parametrize("dst", OTHERS)
@pytest.mark.parametrize("path", sources())
def test_anthropic_through_another_format_says_the_same(path: Path, dst: str) -> None:
    data = path.read_bytes()
    middle, _ = convert(data, dst, ANTHROPIC)
    back, _ = convert(middle, ANTHROPIC, dst)
    found = differences(summarize(data, ANTHROPIC), summarize(back, ANTHROPIC))
    allowed = (
        CANNOT_SAY.get(dst, (set(), ""))[0]
        | EXPECTED_DIFFERENCES.get((path.name, dst), (set(), ""))[0]
    )
    assert found <= allowed, (found, summarize(data, ANTHROPIC), summarize(back, ANTHROPIC))


def test_every_expected_difference_is_one():
    """The table lists no difference that went away (each entry is still needed)."""
    for (name, dst), (fields, _) in EXPECTED_DIFFERENCES.items():
        path = next((FIXTURES / ANTHROPIC).glob(name), None)
        if path is None:
            continue  # a capture: checked only where ../shared is
        middle, _ = convert(path.read_bytes(), dst, ANTHROPIC)
        back, _ = convert(middle, ANTHROPIC, dst)
        found = differences(summarize(path.read_bytes(), ANTHROPIC), summarize(back, ANTHROPIC))
        assert found & fields, (name, dst)


# -- B → A → B -----------------------------------------------------------------------------


def expected_back(before: list[dict[str, Any]], said: list[str]) -> list[dict[str, Any]]:
    """What B → anthropic → B gives back for a source that says ``before``: what an
    Anthropic message cannot say, or must say, changed as chatx changes it, each change
    checked against the note that says it (``said``: the notes of B → anthropic)."""
    after = copy.deepcopy(before)

    def noted(words: str) -> bool:
        return any(words in note for note in said)

    for stream in after:
        usage = stream["usage"]
        if usage is None and noted("the input has no usage: message_delta says 0 tokens"):
            # A message that ends says its usage: zero when the source said none.
            stream["usage"] = (0, 0, 0)
        elif usage is not None and usage[2] != usage[0] + usage[1]:
            stream["usage"] = (usage[0], usage[1], usage[0] + usage[1])
            assert noted(f"usage total {usage[2]}: Anthropic usage has no total"), said
        for lane in stream["lanes"].values():
            if lane["refusal"]:
                lane["text"], lane["refusal"] = lane["text"] + lane["refusal"], ""
                assert noted("a refusal is written as message text"), said
            if lane["finish"] is None and noted("the input has no finish reason"):
                lane["finish"] = "tool_calls" if lane["calls"] else "stop"
            elif lane["finish"] == "function_call":
                lane["finish"] = "tool_calls"
                assert noted("finish reason 'function_call'"), said
            lane["calls"] = [
                (name, cid, ("json", "{}") if args == ("text", "") else args)
                for name, cid, args in lane["calls"]
            ]
    return after


def other_sources() -> list[Any]:
    out = []
    for fmt in OTHERS:
        for param in [*fixture_params(fmt), *capture_params(fmt)]:
            path = param.values[0]
            if path is None:
                out.append(pytest.param(None, None, None, marks=param.marks, id=param.id))
                continue
            choices = capture_choices(path) if fmt == CHAT else [None]
            if fmt == CHAT and path.parent.name != CHAT:  # a fixture: its own lanes
                from tests.meaning import lanes_of

                lanes = sorted(lanes_of(path.read_bytes(), CHAT))
                choices = lanes if len(lanes) > 1 else [None]
            for choice in choices:
                suffix = "" if choice is None else f"-choice{choice}"
                out.append(pytest.param(fmt, path, choice, id=f"{fmt}/{path.name}{suffix}"))
    return out


@pytest.mark.parametrize(("src", "path", "choice"), other_sources())
def test_another_format_through_anthropic_says_the_same(src: str, path: Path, choice: Any) -> None:
    data = path.read_bytes()
    middle, notes = convert(data, ANTHROPIC, src, choice=choice)
    back, _ = convert(middle, src, ANTHROPIC)
    said = [note.message for note in notes.summary()]
    before = summarize(data, src, lane=choice)
    assert summarize(back, src) == expected_back(before, said)


def test_the_registry_has_the_format():
    assert codecs.get("anthropic").name == ANTHROPIC


def test_values_of_another_json_type_come_back_as_they_came() -> None:
    """1, 1.0 and true are one value to Python and three to JSON: anthropic → anthropic
    gives back each as it came, not the canonical record's integer."""
    events = [
        message_start(),
        {"type": "content_block_start", "index": False, "content_block": text_block()},
        block_delta(0, {"type": "text_delta", "text": "a"}),
        {"type": "content_block_stop", "index": 0.0},
        {"type": "content_block_start", "index": True, "content_block": text_block()},
        block_delta(1, {"type": "text_delta", "text": "b"}),
        {"type": "content_block_stop", "index": 1.0},
        message_delta("end_turn", {"output_tokens": 5}),
        MESSAGE_STOP,
    ]
    data = sse(events, done=False, events=True)
    out, notes = convert(data, ANTHROPIC, ANTHROPIC)
    got = payloads(out)
    assert [orjson.dumps(p, option=orjson.OPT_SORT_KEYS) for p in got] == [
        orjson.dumps(p, option=orjson.OPT_SORT_KEYS) for p in events
    ]
    assert [type(p.get("index")) for p in got[1:7]] == [bool, int, float, bool, int, float]
    assert notes.summary() == []


def text_block() -> dict[str, Any]:
    return {"type": "text", "text": ""}

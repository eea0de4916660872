"""Round trips through llama-stack-event: random IR streams (hypothesis), and the real
captures of every format through Llama Stack events and back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx import ir
from tests.codecs.llama_stack_event.support import (
    LLAMA_CAPTURES,
    Said,
    decode,
    encode,
    records,
    said,
)

LLAMA = "llama-stack-event"

# --- random IR -> llama-stack -> IR -------------------------------------------------------

_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False)
)
_json = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_args = st.dictionaries(st.text(max_size=6), _json, max_size=4)
# Chat text never carries a Llama special token by accident; "<" alone still tests the
# scanner's hold-back.
_text = st.text(min_size=1, max_size=10).filter(lambda t: "<|" not in t and "|>" not in t)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:], strict=False) if b > a]


@st.composite
def ir_streams(draw: st.DrawFn) -> tuple[list[list[ir.Event]], Said]:
    texts = draw(st.lists(_text, max_size=5))
    calls = draw(
        st.lists(
            st.tuples(
                st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
                _args,
                st.lists(st.integers(0, 60), max_size=3),
            ),
            max_size=3,
        )
    )
    reason = draw(st.sampled_from(["tool_calls", "length"] if calls else ["stop", "length"]))
    usage = draw(st.none() | st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)))
    finish_with_call = draw(st.booleans())
    batches: list[list[ir.Event]] = [[ir.StreamStart("chatcmpl-P", "m", 1), ir.LaneStart(0)]]
    if texts:
        batches.append([ir.ItemStart(0, "message")])
        batches += [[ir.TextDelta(0, text)] for text in texts]
        batches.append([ir.ItemEnd(0, "message")])
    expected = []
    for number, (name, args, cuts) in enumerate(calls):
        arguments = orjson.dumps(args).decode()
        call_id = f"call_{number}"
        batches.append([ir.ItemStart(0, "tool_call", call=number, call_id=call_id, name=name)])
        batches += [[ir.ToolArgsDelta(0, number, piece)] for piece in _split(arguments, cuts)]
        batches.append([ir.ItemEnd(0, "tool_call", call=number)])
        expected.append((call_id, name, args))
    if finish_with_call and calls:
        batches[-1].append(ir.Finish(0, reason))
    else:
        batches.append([ir.Finish(0, reason)])
    if usage is not None:
        batches.append([ir.Usage(usage[0], usage[1], usage[0] + usage[1])])
    batches.append([ir.StreamEnd()])
    total = (usage[0], usage[1], usage[0] + usage[1]) if usage else None
    return batches, Said("".join(texts), expected, total, reason)


@settings(max_examples=120, deadline=None)
@given(ir_streams())
def test_random_ir_survives_llama_stack(case: tuple[list[list[ir.Event]], Said]) -> None:
    batches, expected = case
    out = encode(batches)
    got = said([event for batch in decode(records(*out)) for event in batch])
    assert (got.text, got.calls, got.usage, got.finish) == (
        expected.text,
        expected.calls,
        expected.usage,
        expected.finish,
    )


# --- real captures through other formats -------------------------------------------------


def _registered(name: str) -> bool:
    try:
        from chatx.codecs import get

        get(name)
    except Exception:
        return False
    return True


CHAT, RESPONSES = "chat-chunk", "responses-event"
needs_codecs = pytest.mark.skipif(
    not (_registered(CHAT) and _registered(RESPONSES) and _registered(LLAMA)),
    reason="the chat-chunk / responses-event codecs are not registered yet (chatx.codecs.get)",
)
# Captures whose meaning changes through Llama Stack events, by design.
CHANGED_BY_DESIGN = {
    "llama-stack-rec__ollama-tool_runtime-dd48d347f0ab.jsonl": "its chat text starts with <|python_tag|>: Llama Stack reads that as a "
    "code_interpreter call",
    **{
        name: "no finish_reason in the source: complete says end_of_turn, as Llama Stack's "
        "OpenAI-compat layer reads such a stream"
        for name in (
            "pydantic-ai__snowflake_model_streaming__i0.sse",
            "pydantic-ai__snowflake_thinking_streaming__i0.sse",
            "simonw-llm__tools_streaming_variant_a__i0.sse",
            "simonw-llm__tools_streaming_variant_b__i0.sse",
        )
    },
}


def _meaning(data: bytes, fmt: str, lane: int | None = None) -> list[dict[str, Any]]:
    """What a stream says, as far as Llama Stack events can say it: reasoning dropped,
    a refusal read as text, finish reasons in the words a stop reason maps back to (an
    error ends a Llama Stack stream by itself: no complete, no stop reason), and a total
    token count the source left out as Llama Stack's router computes it: prompt + completion."""
    from tests.meaning import summarize

    out = []
    for stream in summarize(data, fmt, lane=lane):
        lanes = {}
        for number, lane_ in stream["lanes"].items():
            text = lane_["text"] + lane_["refusal"]
            finish = {"content_filter": "stop", "error": None, "function_call": "tool_calls"}.get(
                lane_["finish"], lane_["finish"]
            )
            if text or lane_["calls"] or finish:
                lanes[number] = (text, lane_["calls"], finish)
        usage = stream["usage"]
        if usage is not None:
            total = usage[2] if usage[2] is not None else usage[0] + usage[1]
            usage = (usage[0], usage[1], total)
        out.append((lanes, usage, stream["errors"]))
    return out


def _through_llama(path: Path, fmt: str) -> tuple[Any, Any, Any]:
    from tests.meaning import lanes_of
    from tests.streams import convert

    data = path.read_bytes()
    lanes = sorted(lanes_of(data, fmt)) if fmt == CHAT else []
    choice = lanes[0] if len(lanes) > 1 else None
    middle = convert(data, LLAMA, fmt, choice=choice)[0]
    back = convert(middle, fmt, LLAMA)[0]
    return _meaning(data, fmt, choice), _meaning(middle, LLAMA), _meaning(back, fmt)


def _captures(fmt: str) -> list[Any]:
    from tests.captures import CAPTURES, captures

    paths = captures(fmt)
    if not paths:
        return [
            pytest.param(
                None, marks=pytest.mark.skip(reason=f"no {fmt} captures in {CAPTURES}"), id="absent"
            )
        ]
    return [pytest.param(p, id=p.name) for p in paths]


@needs_codecs
@pytest.mark.parametrize("path", _captures(CHAT) + _captures(RESPONSES))
def test_capture_through_llama_stack_says_the_same(path: Path) -> None:
    fmt = path.parent.name
    source, middle, back = _through_llama(path, fmt)
    if path.name in CHANGED_BY_DESIGN:
        assert source != middle, "now the same: drop it from CHANGED_BY_DESIGN"
        assert middle == back
        return
    assert source == middle == back


def _llama_captures() -> list[Any]:
    if not LLAMA_CAPTURES:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="no llama captures"))]
    return [
        pytest.param(p, fmt, id=f"{p.stem.split('__')[-1]}-via-{fmt}")
        for p in LLAMA_CAPTURES
        for fmt in (CHAT, RESPONSES)
    ]


@needs_codecs
@pytest.mark.parametrize(("path", "fmt"), _llama_captures())
def test_llama_capture_through_other_format_is_accepted_and_says_the_same(
    path: Path, fmt: str
) -> None:
    from tests.streams import convert
    from tests.test_oracle import input_says, sdk_problems, sdk_rebuild

    data = path.read_bytes()
    middle, notes = convert(data, fmt, LLAMA)
    back = convert(middle, LLAMA, fmt)[0]
    assert _meaning(data, LLAMA) == _meaning(middle, fmt) == _meaning(back, LLAMA)
    assert sdk_problems(middle, fmt) == []
    assert sdk_rebuild(middle, fmt) == input_says(data, LLAMA)
    # The raw text of a call is bookkeeping, not a loss: only real fields are reported.
    lost = {note.message for note in notes.summary() if note.kind == "lost"}
    assert all("usage.llama_stack.metrics" in message for message in lost), lost

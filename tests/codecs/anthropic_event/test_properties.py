"""Property tests: random Anthropic streams survive chatx.

A random message: usage at the start (cache counts or not), then text blocks (unicode and
empty pieces), thinking blocks (with a signature or not, an empty delta before it or
not), redacted thinking, tool calls (random JSON input cut at random points, or no input),
pings anywhere, and a stop reason; sometimes the usage of message_delta repeats the
input counts. Then:

* anthropic → anthropic gives back the same JSON values;
* anthropic → chat → anthropic and anthropic → Responses → anthropic say the same;
* what convert writes passes ``chatx validate``;
* feeding the ``Transcoder`` the bytes in random pieces gives the same bytes as one feed.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatx import codecs
from chatx.errors import ChatxError
from chatx.pipeline import Transcoder
from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.builders.anthropic_event import (
    ANTHROPIC,
    PING,
    block_delta,
    block_start,
    block_stop,
    message_start,
    sse_events,
)
from tests.meaning import summarize
from tests.streams import CHAT, RESPONSES, convert, payloads
from tests.test_properties import SETTINGS, arguments, split_text

pieces = st.lists(st.text(max_size=6), min_size=1, max_size=5)
STOPS = ("end_turn", "max_tokens", "tool_use", "stop_sequence", "refusal")


@st.composite
def block(draw: st.DrawFn, index: int, call: int) -> list[dict[str, Any]]:
    kind = draw(st.sampled_from(["text", "thinking", "redacted", "tool"]))
    if kind == "text":
        deltas = [{"type": "text_delta", "text": p} for p in draw(pieces)]
        start: dict[str, Any] = {"type": "text", "text": ""}
    elif kind == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": p} for p in draw(pieces)]
        if draw(st.booleans()):
            deltas.append({"type": "thinking_delta", "thinking": ""})
        if draw(st.booleans()):
            deltas.append({"type": "signature_delta", "signature": f"c2ln{index}"})
        start = {"type": "thinking", "thinking": "", "signature": ""}
    elif kind == "redacted":
        return [
            block_start(index, {"type": "redacted_thinking", "data": f"ZGF0{index}"}),
            block_stop(index),
        ]
    else:
        text = draw(arguments) if draw(st.booleans()) else ""
        fragments = ["", *draw(split_text(text))] if text else [""]
        deltas = [{"type": "input_json_delta", "partial_json": f} for f in fragments]
        start = {"type": "tool_use", "id": f"toolu_{call}", "name": f"tool{call}", "input": {}}
    return [block_start(index, start), *(block_delta(index, d) for d in deltas), block_stop(index)]


@st.composite
def anthropic_stream(draw: st.DrawFn) -> list[dict[str, Any]]:
    counts = draw(st.tuples(st.integers(0, 5000), st.integers(0, 300), st.integers(0, 300)))
    usage: dict[str, Any] = {"input_tokens": counts[0]}
    if draw(st.booleans()):
        usage["cache_creation_input_tokens"] = counts[1]
        usage["cache_read_input_tokens"] = counts[2]
    usage["output_tokens"] = 1
    events: list[dict[str, Any]] = [message_start(f"msg_p{counts[0]}", usage=usage)]
    calls = 0
    for index in range(draw(st.integers(0, 4))):
        blocks = draw(block(index, calls))
        calls += blocks[0]["content_block"]["type"] == "tool_use"
        events += blocks
    end_usage = {"output_tokens": draw(st.integers(1, 900))}
    if draw(st.booleans()):
        end_usage = {**usage, **end_usage}
    # tool_use says the turn made calls: Responses has no word for it without one.
    stop = draw(st.sampled_from([w for w in STOPS if calls or w != "tool_use"]))
    delta = {"stop_reason": stop, "stop_sequence": "##" if stop == "stop_sequence" else None}
    events += [
        {"type": "message_delta", "delta": delta, "usage": end_usage},
        {"type": "message_stop"},
    ]
    for _ in range(draw(st.integers(0, 3))):
        events.insert(draw(st.integers(1, len(events) - 1)), dict(PING))
    return events


@SETTINGS
@given(anthropic_stream())
def test_anthropic_to_anthropic_gives_back_the_same_values(events):
    data = sse_events(events)
    out, notes = convert(data, ANTHROPIC, ANTHROPIC)
    assert payloads(out) == events
    assert [n for n in notes.summary() if n.kind in ("lost", "repaired")] == []


@SETTINGS
@given(anthropic_stream(), st.sampled_from([CHAT, RESPONSES]))
def test_anthropic_through_chat_or_responses_says_the_same(events, other):
    data = sse_events(events)
    middle, _ = convert(data, other, ANTHROPIC)
    back, _ = convert(middle, ANTHROPIC, other)
    assert summarize(back, ANTHROPIC) == summarize(data, ANTHROPIC)


@SETTINGS
@given(anthropic_stream(), st.sampled_from(codecs.names()))
def test_what_convert_writes_from_anthropic_validates(events, dst):
    out, _ = convert(sse_events(events), dst, ANTHROPIC)
    container, records = read_records(out)
    findings = validate_records(records, dst, container=container)
    assert [str(f) for f in findings if f.severity == "E"] == []


@st.composite
def input_and_cuts(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    events = draw(anthropic_stream())
    if draw(st.booleans()):
        data = "".join(json.dumps(e) + "\n" for e in events).encode()
    else:
        data = sse_events(events)
        if draw(st.booleans()):
            data = data.replace(b"\n", b"\r\n")
    return data, sorted(draw(st.sets(st.integers(0, len(data)), max_size=12)))


@SETTINGS
@given(input_and_cuts(), st.sampled_from(codecs.names()))
def test_feeding_in_pieces_gives_the_same_bytes(case, dst):
    data, cuts = case
    whole, _ = convert(data, dst, ANTHROPIC)
    transcoder = Transcoder(dst)
    bounds = [0, *cuts, len(data)]
    out = [transcoder.feed(data[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    out.append(transcoder.finish())
    assert b"".join(out) == whole


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A random Anthropic stream with bytes flipped, cut, repeated or inserted."""
    data = bytearray(sse_events(draw(anthropic_stream())))
    for _ in range(draw(st.integers(1, 6))):
        where = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["flip", "cut", "insert", "repeat"]))
        if action == "flip" and where < len(data):
            data[where] = draw(st.integers(0, 255))
        elif action == "cut":
            del data[where : where + draw(st.integers(1, 40))]
        elif action == "insert":
            snippets = [b"\n", b"{", b"}", b'"index": "x"', b'{"type": "error"}', b"[DONE]"]
            data[where:where] = draw(st.sampled_from(snippets))
        else:
            data[where:where] = data[where : where + draw(st.integers(1, 60))]
    return bytes(data)


@SETTINGS
@given(damaged(), st.sampled_from(codecs.names()), st.sampled_from([None, ANTHROPIC]))
def test_damaged_streams_raise_only_chatx_errors(data, dst, src):
    with contextlib.suppress(ChatxError):
        convert(data, dst, src)

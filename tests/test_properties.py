"""Property tests: random streams survive chatx, random bytes never crash it.

* Random chat chunk streams (text with unicode and empty pieces, optional reasoning under
  either field name, 0–3 tool calls with random JSON arguments split at random points, a
  finish reason, optional usage): chat → responses → chat and chat → chat say the same,
  and chat → chat gives back the same JSON values.
* Random Responses streams: responses → chat → responses says the same.
* Feeding the ``Transcoder`` the input in random pieces gives the same bytes as one feed.
* Random bytes (and damaged real streams) make ``convert`` raise ChatxError subclasses or
  nothing, never another exception.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx.errors import ChatxError
from chatx.pipeline import Transcoder
from tests.builders.chat_chunk import chunk
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.meaning import summarize
from tests.streams import CHAT, RESPONSES, convert, payloads, sse

ANTHROPIC = "anthropic-event"
EXAMPLES = int(os.environ.get("CHATX_PROPERTY_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

pieces = st.lists(st.text(max_size=6), max_size=6)
nonempty_pieces = st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=4)
names = st.from_regex(r"[a-z][a-z_0-9]{0,11}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=6), json_values, max_size=4).map(json.dumps)


@st.composite
def split_text(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random points (at least one piece)."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=4)))
    cuts = [c for c in cuts if 0 < c < len(text)]
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)] or [""]


@st.composite
def chat_stream(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = [chunk({"role": "assistant", "content": ""})]
    if draw(st.booleans()):
        field = draw(st.sampled_from(["reasoning_content", "reasoning"]))
        out += [chunk({field: piece}) for piece in draw(nonempty_pieces)]
    out += [chunk({"content": piece}) for piece in draw(pieces)]
    calls = draw(st.integers(0, 3))
    for index in range(calls):
        args = draw(split_text(draw(arguments)))
        first = {
            "index": index,
            "id": f"call_{index}_{draw(names)}",
            "type": "function",
            "function": {"name": draw(names), "arguments": args[0]},
        }
        out.append(chunk({"tool_calls": [first]}))
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in args[1:]
        ]
    finish = draw(st.sampled_from(["stop", "length", "tool_calls"]))
    if finish == "tool_calls" and not calls:
        finish = "stop"  # a tool_calls finish without a call says nothing Responses can
    out.append(chunk({}, finish))
    if draw(st.booleans()):
        prompt, completion = draw(st.integers(0, 10**5)), draw(st.integers(0, 10**5))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if draw(st.booleans()):
            usage["prompt_tokens_details"] = {"cached_tokens": draw(st.integers(0, prompt))}
            usage["completion_tokens_details"] = {
                "reasoning_tokens": draw(st.integers(0, completion))
            }
        out.append(chunk(choices=[], usage=usage))
    return out


@st.composite
def responses_stream(draw: st.DrawFn) -> ResponsesBuilder:
    rs = ResponsesBuilder()
    if draw(st.booleans()):
        rs.reasoning(*draw(nonempty_pieces), family=draw(st.sampled_from(["summary", "text"])))
    if draw(st.booleans()):
        rs.message(*draw(nonempty_pieces))
    for index in range(draw(st.integers(0, 3))):
        rs.call(draw(names), f"call_{index}", *draw(split_text(draw(arguments))))
    usage = None
    if draw(st.booleans()):
        inp, out = draw(st.integers(0, 10**5)), draw(st.integers(0, 10**5))
        usage = responses_usage(
            inp, out, inp + out, draw(st.integers(0, inp)), draw(st.integers(0, out))
        )
    if draw(st.booleans()):
        rs.end(usage=usage)
    else:
        rs.end(
            "incomplete",
            usage=usage,
            reason=draw(st.sampled_from(["max_output_tokens", "content_filter"])),
        )
    return rs


@SETTINGS
@given(chat_stream())
def test_chat_through_responses_says_the_same(chunks):
    data = sse(chunks)
    middle, _ = convert(data, RESPONSES, CHAT)
    back, _ = convert(middle, CHAT, RESPONSES)
    assert summarize(back, CHAT) == summarize(data, CHAT)


@SETTINGS
@given(chat_stream())
def test_chat_to_chat_gives_back_the_same_values(chunks):
    data = sse(chunks)
    out, _ = convert(data, CHAT, CHAT)
    assert payloads(out) == chunks
    assert summarize(out, CHAT) == summarize(data, CHAT)


@SETTINGS
@given(responses_stream())
def test_responses_through_chat_says_the_same(rs):
    data = rs.bytes()
    middle, _ = convert(data, CHAT, RESPONSES)
    back, _ = convert(middle, RESPONSES, CHAT)
    assert summarize(back, RESPONSES) == summarize(data, RESPONSES)


@SETTINGS
@given(responses_stream())
def test_responses_to_responses_gives_back_the_same_values(rs):
    out, _ = convert(rs.bytes(), RESPONSES, RESPONSES)
    assert payloads(out) == rs.events


@st.composite
def input_and_cuts(draw: st.DrawFn) -> tuple[bytes, str, list[int]]:
    if draw(st.booleans()):
        data, src = sse(draw(chat_stream())), CHAT
        if draw(st.booleans()):
            data = data.replace(b"\n", b"\r\n")
    else:
        data, src = draw(responses_stream()).bytes(events=draw(st.booleans())), RESPONSES
    cuts = sorted(draw(st.sets(st.integers(0, len(data)), max_size=12)))
    return data, src, cuts


@SETTINGS
@given(input_and_cuts(), st.sampled_from([CHAT, RESPONSES, ANTHROPIC]))
def test_feeding_in_pieces_gives_the_same_bytes(case, dst):
    data, src, cuts = case
    whole, _ = convert(data, dst, src)
    transcoder = Transcoder(dst)
    bounds = [0, *cuts, len(data)]
    out = [transcoder.feed(data[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    out.append(transcoder.finish())
    assert b"".join(out) == whole


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """Random bytes, or a valid stream with bytes flipped, cut, repeated or inserted."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=300))
    data = bytearray(
        sse(draw(chat_stream())) if draw(st.booleans()) else draw(responses_stream()).bytes()
    )
    for _ in range(draw(st.integers(1, 6))):
        where = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["flip", "cut", "insert", "repeat"]))
        if action == "flip" and where < len(data):
            data[where] = draw(st.integers(0, 255))
        elif action == "cut":
            del data[where : where + draw(st.integers(1, 40))]
        elif action == "insert":
            data[where:where] = draw(
                st.sampled_from(
                    [
                        b"\n",
                        b"\r",
                        b"data: ",
                        b"event: error\n",
                        b"{",
                        b"}",
                        b"\xff",
                        b"[DONE]",
                        b'"choices": null',
                        b'{"type": "response.created"}',
                        b"\x00",
                    ]
                )
            )
        else:
            data[where:where] = data[where : where + draw(st.integers(1, 60))]
    return bytes(data)


@SETTINGS
@given(
    damaged(),
    st.sampled_from([CHAT, RESPONSES, ANTHROPIC]),
    st.sampled_from([None, CHAT, RESPONSES, ANTHROPIC]),
)
def test_bad_bytes_raise_only_chatx_errors(data, dst, src):
    with contextlib.suppress(ChatxError):
        convert(data, dst, src)

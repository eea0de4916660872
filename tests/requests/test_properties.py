"""Properties of the request mappings, over random chat requests (hypothesis, in the house
style of tests/test_properties.py):

* read and written by chat, a body comes back with the same JSON values;
* sent to each other API, it is SDK-valid, keeps its meaning but for what was said lost,
  and comes back to chat saying the same (:func:`tests.requests.measure.across`);
* any JSON value read by any API's mapping is a request or an InputError, never another
  exception.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx import codecs
from chatx.errors import InputError
from tests.requests.measure import across, directions

EXAMPLES = int(os.environ.get("CHATX_PROPERTY_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TARGETS = [target for source, target in directions() if source == "chat-chunk"]

names = st.from_regex(r"[a-z][a-z_0-9]{0,11}", fullmatch=True)
texts = st.text(min_size=1, max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
arguments = st.dictionaries(names, json_values, max_size=3).map(json.dumps)


@st.composite
def turn(draw: st.DrawFn, number: int) -> list[dict[str, Any]]:
    """A user text, an assistant text, or an assistant's calls and their results."""
    kind = draw(st.sampled_from(["user", "assistant", "calls"]))
    if kind != "calls":
        return [{"role": kind, "content": draw(texts)}]
    calls = [
        {
            "id": f"call_{number}_{n}",
            "type": "function",
            "function": {"name": draw(names), "arguments": draw(arguments)},
        }
        for n in range(draw(st.integers(1, 3)))
    ]
    said: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
    results = [{"role": "tool", "tool_call_id": c["id"], "content": draw(texts)} for c in calls]
    return [said, *results]


@st.composite
def chat_requests(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(texts)})
    messages.append({"role": "user", "content": draw(texts)})
    for number in range(draw(st.integers(0, 4))):
        messages += draw(turn(number))
    body: dict[str, Any] = {"model": draw(names), "messages": messages}
    tool_names = sorted({c["function"]["name"] for m in messages for c in m.get("tool_calls", [])})
    if tool_names:
        schema = {"type": "object", "properties": {}}
        body["tools"] = [
            {"type": "function", "function": {"name": n, "parameters": schema}} for n in tool_names
        ]
    optional = {
        "temperature": st.floats(0, 1, allow_nan=False),
        "max_tokens": st.integers(1, 4000),
        "stop": st.lists(texts, min_size=1, max_size=3),
        "stream": st.booleans(),
        "user": names,
    }
    for key, values in optional.items():
        if draw(st.booleans()):
            body[key] = draw(values)
    return body


@SETTINGS
@given(chat_requests())
def test_a_chat_body_read_and_written_by_chat_is_the_same(body: dict[str, Any]) -> None:
    mapping = codecs.get("chat-chunk").requests
    assert mapping is not None
    read = mapping.read(body)
    assert mapping.write(read.body).body == body


@SETTINGS
@given(chat_requests(), st.sampled_from(TARGETS))
def test_a_chat_body_sent_to_another_api_keeps_its_meaning(
    body: dict[str, Any], target: str
) -> None:
    outcome = across("random", body, "chat-chunk", target)
    assert outcome.errors == []
    assert outcome.kept, outcome.differs
    assert outcome.round_trip, outcome.differs


@SETTINGS
@given(json_values, st.sampled_from([c.name for c in codecs.CODECS if c.requests is not None]))
def test_any_json_is_a_request_or_an_input_error(value: Any, codec: str) -> None:
    mapping = codecs.get(codec).requests
    assert mapping is not None
    for body in (value, {"model": "m", "messages": value, "input": value}):
        with contextlib.suppress(InputError):
            mapping.read(body)

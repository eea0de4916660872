"""Every request body, real (../shared/requests) and hand-written, sent to every other
API: valid for that API's SDK request type, its meaning kept but for what was said lost,
and A → B → A saying what A said but for the losses either way (:mod:`.measure`).

A source with no model (3 bodies) is checked with one filled in: the SDK types require
it, and the mapping cannot invent it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from chatx.request import Message, Request
from tests.requests import sdk
from tests.requests.bodies import FOLDERS, REQUESTS, fixtures, load
from tests.requests.measure import across, directions, mapping, meaning

DIRECTIONS = directions()


def _cases() -> list[Any]:
    cases = []
    for source, target in DIRECTIONS:
        for param in fixtures(source):
            name, body = param.values
            cases.append(pytest.param(source, target, name, body, id=f"{target}-{name}"))
        folder = REQUESTS / FOLDERS[source]
        if not REQUESTS.is_dir():
            reason = f"{REQUESTS} is absent"
            cases.append(
                pytest.param(source, target, "", None, marks=pytest.mark.skip(reason=reason))
            )
            continue
        for path in sorted(folder.glob("*.json")):
            cases.append(
                pytest.param(source, target, path.name, load(path), id=f"{target}-{path.stem}")
            )
    return cases


@pytest.mark.parametrize(("source", "target", "name", "body"), _cases())
def test_a_body_sent_to_another_api(source: str, target: str, name: str, body: Any) -> None:
    outcome = across(name, body, source, target)
    assert outcome.errors == [], outcome.errors
    assert outcome.kept, outcome.differs
    assert outcome.round_trip, outcome.differs


def test_every_direction_between_the_five_apis_is_measured() -> None:
    assert len(DIRECTIONS) == 20


def test_a_loss_not_said_is_seen() -> None:
    """The meaning check fails a translation that drops a turn without saying so, and
    passes it once the loss is said."""
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
    }
    request: Request = mapping("chat-chunk").read(body).body
    dropped = dataclasses.replace(request, turns=request.turns[:1])
    assert meaning(request, []) != meaning(dropped, [])
    assert meaning(request, ["turns[1] (said)"]) == meaning(dropped, [])
    changed = dataclasses.replace(
        request,
        turns=[request.turns[0], Message(role="assistant", parts=request.turns[1].parts)],  # type: ignore[union-attr]
    )
    assert meaning(request, []) != meaning(changed, [])


def test_the_sdk_check_walks_what_it_validates() -> None:
    """A TypeAdapter validates an Iterable lazily: a bad message passes until walked."""
    bad = {"model": "m", "messages": [{"role": "robot", "content": 3}]}
    assert sdk.errors("chat-chunk", bad, walked=False) == []
    assert sdk.errors("chat-chunk", bad) != []
    bad_block = {
        "model": "claude",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text"}]}],
    }
    assert sdk.errors("anthropic-event", bad_block, walked=False) == []
    assert sdk.errors("anthropic-event", bad_block) != []
    bad_tool = {"model": "gpt", "input": "hi", "tools": [{"type": "function"}]}
    assert sdk.errors("responses-event", bad_tool, walked=False) == []
    assert sdk.errors("responses-event", bad_tool) != []

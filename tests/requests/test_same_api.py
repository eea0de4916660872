"""A → A: a request body read and written by the same API's mapping gives back the same
JSON values, and says nothing lost, for every real body in ../shared/requests and every
hand-written one here."""

from __future__ import annotations

from typing import Any

import pytest

from chatx import codecs
from tests.requests.bodies import FOLDERS, fixtures, shared_bodies

MAPPED = [name for name in FOLDERS if codecs.get(name).requests is not None]


def same(codec: str, body: Any) -> None:
    mapping = codecs.get(codec).requests
    assert mapping is not None
    read = mapping.read(body)
    written = mapping.write(read.body)
    assert read.lost == [] and written.lost == []
    assert written.body == body
    assert list(written.body) == list(body)  # the source's key order too


@pytest.mark.parametrize("codec", MAPPED)
def test_hand_written_bodies_come_back_the_same(codec: str) -> None:
    for param in fixtures(codec):
        name, body = param.values
        same(codec, body)


@pytest.mark.parametrize(("name", "body"), shared_bodies("chat-chunk"))
def test_real_chat_bodies_come_back_the_same(name: str, body: Any) -> None:
    same("chat-chunk", body)


@pytest.mark.parametrize(("name", "body"), shared_bodies("responses-event"))
def test_real_responses_bodies_come_back_the_same(name: str, body: Any) -> None:
    same("responses-event", body)


@pytest.mark.parametrize(("name", "body"), shared_bodies("anthropic-event"))
def test_real_anthropic_bodies_come_back_the_same(name: str, body: Any) -> None:
    same("anthropic-event", body)

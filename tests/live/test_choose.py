"""Which capture ``chatx serve`` answers with: the X-Chatx-Capture header, else the
recorded request equal to the body, else the model, else the next in order."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from chatx.errors import UsageError
from chatx.live.choose import Chooser
from chatx.live.endpoints import by_path
from chatx.live.errors import ApiError
from chatx.live.served_captures import load
from tests.live.support import FIXTURES, Running, post, serving

CHAT = by_path("/v1/chat/completions")
LLAMA = by_path("/v1/inference/chat-completion")
ASK_ONE = {"model": "m-one", "messages": [{"role": "user", "content": "first question"}]}
ASK_TWO = {"model": "m-two", "messages": [{"role": "user", "content": "second question"}]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rec/: a.sse (request ASK_ONE), b.sse (request ASK_TWO), c.jsonl and d.sse (no
    request; d's stream says model gpt-test-2026, as c's Llama Stack stream says none)."""
    top = tmp_path_factory.mktemp("captures") / "rec"
    top.mkdir()
    for name, source, request in (
        ("a.sse", "chat-chunk/text.sse", {**ASK_ONE, "stream": True}),
        ("b.sse", "chat-chunk/tool-call-parallel.sse", {**ASK_TWO, "stream": True}),
        ("c.jsonl", "llama-stack-event/text.jsonl", None),
        ("d.sse", "responses-event/text.sse", None),
    ):
        shutil.copyfile(FIXTURES / source, top / name)
        if request is not None:
            (top / f"{name}.request.json").write_bytes(orjson.dumps(request))
    return top


@pytest.fixture
def chooser(folder: Path) -> Chooser:
    return Chooser(load([str(folder)]))


def names(chooser: Chooser, body: dict, times: int, endpoint=CHAT) -> list[str]:
    return [chooser.choose(None, body, endpoint).name for _ in range(times)]


def test_names_and_order(chooser: Chooser) -> None:
    assert [c.name for c in chooser.captures] == [
        "rec/a.sse",
        "rec/b.sse",
        "rec/c.jsonl",
        "rec/d.sse",
    ]
    assert [c.model for c in chooser.captures] == ["m-one", "m-two", None, "gpt-test-2026"]


def test_recorded_request_equal_to_the_body(chooser: Chooser) -> None:
    # Streaming on or off, a secret in the body: the recording has neither.
    for body in (ASK_TWO, {**ASK_TWO, "stream": False}, {**ASK_TWO, "api_key": "sk-x"}):
        assert names(chooser, body, 2) == ["rec/b.sse", "rec/b.sse"]
    changed = {**ASK_TWO, "messages": [{"role": "user", "content": "other"}]}
    assert names(chooser, changed, 1) == ["rec/b.sse"]  # by its model, rule 3


def test_model_then_next_in_order(chooser: Chooser) -> None:
    assert names(chooser, {"model": "gpt-test-2026"}, 2) == ["rec/d.sse", "rec/d.sse"]
    unknown = {"model": "nobody", "messages": []}
    assert names(chooser, unknown, 5) == [
        "rec/a.sse",
        "rec/b.sse",
        "rec/c.jsonl",
        "rec/d.sse",
        "rec/a.sse",
    ]
    assert names(chooser, {"model_id": "m-two"}, 1, LLAMA) == ["rec/b.sse"]


def test_same_model_captures_take_turns(folder: Path, tmp_path: Path) -> None:
    shutil.copytree(folder, tmp_path / "two")
    (tmp_path / "two" / "b.sse.request.json").write_bytes(orjson.dumps(ASK_ONE))
    chooser = Chooser(load([str(tmp_path / "two")]))
    body = {"model": "m-one", "messages": []}
    assert names(chooser, body, 3) == ["two/a.sse", "two/b.sse", "two/a.sse"]


@pytest.mark.parametrize("header", ["rec/c.jsonl", "rec/c", "c.jsonl", "c"])
def test_header_names_a_capture(chooser: Chooser, header: str) -> None:
    assert chooser.choose(header, ASK_ONE, CHAT).name == "rec/c.jsonl"


def test_header_unknown_or_ambiguous(folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    shutil.copyfile(folder / "a.sse", other / "a.sse")
    chooser = Chooser(load([str(folder), str(other)]))
    with pytest.raises(ApiError) as raised:
        chooser.choose("a", {}, CHAT)
    assert raised.value.status == 400 and raised.value.code == "ambiguous_capture"
    assert "rec/a.sse, other/a.sse" in raised.value.message
    assert chooser.choose("other/a", {}, CHAT).name == "other/a.sse"
    with pytest.raises(ApiError) as raised:
        chooser.choose("zzz", {}, CHAT)
    assert raised.value.status == 404 and raised.value.code == "capture_not_found"


def test_two_directories_of_one_name_are_refused(folder: Path, tmp_path: Path) -> None:
    shutil.copytree(folder, tmp_path / "rec")
    with pytest.raises(UsageError, match="two captures named 'rec/a.sse'"):
        load([str(folder), str(tmp_path / "rec")])


# -- over HTTP -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[Running]:
    with serving([str(folder)]) as (running, _):
        yield running


def test_header_over_http(served: Running) -> None:
    got = post(f"{served.url}/v1/chat/completions", {"stream": True}, "rec/b")
    assert got.headers["x-chatx-capture"] == "rec/b.sse"
    assert got.content == (FIXTURES / "chat-chunk/tool-call-parallel.sse").read_bytes()
    missing = post(f"{served.url}/v1/chat/completions", {"stream": True}, "nope")
    assert missing.status_code == 404
    error = missing.json()["error"]
    assert error["code"] == "capture_not_found" and error["param"] == "x-chatx-capture"
    assert error["type"] == "invalid_request_error" and "'nope'" in error["message"]


def test_recorded_request_over_http(served: Running) -> None:
    got = post(f"{served.url}/v1/chat/completions", {**ASK_ONE, "stream": False})
    assert got.headers["x-chatx-capture"] == "rec/a.sse"
    assert got.json()["choices"][0]["message"]["content"] == "Hello, world!"

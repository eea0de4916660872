"""Record on miss: ``chatx serve DIR --upstream URL --record-mode new`` answers what it
has, forwards a miss to the upstream as ``chatx proxy`` does and records the answer into
DIR, for the next run to replay with the upstream gone: byte for byte what the first
run's client read. The upstream is a stand-in this test serves on a free loopback port."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import openai
import orjson
import pytest

from chatx.live import asgi
from chatx.live.app import ServeApp
from chatx.live.served_captures import load
from chatx.live.upstream import Upstream
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, TIMEOUT, Running, post
from tests.live.test_signals import start, stop

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123"
CHAT = "/v1/chat/completions"


class StandIn:
    """An upstream that answers chat requests with the question's words as the answer,
    streamed or whole, and remembers what it was asked."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bytes, dict[str, str]]] = []

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        if scope["type"] != "http":
            return
        body = await asgi.read_body(receive)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.seen.append((scope["path"] + "?" + scope["query_string"].decode(), body, headers))
        request = orjson.loads(body)
        words = request["messages"][-1]["content"].split()
        if not request.get("stream"):
            final = {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 7,
                "model": request["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": " ".join(words)},
                        "finish_reason": "stop",
                    }
                ],
            }
            await asgi.respond(send, 200, orjson.dumps(final))
            return
        await asgi.start_stream(send, 200, [(b"content-type", b"text/event-stream")])
        for word in [*words, None]:
            chunk = {
                "id": "cmpl-2",
                "object": "chat.completion.chunk",
                "created": 7,
                "model": request["model"],
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": word} if word else {},
                        "finish_reason": None if word else "stop",
                    }
                ],
            }
            await asgi.send_piece(send, b"data: " + orjson.dumps(chunk) + b"\n\n")
        await asgi.send_piece(send, b"data: [DONE]\n\n")
        await asgi.end_stream(send)


@contextmanager
def serve(folder: Path, upstream: str | None, **options: Any) -> Iterator[Running]:
    app = ServeApp(
        load([str(folder)], none_is_fine=True),
        upstream=Upstream.parse(upstream, "--upstream") if upstream else None,
        record=folder,
        **options,
    )
    with Running(app, lifespan="on") as running:
        yield running


def ask(url: str, question: str, stream: bool) -> bytes:
    body = {"model": "m", "messages": [{"role": "user", "content": question}], "stream": stream}
    answer = post(f"{url}{CHAT}", body, authorization=f"Bearer {KEY}")
    assert answer.status_code == 200, answer.content
    return answer.content


QUESTIONS = [("a red sky", True), ("green grass", False), ("blue sea", True)]


def test_run_one_records_and_run_two_replays_byte_identical(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    stand_in = StandIn()
    with Running(stand_in) as upstream:
        with serve(folder, upstream.url, on_miss="upstream", record_mode="new") as one:
            first = [ask(one.url, q, s) for q, s in QUESTIONS]
            again = ask(one.url, "a red sky", True)  # recorded in this run: replayed
        upstream_url = upstream.url
    assert len(stand_in.seen) == 3
    assert again == first[0]
    assert b"a" in first[0] and b"green grass" in first[1]
    # Every answer is a capture with its request; no key reached the disk.
    files = sorted(p.name for p in folder.iterdir())
    assert len([f for f in files if f.endswith((".sse", ".json")) and ".request" not in f]) == 3
    for path in folder.iterdir():
        assert KEY.encode() not in path.read_bytes()
    # Run 2: the upstream is gone; each request gets what run 1's client read.
    with serve(folder, None, on_miss="error") as two:
        second = [ask(two.url, q, s) for q, s in reversed(QUESTIONS)]
    assert list(reversed(second)) == first
    # Nothing listens at the old upstream any more: run 2 could not have asked it.
    with pytest.raises(httpx2.ConnectError):
        httpx2.post(f"{upstream_url}{CHAT}", content=b"{}", timeout=TIMEOUT)


def test_the_upstream_gets_the_api_path_and_the_clients_key(tmp_path: Path) -> None:
    stand_in = StandIn()
    with (
        Running(stand_in) as upstream,
        serve(tmp_path, f"{upstream.url}/v1", on_miss="upstream", record_mode="new") as one,
        openai.OpenAI(base_url=f"{one.url}/v1", api_key=KEY, max_retries=0) as client,
    ):
        answer = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hello there"}]
        )
    assert answer.choices[0].message.content == "hello there"
    # A base ending in /v1 takes the API's path once, as the proxy's does.
    assert [seen[0] for seen in stand_in.seen] == ["/v1/chat/completions?"]
    assert stand_in.seen[0][2]["authorization"] == f"Bearer {KEY}"


def test_record_mode_none_forwards_and_writes_nothing(tmp_path: Path) -> None:
    stand_in = StandIn()
    with (
        Running(stand_in) as upstream,
        serve(tmp_path, upstream.url, on_miss="upstream", record_mode="none") as one,
    ):
        ask(one.url, "one", True)
        ask(one.url, "one", True)
    assert len(stand_in.seen) == 2
    assert list(tmp_path.iterdir()) == []


def test_record_mode_all_forwards_what_matches_too(tmp_path: Path) -> None:
    stand_in = StandIn()
    with Running(stand_in) as upstream:
        with serve(tmp_path, upstream.url, on_miss="upstream", record_mode="new") as one:
            ask(one.url, "one two", True)
        with serve(tmp_path, upstream.url, on_miss="upstream", record_mode="all") as again:
            ask(again.url, "one two", True)
    assert len(stand_in.seen) == 2
    assert len([p for p in tmp_path.iterdir() if p.name.endswith(".sse")]) == 2


def test_an_upstream_that_is_gone_is_a_502(tmp_path: Path) -> None:
    with Running(StandIn()) as upstream:
        gone = upstream.url
    with serve(tmp_path, gone, on_miss="upstream", record_mode="new") as one:
        answer = post(f"{one.url}{CHAT}", {"model": "m", "messages": []})
    assert answer.status_code == 502
    assert orjson.loads(answer.content)["error"]["message"].startswith("chatx proxy: upstream")
    assert list(tmp_path.iterdir()) == []


def test_an_upstream_that_is_gone_answers_each_client_in_its_apis_shape(tmp_path: Path) -> None:
    """The 502 chatx makes is read by the client that asked: the anthropic SDK sees an
    Anthropic error body, not OpenAI's."""
    with Running(StandIn()) as upstream:
        gone = upstream.url
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    with serve(tmp_path, gone, on_miss="upstream", record_mode="new") as one:
        answer = post(f"{one.url}/v1/messages", body, **{"x-api-key": KEY})
    assert answer.status_code == 502
    error = orjson.loads(answer.content)
    assert error["type"] == "error"
    assert error["error"]["message"].startswith("chatx proxy: upstream")
    assert KEY not in answer.text
    assert list(tmp_path.iterdir()) == []


def test_the_command_records_from_its_upstream_and_replays_without_it(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "cassettes"  # made by the command
    with Running(StandIn()) as upstream:
        proc, url = start("serve", str(folder), "--upstream", upstream.url)
        try:
            read = ask(url, "from the command", True)
        finally:
            said = stop(proc, signal.SIGTERM)
    assert f"POST /v1/chat/completions -> 200, recorded {folder}/" in said
    proc, url = start("serve", str(folder), "--on-miss", "error")
    try:
        assert ask(url, "from the command", True) == read
    finally:
        stop(proc, signal.SIGTERM)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--on-miss", "upstream"], "--on-miss upstream forwards to an upstream: give --upstream"),
        (["--record-mode", "new"], "--record-mode new forwards to an upstream: give --upstream"),
        (["--record-mode", "some"], "--record-mode: none, new or all (not 'some')"),
        (["--on-miss", "later"], "--on-miss: next, error or upstream (not 'later')"),
        (["--upstream", "http://127.0.0.1:9", "--on-miss", "error"], "--on-miss upstream"),
        (["--upstream", "ftp://h"], "--upstream: an http:// or https:// URL"),
        (
            ["--upstream", "http://127.0.0.1:9", "--record-mode", "all"],
            "records into the first PATH, a directory",
        ),
    ],
)
def test_options_that_do_not_go_together(args: list[str], says: str) -> None:
    result = run(["serve", str(FIXTURES / "chat-chunk" / "text.sse"), *args])
    assert_clean(result, {2})
    assert says in result.err

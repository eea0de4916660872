"""The gateway's machinery (``chatx proxy --upstream-api``), over a small request mapping
of the tests' own (:mod:`tests.live.toy_requests`) so that what is tested is the gateway,
not a codec's mapping: where a translated request goes and with which key, the answer
streamed event by event, whole answers, errors, losses, --strict, --model, the store and
custom tools, recording."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest

from tests.live.gateway_support import (
    USAGE,
    Answer,
    Scripted,
    chat_call,
    chat_text,
    gateway,
    sse,
)
from tests.live.support import TIMEOUT
from tests.live.toy_requests import installing

KEY = "sk-gateway-test-SECRET-1234"
ASK: dict[str, Any] = {"model": "gpt-test", "input": "hi", "stream": True}


@pytest.fixture(autouse=True)
def toy() -> Iterator[None]:
    with installing():
        yield


def events(text: str) -> list[dict[str, Any]]:
    """The payloads of an SSE body."""
    out = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(orjson.loads(line[6:]))
    return out


def post(url: str, body: Any, **headers: str) -> httpx2.Response:
    sent = {"authorization": f"Bearer {KEY}", **headers}
    return httpx2.post(url, content=orjson.dumps(body), headers=sent, timeout=TIMEOUT)


def test_a_responses_request_goes_to_the_chat_path_as_chat() -> None:
    upstream = Scripted(Answer(chat_text("Hel", "lo")))
    with gateway(upstream, "chat") as (proxy, said):
        got = post(f"{proxy.url}/v1/responses", ASK)
    assert got.status_code == 200
    assert got.headers["content-type"].startswith("text/event-stream")
    (asked,) = upstream.got
    assert asked.path == "/v1/chat/completions"
    assert asked.body["messages"] == [{"role": "user", "content": "hi"}]
    assert asked.headers[b"authorization"] == f"Bearer {KEY}".encode()
    sent = events(got.text)
    assert sent[0]["type"] == "response.created"
    assert "".join(e["delta"] for e in sent if e["type"] == "response.output_text.delta") == "Hello"
    done = sent[-1]
    assert done["type"] == "response.completed"
    assert done["response"]["usage"]["input_tokens"] == USAGE["prompt_tokens"]
    assert "x-chatx-lost" not in got.headers
    assert any("POST /v1/responses as chat -> 200" in line for line in said)


def test_each_event_is_sent_as_the_upstream_sends_it() -> None:
    """The upstream holds back the rest of its stream until the client has read the
    first text: a gateway that waited for the whole stream would never send it."""
    gate = threading.Event()
    upstream = Scripted(Answer(chat_text("first", "second"), gate=gate, gate_after=2))
    with (
        gateway(upstream, "chat") as (proxy, _),
        httpx2.Client(timeout=TIMEOUT) as http,
        http.stream("POST", f"{proxy.url}/v1/responses", content=orjson.dumps(ASK)) as response,
    ):
        read = ""
        lines = response.iter_lines()
        for line in lines:
            read += line + "\n"
            if '"delta":"first"' in line:
                break
        assert '"delta":"second"' not in read
        gate.set()
        read += "\n".join(lines)
    assert '"delta":"second"' in read and "response.completed" in read


def test_a_whole_answer_is_the_clients_final_object() -> None:
    upstream = Scripted(Answer(chat_text("Hello")))
    with gateway(upstream, "chat") as (proxy, _):
        got = post(f"{proxy.url}/v1/responses", {**ASK, "stream": False})
    assert got.status_code == 200
    response = got.json()
    assert response["object"] == "response" and response["status"] == "completed"
    assert response["output"][0]["content"][0]["text"] == "Hello"
    assert response["usage"]["total_tokens"] == USAGE["total_tokens"]
    assert upstream.got[0].body["stream"] is False


def test_an_upstream_error_keeps_its_status_in_the_clients_shape() -> None:
    said = {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}
    answer = Answer(
        [orjson.dumps(said)],
        status=429,
        content_type=b"application/json",
        headers=[(b"retry-after", b"7")],
    )
    with gateway(Scripted(answer), "chat") as (proxy, _):
        got = post(f"{proxy.url}/v1/responses", ASK)
    assert got.status_code == 429
    assert got.headers["retry-after"] == "7"
    error = got.json()["error"]
    assert error["message"] == "slow down" and error["code"] == "rate_limit_exceeded"


def test_a_stream_broken_off_ends_in_the_clients_error_events() -> None:
    chunks = chat_text("Hel", "lo")[:2]
    with gateway(Scripted(Answer(chunks, cut=True)), "chat") as (proxy, said):
        got = post(f"{proxy.url}/v1/responses", ASK)
    sent = events(got.text)
    kinds = [e["type"] for e in sent]
    assert "response.output_text.delta" in kinds
    assert kinds[-1] == "response.failed"
    assert "the upstream stopped" in sent[-1]["response"]["error"]["message"]
    assert any("the client's stream ends in an error" in line for line in said)


def test_a_loss_is_said_on_stderr_and_in_a_header() -> None:
    ask = {**ASK, "tools": [{"type": "web_search"}]}
    with gateway(Scripted(Answer(chat_text("ok"))), "chat") as (proxy, said):
        got = post(f"{proxy.url}/v1/responses", ask)
    assert got.status_code == 200
    assert got.headers["x-chatx-lost"] == "tools[0] (web_search)"
    assert "POST /v1/responses as chat: lost: tools[0] (web_search)" in said


def test_strict_refuses_a_loss_in_the_clients_shape() -> None:
    upstream = Scripted(Answer(chat_text("ok")))
    ask = {**ASK, "tools": [{"type": "web_search"}]}
    with gateway(upstream, "chat", strict=True) as (proxy, _):
        got = post(f"{proxy.url}/v1/responses", ask)
    assert got.status_code == 400
    error = got.json()["error"]
    assert error["code"] == "lost_in_translation" and error["param"] == "tools[0] (web_search)"
    assert "tools[0] (web_search)" in error["message"]
    assert upstream.got == []


def test_model_rules_and_the_upstream_key() -> None:
    upstream = Scripted(Answer(chat_text("ok")))
    rules = ["gpt-5*=five", "*=anything-else"]
    with gateway(upstream, "chat", models=rules, key="sk-upstream-own") as (proxy, _):
        post(f"{proxy.url}/v1/responses", {**ASK, "model": "gpt-5-codex"})
        post(f"{proxy.url}/v1/responses", ASK)
        # the upstream's own API: forwarded as it came, but for the model and the key
        post(f"{proxy.url}/v1/chat/completions", {"model": "gpt-5", "messages": []})
    assert [g.body["model"] for g in upstream.got] == ["five", "anything-else", "five"]
    assert {g.headers[b"authorization"] for g in upstream.got} == {b"Bearer sk-upstream-own"}


def test_a_request_that_cannot_be_read_is_a_400_in_the_clients_shape() -> None:
    upstream = Scripted(Answer(chat_text("ok")))
    with gateway(upstream, "chat") as (proxy, _):
        got = httpx2.post(f"{proxy.url}/v1/responses", content=b"{not json", timeout=TIMEOUT)
    assert got.status_code == 400 and "error" in got.json()
    assert upstream.got == []


CUSTOM_TOOLS = [
    {
        "type": "custom",
        "name": "apply_patch",
        "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/s"},
    },
    {
        "type": "namespace",
        "name": "agents",
        "description": "sub-agents",
        "tools": [{"type": "function", "name": "spawn", "parameters": {"type": "object"}}],
    },
]
PATCH = '*** Begin Patch\n*** Update File: a.py\n-print(1)\n+print("hi")\n*** End Patch'


def test_a_custom_tools_call_comes_back_as_raw_input() -> None:
    arguments = orjson.dumps({"input": PATCH}).decode()
    pieces = [arguments[i : i + 7] for i in range(0, len(arguments), 7)]
    upstream = Scripted(Answer(chat_call("call_1", "apply_patch", *pieces)))
    ask = {**ASK, "tools": CUSTOM_TOOLS}
    with gateway(upstream, "chat") as (proxy, _):
        got = post(f"{proxy.url}/v1/responses", ask)
        whole = post(f"{proxy.url}/v1/responses", {**ask, "stream": False})
    offered = [t["function"]["name"] for t in upstream.got[0].body["tools"]]
    assert offered == ["apply_patch", "agents__spawn"]
    sent = events(got.text)
    deltas = [e["delta"] for e in sent if e["type"] == "response.custom_tool_call_input.delta"]
    assert len(deltas) > 3 and "".join(deltas) == PATCH
    (done,) = [e for e in sent if e["type"] == "response.custom_tool_call_input.done"]
    assert done["input"] == PATCH
    added = [e["item"] for e in sent if e["type"] == "response.output_item.added"]
    assert added[0]["type"] == "custom_tool_call" and added[0]["name"] == "apply_patch"
    final = sent[-1]["response"]["output"][0]
    assert final == {**final, "type": "custom_tool_call", "input": PATCH, "call_id": "call_1"}
    assert not any(e["type"].startswith("response.function_call") for e in sent)
    assert whole.json()["output"][0]["input"] == PATCH


def test_a_namespace_members_call_comes_back_under_its_own_name() -> None:
    upstream = Scripted(Answer(chat_call("call_2", "agents__spawn", '{"task":', '"x"}')))
    with gateway(upstream, "chat") as (proxy, _):
        got = post(f"{proxy.url}/v1/responses", {**ASK, "tools": CUSTOM_TOOLS})
    sent = events(got.text)
    final = sent[-1]["response"]["output"][0]
    assert final["type"] == "function_call"
    assert (final["name"], final["namespace"], final["arguments"]) == (
        "spawn",
        "agents",
        '{"task":"x"}',
    )
    (args_done,) = [e for e in sent if e["type"] == "response.function_call_arguments.done"]
    assert args_done["name"] == "spawn"


def test_previous_response_id_sends_the_whole_history(tmp_path: Path) -> None:
    upstream = Scripted(Answer(chat_text("first answer")), Answer(chat_text("second answer")))
    with gateway(upstream, "chat", store=tmp_path / "store.sqlite") as (proxy, _):
        first = events(post(f"{proxy.url}/v1/responses", ASK).text)[-1]["response"]
        rid = first["id"]
        assert first["store"] is True
        follow = {**ASK, "input": "and then?", "previous_response_id": rid}
        second = events(post(f"{proxy.url}/v1/responses", follow).text)[-1]["response"]
        kept = httpx2.get(f"{proxy.url}/v1/responses/{rid}", timeout=TIMEOUT)
        gone = httpx2.delete(f"{proxy.url}/v1/responses/{rid}", timeout=TIMEOUT)
        again = httpx2.get(f"{proxy.url}/v1/responses/{rid}", timeout=TIMEOUT)
        stale = post(f"{proxy.url}/v1/responses", follow)
    assert upstream.got[1].body["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "and then?"},
    ]
    assert second["previous_response_id"] == rid
    assert kept.status_code == 200 and kept.json() == first
    assert gone.json() == {"id": rid, "object": "response", "deleted": True}
    assert again.status_code == 404 and again.json()["error"]["param"] == "response_id"
    assert stale.status_code == 400
    assert stale.json()["error"]["code"] == "previous_response_not_found"


def test_store_false_keeps_nothing(tmp_path: Path) -> None:
    upstream = Scripted(Answer(chat_text("not kept")))
    with gateway(upstream, "chat", store=tmp_path / "store.sqlite") as (proxy, _):
        response = events(post(f"{proxy.url}/v1/responses", {**ASK, "store": False}).text)[-1]
        rid = response["response"]["id"]
        got = httpx2.get(f"{proxy.url}/v1/responses/{rid}", timeout=TIMEOUT)
    assert response["response"]["store"] is False
    assert got.status_code == 404


def test_without_a_store_previous_response_id_is_refused() -> None:
    upstream = Scripted(Answer(chat_text("x")))
    with gateway(upstream, "chat") as (proxy, _):
        got = post(f"{proxy.url}/v1/responses", {**ASK, "previous_response_id": "resp_1"})
    assert got.status_code == 400 and got.json()["error"]["param"] == "previous_response_id"
    assert upstream.got == []


def test_recorded_is_what_the_upstream_sent_beside_the_translated_request(tmp_path: Path) -> None:
    answer = chat_text("rec", "orded")
    upstream = Scripted(Answer(answer))
    ask = {**ASK, "metadata": {"api_key": "sk-body-SECRET-123456789"}}
    with gateway(upstream, "chat", tmp_path) as (proxy, _):
        post(f"{proxy.url}/v1/responses", ask)
    (capture,) = tmp_path.glob("*-chat-completions.sse")
    assert capture.read_bytes() == b"".join(answer)
    request = orjson.loads(Path(f"{capture}.request.json").read_bytes())
    assert request == upstream.got[0].body
    # The sidecar says how long the upstream's head took, as proxy's and capture's do, so
    # serve --timing recorded replays that wait (it had no "head", read as no wait).
    timing = orjson.loads(Path(f"{capture}.timing").read_bytes())
    assert timing["head"] >= 0 and timing["arrived"][-1][0] == capture.stat().st_size
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes()
        assert b"sk-body-SECRET" not in path.read_bytes()


def test_an_error_event_mid_stream_reaches_the_client_as_its_own() -> None:
    chunks = sse(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": "x"}, "finish_reason": None}
            ],
        },
        {"error": {"message": "overloaded", "type": "server_error", "code": 503}},
    )
    with gateway(Scripted(Answer(chunks)), "chat") as (proxy, _):
        sent = events(post(f"{proxy.url}/v1/responses", ASK).text)
    assert sent[-1]["type"] == "response.failed"
    assert sent[-1]["response"]["error"]["message"] == "overloaded"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--upstream-api", "nope"], "--upstream-api: unknown API 'nope'"),
        (["--upstream-api", "chat", "--model", "no-equals"], "--model: CLIENT=UPSTREAM"),
        (["--upstream-api", "chat", "--model", "=x"], "--model: CLIENT=UPSTREAM"),
        (["--strict"], "--strict: only with --upstream-api"),
        (["--model", "a=b", "--store", "none"], "--model, --store: only with --upstream-api"),
        (
            ["--upstream-api", "chat", "--upstream-key-env", "CHATX_TEST_UNSET_KEY"],
            "--upstream-key-env: $CHATX_TEST_UNSET_KEY is not set",
        ),
    ],
)
def test_gateway_options_are_checked_before_anything_starts(
    args: list[str], said: str, tmp_path: Path
) -> None:
    from tests.inprocess import run

    got = run(["proxy", "--upstream", "http://127.0.0.1:9", "--port", "0", *args])
    assert got.code == 2
    assert said in got.err
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_cannot_be_opened_is_a_usage_error(tmp_path: Path) -> None:
    from tests.inprocess import run

    planted = tmp_path / "store.sqlite"
    planted.symlink_to(tmp_path / "elsewhere")
    got = run(
        ["proxy", "--upstream", "http://127.0.0.1:9", "--upstream-api", "chat", "--port", "0"]
        + ["--store", str(planted)]
    )
    assert got.code == 2 and "is a symlink" in got.err
    assert not (tmp_path / "elsewhere").exists()

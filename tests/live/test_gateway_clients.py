"""Real clients through the gateway (``chatx proxy --upstream-api``), each over an
upstream of another API that the test starts on a free loopback port and that keeps what
it receives: the upstream gets a request its API's SDK types accept, and the client gets
the upstream's answer with its meaning kept (texts, tool calls and their arguments, usage).
The codecs' own request mappings are used, as the command uses them."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import openai
import orjson
import pytest

from tests.live.gateway_support import (
    USAGE,
    Answer,
    Scripted,
    assert_valid,
    chat_call,
    chat_text,
    gateway,
)
from tests.live.support import FIXTURES

KEY = "sk-client-SECRET-0001"
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def test_openai_responses_stream_with_tools_over_chat() -> None:
    upstream = Scripted(
        Answer(chat_call("call_w1", "get_weather", '{"city"', ': "Paris"}')),
        Answer(chat_text("It is sunny ", "in Paris.")),
    )
    with (
        gateway(upstream, "chat") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as client,
    ):
        asked = [{"role": "user", "content": "Weather in Paris?"}]
        with client.responses.stream(model="gpt-5", input=asked, tools=[WEATHER]) as stream:
            deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
            first = stream.get_final_response()
        (call,) = first.output
        assert call.type == "function_call" and call.name == "get_weather"
        assert call.arguments == '{"city": "Paris"}' and "".join(deltas) == call.arguments
        assert first.usage is not None and first.usage.input_tokens == USAGE["prompt_tokens"]
        history = [
            *asked,
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24 C"},
        ]
        with client.responses.stream(model="gpt-5", input=history, tools=[WEATHER]) as stream:
            for _ in stream:
                pass
            second = stream.get_final_response()
    assert second.output_text == "It is sunny in Paris."
    for got in upstream.got:
        assert got.path == "/v1/chat/completions"
        assert_valid("chat", got.body)
        assert got.headers[b"authorization"] == f"Bearer {KEY}".encode()
    messages = upstream.got[1].body["messages"]
    assert messages[1]["tool_calls"][0]["id"] == "call_w1"
    assert messages[1]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert messages[2] == {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 24 C"}
    assert upstream.got[0].body["tools"][0]["function"]["name"] == "get_weather"


def test_openai_agents_runner_with_a_function_tool_two_turns_over_chat() -> None:
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    calls: list[str] = []

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return f"sunny in {city}"

    upstream = Scripted(
        Answer(chat_call("call_a1", "get_weather", '{"city": "Oslo"}')),
        Answer(chat_text("Oslo is sunny.")),
        Answer(chat_text("You asked about Oslo.")),
    )

    async def run(url: str) -> tuple[str, str]:
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0) as client:
            model = OpenAIResponsesModel(model="gpt-5", openai_client=client)
            agent = Agent(
                name="weather", instructions="Answer briefly.", model=model, tools=[get_weather]
            )
            first = await Runner.run(agent, "Weather in Oslo?")
            follow = [*first.to_input_list(), {"role": "user", "content": "Which city was it?"}]
            second = await Runner.run(agent, follow)
        return str(first.final_output), str(second.final_output)

    with gateway(upstream, "chat") as (proxy, _):
        first, second = asyncio.run(run(proxy.url))
    assert (first, second) == ("Oslo is sunny.", "You asked about Oslo.")
    assert calls == ["Oslo"]
    assert len(upstream.got) == 3
    for got in upstream.got:
        assert_valid("chat", got.body)
    opening = upstream.got[0].body["messages"][0]
    assert opening["role"] in ("system", "developer") and "Answer briefly." in str(
        opening["content"]
    )
    third = upstream.got[2].body["messages"]
    roles = [m["role"] for m in third]
    assert roles[-5:] == ["user", "assistant", "tool", "assistant", "user"]
    assert third[-3] == {"role": "tool", "tool_call_id": "call_a1", "content": "sunny in Oslo"}


def test_openai_chat_stream_over_a_responses_upstream() -> None:
    answer = (FIXTURES / "responses-event/text.sse").read_bytes()
    upstream = Scripted(Answer([answer]))
    with (
        gateway(upstream, "responses") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as client,
        client.chat.completions.stream(
            model="gpt-5",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "hi"},
            ],
            stream_options={"include_usage": True},
        ) as stream,
    ):
        for _ in stream:
            pass
        final = stream.get_final_completion()
    (asked,) = upstream.got
    assert asked.path == "/v1/responses"
    assert_valid("responses", asked.body)
    assert asked.body["instructions"] == "Be brief." or asked.body["input"][0]["role"] == "system"
    expected = _responses_text(answer)
    assert final.choices[0].message.content == expected
    assert final.choices[0].finish_reason == "stop"
    assert final.usage is not None and final.usage.total_tokens > 0


def _responses_text(data: bytes) -> str:
    for line in data.splitlines():
        if line.startswith(b"data: "):
            event = orjson.loads(line[6:])
            if event.get("type") == "response.output_text.done":
                return str(event["text"])
    raise AssertionError("no text in the fixture")


CODEX_PATCH = '*** Begin Patch\n*** Add File: hello.py\n+print("hello")\n*** End Patch\n'


def _codex() -> str:
    """The Codex CLI's binary, or a skip saying why there is none (an opt-in test: it
    runs where ``npm i -g @openai/codex`` was run, or $CHATX_CODEX names the binary)."""
    import shutil

    named = os.environ.get("CHATX_CODEX")
    if named:
        return named
    if shutil.which("npm") is None:
        pytest.skip("npm is absent: the Codex CLI comes as an npm package (@openai/codex)")
    found = shutil.which("codex")
    if found is None:
        pytest.skip("the Codex CLI is not installed: npm i -g @openai/codex (or set CHATX_CODEX)")
    return found


def test_codex_cli_applies_a_patch_over_chat(tmp_path: Path) -> None:
    """Codex CLI (Responses only) over a chat upstream: its freeform apply_patch goes up
    as a function of one string, the model's call comes back as the raw patch Codex
    applies, and the next request carries the call and Codex's output as chat messages."""
    codex = _codex()
    arguments = orjson.dumps({"input": CODEX_PATCH}).decode()
    pieces = [arguments[i : i + 9] for i in range(0, len(arguments), 9)]
    upstream = Scripted(
        Answer(chat_call("call_p1", "apply_patch", *pieces)),
        Answer(chat_text("Added hello.py.")),
    )
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    with gateway(upstream, "chat") as (proxy, said):
        (home / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "gateway"\n\n'
            "[model_providers.gateway]\n"
            f'name = "chatx gateway"\nbase_url = "{proxy.url}/v1"\n'
            'wire_api = "responses"\nenv_key = "GATEWAY_KEY"\n',
            encoding="utf-8",
        )
        env = {**os.environ, "CODEX_HOME": str(home), "GATEWAY_KEY": KEY}
        ran = subprocess.run(
            [codex, "exec", "--skip-git-repo-check", "--sandbox", "workspace-write"]
            + ["add hello.py printing hello"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert (work / "hello.py").read_text(encoding="utf-8") == 'print("hello")\n'
    assert "Added hello.py." in ran.stdout
    posted = [g for g in upstream.got if g.method == "POST"]
    assert len(posted) == 2
    for got in posted:
        assert got.path == "/v1/chat/completions"
        assert_valid("chat", got.body)
    offered = {t["function"]["name"]: t["function"] for t in posted[0].body["tools"]}
    assert offered["apply_patch"]["parameters"]["properties"]["input"]["type"] == "string"
    call, result = posted[1].body["messages"][-2:]
    assert orjson.loads(call["tool_calls"][0]["function"]["arguments"]) == {"input": CODEX_PATCH}
    assert result["role"] == "tool" and result["tool_call_id"] == "call_p1"
    assert any("lost: " in line and "(web_search)" in line for line in said)


def test_the_command_translates_and_keeps_its_store_in_the_data_directory(tmp_path: Path) -> None:
    """``chatx proxy --upstream-api chat`` as a process, its store where the user's data
    directory is ($XDG_DATA_HOME), a follow-up naming the first answer."""
    import re
    import select
    import signal
    import sys
    import time

    from tests.live.support import ROOT, TIMEOUT, Running

    upstream = Scripted(Answer(chat_text("first")), Answer(chat_text("second")))
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    with Running(upstream) as up:
        proc = subprocess.Popen(
            [sys.executable, "-m", "chatx", "proxy", "--upstream", up.url]
            + ["--upstream-api", "chat", "--model", "*=local-model", "--port", "0"],
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=env,
        )
        said, url = b"", ""
        deadline = time.monotonic() + TIMEOUT
        while not url and time.monotonic() < deadline:
            if select.select([proc.stderr], [], [], 0.5)[0]:
                line = proc.stderr.readline()  # type: ignore[union-attr]
                said += line
                found = re.search(rb"(http://127\.0\.0\.1:\d+) ->", line)
                url = found.group(1).decode() if found else url
        try:
            assert url, said
            with openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0) as client:
                first = client.responses.create(model="gpt-5", input="one")
                second = client.responses.create(
                    model="gpt-5", input="two", previous_response_id=first.id
                )
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=TIMEOUT)
    text = (said + err).decode()
    assert "(chat, every API translated), not recording" in text
    assert (first.output_text, second.output_text) == ("first", "second")
    assert [g.body["model"] for g in upstream.got] == ["local-model", "local-model"]
    roles = [m["role"] for m in upstream.got[1].body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assert (tmp_path / "data" / "chatx" / "responses.sqlite").is_file()
    assert "Traceback" not in text


def test_usage_and_cache_tokens_are_the_same_streamed_or_not() -> None:
    usage = {
        "prompt_tokens": 120,
        "completion_tokens": 9,
        "total_tokens": 129,
        "prompt_tokens_details": {"cached_tokens": 100},
        "completion_tokens_details": {"reasoning_tokens": 4},
    }
    upstream = Scripted(Answer(chat_text("cached", usage=usage)))
    with (
        gateway(upstream, "chat") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as client,
    ):
        with client.responses.stream(model="gpt-5", input="hi") as stream:
            streamed = stream.get_final_response().usage
        whole = client.responses.create(model="gpt-5", input="hi").usage
    assert streamed is not None and whole is not None
    assert streamed.model_dump() == whole.model_dump()
    assert (streamed.input_tokens, streamed.output_tokens) == (120, 9)
    assert streamed.input_tokens_details.cached_tokens == 100
    assert streamed.output_tokens_details.reasoning_tokens == 4

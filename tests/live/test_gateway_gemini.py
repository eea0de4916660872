"""Gemini on each side of the gateway (``chatx proxy --upstream-api``), each upstream a
loopback server the test starts and that keeps what it gets:

- the google-genai client over chat, Responses, Anthropic and Llama Stack upstreams: the
  model from the path, the key from ``x-goog-api-key`` or ``?key=``, the stream in
  Gemini's chunks (SSE with ``alt=sse``, else one JSON array), errors in Google's shape;
- the openai (chat and Responses) and anthropic clients over a Gemini upstream: posted
  to ``/v1beta/models/{model}:streamGenerateContent?alt=sse`` (``:generateContent`` for a
  whole answer), the key in ``x-goog-api-key``.

And what must never happen: a key from ``?key=`` or ``x-goog-api-key`` in the store, a
recording, a log line or an error body; a model name steering the upstream URL to
another path or host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anthropic
import httpx2
import openai
import orjson
import pytest

from chatx.live.endpoints import by_name
from chatx.live.gateway import ModelMap
from chatx.live.proxy import ProxyApp
from chatx.live.store import Store
from tests.live.gateway_support import Answer, Got, Scripted, chat_call, chat_text, gateway
from tests.live.support import FIXTURES, TIMEOUT, Running

genai = pytest.importorskip(
    "google.genai", reason="the google-genai SDK (dev extra) is not installed"
)
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types  # noqa: E402

KEY = "AIza-gateway-gemini-SECRET-0028"
QUERY_KEY = "AIza-in-the-query-SECRET-0029"
MODEL = "gemini-2.5-flash"


class Kept(Scripted):
    """A scripted upstream that keeps each request's raw path and query as well."""

    def __init__(self, *answers: Answer) -> None:
        super().__init__(*answers)
        self.targets: list[tuple[bytes, bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.targets.append((scope.get("raw_path", b""), scope.get("query_string", b"")))
        await super().__call__(scope, receive, send)


def client(url: str, **options: Any) -> Any:
    return genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=url, **options))


def gemini_fixture(name: str) -> list[bytes]:
    """A Gemini SSE fixture as the pieces a Gemini upstream sends."""
    data = (FIXTURES / "gemini-event" / name).read_bytes()
    return [block + b"\n\n" for block in data.split(b"\n\n") if block.strip()]


def parts_of(chunks: list[Any]) -> tuple[str, list[Any], str | None]:
    text, calls, finish = "", [], None
    for chunk in chunks:
        for candidate in chunk.candidates or []:
            for part in (candidate.content.parts or []) if candidate.content else []:
                if part.text and not part.thought:
                    text += part.text
                if part.function_call:
                    calls.append((part.function_call.name, part.function_call.args))
            if candidate.finish_reason:
                finish = candidate.finish_reason.value
    return text, calls, finish


# --- the Gemini API over other upstreams ------------------------------------------------


def test_google_genai_stream_over_chat() -> None:
    upstream = Scripted(Answer(chat_text("Hel", "lo")))
    with (
        gateway(upstream, "chat", models=["gemini-*=qwen3"]) as (proxy, said),
        client(proxy.url) as gem,
    ):
        chunks = list(
            gem.models.generate_content_stream(
                model=MODEL,
                contents="Say hello.",
                config=types.GenerateContentConfig(
                    system_instruction="Be brief.", temperature=0.3, max_output_tokens=64
                ),
            )
        )
    (asked,) = upstream.got
    assert asked.path == "/v1/chat/completions"
    assert asked.body["model"] == "qwen3"  # the path's model, through --model
    assert asked.body["stream"] is True and asked.body["stream_options"] == {"include_usage": True}
    assert asked.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello."},
    ]
    assert (asked.body["temperature"], asked.body["max_tokens"]) == (0.3, 64)
    assert asked.headers[b"authorization"] == f"Bearer {KEY}".encode()  # from x-goog-api-key
    assert parts_of(chunks) == ("Hello", [], "STOP")
    assert chunks[-1].usage_metadata.prompt_token_count == 11
    assert any(f"/models/{MODEL}:streamGenerateContent as chat -> 200" in s for s in said)


def test_google_genai_whole_answer_and_a_tool_turn_over_chat() -> None:
    """generateContent gets the final response; a functionCall answered by the SDK goes
    back as a chat tool message paired with its call, though Gemini gave it no id."""
    upstream = Scripted(
        Answer(chat_call("call_w1", "get_weather", '{"city": ', '"Paris"}')),
        Answer(chat_text("Sunny in Paris.")),
    )

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    with gateway(upstream, "chat") as (proxy, _), client(proxy.url) as gem:
        answer = gem.models.generate_content(
            model=MODEL,
            contents="Weather in Paris?",
            config=types.GenerateContentConfig(tools=[get_weather]),
        )
    first, second = upstream.got
    assert first.body.get("stream") is not True
    assert first.body["tools"][0]["function"]["name"] == "get_weather"
    assistant, result = second.body["messages"][-2:]
    (call,) = assistant["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert result == {"role": "tool", "tool_call_id": call["id"], "content": "sunny in Paris"}
    assert answer.text == "Sunny in Paris."


@pytest.mark.parametrize(
    ("api", "fixture", "text"),
    [
        ("responses", "responses-event/text.sse", None),
        ("anthropic", "anthropic-event/text.sse", None),
        ("llama-stack", "llama-stack-event/text.jsonl", "Paris is the capital of France."),
    ],
)
def test_google_genai_stream_over_other_upstreams(api: str, fixture: str, text: str | None) -> None:
    data = (FIXTURES / fixture).read_bytes()
    if fixture.endswith(".jsonl"):  # Llama Stack's server streams its lines as SSE
        data = b"".join(b"data: " + line + b"\n\n" for line in data.splitlines() if line.strip())
    upstream = Scripted(Answer([data]))
    with gateway(upstream, api) as (proxy, _), client(proxy.url) as gem:
        chunks = list(gem.models.generate_content_stream(model=MODEL, contents="hi"))
    (asked,) = upstream.got
    assert asked.path == by_name(api).path
    said, calls, finish = parts_of(chunks)
    assert said and calls == [] and finish == "STOP"
    if text is not None:
        assert said == text


def test_without_alt_sse_a_json_array_and_the_key_from_the_query() -> None:
    upstream = Scripted(Answer(chat_text("Hel", "lo")))
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with gateway(upstream, "chat") as (proxy, said):
        got = httpx2.post(
            f"{proxy.url}/v1beta/models/{MODEL}:streamGenerateContent?key={QUERY_KEY}",
            content=orjson.dumps(body),
            timeout=TIMEOUT,
        )
    assert got.status_code == 200
    assert got.headers["content-type"].startswith("application/json")
    chunks = got.json()
    assert isinstance(chunks, list)
    assert (
        "".join(
            p.get("text", "")
            for c in chunks
            for p in c["candidates"][0]["content"].get("parts", [])
        )
        == "Hello"
    )
    assert upstream.got[0].headers[b"authorization"] == f"Bearer {QUERY_KEY}".encode()
    assert not any(QUERY_KEY in line for line in said)


def test_errors_come_in_googles_shape() -> None:
    limited = Answer(
        [
            orjson.dumps(
                {
                    "error": {
                        "message": "slow down",
                        "type": "requests",
                        "code": "rate_limit_exceeded",
                    }
                }
            )
        ],
        status=429,
        content_type=b"application/json",
        headers=[(b"retry-after", b"7")],
    )
    upstream = Scripted(limited)
    with gateway(upstream, "chat") as (proxy, _):
        url = f"{proxy.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
        got = httpx2.post(
            url, content=b'{"contents": []}', headers={"x-goog-api-key": KEY}, timeout=TIMEOUT
        )
        bad = httpx2.post(url, content=b"{nope", headers={"x-goog-api-key": KEY}, timeout=TIMEOUT)
        wrong = httpx2.post(
            url, content=b'{"contents": {}}', headers={"x-goog-api-key": KEY}, timeout=TIMEOUT
        )
        with client(proxy.url) as gem, pytest.raises(genai_errors.ClientError) as raised:
            gem.models.generate_content(model=MODEL, contents="hi")
    assert got.status_code == 429 and got.headers["retry-after"] == "7"
    assert got.json() == {
        "error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}
    }
    assert bad.status_code == 400 and bad.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert (
        wrong.status_code == 400
        and "contents: expected an array" in wrong.json()["error"]["message"]
    )
    assert raised.value.code == 429 and "slow down" in str(raised.value)


# --- other APIs over a Gemini upstream --------------------------------------------------


def test_openai_chat_stream_over_gemini() -> None:
    upstream = Kept(Answer(gemini_fixture("text.sse")))
    with (
        gateway(upstream, "gemini") as (proxy, said),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as oai,
    ):
        stream = oai.chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "A haiku."},
            ],
            max_tokens=50,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    (asked,) = upstream.got
    assert upstream.targets == [
        (f"/v1beta/models/{MODEL}:streamGenerateContent".encode(), b"alt=sse")
    ]
    assert asked.headers[b"x-goog-api-key"] == KEY.encode()
    assert b"authorization" not in asked.headers
    assert asked.body == {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"role": "user", "parts": [{"text": "A haiku."}]}],
        "generationConfig": {"maxOutputTokens": 50},
    }
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Paper cranes fold from one square sheet."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 7
    assert any("POST /v1/chat/completions as gemini -> 200" in line for line in said)


def test_openai_whole_answer_over_gemini_uses_generate_content() -> None:
    whole = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "Bonjour."}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6},
        "modelVersion": MODEL,
        "responseId": "gw-whole-1",
    }
    upstream = Kept(
        Answer([json.dumps(whole, indent=2).encode()], content_type=b"application/json")
    )
    with (
        gateway(upstream, "gemini") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as oai,
    ):
        done = oai.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Hi in French"}]
        )
    assert upstream.targets == [(f"/v1beta/models/{MODEL}:generateContent".encode(), b"")]
    assert done.choices[0].message.content == "Bonjour."
    assert done.choices[0].finish_reason == "stop"
    assert done.usage is not None and done.usage.total_tokens == 6


def test_openai_responses_tool_calls_over_gemini() -> None:
    upstream = Kept(Answer(gemini_fixture("tool-call-signature.sse")))
    tools = [
        {"type": "function", "name": "lookup_tide", "parameters": {"type": "object", "properties": {"harbor": {"type": "string"}}}},
        {"type": "function", "name": "lookup_moon", "parameters": {"type": "object", "properties": {}}},
    ]  # fmt: skip
    with (
        gateway(upstream, "gemini") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as oai,
        oai.responses.stream(model=MODEL, input="Tides and moon at Brest?", tools=tools) as stream,
    ):
        for _ in stream:
            pass
        final = stream.get_final_response()
    (asked,) = upstream.got
    declared = asked.body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declared] == ["lookup_tide", "lookup_moon"]
    assert declared[0]["parametersJsonSchema"] == tools[0]["parameters"]
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("lookup_tide", {"harbor": "Brest"}),
        ("lookup_moon", {}),
    ]
    assert len({c.call_id for c in calls}) == 2  # ids made from the response and place


def test_anthropic_thinking_over_gemini_and_its_signature_back() -> None:
    """Claude's client over Gemini 3: thinking streams as thinking blocks with the
    thoughtSignature as their signature; sent back in the next turn it rides the call
    again, where Gemini looks for it."""
    upstream = Kept(
        Answer(gemini_fixture("tool-call-signature.sse")), Answer(gemini_fixture("text.sse"))
    )
    tools = [{"name": "lookup_tide", "input_schema": {"type": "object", "properties": {"harbor": {"type": "string"}}}},
             {"name": "lookup_moon", "input_schema": {"type": "object", "properties": {}}}]  # fmt: skip
    ask: list[Any] = [{"role": "user", "content": "Tides at Brest?"}]
    with (
        gateway(upstream, "gemini") as (proxy, _),
        anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0) as claude,
    ):
        with claude.messages.stream(model=MODEL, max_tokens=1024, messages=ask, tools=tools,
                                    thinking={"type": "enabled", "budget_tokens": 2048}) as stream:  # fmt: skip
            first = stream.get_final_message()
        blocks = [b.model_dump(exclude_none=True) for b in first.content]
        results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "high tide at 14:00"}
                   for b in blocks if b["type"] == "tool_use"]  # fmt: skip
        ask += [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]
        second = claude.messages.create(model=MODEL, max_tokens=1024, messages=ask, tools=tools,
                                        thinking={"type": "enabled", "budget_tokens": 2048})  # fmt: skip
    kinds = [b["type"] for b in blocks]
    assert kinds.count("tool_use") == 2 and first.stop_reason == "tool_use"
    signed = [b for b in blocks if b["type"] == "thinking"]
    assert signed and signed[0]["signature"] == "Q2hhdHhTaWduYXR1cmVPbmFDYWxsAAEC"
    sent = upstream.got[1].body
    assert sent["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 2048,
        "includeThoughts": True,
    }
    model_turn = sent["contents"][1]
    assert model_turn["role"] == "model"
    call = next(p for p in model_turn["parts"] if "functionCall" in p)
    assert call["functionCall"]["name"] == "lookup_tide"
    assert call["thoughtSignature"] == "Q2hhdHhTaWduYXR1cmVPbmFDYWxsAAEC"
    responses = [p["functionResponse"] for p in sent["contents"][2]["parts"]]
    assert [r["name"] for r in responses] == ["lookup_tide", "lookup_moon"]
    assert second.content[0].text == "Paper cranes fold from one square sheet."  # type: ignore[union-attr]


def test_a_gemini_upstream_error_reaches_an_openai_client() -> None:
    error = {"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}
    upstream = Kept(Answer([orjson.dumps(error)], status=400, content_type=b"application/json"))
    with (
        gateway(upstream, "gemini") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as oai,
        pytest.raises(openai.BadRequestError) as raised,
    ):
        oai.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
        )
    assert "API key not valid." in str(raised.value)


# --- what must never happen -------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "../../v1/files",
        "..",
        "a/b",
        "m?key=x&alt=json",
        "m#frag",
        "a%2Fb",
        "http://evil.example/x",
        "models/../x",
    ],
)
def test_a_model_name_cannot_steer_the_upstream_url(model: str) -> None:
    upstream = Kept(Answer(gemini_fixture("text.sse")))
    with gateway(upstream, "gemini") as (proxy, _):
        got = httpx2.post(
            f"{proxy.url}/v1/chat/completions",
            content=orjson.dumps(
                {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True}
            ),
            headers={"authorization": f"Bearer {KEY}"},
            timeout=TIMEOUT,
        )
    assert got.status_code == 200
    ((raw, query),) = upstream.targets  # it reached this upstream, and only once
    segment = quote(model.removeprefix("models/"), safe="")
    if segment in (".", ".."):
        segment = segment.replace(".", "%2E")
    assert raw == f"/v1beta/models/{segment}:streamGenerateContent".encode()
    assert raw.count(b"/") == 3 and b"?" not in raw and b"#" not in raw
    assert query == b"alt=sse"
    assert upstream.got[0].path.startswith("/v1beta/models/")


def test_a_gemini_model_from_the_path_cannot_steer_either() -> None:
    """A Gemini client's model (from its path, decoded) over a Gemini upstream: the same
    API is forwarded as proxy forwards, its target checked; one with %2F goes as one
    segment."""
    upstream = Kept(Answer(gemini_fixture("text.sse")))
    with gateway(upstream, "chat") as (proxy, _):
        got = httpx2.post(
            f"{proxy.url}/v1beta/models/a%2F..%2F..%2Fx:streamGenerateContent?alt=sse",
            content=b'{"contents": [{"parts": [{"text": "hi"}]}]}',
            headers={"x-goog-api-key": KEY},
            timeout=TIMEOUT,
        )
    assert got.status_code in (200, 400, 404)
    for raw, _ in upstream.targets:
        assert raw == b"/v1/chat/completions"


def _no_secret(where: str, data: bytes | str, *secrets: str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    for secret in secrets:
        assert secret not in text, f"{secret} in {where}"
        assert secret.replace("-", "%2D") not in text, f"{secret}, escaped, in {where}"


def test_keys_never_reach_a_file_a_log_or_an_error(tmp_path: Path) -> None:
    record, store = tmp_path / "record", tmp_path / "store.sqlite"
    record.mkdir()
    secrets = (KEY, QUERY_KEY)
    echoed = {
        "error": {"message": f"bad key {KEY} and {QUERY_KEY}", "type": "invalid_request_error"}
    }
    upstream = Scripted(
        Answer(chat_text("Hello")),
        Answer([orjson.dumps(echoed)], status=401, content_type=b"application/json"),
        Answer(chat_text("again")),
    )
    bodies: list[bytes] = []
    body = orjson.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    with gateway(upstream, "chat", record, store=store) as (proxy, said):
        for query in (f"alt=sse&key={QUERY_KEY}", f"key={QUERY_KEY}", f"key={QUERY_KEY}&alt=sse"):
            got = httpx2.post(
                f"{proxy.url}/v1beta/models/{MODEL}:streamGenerateContent?{query}",
                content=body,
                headers={"x-goog-api-key": KEY},
                timeout=TIMEOUT,
            )
            bodies.append(got.content)
        responses = httpx2.post(
            f"{proxy.url}/v1/responses",
            content=orjson.dumps({"model": "m", "input": "hi", "stream": False}),
            headers={"authorization": f"Bearer {KEY}"},
            timeout=TIMEOUT,
        )
        bodies.append(responses.content)
    dead = ProxyApp(
        "http://127.0.0.1:9", record, log=said.append, upstream_api=by_name("gemini"),
        models=ModelMap([]), store=Store(store), lost=said.append,
    )  # fmt: skip
    with Running(dead, lifespan="on") as proxy:
        for path in (
            f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse&key={QUERY_KEY}",  # forwarded
            f"/v1beta/models/{MODEL}:generateContent?key={QUERY_KEY}",
            "/v1/chat/completions",  # translated
        ):
            got = httpx2.post(
                f"{proxy.url}{path}",
                content=body
                if "v1beta" in path
                else orjson.dumps({"model": MODEL, "messages": [], "stream": True}),
                headers={"x-goog-api-key": KEY}
                if "v1beta" in path
                else {"authorization": f"Bearer {KEY}"},
                timeout=TIMEOUT,
            )
            assert got.status_code == 502, got.text
            bodies.append(got.content)
    assert bodies[1].startswith(b'{"error"')  # the 401: the upstream's words, in Google's shape
    assert b"bad key *** and ***" in bodies[1]
    assert b"key=***" in bodies[4] and b"key=***" in bodies[5]  # the forwarded URL, said
    for number, data in enumerate(bodies):
        _no_secret(f"answer {number}", data, *secrets)
    for line in said:
        _no_secret("the log", line, *secrets)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sse" for p in files) and store.exists()
    for path in files:
        _no_secret(str(path), path.read_bytes(), *secrets)


def test_the_gemini_upstream_key_goes_in_its_header_only() -> None:
    upstream = Kept(Answer(gemini_fixture("text.sse")))
    with (
        gateway(upstream, "gemini", key="upstream-SECRET-key") as (proxy, _),
        anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0) as claude,
    ):
        claude.messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    (asked,) = upstream.got
    ((raw, query),) = upstream.targets
    assert asked.headers[b"x-goog-api-key"] == b"upstream-SECRET-key"
    assert b"x-api-key" not in asked.headers and b"key=" not in query
    assert isinstance(asked, Got)


class Listing:
    """A Gemini upstream's GET /v1beta/models, kept."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict[bytes, bytes]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.got.append((scope["path"], dict(scope["headers"])))
        listed = {"models": [{"name": f"models/{MODEL}", "displayName": "Gemini 2.5 Flash"}]}
        head = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": orjson.dumps(listed)})


def test_the_models_of_a_gemini_upstream_as_openai_lists_them() -> None:
    upstream = Listing()
    with (
        Running(upstream) as up,
        Running(ProxyApp(up.url, None, upstream_api=by_name("gemini")), lifespan="on") as proxy,
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as oai,
    ):
        listed = [m.id for m in oai.models.list()]
    assert listed == [MODEL]
    ((path, headers),) = upstream.got
    assert path == "/v1beta/models" and headers[b"x-goog-api-key"] == KEY.encode()

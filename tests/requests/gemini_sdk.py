"""Gemini request bodies as the google-genai SDK sends them, written to
``tests/requests/fixtures/gemini__*.json``.

``../shared/requests`` holds no Gemini bodies, so the bodies the Gemini mapping is tested
on come from the SDK itself: ``python -m tests.requests.gemini_sdk`` drives the client
against a loopback server that keeps each body it is sent and answers as the Developer
API does (a functionCall for a request offering tools and not yet answered, else text),
and writes what was sent, one file per case. The files are checked in; this writes them
again when the SDK changes.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.requests.bodies import HERE

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _filled(schema: Any) -> Any:
    """A value the JSON schema (or Gemini's upper-case one) takes: its required fields."""
    if not isinstance(schema, dict):
        return "x"
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {n: _filled(properties.get(n)) for n in schema.get("required", [])}
    return {"string": "Paris", "integer": 1, "number": 1, "boolean": True, "array": []}.get(
        kind, "x"
    )


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """A call of the first function offered while the last turn is the user's text, JSON
    when JSON is asked for, else a text answer."""
    declared = [
        d for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []
    ]
    last = (body.get("contents") or [{}])[-1]
    answered = any("functionResponse" in p for p in last.get("parts") or [])
    config = body.get("generationConfig") or {}
    if declared and not answered:
        schema = declared[0].get("parameters_json_schema") or declared[0].get(
            "parametersJsonSchema"
        )
        call = {"name": declared[0]["name"], "args": _filled(schema)}
        part: dict[str, Any] = {"functionCall": call, "thoughtSignature": "c2lnbmVk"}
    elif config.get("responseMimeType") == "application/json":
        part = {"text": json.dumps(_filled(config.get("responseJsonSchema")))}
    else:
        part = {"text": "Sunny."}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "recorded",
    }


class _Keeper(BaseHTTPRequestHandler):
    kept: list[tuple[str, dict[str, Any]]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.kept.append((self.path, body))
        answer = json.dumps(_answer(body)).encode()
        if "alt=sse" in self.path:
            answer = b"data: " + answer + b"\r\n\r\n"
        self.send_response(200)
        self.send_header(
            "content-type", "text/event-stream" if b"data:" in answer[:5] else "application/json"
        )
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def keeping() -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """A loopback server keeping the (path, body) of each request, and its URL."""
    kept: list[tuple[str, dict[str, Any]]] = []
    handler = type("Handler", (_Keeper,), {"kept": kept})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", kept
    finally:
        server.shutdown()
        server.server_close()


def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city now.

    Args:
        city: The city's name.
        unit: celsius or fahrenheit.
    """
    return f"sunny in {city}"


def _text(client: Any, types: Any) -> None:
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="Say hi.",
        config=types.GenerateContentConfig(
            system_instruction="You are terse.",
            temperature=0.2,
            top_p=0.9,
            top_k=40,
            max_output_tokens=256,
            stop_sequences=["END"],
            candidate_count=2,
            seed=7,
        ),
    )


def _stream_thinking(client: Any, types: Any) -> None:
    for _ in client.models.generate_content_stream(
        model="gemini-2.5-pro",
        contents="Why is the sky blue?",
        config=types.GenerateContentConfig(
            thinking_config=types.ThinkingConfig(thinking_budget=2048, include_thoughts=True)
        ),
    ):
        pass


def _thinking_level(client: Any, types: Any) -> None:
    client.models.generate_content(
        model="gemini-3-pro-preview",
        contents="Plan a trip.",
        config=types.GenerateContentConfig(
            thinking_config=types.ThinkingConfig(thinking_level=types.ThinkingLevel.LOW)
        ),
    )


def _json_schema(client: Any, types: Any) -> None:
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="A city and its country.",
        config=types.GenerateContentConfig(
            response_mime_type="application/json",
            response_schema={
                "type": "OBJECT",
                "properties": {"city": {"type": "STRING"}, "country": {"type": "STRING"}},
                "required": ["city"],
            },
        ),
    )


def _json_schema_plain(client: Any, types: Any) -> None:
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="A number.",
        config=types.GenerateContentConfig(
            response_mime_type="application/json",
            response_json_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        ),
    )


def _tools_forced(client: Any, types: Any) -> None:
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="Weather in Paris?",
        config=types.GenerateContentConfig(
            tools=[get_weather],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            tool_config=types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(
                    mode=types.FunctionCallingConfigMode.ANY,
                    allowed_function_names=["get_weather"],
                )
            ),
        ),
    )


def _tools_automatic(client: Any, types: Any) -> None:
    # the SDK calls the function itself and sends its result back: two requests
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="Weather in Paris?",
        config=types.GenerateContentConfig(tools=[get_weather]),
    )


def _tools_json_schema(client: Any, types: Any) -> None:
    declaration = types.FunctionDeclaration(
        name="lookup",
        description="Look a word up.",
        parameters_json_schema={
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
        },
    )
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="What is a gnomon?",
        config=types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[declaration])],
            tool_config=types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(mode="NONE")
            ),
        ),
    )


def _builtins_safety(client: Any, types: Any) -> None:
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="News today?",
        config=types.GenerateContentConfig(
            tools=[
                types.Tool(google_search=types.GoogleSearch()),
                types.Tool(code_execution=types.ToolCodeExecution()),
            ],
            safety_settings=[
                types.SafetySetting(
                    category=types.HarmCategory.HARM_CATEGORY_HATE_SPEECH,
                    threshold=types.HarmBlockThreshold.BLOCK_ONLY_HIGH,
                )
            ],
        ),
    )


def _history(client: Any, types: Any) -> None:
    contents = [
        types.Content(
            role="user",
            parts=[
                types.Part(text="What is in this picture, and the weather there?"),
                types.Part.from_bytes(data=_png(), mime_type="image/png"),
                types.Part.from_uri(file_uri="gs://bucket/notes.pdf", mime_type="application/pdf"),
            ],
        ),
        types.Content(
            role="model",
            parts=[
                types.Part(text="Looking at it.", thought=True),
                types.Part(
                    function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}),
                    thought_signature=b"sig-1",
                ),
                types.Part(
                    function_call=types.FunctionCall(name="get_weather", args={"city": "Rome"})
                ),
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(name="get_weather", response={"output": "sunny"}),
                types.Part.from_function_response(
                    name="get_weather", response={"error": "no data"}
                ),
            ],
        ),
        types.Content(
            role="model", parts=[types.Part(text="Paris is sunny; Rome I could not tell.")]
        ),
        types.Content(role="user", parts=[types.Part(text="Thanks.")]),
    ]
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents=contents,
        config=types.GenerateContentConfig(
            tools=[get_weather],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        ),
    )


def _call_ids(client: Any, types: Any) -> None:
    contents = [
        types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")]),
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="whZntcQw", name="get_weather", args={"city": "Oslo"}
                    )
                )
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="whZntcQw", name="get_weather", response={"output": "snow"}
                    )
                )
            ],
        ),
    ]
    for _ in client.models.generate_content_stream(
        model="gemini-3-flash-preview",
        contents=contents,
        config=types.GenerateContentConfig(
            tools=[get_weather],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        ),
    ):
        pass


def _chat_session(client: Any, types: Any) -> None:
    chat = client.chats.create(
        model="gemini-2.5-flash",
        config=types.GenerateContentConfig(system_instruction="Answer in French."),
    )
    chat.send_message("Hello")
    chat.send_message("And goodbye?")


CASES: dict[str, Callable[[Any, Any], None]] = {
    "text_settings": _text,
    "stream_thinking_budget": _stream_thinking,
    "thinking_level": _thinking_level,
    "json_schema": _json_schema,
    "json_schema_plain": _json_schema_plain,
    "tools_forced": _tools_forced,
    "tools_automatic": _tools_automatic,
    "tools_json_schema": _tools_json_schema,
    "builtins_safety": _builtins_safety,
    "history_media_calls": _history,
    "call_ids": _call_ids,
    "chat_session": _chat_session,
}


def _png() -> bytes:
    import base64

    return base64.b64decode(PNG)


def record() -> dict[str, dict[str, Any]]:
    """Each case's bodies as the SDK sent them, by file name (the last request of a case
    that makes several: the one holding the whole conversation)."""
    from google import genai
    from google.genai import types

    out = {}
    with keeping() as (url, kept):
        options = types.HttpOptions(base_url=url)
        with genai.Client(api_key="recorded-key", http_options=options) as client:
            for name, case in CASES.items():
                kept.clear()
                case(client, types)
                out[f"gemini__sdk_{name}.json"] = kept[-1][1]
    return out


def record_cli(gemini: str) -> dict[str, dict[str, Any]]:
    """Gemini CLI's bodies (``gemini -p``, run in an empty folder with a home of its own):
    with the model left to its router, the router's JSON request; with one named, the
    turn after its tool call, tools and all."""
    import os
    import subprocess
    import tempfile

    out = {}
    with tempfile.TemporaryDirectory() as home, keeping() as (url, kept):
        settings = Path(home, ".gemini", "settings.json")
        settings.parent.mkdir()
        settings.write_text('{"security": {"auth": {"selectedType": "gemini-api-key"}}}')
        work = Path(home, "work")
        work.mkdir()
        env = {**os.environ, "HOME": home, "GEMINI_API_KEY": "recorded-key"}
        env |= {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        for name, model in (("cli_router", []), ("cli_tools", ["-m", "gemini-2.5-flash"])):
            kept.clear()
            command = [gemini, *model, "-p", "What is in this folder?"]
            subprocess.run(command, env=env, cwd=work, capture_output=True, timeout=300)
            path, body = kept[0] if name == "cli_router" else kept[-1]
            out[f"gemini__{name}.json"] = json.loads(json.dumps(body).replace(home, "/home/u"))
    return out


def main(argv: list[str]) -> int:
    """Writes the SDK's bodies; with ``--cli GEMINI`` (the CLI's path), Gemini CLI's."""
    made = record_cli(argv[1]) if argv[:1] == ["--cli"] else record()
    for name, body in made.items():
        (HERE / name).write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n")
        print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

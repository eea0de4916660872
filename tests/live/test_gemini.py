"""``chatx serve`` as the google-genai SDK sees it: ``:streamGenerateContent?alt=sse``
and ``:generateContent``, the model from the path, the key in ``x-goog-api-key``.

Captures of every format are asked for through the Gemini API: the client reads the
same text, calls and finish as ``chatx collect --as gemini`` builds from the capture.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.live.support import Running, final, fixture, post, serving

genai = pytest.importorskip(
    "google.genai", reason="the google-genai SDK (dev extra) is not installed"
)
from google.genai import types  # noqa: E402

CAPTURES = [
    "gemini-event/text.sse",
    "gemini-event/tool-call-signature.sse",
    "gemini-event/thinking-gemini3.sse",
    "chat-chunk/text.sse",
    "chat-chunk/tool-call-parallel.sse",
    "responses-event/function-call.sse",
    "anthropic-event/thinking-signature.sse",
    "llama-stack-event/text.jsonl",
]


@pytest.fixture(scope="module")
def served() -> Iterator[Running]:
    with serving() as (running, _):
        yield running


@pytest.fixture(scope="module")
def sdk(served: Running) -> Iterator[Any]:
    options = types.HttpOptions(base_url=served.url)
    with genai.Client(api_key="test-key", http_options=options) as made:
        yield made


def config(name: str) -> Any:
    return types.GenerateContentConfig(
        http_options=types.HttpOptions(api_version="v1beta", headers={"X-Chatx-Capture": name})
    )


def said(parts: list[Any]) -> tuple[str, str, list[Any]]:
    """Answer text, thought text and calls (name, args) of a candidate's parts."""
    text = "".join(p.text or "" for p in parts if not p.thought)
    thoughts = "".join(p.text or "" for p in parts if p.thought)
    calls = [(p.function_call.name, p.function_call.args) for p in parts if p.function_call]
    return text, thoughts, calls


def expected(name: str) -> tuple[tuple[str, str, list[Any]], str | None]:
    built = final(fixture(name), "gemini-event", name)
    candidate = built["candidates"][0]
    parts = [types.Part.model_validate(p) for p in candidate["content"].get("parts", [])]
    return said(parts), candidate.get("finishReason")


@pytest.mark.parametrize("name", CAPTURES)
def test_generate_content_stream(sdk: Any, name: str) -> None:
    parts: list[Any] = []
    finish = None
    for chunk in sdk.models.generate_content_stream(
        model="gemini-test", contents="hi", config=config(name)
    ):
        for candidate in chunk.candidates or []:
            parts += (candidate.content.parts or []) if candidate.content else []
            finish = candidate.finish_reason or finish
    want, word = expected(name)
    assert said(parts) == want
    assert (finish.value if finish else None) == word


@pytest.mark.parametrize("name", CAPTURES)
def test_generate_content(sdk: Any, name: str) -> None:
    response = sdk.models.generate_content(model="gemini-test", contents="hi", config=config(name))
    candidate = response.candidates[0]
    want, word = expected(name)
    assert said(candidate.content.parts or []) == want
    assert candidate.finish_reason.value == word


def test_an_error_takes_google_shape(served: Running) -> None:
    import httpx2

    answer = httpx2.get(f"{served.url}/v1beta/models/gemini-test:generateContent")
    assert answer.status_code == 405
    error = answer.json()["error"]
    assert (error["code"], error["status"]) == (405, "UNIMPLEMENTED")


def test_the_model_comes_from_the_path(served: Running) -> None:
    url = f"{served.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    answer = post(url, {"contents": []}, "gemini-event/text.sse", **{"x-goog-api-key": "k"})
    assert answer.status_code == 200
    assert answer.text.startswith("data: {")

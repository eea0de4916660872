"""A stream the upstream breaks off ends in the client format's own error events, and the
client's stream then ends as its format ends one: checked for a chat client over a
Responses upstream and an Anthropic client over a chat upstream, with the codecs' own
request mappings, each upstream on a free loopback port."""

from __future__ import annotations

from typing import Any

import httpx2
import orjson

from tests.live.gateway_support import Answer, Scripted, chat_text, gateway
from tests.live.support import FIXTURES, TIMEOUT


def payloads(text: str) -> list[Any]:
    out = []
    for line in text.splitlines():
        if line.startswith("data: "):
            out.append("[DONE]" if line == "data: [DONE]" else orjson.loads(line[6:]))
    return out


def test_a_chat_client_gets_an_error_chunk_when_a_responses_upstream_breaks_off() -> None:
    events = (FIXTURES / "responses-event/text.sse").read_bytes().split(b"\n\n")
    upstream = Scripted(Answer([e + b"\n\n" for e in events[:5]], cut=True))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with gateway(upstream, "responses") as (proxy, said):
        got = httpx2.post(
            f"{proxy.url}/v1/chat/completions", content=orjson.dumps(body), timeout=TIMEOUT
        )
    sent = payloads(got.text)
    assert got.status_code == 200
    errors = [p for p in sent if isinstance(p, dict) and p.get("error")]
    assert errors and "the upstream stopped" in errors[-1]["error"]["message"]
    assert any("the client's stream ends in an error" in line for line in said)


def test_an_anthropic_client_gets_an_error_event_when_a_chat_upstream_breaks_off() -> None:
    upstream = Scripted(Answer(chat_text("Hel", "lo")[:2], cut=True))
    body = {
        "model": "claude-test-model",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
    }
    with gateway(upstream, "chat") as (proxy, _):
        got = httpx2.post(f"{proxy.url}/v1/messages", content=orjson.dumps(body), timeout=TIMEOUT)
    sent = payloads(got.text)
    assert sent[0]["type"] == "message_start"
    assert sent[-1]["type"] == "error"
    assert "the upstream stopped" in sent[-1]["error"]["message"]

"""A request body the gateway cannot plan is refused as ``serve`` refuses it (one reader,
``chatx.live.asgi.parse_request``): a 400 in the client API's shape naming what is wrong,
and nothing sent upstream."""

from __future__ import annotations

import httpx2
import pytest

from tests.live.gateway_support import Answer, Scripted, chat_text, gateway
from tests.live.support import TIMEOUT

CASES = [
    (b"", None, "no body"),
    (b"[1, 2]", None, "a JSON array, not an object"),
    (b'{"model": "m", "input": "hi", "stream": "yes"}', "stream", "expected a boolean"),
    (b'{"model": 5, "input": "hi"}', "model", "expected a string, got number"),
]


@pytest.mark.parametrize(("body", "param", "said"), CASES)
def test_a_body_that_is_no_request_is_a_400_before_the_upstream(
    body: bytes, param: str | None, said: str
) -> None:
    upstream = Scripted(Answer(chat_text("ok")))
    with gateway(upstream, "chat") as (proxy, _):
        got = httpx2.post(f"{proxy.url}/v1/responses", content=body, timeout=TIMEOUT)
    error = got.json()["error"]
    assert got.status_code == 400
    assert said in error["message"]
    assert error.get("param") == param
    assert upstream.got == []

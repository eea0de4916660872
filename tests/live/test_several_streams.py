"""A capture file that holds several streams one after another (a multi-step run's
turns, as some suites keep them) answers a request with its first, streamed as whole:
one provider answer, the one ``"stream": false`` gets, never the turns run together."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from chatx.collect.streams import streams_of
from chatx.live.served_captures import load
from chatx.reading.framing import load as load_side
from tests.live.support import FIXTURES, post, serving

SSE = FIXTURES / "expected" / "anthropic-event" / "two-turns.from-responses-event.sse"
JSONL = FIXTURES / "anthropic-event" / "concatenated-prefilled.jsonl"
ASK = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


def _texts(data: bytes) -> list[str]:
    """The text of each stream a client reads in ``data``."""
    return [stream.lanes[0].text for stream in streams_of(load_side(data, "served"))]


def test_the_first_stream_is_sent_as_recorded_to_its_own_api() -> None:
    data = SSE.read_bytes()
    second = data.index(b"event: message_start", data.index(b"event: message_start") + 1)
    (capture,) = load([str(SSE)])
    assert len(capture.streams) == 2
    with serving([str(SSE)]) as (running, _):
        sent = post(f"{running.url}/v1/messages", {**ASK, "stream": True}, SSE.name)
    assert sent.status_code == 200
    assert sent.content == data[:second]  # its bytes to the second stream's first event


@pytest.mark.parametrize("path", [SSE, JSONL])
@pytest.mark.parametrize("api", ["/v1/chat/completions", "/v1/responses", "/v1/messages"])
def test_streamed_and_whole_answer_the_first_stream(path: Path, api: str) -> None:
    (capture,) = load([str(path)])
    first = capture.streams[0].lanes[0].text
    assert len(capture.streams) == 2 and first != capture.streams[1].lanes[0].text
    body = {**ASK, "input": "hi"}
    with serving([str(path)]) as (running, _):
        streamed = post(f"{running.url}{api}", {**body, "stream": True}, path.name)
        whole = post(f"{running.url}{api}", body, path.name)
    assert streamed.status_code == 200 and whole.status_code == 200
    assert _texts(streamed.content) == [first]
    assert _texts(whole.content) == [first]
    assert orjson.loads(whole.content)  # one JSON object

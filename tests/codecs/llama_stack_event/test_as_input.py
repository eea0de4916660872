"""A Llama Stack source's runs into Llama Stack, written as their input bytes: each
``progress`` record of a run goes out as the bytes it came in where those are what the
encoder writes of it, so the output is byte for byte what replaying each record's batch
gives, notes included (:mod:`tests.as_input` compares the two paths): long streams,
escapes, logprobs, tool calls (one held open) between runs, other key orders and
containers, the fixtures and the captures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from tests import as_input
from tests.captures import capture_params

from .support import FIXTURES

LLAMA = "llama-stack-event"


def convert(body: bytes, size: int, **setup: Any) -> tuple[bytes, list[str], int]:
    return as_input.convert(body, size, setup.pop("dst", LLAMA), **setup)


def same_as_replayed(body: bytes, sizes: tuple[int, ...] = (4096, 7, 64), **setup: Any) -> int:
    return as_input.same_as_replayed(body, setup.pop("dst", LLAMA), sizes, **setup)


def event(kind: str, delta: dict[str, Any], stop: str | None = None, **more: Any) -> dict[str, Any]:
    return {"event": {"event_type": kind, "delta": delta, "logprobs": None, "stop_reason": stop,
                      **more}, "metrics": None}  # fmt: skip


def text(piece: str, **more: Any) -> dict[str, Any]:
    return event("progress", {"type": "text", "text": piece}, **more)


def call(status: str, piece: str, stop: str | None = None) -> dict[str, Any]:
    return event(
        "progress", {"type": "tool_call", "tool_call": piece, "parse_status": status}, stop
    )


START = event("start", {"type": "text", "text": ""})
COMPLETE = event("complete", {"type": "text", "text": ""}, "end_of_turn")


def sse(payloads: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(p) + b"\n\n" for p in payloads)


def texts(prefix: str, count: int) -> list[dict[str, Any]]:
    return [text(f" {prefix}{n}") for n in range(count)]


def test_a_long_stream_goes_out_as_its_input_bytes() -> None:
    body = sse([START, *texts("word", 400), COMPLETE])
    copied = same_as_replayed(body)
    assert copied > 350  # all but those decoded before a template was made
    out, notes, _ = convert(body, 4096)
    assert out == body and notes == []


@pytest.mark.parametrize(
    "escape,kept",
    [
        (b"\\u00e9", False),  # orjson writes é as its UTF-8 bytes
        (b"\\/", False),
        (b"\\ud83d\\ude00", False),
        (b"\\u001f", True),  # a control character: orjson writes this escape
        (b'\\"', True),
        (b"\\\\", True),
        (b"\\n", True),
    ],
)
def test_a_text_with_an_escape_goes_out_as_orjson_writes_it(escape: bytes, kept: bool) -> None:
    body = sse([START, *texts("w", 120), COMPLETE])
    marked = [b'"text":" w%d"' % n for n in range(40, 120, 10)]
    for mark in marked:
        assert body.count(mark) == 1
        body = body.replace(mark, mark[:-1] + escape + b'"')
    copied = same_as_replayed(body)
    assert copied >= 120 - 30 - (0 if kept else len(marked))
    assert (escape in convert(body, 64)[0]) == kept


def test_logprobs_and_a_stop_reason_break_a_run() -> None:
    scored = text(" scored")
    scored["event"]["logprobs"] = [{"logprobs_by_token": {" scored": -0.1}}]
    stopped = text(" stopped", stop="end_of_turn")
    body = sse([START, *texts("a", 60), scored, *texts("b", 60), stopped, *texts("c", 60),
                COMPLETE])  # fmt: skip
    assert same_as_replayed(body) > 120


def test_tool_calls_between_runs() -> None:
    """A call that succeeds, and one that fails (its arguments no JSON: the encoder holds
    it open, and the text after it closes it), between runs of text."""
    succeeded = {"call_id": "c1", "tool_name": "get_weather", "arguments": {"city": "Paris"}}
    body = sse([
        START, *texts("a", 60),
        call("started", ""), call("in_progress", '{"city": '), call("in_progress", '"Paris"}'),
        event("progress", {"type": "tool_call", "tool_call": succeeded,
                           "parse_status": "succeeded"}),
        *texts("b", 60),
        call("started", ""), call("in_progress", "get_weather(city="),
        call("failed", "get_weather(city="),
        *texts("c", 60), COMPLETE,
    ])  # fmt: skip
    assert same_as_replayed(body) > 120


def test_another_key_order_is_replayed() -> None:
    """Records whose keys are in another order than the encoder writes them: their bytes
    are not what it writes, so each is replayed (the JSON values the same)."""
    body = sse([START, *texts("a", 80), COMPLETE]).replace(
        b'"logprobs":null,"stop_reason":null},"metrics":null',
        b'"stop_reason":null,"logprobs":null},"metrics":null',
    )
    assert same_as_replayed(body) == 0
    out = convert(body, 4096)[0]
    assert [orjson.loads(line[6:]) for line in out.split(b"\n\n") if line] == [
        orjson.loads(line[6:]) for line in body.split(b"\n\n") if line
    ]


@pytest.mark.parametrize("out_container", ["jsonl", "json"])
def test_other_containers_write_the_same(out_container: str) -> None:
    body = sse([START, *(text(f" w{n}é\\n") for n in range(100)), COMPLETE])
    assert same_as_replayed(body, (64,), out_container=out_container) > 80


def test_json_lines_with_a_line_begun_in_an_earlier_block() -> None:
    lines = [START, *texts("w", 100), COMPLETE]
    body = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    assert same_as_replayed(body, (50, 333), container="jsonl") > 80


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in sorted(FIXTURES.iterdir())])
def test_fixtures(path: Path) -> None:
    same_as_replayed(path.read_bytes())


@pytest.mark.parametrize("path", capture_params(LLAMA))
def test_captures(path: Path) -> None:
    same_as_replayed(path.read_bytes())


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=60)
@given(strings=as_input.strings_written('"\\/ aé\x00\x1f\u2028😀<|>'))
def test_any_text_written_any_way_goes_out_as_replayed(strings: list[bytes]) -> None:
    chunks = [orjson.dumps(p) for p in [START, *texts("w", 30)]]
    for written in strings:
        chunks.append(orjson.dumps(text("\x00")).replace(b'"\\u0000"', written))
    body = b"".join(b"data: " + c + b"\n\n" for c in [*chunks, orjson.dumps(COMPLETE)])
    same_as_replayed(body, (64,))

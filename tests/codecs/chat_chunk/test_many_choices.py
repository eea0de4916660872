"""A stream of many choices in turn: the chat run hook keeps a template for each choice's
kind of item, and where the one of the moment knows no run it tries only the few it made
or used last, so a record costs the same whatever the number of choices (a stream of 1000
choices in turn took 37 s of CPU for 61k records when every kept template was tried at
every record, 1 s now). What it finds is still what decoding each record finds."""

from __future__ import annotations

import json
from unittest import mock

import pytest

from chatx.codecs.chat_chunk.run_hook import KEPT_TRIED
from chatx.codecs.template import DeltaTemplate, RunDecoder
from tests.streams import fed


def stream(choices: int, rounds: int, runs: int) -> bytes:
    """``choices`` choices opened, then ``rounds`` rounds of one chunk each in turn, then
    ``runs`` chunks of each choice one after the other (runs a kept template finds)."""
    lines = []

    def chunk(index: int, delta: dict[str, object]) -> None:
        choice = {"index": index, "delta": delta, "finish_reason": None}
        data = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        lines.append(json.dumps({**data, "choices": [choice]}, separators=(",", ":")))

    for k in range(choices):
        chunk(k, {"role": "assistant", "content": ""})
    for r in range(rounds):
        for k in range(choices):
            chunk(k, {"content": f" r{r}"})
    for k in range(choices):
        for r in range(runs):
            chunk(k, {"content": f" s{r}"})
    return "".join(f"data: {line}\n\n" for line in [*lines, "[DONE]"]).encode()


@pytest.mark.parametrize("dst", ["chat-chunk", "anthropic-event"])
def test_many_choices_in_turn_try_a_few_templates_a_record(dst):
    body = stream(choices=200, rounds=20, runs=40)
    records = body.count(b"\n\n")
    tried = 0
    run = DeltaTemplate.run

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal tried
        tried += 1
        return run(self, *args, **kwargs)

    setup = {"choice": 3} if dst == "anthropic-event" else {}
    with mock.patch.object(DeltaTemplate, "run", counted):
        got = fed(body, range(0, len(body), 4096), dst, **setup)
    # The one of the moment and at most KEPT_TRIED kept ones, for each record a run
    # may start at.
    assert tried <= (KEPT_TRIED + 1) * records
    with mock.patch.object(RunDecoder, "run", lambda self, records, start: None):
        alone = fed(body, range(0, len(body), 4096), dst, **setup)
    assert got[:2] == alone[:2]

"""What of a long answer the Gemini decoder and encoder hold for citations' spans
(grounding.py: Spans, and the writer's text per candidate): the text folded as
:class:`~chatx.pieces.Pieces`, never one str a chunk. A list of those held a 1M-chunk
stream at about 60 bytes a chunk (gemini-event -> gemini-event peaked at 102 MiB in
``bench/cpu.py``, 28 MiB folded); counting the strs reachable says so without measuring
memory."""

from __future__ import annotations

import gc
import types
from typing import Any

from chatx.pipeline import Transcoder

from .test_run_hook import chunk, last, sse

CHUNKS = 5000
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)


def strs_reachable(root: Any) -> int:
    """How many str objects ``root`` reaches (classes, modules and functions not
    followed: they reach the whole program)."""
    seen: set[int] = set()
    stack, count = [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _OPAQUE):
            continue
        seen.add(id(obj))
        if type(obj) is str:
            count += 1
            continue
        stack.extend(gc.get_referents(obj))
    return count


def chat_chunk(delta: dict[str, Any]) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": None}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
    }


def test_a_long_answer_is_held_folded_by_the_decoder() -> None:
    texts = [f" w{i}" for i in range(CHUNKS)]
    transcoder = Transcoder("gemini-event")
    out = transcoder.feed(sse([chunk(text) for text in texts]))
    read = transcoder.conversion.decoder.hook.read  # type: ignore[attr-defined]
    (spans,) = [lane.spans for lane in read.lanes.values()]
    # It holds the whole text so far, for a citation that may come on a later chunk...
    assert spans.texts.equals("".join(texts)) and spans.item_from == 0
    # ...as at most one fold's worth of loose pieces (1024), not a str for each of 5000.
    assert strs_reachable(read.lanes) < CHUNKS // 2
    out += transcoder.feed(sse([last()])) + transcoder.finish()
    assert b" w4999" in out


def test_another_formats_long_answer_is_held_folded_by_the_encoder() -> None:
    texts = [f" w{i}" for i in range(CHUNKS)]
    records = [chat_chunk({"role": "assistant", "content": ""})]
    records += [chat_chunk({"content": text}) for text in texts]
    transcoder = Transcoder("gemini-event")
    out = transcoder.feed(sse(records))
    lanes = transcoder.conversion.encoder.grounding.lanes  # type: ignore[attr-defined]
    (written,) = lanes.values()
    assert written.texts.equals("".join(texts))
    assert strs_reachable(lanes) < CHUNKS // 2
    out += transcoder.feed(b"data: [DONE]\n\n") + transcoder.finish()
    assert b" w4999" in out

"""The Anthropic encoder's runs (anthropic_event/runs.py): a long run of deltas is
written in one loop, and gives what its records' batches fed one by one give, from
every source format."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx.notes import Notes
from chatx.pipeline import Transcoder, convert
from tests.builders.anthropic_event import (
    DELTA_KINDS,
    MESSAGE_STOP,
    block_delta,
    block_start,
    block_stop,
    message_delta,
    message_start,
)

SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=100)
TARGET = "anthropic-event"
SOURCES = ("chat-chunk", "responses-event", "llama-stack-event", TARGET)
BLOCKS = DELTA_KINDS


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )


def anthropic_body(blocks: list[tuple[str, list[str]]]) -> bytes:
    events = [message_start()]
    for index, (kind, texts) in enumerate(blocks):
        start, dtype, field = BLOCKS[kind]
        events.append(block_start(index, start))
        events += [block_delta(index, {"type": dtype, field: text}) for text in texts]
        if kind == "thinking":
            events.append(block_delta(index, {"type": "signature_delta", "signature": "c2ln"}))
        events.append(block_stop(index))
    return sse([*events, message_delta(), MESSAGE_STOP])


def source_body(src: str, blocks: list[tuple[str, list[str]]]) -> bytes:
    body = anthropic_body(blocks)
    return body if src == TARGET else convert(body, dst=src, src=TARGET)


def chat_with_residue(texts: list[str], obfuscated: bool) -> bytes:
    """Chat chunks with a field Anthropic has no place for on each (and an obfuscation)."""
    head = {"id": "chatcmpl-r1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        data: dict[str, Any] = {**head, "service_tier": "default", "choices": [choice]}
        if obfuscated:
            data["obfuscation"] = "xyz"
        return b"data: " + orjson.dumps(data) + b"\n\n"

    body = chunk({"role": "assistant", "content": ""})
    body += b"".join(chunk({"content": text}) for text in texts)
    return body + chunk({}, "stop") + b"data: [DONE]\n\n"


def transcode(body: bytes, step: int, replay: bool) -> tuple[bytes, list[Any], list[int]]:
    """``body`` to Anthropic in blocks of ``step`` bytes (the first its first five
    records, so the codecs are open before most deltas come: they come raw, in runs); ``replay`` hands each run
    to the base encoder's replay of its batches. Also the number of ``feed`` calls made
    inside each run."""
    notes = Notes()
    transcoder = Transcoder(TARGET, notes=notes)
    cut = 0
    for _ in range(5):  # the format is known by the fourth record at the latest
        cut = body.find(b"\n\n", cut) + 2 if body.find(b"\n\n", cut) >= 0 else len(body)
    out = transcoder.feed(body[:cut])
    fed: list[int] = []
    if transcoder.conversion is not None:
        encoder: Any = transcoder.conversion.encoder
        feed = encoder.feed
        calls = [0]

        def counted(batch: Any) -> list[Any]:
            calls[0] += 1
            return feed(batch)

        def replayed(run: Any) -> list[Any]:
            return run.replay(encoder.feed, encoder.notes)

        run_once = replayed if replay else encoder.feed_run

        def feed_run(run: Any) -> list[Any]:
            calls[0] = 0
            encoder.feed = counted
            try:
                return run_once(run)
            finally:
                encoder.feed = feed
                fed.append(calls[0])

        encoder.feed_run = feed_run
    rest = body[cut:]
    out += b"".join(transcoder.feed(rest[i : i + step]) for i in range(0, len(rest), step))
    out += transcoder.finish()
    return out, [(n.kind, n.message, n.line) for n in notes.summary()], fed


def test_a_long_run_is_written_in_the_encoders_loop():
    """Each long run from every source format takes ``feed`` for one record at most (the
    one that opens its block), not once per record as the base replay does."""
    for src in SOURCES:
        for kind in BLOCKS:
            texts = [f'w{i} "q" é\\' if kind != "tool_use" else f'"a{i}",' for i in range(3000)]
            body = source_body(src, [(kind, texts)])
            out, notes, fed = transcode(body, 1 << 16, replay=False)
            if not fed:  # Llama Stack's decoder knows text records only by their bytes
                assert src == "llama-stack-event" and kind != "text", (src, kind)
                continue
            assert max(fed) <= 1, (src, kind, fed)
            replayed = transcode(body, 1 << 16, replay=True)
            assert (out, notes) == replayed[:2], (src, kind)
            assert sum(replayed[2]) > 2900, (src, kind)  # the runs were long


TEXTS = st.one_of(
    st.text(max_size=8),
    st.text(alphabet='"\\/}]{[,: nu\x00\u2028é😀', max_size=8),
    st.sampled_from(["", '\\"', "\\", '"', '"},"index":1', "\ud800"[:0]]),
)
BLOCK_LISTS = st.lists(
    st.tuples(st.sampled_from(sorted(BLOCKS)), st.lists(TEXTS, min_size=3, max_size=60)),
    min_size=1,
    max_size=4,
)


@SETTINGS
@given(
    src=st.sampled_from(SOURCES),
    blocks=BLOCK_LISTS,
    step=st.sampled_from([7, 64, 1 << 16]),
)
def test_a_run_writes_what_its_batches_write(src, blocks, step):
    """``feed_run`` gives the bytes and the notes (with their lines) of the run's batches
    fed one by one, whatever the source format, the block kinds and the texts."""
    body = source_body(src, blocks)
    assert transcode(body, step, False)[:2] == transcode(body, step, True)[:2]


@SETTINGS
@given(
    texts=st.lists(TEXTS, min_size=1, max_size=60),
    obfuscated=st.booleans(),
    step=st.sampled_from([7, 64, 1 << 16]),
)
def test_a_run_with_residue_says_it_lost_as_its_batches_do(texts, obfuscated, step):
    """Chat chunks with a field of their own and an obfuscation: each record's lost
    fields counted as its batch counts them."""
    body = chat_with_residue(texts, obfuscated)
    got = transcode(body, step, False)
    assert got[:2] == transcode(body, step, True)[:2]
    if len(texts) > 20:
        assert any("service_tier" in note[1] for note in got[1])

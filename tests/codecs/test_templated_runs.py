"""Runs into Responses and Anthropic written from a byte template
(``chatx.codecs.byte_template.Kept``): each delta event of a run is the template's bytes
with the record's text (Responses: and obfuscation and sequence number) in its holes,
where the encoder built a dict of each before. The output must be byte for byte what the
dicts gave, notes included (:mod:`tests.templated`), from every format, whole and in
blocks, as SSE (whose ``event:`` line a Dumped names), JSON lines and one JSON array."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests import templated
from tests.bench_streams import generate
from tests.paths import FIXTURES
from tests.templated import CONTAINERS, convert, same_as_copied, strewn

RESPONSES = "responses-event"
SOURCES = ("chat-chunk", "anthropic-event", "llama-stack-event", "gemini-event", RESPONSES)
TARGETS = (RESPONSES, "anthropic-event")


def chat(texts: list[str], *, field: str = "content", obfuscated: bool = True) -> bytes:
    """A chat stream of one text (or reasoning) delta a text, ``obfuscated`` as OpenAI
    does, escaped as ``json.dumps`` escapes (a lone surrogate as ``\\udXXX``)."""
    head = {"id": "chatcmpl-%s", "object": "chat.completion.chunk", "created": 1, "model": "m%d"}
    lines = []
    for n, text in enumerate(texts):
        chunk: dict[str, Any] = {
            **head,
            "choices": [{"index": 0, "delta": {field: text}, "finish_reason": None}],
        }
        if obfuscated:
            chunk["obfuscation"] = "o" * (n % 7) + '",\\'[n % 3]
        lines.append("data: " + json.dumps(chunk, separators=(",", ":")) + "\n\n")
    lines.append(
        "data: "
        + json.dumps({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        + "\n\ndata: [DONE]\n\n"
    )
    return "".join(lines).encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("field", ["content", "reasoning_content"])
@pytest.mark.parametrize("obfuscated", [True, False])
def test_adversarial_texts(target: str, field: str, obfuscated: bool) -> None:
    body = chat(strewn(300), field=field, obfuscated=obfuscated)
    assert same_as_copied(body, target, sizes=(7, 64)) > 100


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", generate.KINDS)
@pytest.mark.parametrize("container", CONTAINERS)
def test_the_bench_kinds_of_stream(target: str, kind: str, container: str | None) -> None:
    """Reasoning, text and tool calls, as the bench's streams have them: every run long
    enough is written from a template, and the template of a run that goes on across a
    read's end is the one made before (the sequence numbers go on)."""
    body = generate.chat_bytes(kind, 1200)
    written = same_as_copied(body, target, sizes=(300,), out_container=container)
    assert written > 700  # of 1200 (each tool call's first fragments go the long way)


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_cut_by_reads_goes_on_from_the_template_made_before(target: str) -> None:
    body = chat([f" w{n}" for n in range(2000)])
    whole = convert(body, 4096, target)
    small = convert(body, 1000, target)  # runs of a few records each
    assert whole[:2] == small[:2]
    # Most of them short runs: the template made once is kept (Anthropic writes each
    # run's first record the long way, a tenth of them here).
    assert small[2] > 1600


def test_each_event_is_named_for_its_type() -> None:
    out = convert(chat([f" w{n}" for n in range(100)]), 4096, RESPONSES)[0]
    blocks = [b for b in out.split(b"\n\n") if b]
    for block in blocks:
        name, _, data = block.partition(b"\ndata: ")
        assert name == b"event: " + orjson.loads(data)["type"].encode()
    numbers = [orjson.loads(b.partition(b"\ndata: ")[2])["sequence_number"] for b in blocks]
    assert numbers == list(range(len(blocks)))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", templated.captures_of(SOURCES))
def test_captures(path: Path, target: str) -> None:
    templated.Target(target).same_in_every_container(path.read_bytes())


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/*.*")), ids=lambda p: p.name)
def test_fixtures(path: Path, target: str) -> None:
    same_as_copied(path.read_bytes(), target, sizes=(7,))

"""Another format's runs into Llama Stack written from a byte template
(``chatx.codecs.byte_template.PayloadTemplate``): a run's text deltas, where the
special-token scanner would let each text through whole, and its tool-call argument
fragments are each the template's bytes with the record's text in its hole, where the
encoder scanned each text and built a dict of each record before. The output must be
byte for byte the scan's, notes included: each case is converted the way before (every
text through ``Text.scan``, every record a dict) and as the CLI converts it, whole and in
blocks, and the records written from a template are counted (:mod:`tests.templated`), so
that a case says which path it took.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.llama_stack_event.encode import LlamaStackEncoder
from chatx.codecs.llama_stack_event.special_tokens import TOKENS
from chatx.codecs.llama_stack_event.text import Text
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.record import Dumped
from tests import templated
from tests.bench_streams import generate
from tests.paths import FIXTURES
from tests.streams import dumped
from tests.templated import CONTAINERS, copied, strewn

SOURCES = ("chat-chunk", "anthropic-event", "gemini-event", "responses-event")


@contextmanager
def scanned() -> Iterator[None]:
    """The path before: every text of a run through the scanner, every record a dict."""
    with copied(), mock.patch.object(Text, "plain", lambda self, texts: False):
        yield


LLAMA = templated.Target("llama-stack-event", scanned)


def chat(
    texts: list[str],
    *,
    ascii: bool = True,
    model: str = "m%d",
    inserted: dict[int, dict[str, Any]] | None = None,
) -> bytes:
    """A chat stream of one content delta a text (and the choices ``inserted`` before
    the text at their place), escaped as ``json.dumps`` escapes when ``ascii`` (a lone
    surrogate as ``\\udXXX``)."""
    head = {"id": "chatcmpl-%s", "object": "chat.completion.chunk", "created": 1, "model": model}
    choices = [{"index": 0, "delta": {"content": t}, "finish_reason": None} for t in texts]
    for at, choice in sorted((inserted or {}).items(), reverse=True):
        choices.insert(at, {"index": 0, **choice, "finish_reason": None})
    choices.append({"index": 0, "delta": {}, "finish_reason": "stop"})
    return templated.chat_sse(head, choices, ascii)


def events(out: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(b[6:])["event"] for b in out.split(b"\n\n") if b.startswith(b"data: {")]


def test_a_long_run_is_written_from_its_template() -> None:
    body = chat([f" word{n}" for n in range(500)])
    written = LLAMA.same(body)
    assert 400 < written <= 500  # the records of the first block are fed one by one
    out = LLAMA.convert(body, len(body))[0]
    progress = [e for e in events(out) if e["event_type"] == "progress"]
    assert [e["delta"]["text"] for e in progress] == [f" word{n}" for n in range(500)]


@pytest.mark.parametrize("ascii", [True, False], ids=["escaped", "utf8"])
def test_adversarial_texts(ascii: bool) -> None:
    texts = strewn(300, ascii, more=("|eot_id|> no opening bracket",))
    body = chat(texts, ascii=ascii)
    assert LLAMA.same(body, sizes=(7, 64)) > 100


def encoded(runs: list[list[str] | ir.TextDelta]) -> tuple[list[bytes], int]:
    """The records a chat source's encoder writes of ``runs`` (text runs of lane 0 fed
    to ``feed_run``, a delta between them to ``feed``) one after the other, as the
    writers write them, and how many of them came from a template."""
    encoder = LlamaStackEncoder(Notes(), EncodeOptions(source_format="chat-chunk"))
    out = encoder.feed([ir.StreamStart("s", "m"), ir.LaneStart(0)])
    for texts in runs:
        if isinstance(texts, ir.TextDelta):
            out += encoder.feed([texts])
            continue
        run = DeltaRun(ir.TextDelta(0, ""), texts, [None] * len(texts), [1] * len(texts))
        out += encoder.feed_run(run)
    out += encoder.finish()
    templated = sum(len(p.payloads) for p in out if type(p) is Dumped)
    return dumped(out), templated


def test_empty_texts_write_nothing() -> None:
    """The scanner writes no delta for an empty text, nor does the template (the
    decoders leave such records out of their runs: the runs are fed here as they are)."""
    runs: list[list[str] | ir.TextDelta]
    runs = [["" if n % 3 == 0 else f" w{n}" for n in range(k, k + 30)] for k in (0, 30, 60)]
    runs.append([""] * 20)
    with scanned():
        before = encoded(runs)
    got = encoded(runs)
    assert got[0] == before[0]
    assert got[1] == 60  # 20 texts a run but the last, the first's enough to make it
    assert len(got[0]) == 1 + 60  # start and the texts


SPECIAL = {
    "split eot": ["<|eo", "t_id|>"],
    "split eom": ["<", "|eom_", "id|>"],
    "python tag mid-run": ["call: <|python_tag|>", "brave_search.call(", 'query="x")'],
    "python tag alone": ["<|python_tag|>"],
    "a bracket that is no token": ["a < b", " and <|x|> and <", "|"],
    "a tail held to the end": ["<|eot"],
}


@pytest.mark.parametrize("tokens", SPECIAL.values(), ids=SPECIAL.keys())
@pytest.mark.parametrize("at", [0, 150, 297])
def test_special_tokens_in_a_run(tokens: list[str], at: int) -> None:
    """A token (or what might start one) in a run: the run is scanned, what the scanner
    holds or a python-tag call open keeps the runs after it scanned too, and the runs
    before it (a block's) are written from the template."""
    texts = [f" w{n}" for n in range(300)]
    texts[at : at + len(tokens)] = tokens
    body = chat(texts)
    written = LLAMA.same(body, sizes=(7, 64, 512))
    if at > 100:
        assert written > 50  # the blocks before the token
    out = LLAMA.convert(body, 4096)[0]
    assert not any(token.encode() in out for token in TOKENS)


def test_text_after_a_python_tag_is_the_call_s() -> None:
    texts = [f" w{n}" for n in range(100)] + ["<|python_tag|>"]
    texts += [f"x{n} " for n in range(300)]
    body = chat(texts)
    LLAMA.same(body, sizes=(64,))
    kinds = [e["delta"]["type"] for e in events(LLAMA.convert(body, 4096)[0])]
    assert kinds.count("tool_call") >= 300  # started, 300 fragments, failed or succeeded


def test_logprobs_waiting_for_a_text() -> None:
    """A token with logprobs: the scanner writes no text of it and keeps its logprobs
    for the next text, the first of the run after it, which goes the long way."""
    token = {"token": "<|eot_id|>", "logprob": -0.5, "bytes": [60], "top_logprobs": []}
    said = {"delta": {"content": "<|eot_id|>"}, "logprobs": {"content": [token]}}
    body = chat([f" w{n}" for n in range(300)], inserted={0: said, 150: said})
    assert LLAMA.same(body) > 200
    progress = [e for e in events(LLAMA.convert(body, 4096)[0]) if e["event_type"] == "progress"]
    assert [e["delta"]["text"] for e in progress if e["logprobs"]] == [" w0", " w150"]
    # The decoders feed the record after such a token the long way (it starts a run
    # they match anew): fed so to the encoder, a run waits for its logprobs too.
    entry = {"token": "<|eot_id|>", "logprob": -0.5}
    runs: list[list[str] | ir.TextDelta] = [[f" w{n}" for n in range(30)]]
    runs += [ir.TextDelta(0, "<|eot_id|>", [entry]), [f" x{n}" for n in range(30)]]
    with scanned():
        before = encoded(runs)
    got = encoded(runs)
    assert got[0] == before[0]
    assert got[1] == 30  # the first run's: the second's first text takes the logprobs
    assert b'"logprobs":[{' in got[0][31]


def test_a_percent_in_the_model_and_id() -> None:
    body = chat([f"{n}%s%%" for n in range(300)], model="%(m)s %d %%")
    assert LLAMA.same(body) > 200


@pytest.mark.parametrize("kind", generate.KINDS)
@pytest.mark.parametrize("source", SOURCES)
def test_the_bench_kinds_of_stream(kind: str, source: str) -> None:
    """Reasoning, text and tool calls as the bench's streams have them, from each other
    format: the text runs and the call's argument fragments go out from the template."""
    body = generate.chat_bytes(kind, 1200)
    if source != "chat-chunk":
        body = templated.convert(body, len(body), source)[0]
    written = LLAMA.same(body, sizes=(300,))
    if source == "gemini-event" and kind == "tools":
        assert written == 0  # Gemini says a call's arguments whole: no run of fragments
    elif source == "gemini-event" and kind == "mixed":
        assert written > 400  # its text's runs
    elif kind == "reasoning":  # its reasoning has no place, its text does
        assert written > 500
    else:
        assert written > 700


@pytest.mark.parametrize("container", CONTAINERS)
def test_the_containers(container: str | None) -> None:
    body = generate.chat_bytes("mixed", 1200)
    assert LLAMA.same(body, sizes=(), out_container=container) > 400


def test_a_run_cut_by_reads_goes_on_from_the_template_made_before() -> None:
    body = chat([f" w{n}" for n in range(2000)])
    small = LLAMA.convert(body, 1000)  # runs of a few records each
    with scanned():
        assert small[:2] == LLAMA.convert(body, 1000)[:2]
    assert small[2] > 1900


@pytest.mark.parametrize("path", templated.captures_of(SOURCES))
def test_captures(path: Path) -> None:
    LLAMA.same_in_every_container(path.read_bytes())


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/*.*")), ids=lambda p: p.name)
def test_fixtures(path: Path) -> None:
    LLAMA.same(path.read_bytes(), sizes=(7,))

"""Another format's plain runs into Gemini written from a byte template
(``chatx.codecs.byte_template.PayloadTemplate``, kept by ``Kept`` while the lane, the
part's kind and the response's fields stay): each chunk is the template's bytes with
the record's text in its hole, where the encoder built a dict of each before. The
output must be byte for byte what the encoder's ``feed`` writes of each record, notes
included: each case is converted the long way (every run's records replayed through
``feed``, each chunk a dict) and as the CLI converts it, whole and in blocks, and the
records written from a template are counted (:mod:`tests.templated`), so that a case
says which path it took. The run's text still goes to the citations' spans.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest

from chatx.codecs.gemini_event.encode import GeminiEncoder
from tests import templated
from tests.bench_streams import generate
from tests.captures import CAPTURES
from tests.paths import FIXTURES
from tests.templated import CONTAINERS, copied, strewn

SOURCES = ("chat-chunk", "anthropic-event", "llama-stack-event", "responses-event")


@contextmanager
def replayed() -> Iterator[None]:
    """The long way: every run's records through ``feed``, every chunk a dict."""
    with copied(), mock.patch.object(GeminiEncoder, "_plain_run", lambda self, run: False):
        yield


GEMINI = templated.Target("gemini-event", replayed)


def chat(
    runs: list[tuple[int, list[str]]],
    *,
    ascii: bool = True,
    model: str = "m%d",
    sid: str = "chatcmpl-%s",
    field: str = "content",
) -> bytes:
    """A chat stream of one delta a text, each of ``runs`` (choice, texts) in turn, the
    choices finished after them, escaped as ``json.dumps`` escapes when ``ascii`` (a lone
    surrogate as ``\\udXXX``)."""
    head = {"id": sid, "object": "chat.completion.chunk", "created": 1, "model": model}
    choices = [
        {"index": lane, "delta": {field: t}, "finish_reason": None}
        for lane, texts in runs
        for t in texts
    ]
    lanes = sorted({lane for lane, _ in runs})
    choices += [{"index": lane, "delta": {}, "finish_reason": "stop"} for lane in lanes]
    return templated.chat_sse(head, choices, ascii)


def words(n: int, prefix: str = " w") -> list[str]:
    return [f"{prefix}{k}" for k in range(n)]


def chunks(out: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(b[6:]) for b in out.split(b"\n\n") if b.startswith(b"data: {")]


def test_a_long_run_is_written_from_its_template() -> None:
    body = chat([(0, words(500))])
    written = GEMINI.same(body)
    assert 400 < written <= 500  # the records of the first block are fed one by one
    out = chunks(GEMINI.convert(body, len(body))[0])
    parts = [c["candidates"][0]["content"].get("parts", []) for c in out]
    assert [p[0]["text"] for p in parts if p] == words(500)
    assert {c["modelVersion"] for c in out} == {"m%d"}  # a % in the template, as it is


@pytest.mark.parametrize("field", ["content", "reasoning_content"])
@pytest.mark.parametrize("ascii", [True, False], ids=["escaped", "utf8"])
def test_adversarial_texts(ascii: bool, field: str) -> None:
    texts = strewn(300, ascii)
    body = chat([(0, texts)], ascii=ascii, field=field, model="%(m)s %d %%", sid="%s%%")
    assert GEMINI.same(body, sizes=(7, 64)) > 100


def test_each_lane_has_its_own_template() -> None:
    """Runs of two choices in turn: a chunk says its candidate's index."""
    body = chat([(0, words(100)), (1, words(100, " x")), (0, words(100, " y"))])
    assert GEMINI.same(body, sizes=(64, 1000)) > 200
    out = chunks(GEMINI.convert(body, 1000)[0])
    said = {
        (c["candidates"][0]["index"], c["candidates"][0]["content"]["parts"][0]["text"])
        for c in out
        if c["candidates"][0]["content"].get("parts")
    }
    assert (1, " x50") in said and (0, " y50") in said


def test_thoughts_and_text_have_their_own_template() -> None:
    reasoning = chat([(0, words(100))], field="reasoning_content")
    text = chat([(0, words(100, " t"))])
    body = reasoning.split(b"data: [DONE]")[0].rsplit(b"data: ", 1)[0] + text  # two streams
    assert GEMINI.same(body, sizes=(300,)) > 100


def test_a_second_stream_has_its_own_response_fields() -> None:
    """Two streams one after the other, alike but for the id or the model."""
    body = chat([(0, words(200))], sid="a") + chat([(0, words(200))], sid="b")
    body += chat([(0, words(200))], sid="b", model="other")
    assert GEMINI.same(body, sizes=(1000,)) > 400
    said = [(c["responseId"], c["modelVersion"]) for c in chunks(GEMINI.convert(body, 1000)[0])]
    assert said.count(("b", "m%d")) == said.count(("b", "other")) == 201


def test_a_run_cut_by_reads_goes_on_from_the_template_made_before() -> None:
    body = chat([(0, words(2000))])
    small = GEMINI.convert(body, 1000)  # runs of a few records each
    with replayed():
        assert small[:2] == GEMINI.convert(body, 1000)[:2]
    assert small[2] > 1900


CITED = CAPTURES / "responses-event" / "pydantic-ai__vercel_ai-run__i0.sse"


@pytest.mark.skipif(not CITED.is_file(), reason=f"no capture {CITED}")
def test_citations_count_the_run_s_text() -> None:
    """A Responses capture of 400 text deltas (in short runs: their obfuscation is
    of many lengths) and url citations after them: the spans Gemini's grounding says
    are counted in the runs' text, as before."""
    body = CITED.read_bytes()
    assert GEMINI.same(body, sizes=(64,)) > 150
    answer, supports = b"", []
    for chunk in chunks(GEMINI.convert(body, 4096)[0]):
        for candidate in chunk.get("candidates", []):
            for part in candidate.get("content", {}).get("parts", []):
                if "text" in part and not part.get("thought"):
                    answer += part["text"].encode()
            supports += candidate.get("groundingMetadata", {}).get("groundingSupports", [])
    assert supports
    for support in supports:  # a span in UTF-8 bytes of the answer, what it quotes
        segment = support["segment"]
        start, end = segment["startIndex"], segment["endIndex"]
        assert answer[start:end].decode() == segment["text"]


@pytest.mark.parametrize("kind", generate.KINDS)
@pytest.mark.parametrize("source", SOURCES)
def test_the_bench_kinds_of_stream(kind: str, source: str) -> None:
    """Reasoning, text and tool calls as the bench's streams have them, from each other
    format: the text and thought runs go out from the template (a call's fragments
    write nothing until it is whole)."""
    body = generate.chat_bytes(kind, 1200)
    if source != "chat-chunk":
        body = templated.convert(body, len(body), source)[0]
    written = GEMINI.same(body, sizes=(300,))
    if kind == "tools":
        assert written == 0
    elif kind == "mixed":
        assert written > 400
    elif source == "llama-stack-event" and kind == "reasoning":
        assert written > 500  # Llama Stack has no place for the reasoning: its text's
    else:
        assert written > 1000


@pytest.mark.parametrize("container", CONTAINERS)
def test_the_containers(container: str | None) -> None:
    body = generate.chat_bytes("mixed", 1200)
    assert GEMINI.same(body, sizes=(), out_container=container) > 500


@pytest.mark.parametrize("path", templated.captures_of(SOURCES))
def test_captures(path: Path) -> None:
    GEMINI.same_in_every_container(path.read_bytes())


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/*.*")), ids=lambda p: p.name)
def test_fixtures(path: Path) -> None:
    GEMINI.same(path.read_bytes(), sizes=(7,))

"""Another format's runs into chat written from a byte template
(``chatx.codecs.byte_template.PayloadTemplate``): each chunk after a run's first is the
first's bytes with the record's text (and obfuscation) in its holes, where the encoder
built a dict of each before. The output must be byte for byte what the dicts gave,
notes included (:mod:`tests.templated`: each case converted with the templates refused
and as the CLI does it, whole and in blocks, the records written from a template
counted, so that a case says which path it took).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx.codecs.byte_template import PayloadTemplate
from tests import templated
from tests.streams import dumped

CHAT = "chat-chunk"
SOURCES = ("anthropic-event", "llama-stack-event", "gemini-event", "responses-event")


def convert(body: bytes, size: int, **setup: Any) -> tuple[bytes, list[str], int]:
    return templated.convert(body, size, setup.pop("dst", CHAT), **setup)


def same_as_copied(body: bytes, sizes: tuple[int, ...] = (7,), **setup: Any) -> int:
    return templated.same_as_copied(body, setup.pop("dst", CHAT), sizes, **setup)


def anthropic(texts: list[str], *, ascii: bool = True) -> bytes:
    """An Anthropic stream of one text block, one delta a text; ``ascii`` escapes every
    character beyond ASCII as ``json.dumps`` does (a lone surrogate as ``\\udXXX``)."""
    payloads: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-%s-100%",  # a % in the template: written as it is
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 3, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
            for t in texts
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": len(texts)},
        },
        {"type": "message_stop"},
    ]
    lines = []
    for payload in payloads:
        data = json.dumps(payload, ensure_ascii=ascii, separators=(",", ":"))
        lines.append(f"event: {payload['type']}\ndata: {data}\n\n")
    return "".join(lines).encode("utf-8", "surrogatepass")


def test_a_long_anthropic_stream_is_written_from_its_template():
    texts = [f" word{n}" for n in range(500)]
    body = anthropic(texts)
    written = same_as_copied(body)
    # All but the first block's records and each run's first chunk.
    assert 400 < written < 500
    out = convert(body, len(body))[0]
    assert out.count(b"data: ") == 500 + 4  # role, 500 texts, finish, usage, [DONE]
    assert b'"content":" word499"}' in out


@pytest.mark.parametrize("ascii", [True, False], ids=["escaped", "utf8"])
def test_adversarial_texts(ascii):
    body = anthropic(templated.strewn(300, ascii), ascii=ascii)
    assert same_as_copied(body, sizes=(7, 64)) > 0


def test_a_template_writes_what_orjson_writes_of_the_dict():
    base = {"id": "c", "choices": [{"index": 0, "delta": {"content": "x"}}], "o": "y"}

    def copy(text: str, obfuscation: str | None, number: Any = None) -> dict[str, Any]:
        out = {**base, "choices": [{"index": 0, "delta": {"content": text}}]}
        if obfuscation is not None:
            out["obfuscation"] = obfuscation
        return out

    for obfuscated in (False, True):
        template = PayloadTemplate.of(copy, obfuscated)
        assert template is not None
        texts = [t for t in templated.ADVERSARIAL if not any(0xD800 <= ord(c) < 0xE000 for c in t)]
        obfuscations = [f"o%s{n}" if obfuscated else None for n in range(len(texts))]
        out = template.write(texts, obfuscations, copy)
        assert len(out) == 1  # the records' bytes, one Dumped
        assert dumped(out) == [
            orjson.dumps(copy(t, o)) for t, o in zip(texts, obfuscations, strict=True)
        ]
        # A record whose obfuscation the template has no hole for: the dicts.
        mixed = [None, *obfuscations[1:]] if obfuscated else ["z", *obfuscations[1:]]
        assert template.write(texts, mixed, copy) == list(map(copy, texts, mixed))
        # A text orjson refuses (a lone surrogate, which the readers mend before): the
        # dicts, which the writers' fallback writes.
        odd = ["a", "lone \ud800", "b"]
        assert template.write(odd, obfuscations[:3], copy) == list(map(copy, odd, obfuscations[:3]))


def test_a_chunk_orjson_refuses_has_no_template():
    def copy(text: str, obfuscation: str | None, number: Any = None) -> dict[str, Any]:
        return {"big": 2**70, "choices": [{"delta": {"content": text}}]}

    assert PayloadTemplate.of(copy, False) is None


@pytest.mark.parametrize("source", SOURCES)
def test_the_bench_kinds_of_run_are_templated(source):
    """A chat stream converted into each other format and back: its runs are written
    from a template, byte for byte as before (obfuscation from Responses included)."""
    chat = b"".join(
        b"data: "
        + orjson.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": f" t{n}"}, "finish_reason": None}],
                "obfuscation": f"ob{n}",
            }
        )
        + b"\n\n"
        for n in range(300)
    )
    chat += b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,'
    chat += b'"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    chat += b"data: [DONE]\n\n"
    body = convert(chat, len(chat), dst=source)[0]
    assert same_as_copied(body) > 200


@pytest.mark.parametrize("path", templated.captures_of(SOURCES))
def test_captures(path: Path):
    body = path.read_bytes()
    same_as_copied(body)
    same_as_copied(body, sizes=(), out_container="jsonl")
    same_as_copied(body, sizes=(), out_container="json")  # one JSON array

"""What listing a large file of exchanges costs besides finding its entries: records past
the few a format is told from are counted, not parsed. (Timings: bench/results.md.)"""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from chatx.containers import bodies, sse
from chatx.containers.bodies import Entry
from chatx.reading.telling import classify
from tests.builders.chat_chunk import chat_text
from tests.streams import sse as sse_bytes

WORDS = [f" word{i}" for i in range(5000)]
STREAM = sse_bytes(chat_text(*WORDS))


def test_records_past_the_first_are_counted_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = []

    class Counting:
        JSONDecodeError = orjson.JSONDecodeError

        @staticmethod
        def loads(data: Any) -> Any:
            parsed.append(len(data))
            return orjson.loads(data)

    monkeypatch.setattr(sse, "orjson", Counting)
    stream = classify(Entry(0, load=lambda: STREAM), "x#0")
    records = STREAM.count(b"\n\ndata: ") + 1  # the chunks and [DONE]
    assert (stream.kind, stream.format, stream.records) == ("stream", "chat-chunk", records)
    assert stream.model is not None
    # the first read's records are parsed (the format is told from the first four); past
    # them, none: a 5000-chunk stream once parsed every one
    first_read = STREAM[: 1 << 16].count(b"\n\n")
    assert 4 <= len(parsed) <= first_read < records // 4


def test_base64_with_blanks_decodes() -> None:
    # the blanks (every \s) are deleted by bytes.translate, at C speed, before decoding
    data = bytes(range(256)) * 64
    wrapped = base64.encodebytes(data)  # a line break every 76 characters
    spaced = wrapped.replace(b"\n", b" \t\r\n\x0b\x0c")
    assert bodies.b64(wrapped) == bodies.b64(spaced.decode()) == data
    with pytest.raises(bodies.BodyError, match="bad base64: Only base64 data is allowed"):
        bodies.b64(wrapped[:100] + b"*" + wrapped[100:])
    with pytest.raises(bodies.BodyError, match="bad base64: a character that is not base64"):
        bodies.b64("é" + wrapped.decode())

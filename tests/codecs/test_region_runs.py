"""Runs found in a read's lines (:meth:`chatx.codecs.block_reader.BlockReader.region`)
held to the conversion without runs: every record decoded on its own must give the
same bytes and notes. The streams are long runs of plain chunks with, among them,
records a template almost knows: the same head with another end of the same length,
escapes next to a hole's quotes, bytes no JSON holds, a space where orjson writes none."""

from __future__ import annotations

import json
from unittest import mock

import pytest

from chatx.codecs.template import RunDecoder
from chatx.record import RawRegion
from tests.streams import fed

HEAD = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "m",
    "system_fingerprint": "fp",
}


def chunk(text: str, obfuscation: str | None, field: str = "content") -> str:
    data = {
        **HEAD,
        "choices": [{"index": 0, "delta": {field: text}, "logprobs": None, "finish_reason": None}],
    }
    if obfuscation is not None:
        data["obfuscation"] = obfuscation
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def plain(n: int, obfuscated: bool, field: str = "content") -> list[str]:
    return [chunk(f" w{k}", f"o{k}" if obfuscated else None, field) for k in range(n)]


def odd_lines(obfuscated: bool) -> list[str]:
    """Records one template almost knows."""
    obf = "xyz" if obfuscated else None
    base = chunk("tail", obf)
    return [
        base.replace('"logprobs":null', '"logprobs":true'),  # another end, one length
        base.replace('"finish_reason":null', '"finish_reason":true'),
        chunk('ends in a quote \\"', obf),
        chunk("ends in a backslash \\", obf),
        chunk('"', obf),
        chunk("", obf),  # no text: a record of its own
        base.replace('"content":"tail"', '"content": "tail"'),  # a space orjson never writes
        base.replace('"content":"tail"', '"content":"ta\\u0069l"'),  # an escape it does not
        base.replace("tail", "ta\x03il"),  # a byte no JSON string holds, and a marker
        base.replace("tail", "ta\x04il"),
        base.replace("tail", 'ta","il'),
        base[: base.index('"content":"') + len('"content":"')] + '"}]}',  # head, then end
        base.replace('"model":"m"', '"model":"n"'),  # another head, one length
        base.replace('"created":1700000000', '"created":1700000001'),
        # A marker byte where the bytes between two holes should be: no JSON at all.
        base.replace('"},"logprobs":null,"finish_reason":null}],"obfuscation":"', "\x04"),
        chunk("reasoning", obf, "reasoning_content"),  # another kind
    ]


def stream(obfuscated: bool, container: str) -> bytes:
    lines = plain(40, obfuscated)
    for odd in odd_lines(obfuscated):  # each alone within a long run
        lines += [odd, *plain(40, obfuscated)]
    lines += [*odd_lines(obfuscated), *plain(40, obfuscated)]  # one after the other
    if container == "sse":
        return "".join(f"data: {line}\n\n" for line in [*lines, "[DONE]"]).encode()
    return "".join(f"{line}\n" for line in lines).encode()


@pytest.mark.parametrize("obfuscated", [False, True])
@pytest.mark.parametrize("container", ["sse", "jsonl"])
@pytest.mark.parametrize("dst", ["responses-event", "chat-chunk", "anthropic-event"])
def test_runs_found_in_lines_change_nothing(obfuscated, container, dst):
    body = stream(obfuscated, container)
    found = 0
    region = RawRegion.__len__

    def counted(self: RawRegion) -> int:
        nonlocal found
        found += 1
        return region(self)

    for size in (len(body), 65536, 4096, 333, 7):
        with mock.patch.object(RunDecoder, "run", lambda self, records, start: None):
            alone = fed(body, range(0, len(body), size), dst)
        with mock.patch.object(RawRegion, "__len__", counted):
            got = fed(body, range(0, len(body), size), dst)
        assert got[:2] == alone[:2], size
    assert found  # the runs were read in regions

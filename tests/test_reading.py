"""Reading for the commands that only decode (collect, diff --semantic): a payload over
LONG_PAYLOAD may come raw, for the decoder to parse around the texts it holds. What they
print must not change: the same streams, the same notes, the same errors."""

from __future__ import annotations

import orjson
import pytest

from chatx import containers
from chatx.codecs.around import parsed_around
from chatx.codecs.responses_event import run_hook
from chatx.collect import collect
from chatx.collect.streams import streams_of
from chatx.containers.payload import LONG_PAYLOAD
from chatx.reading.framing import load
from chatx.record import Record
from tests.codecs.test_templates import responses_with
from tests.inprocess import run

WORDS = [f'w{n} é😀 "q" ' for n in range(60000)]
TEXT = "Hello! How can I help?" + "".join(WORDS)  # the fixture's deltas, then these


def long_stream(jsonl: bool = False) -> bytes:
    """A Responses stream whose four closing events each repeat a text over 1 MiB."""
    body = responses_with(WORDS, obfuscate=False).replace(
        b'"Hello! How can I help?"', orjson.dumps(TEXT)
    )
    assert body.count(orjson.dumps(TEXT)) == 4 and len(orjson.dumps(TEXT)) > LONG_PAYLOAD
    if jsonl:
        lines = [line[6:] for line in body.splitlines() if line.startswith(b"data: ")]
        body = b"\n".join(lines) + b"\n"
    return body


@pytest.mark.parametrize("name", ["sse", "jsonl"])
def test_readers_leave_only_long_payloads_raw(name):
    short = b'{"type":"x","n":1}'
    long = b'{"type":"y","t":"' + b"a" * (LONG_PAYLOAD + 1) + b'"}'
    bad = b'{"type":' + b" " * (LONG_PAYLOAD + 1)
    if name == "sse":
        data = b"".join(b"data: " + p + b"\n\n" for p in (short, long, bad))
    else:
        data = b"\n".join((short, long, b"   ", bad)) + b"\n"
    reader = containers.get(name).reader()
    reader.raw_over = LONG_PAYLOAD
    records = reader.feed(data) + reader.finish()
    assert records[0] == Record({"type": "x", "n": 1}, None, 1)
    assert [(r.raw, r.data, r.error) for r in records[1:]] == [
        (long, None, None),
        (bad, None, None),
    ]
    assert [r.line for r in records] == ([1, 3, 5] if name == "sse" else [1, 2, 4])


@pytest.mark.parametrize("jsonl", [False, True])
def test_collect_reads_long_payloads_around_the_text_held(monkeypatch, jsonl):
    data = long_stream(jsonl)
    around: list[bool] = []

    def counted(record: Record, texts: list[str]) -> Record | None:
        got = parsed_around(record, texts)
        around.append(got is not None)
        return got

    expected = _collected(data)
    monkeypatch.setattr(run_hook, "parsed_around", counted)
    assert _collected(data) == expected
    assert around == [True] * 4  # the four events that repeat the text
    assert expected[0][0]["output"][0]["content"][0]["text"] == TEXT


def _collected(data: bytes) -> tuple[list[dict], list[tuple[str, str, int | None]]]:
    side = load(data, "long.sse")
    built = [
        collect(s, "responses", source=side.format, notes=side.notes) for s in streams_of(side)
    ]
    return built, [(n.kind, n.message, n.line) for n in side.notes.items]


def test_a_long_payload_that_is_not_json_is_still_said_once(tmp_path):
    data = long_stream()
    cut = data.rindex(b'"sequence_number"')  # the terminal event, cut short
    broken = data[:cut] + b"\n\n"
    line = broken[: broken.rindex(b"event: ")].count(b"\n") + 1  # where its block starts
    path = tmp_path / "broken.sse"
    path.write_bytes(broken)
    other = tmp_path / "chat.sse"
    other.write_bytes(run(["convert", str(path), "--to", "chat-chunk"]).stdout)

    collected = run(["collect", str(path)])
    assert collected.code == 2
    said = [x for x in collected.err.splitlines() if "invalid JSON" in x]
    assert len(said) == 1 and f"broken.sse:{line}" in said[0], collected.err

    diffed = run(["diff", "--semantic", str(other), str(path)])
    assert diffed.code == 2
    said = [x for x in diffed.err.splitlines() if "invalid JSON" in x]
    assert len(said) == 1 and f"broken.sse:{line}" in said[0], diffed.err


def test_show_still_names_every_record(tmp_path):
    """show names each record after its decoder read it: a long one left raw too."""
    from collections import Counter

    from chatx.reading.framing import read_records
    from chatx.show import record_kinds

    data = long_stream()
    expected = Counter(k for r in read_records(data)[1] for k in record_kinds(r))
    path = tmp_path / "long.sse"
    path.write_bytes(data)
    shown = run(["show", str(path)])
    assert shown.code == 0, shown.err
    said = " ".join(shown.stdout.decode().split())
    assert " · ".join(f"{k} {n}" for k, n in expected.most_common()) in said
    assert "response.completed 1" in said

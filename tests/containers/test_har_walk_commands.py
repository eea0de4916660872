"""Every command reads a HAR whose entries are all walked, their bodies read in pieces
(``har.BIG`` 0, ``har.PIECE`` 16: what an entry of hundreds of MB takes), exactly as it
reads the HAR parsed entry by entry: the fixtures, the real samples, bodies plain,
base64 and gzip'd, streams and non-streaming objects, bodies that cannot be decoded."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatx.containers import har, json_walk
from tests.containers import make_fixtures as made
from tests.containers.common import FIXTURES, SAMPLES, chatx, commands_alike, runs

SSE = (b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x",'
       b'"choices":[{"index":0,"delta":{"role":"assistant","content":"h\\u00e9 \\"q\\""},'
       b'"finish_reason":null}]}\n\n'
       b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x",'
       b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
       b"data: [DONE]\n\n")  # fmt: skip
URL = "https://api.openai.com/v1/chat/completions"


def made_har(folder: Path) -> str:
    """A HAR of each kind of body the walk decodes: plain, base64, gzip'd, Polly's
    chunks, one that cannot be decoded, a non-streaming object, an empty one."""

    def entry(content: dict[str, object], headers: list[dict[str, str]] | None = None) -> object:
        return made.har_entry("POST", URL, {"model": "gpt-x", "stream": True}, 200,
                              {"mimeType": "text/event-stream", **content}, headers)  # fmt: skip

    b64 = base64.b64encode
    entries = [
        entry({"text": SSE.decode()}),
        entry({"encoding": "base64", "text": b64(SSE).decode()}),
        entry(
            {"encoding": "base64", "text": b64(gzip.compress(SSE, mtime=0)).decode()},
            [{"name": "content-encoding", "value": "gzip"}],
        ),
        entry(
            {
                "encoding": "base64",
                "text": json.dumps([b64(SSE[:50]).decode(), b64(SSE[50:]).decode()]),
            }
        ),
        entry({"encoding": "base64", "text": "not base64!"}),
        entry({"text": json.dumps({"object": "chat.completion", "choices": []})}),
        entry({"text": "  \n "}),
    ]
    path = folder / "made.har"
    path.write_bytes(made.har(entries))
    return str(path)


def bad_hars(folder: Path) -> Iterator[str]:
    """HARs whose second entry is no JSON: the error names the file, the entry and its
    line, and the run ends with 2, walked or not."""
    good = made.har([{"response": {"content": {"text": SSE.decode()}}}] * 3)
    second = good.index(b'"text": "', good.index(b'"text": "') + 1) + 20  # in entry 1's body
    for name, data in [
        ("escape.har", good[:second] + b"\\q" + good[second:]),
        ("utf8.har", good[:second] + b"\xff" + good[second:]),
        ("control.har", good[:second] + b"\x01" + good[second:]),
        ("cut.har", good[:second]),
        (
            "nested.har",
            good[:second] + b'", "x": ' + b"[" * 1100 + b"]" * 1100 + b', "y": "' + good[second:],
        ),  # fmt: skip
    ]:
        path = folder / name
        path.write_bytes(data)
        yield str(path)


def hars(folder: Path) -> Iterator[str]:
    yield from sorted(str(p) for p in FIXTURES.glob("*.har"))
    if SAMPLES.is_dir():
        yield from sorted(str(p) for p in SAMPLES.rglob("*.har"))
    yield made_har(folder)
    yield from bad_hars(folder)


def test_every_body_read_in_pieces_reads_as_one_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each body parsed with its entry read in pieces (as one past ``har.PIECES``)."""
    commands_alike(list(hars(tmp_path)), monkeypatch, har, PIECES=0, PIECE=7)


def test_every_command_reads_walked_entries_as_parsed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [args for path in hars(tmp_path) for args in runs(path)]
    assert len(cases) > 20
    before = [chatx(*args) for args in cases]
    monkeypatch.setattr(har, "BIG", 0)
    monkeypatch.setattr(har, "PIECE", 16)
    walked: list[int] = []
    real = json_walk.Walk.value

    def counted(self: json_walk.Walk) -> Any:
        walked.append(self.line)
        return real(self)

    monkeypatch.setattr(json_walk.Walk, "value", counted)
    for args, was in zip(cases, before, strict=True):
        now = chatx(*args)
        said = was.err
        if args[1].endswith("utf8.har"):
            # orjson says bad UTF-8 at the start of what it is given: the entry held,
            # the piece of its body walked. The walk's line is the byte's own.
            assert said.count(":17: not valid JSON in log.entries[1]: ") == 1, said
            said = said.replace(":17: ", ":20: ")
        assert (now.code, now.stdout, now.err) == (was.code, was.stdout, said), args
    assert len(walked) > len(cases)  # every entry of every file read, walked
    bad = [was for was in before if "not valid JSON in log.entries[1]" in was.err]
    assert len(bad) >= 2 * 4 and all(was.code == 2 for was in bad)
    assert all(":20: " in was.err or ":17: " in was.err for was in bad)
    assert any("truncated JSON: the input ends inside log.entries[1]" in b.err for b in before)

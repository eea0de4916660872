"""``chatx formats`` lists the readers of files of recorded exchanges and of compressed
input beside the codecs and containers, in text and as JSON lines."""

from __future__ import annotations

import importlib.util
import json

import pytest

from chatx import codecs, containers
from chatx.containers import demux
from tests.containers.common import chatx


def listed(*args: str) -> list[dict]:
    out = chatx("formats", "--output", "json", *args)
    assert out.code == 0, out.err
    return [json.loads(line) for line in out.stdout.decode().splitlines()]


def test_json_names_every_reader_with_its_kind() -> None:
    rows = listed()
    names = {kind: [r["name"] for r in rows if r["kind"] == kind] for kind in dict.fromkeys(
        r["kind"] for r in rows)}  # fmt: skip
    assert names == {
        "format": codecs.names(),
        "container": list(containers.CONTAINERS),
        "exchanges": [
            "har",
            "vcr",
            "llama-stack-recording",
            "httprr",
            "exchange",
            "wiremock",
            "hoverfly",
            "nock",
            "inline-snapshot",
            "httpmock",
            "llama-stack-mock",
            "mitmproxy",
        ],
        "compression": ["gzip", "bz2", "xz", "zstd"],
        "body-encoding": ["gzip", "deflate", "br"],
    }
    har = next(r for r in rows if r["name"] == "har")
    assert har == {"kind": "exchanges", "name": "har", "description": demux.KINDS["har"]}
    xz = next(r for r in rows if r["name"] == "xz")
    assert xz == {"kind": "compression", "name": "xz", "suffix": ".xz", "module": "lzma",
                  "extra": None, "installed": True}  # fmt: skip
    chat = rows[0]
    assert chat["aliases"] == ["chat", "chat-completions"] and chat["writes"] == "sse"


def test_text_has_a_section_for_each_kind() -> None:
    out = chatx("formats").stdout.decode()
    lines = out.splitlines()
    headings = [line for line in lines if not line.startswith(" ")]
    assert headings == [
        "formats:",
        "containers:",
        "files of recorded exchanges (told by content; chatx ls lists their streams):",
        "compressed input (told by its first bytes, below every container):",
        "recorded bodies still encoded (their Content-Encoding header):",
    ]
    assert "  llama-stack-recording Llama Stack inference recorder JSON" in lines
    assert (
        "  har                   HAR 1.2 (browser devtools, Playwright, Polly.JS, proxies)" in lines
    )
    assert "  xz                   .xz, read by the standard library (lzma)" in lines
    assert "  deflate              read by the standard library (zlib)" in lines


def test_a_package_that_is_missing_says_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    gone = ("zstandard", "brotli", "brotlicffi")
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in gone else real(name, *a)
    )
    lines = chatx("formats").stdout.decode().splitlines()
    assert "  zstd                 .zst, read by the zstandard package: not installed" \
        " (pip install 'chatx[zstd]')" in lines  # fmt: skip
    assert "  br                   read by the brotli package: not installed" \
        " (pip install 'chatx[brotli]')" in lines  # fmt: skip
    br = listed()[-1]
    assert (br["name"], br["module"], br["extra"], br["installed"]) == (
        "br",
        "brotli",
        "brotli",
        False,
    )


def test_output_takes_text_or_json() -> None:
    out = chatx("formats", "--output", "yaml")
    assert (out.code, out.err) == (2, "chatx: error: --output takes 'text' or 'json'\n")

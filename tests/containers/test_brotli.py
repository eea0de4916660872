"""Recorded bodies still brotli-compressed (``Content-Encoding: br``) are read through the
brotli package (the ``brotli`` extra) when it is installed; without it, the entry says
which package to install, and the other entries are read."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.containers import make_fixtures as made
from tests.containers.common import chatx, write

needs_brotli = pytest.mark.skipif(
    importlib.util.find_spec("brotli") is None, reason="brotli is not installed"
)
BR = [{"name": "content-encoding", "value": "br"}]
URL = "https://api.example.test/v1/chat/completions"
MISSING = (
    "a brotli-compressed body (Content-Encoding: br) needs the brotli package"
    " (pip install 'chatx[brotli]')"
)


def squeezed() -> bytes:
    import brotli

    return bytes(brotli.compress(made.CHAT))


def har(body: bytes) -> bytes:
    return made.har([
        made.har_entry("POST", URL, made.CHAT_REQUEST, 200,
                       {"mimeType": made.SSE, "encoding": "base64", "text": made.b64(body)}, BR),
        # a recorder that kept the header but stored the text decoded (as browsers do)
        made.har_entry("POST", URL, made.CHAT_REQUEST, 200,
                       {"mimeType": made.SSE, "text": made.CHAT_TOOLS.decode()}, BR),
    ])  # fmt: skip


@needs_brotli
def test_a_brotli_body_reads_as_its_stream(tmp_path: Path) -> None:
    path = write(tmp_path, "br.har", har(squeezed()))
    bare = chatx("convert", "--to", "chat-chunk", "-q", stdin=made.CHAT).stdout
    assert chatx("convert", f"{path}#0", "--to", "chat-chunk", "-q").stdout == bare
    tools = chatx("convert", "--to", "chat-chunk", "-q", stdin=made.CHAT_TOOLS).stdout
    assert chatx("convert", f"{path}#1", "--to", "chat-chunk", "-q").stdout == tools
    # a cassette keeps the bytes as they came (!!binary)
    document = {"interactions": [made.vcrpy({"string": squeezed()},
                                            headers={"Content-Encoding": ["br"]})], "version": 1}  # fmt: skip
    cassette = write(tmp_path, "br.yaml", made.dump(document))
    assert chatx("convert", cassette, "--to", "chat-chunk", "-q").stdout == bare


@needs_brotli
def test_damaged_brotli_is_that_entry_s_note(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.har", har(squeezed()[:-8] + b"\xff" * 8))
    out = chatx("ls", path)
    assert out.code == 2
    assert out.err == (
        f"chatx: error: {path}#0: its body cannot be decoded (bad brotli data: cut short:"
        " the input ends inside a stream, after 233 bytes)\n"
    )
    assert out.stdout.decode().splitlines()[1].split()[:3] == [f"{path}#1", "chat-chunk", "10"]


def test_without_the_package_the_entry_says_which_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    # brotli's bytes, or (where it is not installed to make them) bytes that are no text
    body = squeezed() if real("brotli") else b"\x8b\x03\x80" + bytes(range(128, 256))
    # brotlicffi is the same module under another name: either reads, neither is there
    gone = ("brotli", "brotlicffi")
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in gone else real(name, *a)
    )
    path = write(tmp_path, "br.har", har(body))
    out = chatx("convert", f"{path}#0")
    assert (out.code, out.err) == (
        2,
        f"chatx: error: {path}#0: its body cannot be decoded ({MISSING})\n",
    )
    listed = chatx("ls", path)
    assert listed.code == 2
    assert f"{path}#0  -" in listed.stdout.decode() and f"body not decoded: {MISSING}" in (
        listed.stdout.decode()
    )
    # the entry whose text was stored decoded needs no package
    assert chatx("convert", f"{path}#1", "-q").code == 0

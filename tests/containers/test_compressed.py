"""Compressed input is read decompressed, told by its magic bytes."""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import lzma
from pathlib import Path

import pytest

from tests.containers import make_fixtures as made
from tests.containers.common import chatx, fixture, write

COMPRESS = {
    "gz": lambda data: gzip.compress(data, mtime=0),
    "bz2": bz2.compress,
    "xz": lzma.compress,
}


def zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


needs_zstd = pytest.mark.skipif(
    importlib.util.find_spec("zstandard") is None, reason="zstandard is not installed"
)
KINDS = [*COMPRESS, pytest.param("zst", marks=needs_zstd)]


def packed(kind: str, data: bytes) -> bytes:
    return zstd(data) if kind == "zst" else COMPRESS[kind](data)


@pytest.mark.parametrize("kind", KINDS)
def test_a_compressed_stream_converts_as_the_bare_one(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # show fits the file name to the terminal: short names keep it on one line
    monkeypatch.chdir(tmp_path)
    bare = write(Path(), "a.sse", made.CHAT)
    squeezed = write(Path(), f"a.sse.{kind}", packed(kind, made.CHAT))
    for command in (["convert", "-q"], ["collect", "-q"], ["show"], ["validate"]):
        one, other = chatx(*command, squeezed), chatx(*command, bare)
        assert one.code == other.code == 0, (command, one.err)
        # show pads the file name to its width: compared word by word
        assert one.stdout.replace(squeezed.encode(), bare.encode()).split() == other.stdout.split()


@pytest.mark.parametrize("kind", KINDS)
def test_a_compressed_har_and_stdin(kind: str, tmp_path: Path) -> None:
    data = packed(kind, Path(fixture("one-stream.har")).read_bytes())
    har = write(tmp_path, f"x.har.{kind}", data)
    assert chatx("collect", har).stdout == chatx("collect", fixture("one-stream.har")).stdout
    piped = chatx("convert", "--to", "chat-chunk", "-q", stdin=packed(kind, made.CHAT))
    assert piped.code == 0
    assert piped.stdout == chatx("convert", "--to", "chat-chunk", "-q", stdin=made.CHAT).stdout


def test_out_dir_reads_compressed_files(tmp_path: Path) -> None:
    squeezed = write(tmp_path, "a.sse.gz", gzip.compress(made.CHAT, mtime=0))
    out = chatx("convert", squeezed, "--to", "chat-chunk", "--out-dir", str(tmp_path / "out"))
    assert out.code == 0, out.err
    bare = chatx("convert", "--to", "chat-chunk", "-q", stdin=made.CHAT).stdout
    assert (tmp_path / "out" / "a.chat-chunk.sse").read_bytes() == bare


def test_damaged_gzip_is_an_error(tmp_path: Path) -> None:
    cut = write(tmp_path, "a.sse.gz", gzip.compress(made.CHAT, mtime=0)[:-30])
    out = chatx("convert", cut, "-q")
    assert out.code == 2
    assert out.err.endswith(
        f"chatx: error: {cut}: bad gzip data: cut short: the input ends"
        " inside a member, after 244 bytes\n"
    )


def test_zstd_without_the_package_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "zstandard" else real(name, *a),
    )
    path = write(tmp_path, "a.sse.zst", b"\x28\xb5\x2f\xfd" + b"\0" * 20)
    out = chatx("convert", path)
    assert out.code == 2
    assert out.err == (
        f"chatx: error: {path}:1: zstd-compressed input needs the zstandard package "
        "(pip install 'chatx[zstd]')\n"
    )

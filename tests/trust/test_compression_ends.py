"""Issue 23, class 5: compressed input ends where its format says, for every compression
alike. Input cut short (anywhere: inside the header, a block, the trailer, a second
member) is an error saying so; bytes after the last member, stream or frame that do
not start another are an error; members, streams and frames one after the other are
read as the format says (gzip members, bz2 and xz streams with xz's zero padding in
fours, zstd frames and skippable frames). The same holds for a body recorded in a HAR
(``Content-Encoding`` gzip, deflate, br), read through the same function.

Before (main at bae4a29): a ``.zst`` missing its last byte converted with exit 0 (or
said "empty input"); ``.bz2`` and ``.xz`` with garbage after them, and ``.gz`` with
zero bytes after it, exited 0; ``.xz`` with its format's stream padding was "the data
ends early".
"""

from __future__ import annotations

import base64
import bz2
import gzip
import json
import lzma
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from chatx.containers import compressed
from chatx.errors import InputError
from tests.inprocess import run

zstandard = pytest.importorskip("zstandard", reason="zstd needs the zstandard package")

STREAM = (
    b"".join(
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[{"index":0,"delta":{"content":"word %d "},"finish_reason":null}]}\n\n' % n
        for n in range(200)
    )
    + b"data: [DONE]\n\n"
)


def _zstd(data: bytes) -> bytes:
    return bytes(zstandard.ZstdCompressor(write_checksum=True).compress(data))


def _zstd_no_checksum(data: bytes) -> bytes:
    return bytes(zstandard.ZstdCompressor(write_checksum=False).compress(data))


PACK: dict[str, Callable[[bytes], bytes]] = {
    "gz": lambda data: gzip.compress(data, mtime=0),
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "zst": _zstd,
}
NAME = {"gz": "gzip", "bz2": "bz2", "xz": "xz", "zst": "zstd"}
KINDS = list(PACK)


def convert(path: Path) -> tuple[int, bytes, str]:
    out = run(["convert", str(path), "--to", "chat-chunk", "-q"])
    return out.code, out.stdout, out.err


@pytest.fixture(scope="module")
def bare() -> bytes:
    out = run(["convert", "-", "--to", "chat-chunk", "-q"], STREAM)
    assert out.code == 0, out.err
    return out.stdout


# -- a bare file, through the CLI ----------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_whole_converts_as_the_bare_stream(kind: str, tmp_path: Path, bare: bytes) -> None:
    path = tmp_path / f"a.sse.{kind}"
    path.write_bytes(PACK[kind](STREAM))
    assert convert(path)[:2] == (0, bare)


@pytest.mark.parametrize("kind", KINDS)
def test_members_one_after_the_other_are_one_input(kind: str, tmp_path: Path, bare: bytes) -> None:
    third = len(STREAM) // 3
    parts = (STREAM[:third], STREAM[third : 2 * third], STREAM[2 * third :])
    path = tmp_path / f"a.sse.{kind}"
    path.write_bytes(b"".join(PACK[kind](part) for part in parts))
    assert convert(path)[:2] == (0, bare)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cut", [1, 2, 4, 8, 100, "half", "header"])
def test_cut_short_is_an_error(kind: str, cut: int | str, tmp_path: Path) -> None:
    packed = PACK[kind](STREAM)
    keep = (
        {"half": len(packed) // 2, "header": 7}[cut] if isinstance(cut, str) else len(packed) - cut
    )
    path = tmp_path / f"a.sse.{kind}"
    path.write_bytes(packed[:keep])
    code, _, err = convert(path)
    assert code == 2
    assert f"{path}: bad {NAME[kind]} data: cut short" in err, err


@pytest.mark.parametrize("kind", KINDS)
def test_a_second_member_cut_short_is_an_error(kind: str, tmp_path: Path) -> None:
    path = tmp_path / f"a.sse.{kind}"
    path.write_bytes(PACK[kind](STREAM) + PACK[kind](b"data: [DONE]\n\n")[:-3])
    code, _, err = convert(path)
    assert code == 2
    assert f"bad {NAME[kind]} data: cut short" in err, err


GARBAGE = {
    "text": b"garbage!",
    "one byte": b"x",
    "a newline": b"\n",
    "zero bytes": b"\0" * 3,
    "html": b"<html>502 Bad Gateway</html>",
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tail", list(GARBAGE))
def test_trailing_garbage_is_an_error(kind: str, tail: str, tmp_path: Path) -> None:
    packed = PACK[kind](STREAM)
    path = tmp_path / f"a.sse.{kind}"
    path.write_bytes(packed + GARBAGE[tail])
    code, _, err = convert(path)
    assert code == 2
    unit = {"gz": "member", "bz2": "stream", "xz": "stream", "zst": "frame"}[kind]
    if kind == "xz" and tail == "zero bytes":
        assert "bad xz data: 3 zero bytes after the last stream (padding comes in fours)" in err
    else:
        assert f"bad {NAME[kind]} data: garbage after the last {unit}" in err, err
        assert f"(byte {len(packed)} is not the start" in err


def test_gzip_zero_padding_is_garbage(tmp_path: Path) -> None:
    """gzip(1) warns of trailing zeros and exits 2; so does chatx."""
    path = tmp_path / "a.sse.gz"
    path.write_bytes(PACK["gz"](STREAM) + b"\0" * 512)
    code, _, err = convert(path)
    assert code == 2 and "bad gzip data: garbage after the last member" in err


@pytest.mark.parametrize("padding", [4, 8, 512])
def test_xz_stream_padding_in_fours_is_read(padding: int, tmp_path: Path, bare: bytes) -> None:
    half = len(STREAM) // 2
    path = tmp_path / "a.sse.xz"
    pad = b"\0" * padding
    path.write_bytes(PACK["xz"](STREAM[:half]) + pad + PACK["xz"](STREAM[half:]) + pad)
    assert convert(path)[:2] == (0, bare)


def test_xz_padding_not_in_fours_between_streams(tmp_path: Path) -> None:
    path = tmp_path / "a.sse.xz"
    path.write_bytes(PACK["xz"](STREAM) + b"\0" * 5 + PACK["xz"](b"\n"))
    code, _, err = convert(path)
    assert code == 2 and "5 zero bytes between streams" in err


def test_zstd_skippable_frames_are_passed_over(tmp_path: Path, bare: bytes) -> None:
    skippable = b"\x5a\x2a\x4d\x18" + (6).to_bytes(4, "little") + b"ignore"
    path = tmp_path / "a.sse.zst"
    path.write_bytes(_zstd(STREAM) + skippable + _zstd_no_checksum(b"") + skippable)
    assert convert(path)[:2] == (0, bare)


def test_zstd_skippable_frame_cut_short(tmp_path: Path) -> None:
    skippable = b"\x5a\x2a\x4d\x18" + (600).to_bytes(4, "little") + b"ignore"
    path = tmp_path / "a.sse.zst"
    path.write_bytes(_zstd(STREAM) + skippable)
    code, _, err = convert(path)
    assert code == 2 and "bad zstd data: cut short" in err


def test_zstd_frame_without_checksum_cut_at_its_last_block(tmp_path: Path) -> None:
    path = tmp_path / "a.sse.zst"
    path.write_bytes(_zstd_no_checksum(STREAM)[:-1])
    code, _, err = convert(path)
    assert code == 2 and "bad zstd data: cut short" in err


@pytest.mark.parametrize("kind", KINDS)
def test_stdin_alike(kind: str, bare: bytes) -> None:
    packed = PACK[kind](STREAM)
    whole = run(["convert", "-", "--to", "chat-chunk", "-q"], packed)
    assert (whole.code, whole.stdout) == (0, bare)
    cut = run(["convert", "-", "--to", "chat-chunk", "-q"], packed[:-1])
    assert cut.code == 2 and "<stdin>: bad" in cut.err and "cut short" in cut.err
    trailed = run(["convert", "-", "--to", "chat-chunk", "-q"], packed + b"junk")
    assert trailed.code == 2 and "garbage after the last" in trailed.err


# -- every prefix, through the one function ------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_every_prefix_is_cut_short(kind: str) -> None:
    """Whatever byte the input stops at, the words are the same."""
    packed = PACK[kind](STREAM[:2000])
    assert compressed.decompress(packed, NAME[kind]) == STREAM[:2000]
    for keep in range(1, len(packed)):
        with pytest.raises(InputError) as info:
            compressed.decompress(packed[:keep], NAME[kind])
        assert "cut short" in info.value.message, (keep, info.value.message)


@pytest.mark.parametrize("kind", KINDS)
def test_the_limit_holds_across_members(kind: str) -> None:
    packed = b"".join(PACK[kind](b"x" * 1000) for _ in range(5))
    assert len(compressed.decompress(packed, NAME[kind], limit=5000)) == 5000
    with pytest.raises(InputError) as info:
        compressed.decompress(packed, NAME[kind], limit=4999)
    assert "decompresses to more than 4999 bytes" in info.value.message


# -- a recorded body ------------------------------------------------------------------------


def _har(body: bytes, encoding: str) -> dict:
    return {
        "log": {
            "version": "1.2",
            "entries": [
                {
                    "request": {"method": "POST", "url": "https://api.example/v1/chat/completions"},
                    "response": {
                        "status": 200,
                        "headers": [
                            {"name": "content-type", "value": "text/event-stream"},
                            {"name": "content-encoding", "value": encoding},
                        ],
                        "content": {
                            "mimeType": "text/event-stream",
                            "encoding": "base64",
                            "text": base64.b64encode(body).decode(),
                        },
                    },
                }
            ],
        }
    }


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def _brotli(data: bytes) -> bytes:
    brotli = pytest.importorskip("brotli", reason="br needs the brotli package")
    return bytes(brotli.compress(data))


BODIES: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", PACK["gz"]),
    "zstd": ("zstd", _zstd),
    "xz": ("identity", lzma.compress),
    "deflate": ("deflate", _deflate),
    "raw deflate": ("deflate", _raw_deflate),
    "br": ("br", _brotli),
}


@pytest.mark.parametrize("body", list(BODIES))
@pytest.mark.parametrize("damage", ["whole", "cut", "garbage"])
def test_a_recorded_body_ends_as_its_format_says(
    body: str, damage: str, tmp_path: Path, bare: bytes
) -> None:
    encoding, pack = BODIES[body]
    packed = pack(STREAM)
    data = {"whole": packed, "cut": packed[:-3], "garbage": packed + b"\x00garbage"}[damage]
    path = tmp_path / "a.har"
    path.write_text(json.dumps(_har(data, encoding)))
    code, out, err = convert(path)
    if damage == "whole":
        assert (code, out) == (0, bare), err
        return
    assert code == 2
    assert f"{path}#0" in err and "its body cannot be decoded (bad" in err, err


def test_a_body_compressed_twice_is_read_and_bounded(tmp_path: Path, bare: bytes) -> None:
    twice = PACK["gz"](PACK["gz"](STREAM))
    path = tmp_path / "a.har"
    path.write_text(json.dumps(_har(twice, "gzip, gzip")))
    assert convert(path)[:2] == (0, bare)
    many = STREAM
    for _ in range(5):
        many = PACK["gz"](many)
    path.write_text(json.dumps(_har(many, "gzip")))
    code, _, err = convert(path)
    assert code == 2 and "compressed more than 3 times over" in err, err


def test_a_file_compressed_twice_is_read_and_bounded(tmp_path: Path, bare: bytes) -> None:
    """Before: a .gz of a .gz was 'not a stream: starts with \\x1f\\x8b'."""
    path = tmp_path / "a.sse.xz.gz"
    path.write_bytes(PACK["gz"](PACK["xz"](STREAM)))
    assert convert(path)[:2] == (0, bare)
    for kind in ("bz2", "zst", "gz"):
        path.write_bytes(PACK[kind](path.read_bytes()))
    code, _, err = convert(path)
    assert code == 2
    assert f"{path}: compressed more than 3 times over" in err, err

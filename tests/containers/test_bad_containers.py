"""Bad input in files of exchanges: exit 2, the message says where."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.containers import make_fixtures as made
from tests.containers.common import chatx, fixture, write

BAD = fixture("bad-bodies.har")


def test_no_streaming_interaction() -> None:
    for name, count in (("no-streams.har", "2 interactions"), ("no-streams.yaml", "1 interaction")):
        path = fixture(name)
        expected = f"chatx: error: {path}: no streams in {path} ({count}, none streaming)\n"
        for command in (["convert"], ["collect"], ["show"], ["validate"]):
            out = chatx(*command, path)
            assert (out.code, out.err) == (2, expected), command
        out = chatx("convert", path, "--out-dir", "/nonexistent-never-written")
        assert out.code == 2 and expected in out.err


def test_truncated_yaml_says_its_line(tmp_path: Path) -> None:
    data = Path(fixture("styles.yaml")).read_bytes()
    cut = data[: data.index(b"'event: response.created") + 200]
    path = write(tmp_path, "cut.yaml", cut)
    out = chatx("convert", path)
    line = cut.count(b"\n") + 1
    assert (out.code, out.err) == (
        2,
        f"chatx: error: {path}:{line}: not valid YAML: while scanning a quoted scalar, "
        "found unexpected end of stream\n",
    )


def test_truncated_har_says_its_line(tmp_path: Path) -> None:
    data = Path(fixture("many.har")).read_bytes()
    cut = data[: len(data) // 2]
    path = write(tmp_path, "cut.har", cut)
    out = chatx("ls", path)
    assert out.code == 2
    line = cut.count(b"\n") + 1
    assert out.err.endswith(
        f"chatx: error: {path}:{line}: truncated JSON: the input ends inside log.entries[1]"
        " (opened at line 33)\n"
    )
    # the entries before the cut were listed
    assert [row.split()[0] for row in out.stdout.decode().splitlines()] == [f"{path}#0"]


def test_undecodable_bodies_are_skipped_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    out = chatx("convert", BAD, "--to", "chat-chunk")
    assert out.code == 2
    assert out.stdout == chatx("convert", BAD + "#2", "--to", "chat-chunk").stdout != b""
    # Each note names the exchange it is about, as ls does, not the stream converted (#2).
    assert out.err.splitlines()[:2] == [
        f"chatx: skipped: {BAD}#0: its body cannot be decoded"
        " (bad base64: Only base64 data is allowed)",
        f"chatx: skipped: {BAD}#1: its body cannot be decoded"
        " (bad gzip data: cut short: the input ends inside a member, after 40 bytes)",
    ]
    out = chatx("collect", BAD)
    assert out.code == 2 and f"skipped: {BAD}#0: its body cannot be decoded" in out.err
    # show says its notes in its view, fitted to the terminal: a short name is not folded
    monkeypatch.chdir(Path(BAD).parent)
    out = chatx("show", "bad-bodies.har")
    assert out.code == 2 and "skipped: bad-bodies.har#0: its body" in out.stdout.decode()


def test_undecodable_bodies_in_every_stream_runner(tmp_path: Path) -> None:
    out = chatx("validate", BAD)
    assert out.code == 2
    assert out.stdout.decode() == f"{BAD}#2: ok (chat-chunk, sse, 8 records)\n"
    assert out.err == (
        f"chatx: error: {BAD}#0: skipped: its body cannot be decoded (bad base64: Only base64"
        " data is allowed)\n"
        f"chatx: error: {BAD}#1: skipped: its body cannot be decoded (bad gzip data: cut short:"
        " the input ends inside a member, after 40 bytes)\n"
    )
    out = chatx("convert", BAD, "--to", "chat-chunk", "--out-dir", str(tmp_path))
    assert out.code == 2
    assert [p.name for p in tmp_path.iterdir()] == ["bad-bodies.2.chat-chunk.sse"]
    assert f"chatx: error: {BAD}#0: its body cannot be decoded (bad base64" in out.err
    assert "1 converted, 0 unchanged, 1 written, 2 failed" in out.err
    named = chatx("convert", BAD + "#1")
    assert (named.code, named.err) == (
        2,
        f"chatx: error: {BAD}#1: its body cannot be decoded (bad gzip data: cut short: the input"
        " ends inside a member, after 40 bytes)\n",
    )  # fmt: skip


def test_a_record_skipped_inside_a_stream_says_its_stream_line(tmp_path: Path) -> None:
    broken = made.CHAT.replace(b'"content":"Hello"', b'"content":"Hello', 1)
    document = {"interactions": [made.vcrpy({"string": broken.decode()})], "version": 1}
    path = write(tmp_path, "c.yaml", made.dump(document))
    out = chatx("convert", path, "--to", "chat-chunk")
    assert out.code == 2
    assert out.err.startswith(f"chatx: skipped: {path}#0:3: record skipped: ")

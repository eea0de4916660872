"""FILE#N in every command; a file's only stream without one; several: exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.containers import make_fixtures as made
from tests.containers.common import chatx, fixture, write

MANY = fixture("many.har")


def test_every_command_takes_an_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # show fits its lines to the terminal, a long file name folded in two: short names,
    # in a folder of their own, keep each on one line wherever the checkout is
    monkeypatch.chdir(tmp_path)
    bare = write(Path(), "r.sse", made.RESPONSES)
    shutil.copy(MANY, "many.har")
    for command in (["convert", "-q"], ["collect", "-q"], ["show"]):
        one, other = chatx(*command, "many.har#1"), chatx(*command, bare)
        assert one.code == other.code == 0, (command, one.err)
        assert one.stdout.replace(b"many.har#1", bare.encode()).split() == other.stdout.split()
    same = chatx("diff", MANY + "#1", bare)
    assert (same.code, same.stdout) == (0, chatx("diff", bare, bare).stdout)
    differ = chatx("diff", MANY + "#0", MANY + "#4")
    assert differ.code == 1
    valid = chatx("validate", MANY + "#1")
    assert valid.code == 0
    assert valid.stdout.decode() == f"{MANY}#1: ok (responses-event, sse, 11 records)\n"


def test_validate_checks_every_stream_and_names_each() -> None:
    # #2 is a non-streaming object: converted (see below), not checked as a stream
    out = chatx("validate", MANY)
    assert out.code == 0, out.err
    assert out.stdout.decode().splitlines() == [
        f"{MANY}#0: ok (chat-chunk, sse, 8 records)",
        f"{MANY}#1: ok (responses-event, sse, 11 records)",
        f"{MANY}#4: ok (chat-chunk, sse, 10 records)",
    ]


def test_a_one_stream_command_with_several_lists_them() -> None:
    for command in ("convert", "collect", "show"):
        out = chatx(command, MANY)
        assert out.code == 2
        addresses = ", ".join(f"{MANY}#{i}" for i in (0, 1, 2, 4))
        assert out.err == f"chatx: error: {MANY}: 4 streams, name one: {addresses}\n"
    out = chatx("diff", MANY, MANY + "#0")
    assert out.code == 2 and "4 streams, name one" in out.err


def test_an_address_that_is_no_stream() -> None:
    out = chatx("convert", MANY + "#3")
    assert (out.code, out.err) == (2, f"chatx: error: {MANY}#3: not a stream: text/html\n")
    out = chatx("convert", MANY + "#9")
    assert (out.code, out.err) == (
        2, f"chatx: error: {MANY}: no stream #9: the file holds 5 interactions (#0 to #4)\n"
    )  # fmt: skip


def test_a_file_named_with_a_hash_is_a_file(tmp_path: Path) -> None:
    odd = write(tmp_path, "odd#1", made.CHAT)
    assert chatx("collect", odd).code == 0
    assert chatx("collect", odd + "#0").code == 0
    out = chatx("collect", odd + "#2")
    assert (out.code, out.err) == (
        2, f"chatx: error: {odd}: no stream #2: a bare stream is one stream (#0)\n"
    )  # fmt: skip


def test_out_dir_writes_one_output_per_stream(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    out = chatx("convert", MANY, "--to", "chat-chunk", "--out-dir", str(out_dir))
    assert out.code == 0, out.err
    assert sorted(p.name for p in out_dir.iterdir()) == [
        f"many.{i}.chat-chunk.sse" for i in (0, 1, 2, 4)
    ]
    for index in (0, 1, 2, 4):
        alone = chatx("convert", f"{MANY}#{index}", "--to", "chat-chunk", "-q").stdout
        assert (out_dir / f"many.{index}.chat-chunk.sse").read_bytes() == alone
    # an address converts that stream only; --check compares it with what is there
    check = chatx(
        "convert", MANY + "#1", "--to", "chat-chunk", "--out-dir", str(out_dir), "--check"
    )
    assert check.code == 0, check.err
    one = tmp_path / "one.sse"
    assert chatx("convert", MANY + "#4", "--to", "chat-chunk", "-o", str(one)).code == 0
    assert chatx("convert", MANY + "#4", "--to", "chat-chunk", "-o", str(one), "--check").code == 0


def test_out_dir_fills_the_envelope_from_each_request(tmp_path: Path) -> None:
    out = chatx("convert", fixture("styles.yaml"), "--out-dir", str(tmp_path), "-q")
    assert out.code == 0, out.err
    created = (tmp_path / "styles.0.responses-event.sse").read_bytes().split(b"\n")[1][6:]
    assert json.loads(created)["response"]["temperature"] == 0.25


def test_stdin_holds_a_file_of_exchanges() -> None:
    data = Path(MANY).read_bytes()
    out = chatx("collect", "--", "-#1", stdin=data)
    assert out.code == 0, out.err
    assert out.stdout == chatx("collect", MANY + "#1").stdout
    several = chatx("collect", stdin=data)
    assert several.code == 2 and "<stdin>: 4 streams, name one: <stdin>#0" in several.err

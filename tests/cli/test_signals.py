"""Pipes and signals (DESIGN §6): ``| head`` ends quietly, Ctrl-C is 130, SIGTERM 143.

Each test runs ``python -m chatx`` as a process. Whatever stops it, what it wrote is
complete up to the last event it flushed, and stderr has no traceback.
"""

from __future__ import annotations

import os
import select
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chatx import pipeline
from chatx.errors import ExitStatus
from chatx.reading import framing
from tests.builders.chat_chunk import chat_text
from tests.inprocess import run
from tests.streams import sse

TIMEOUT = 60
CHAT_BODY = sse(chat_text(*(f"word{i} " for i in range(20))))
BIG = sse(chat_text(*(f"word{i} " for i in range(20000))))


def start(*args: str, stdin: int | None = subprocess.PIPE) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "chatx", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def read_until(proc: subprocess.Popen[bytes], marker: bytes) -> bytes:
    """What the process wrote, read until ``marker`` appears (or the time is up)."""
    got = b""
    deadline = time.monotonic() + TIMEOUT
    while marker not in got and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                break
            got += chunk
    assert marker in got, got[-500:]
    return got


def no_traceback(stderr: bytes) -> None:
    text = stderr.decode("utf-8", "replace")
    assert "Traceback" not in text and "Exception ignored" not in text, text


def complete_sse(data: bytes) -> None:
    """Every event in ``data`` is whole: it ends at a blank line and each payload parses."""
    assert data.endswith(b"\n\n"), data[-200:]
    _, records = framing.read_records(data)
    assert records and all(r.error is None for r in records)


# -- Ctrl-C and SIGTERM in the middle of a live stream ---------------------------------------


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGINT, ExitStatus.INTERRUPTED), (signal.SIGTERM, ExitStatus.TERMINATED)],
    ids=["SIGINT", "SIGTERM"],
)
def test_signal_mid_stream_ends_with_complete_output(signum, code):
    proc = start("convert", "--from", "chat-chunk", "--to", "responses-event")
    try:
        # Half the events; the pipe stays open, so chatx is waiting for more.
        half = CHAT_BODY[: CHAT_BODY.index(b"word10")]
        half = half[: half.rindex(b"\n\n") + 2]
        proc.stdin.write(half)  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        got = read_until(proc, b"word9 ")
        proc.send_signal(signum)
        rest, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == code
    assert stderr == b"", stderr
    complete_sse(got + rest)


def test_sigint_while_converting_a_file_to_a_pipe(tmp_path):
    """Interrupted while busy (not waiting for input): 130, the output whole events."""
    path = tmp_path / "big.sse"
    path.write_bytes(BIG * 20)
    proc = start("convert", str(path), "--to", "responses-event", stdin=subprocess.DEVNULL)
    try:
        got = read_until(proc, b"word100 ")
        proc.send_signal(signal.SIGINT)
        rest, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == ExitStatus.INTERRUPTED, stderr
    no_traceback(stderr)
    complete_sse(got + rest)


def test_sigterm_while_waiting_for_input_exits_143_quietly():
    proc = start("validate", "-")
    try:
        proc.stdin.write(CHAT_BODY[:200])  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        wait_for_handler(proc, signal.SIGTERM)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == ExitStatus.TERMINATED
    assert stderr == b""


def wait_for_handler(proc: subprocess.Popen[bytes], signum: int) -> None:
    """Until the process catches ``signum``: before that (the interpreter starting) the
    signal's default action ends it, which is no exit code of chatx's. A fixed sleep was
    too short on a loaded machine."""
    status = Path(f"/proc/{proc.pid}/status")
    if not status.exists():
        time.sleep(1.0)  # no /proc: the best a test can do
        return
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        caught = next(
            (line for line in status.read_text().splitlines() if line.startswith("SigCgt:")), ""
        )
        if caught and int(caught.split()[1], 16) & (1 << (signum - 1)):
            return
        time.sleep(0.02)
    raise AssertionError(f"the process never caught signal {signum}")


def test_a_signal_while_the_commands_load_ends_the_run_quietly(monkeypatch):
    from chatx import cli

    def loading(name: str | None = None):  # the command a run names, or None
        raise cli.Terminated

    monkeypatch.setattr(cli, "_command", loading)
    assert cli.main(["validate", "-"]) == ExitStatus.TERMINATED


# -- | head ---------------------------------------------------------------------------------

# Each command with an input that makes far more output than a pipe holds.
HEAD_CASES = {
    "convert": ["convert", "{big}", "--to", "responses-event"],
    "convert-jsonl": ["convert", "{big}", "--to", "chat-chunk", "--out-container", "jsonl"],
    "validate": ["validate", "{bad}"],
    "validate-json": ["validate", "{bad}", "--output", "json"],
    "show": ["show", "{big}", "--events"],
    "collect": ["collect", "{many}"],
    "diff": ["diff", "{other}", "{big}", "--wire", "--all"],
    "diff-json": ["diff", "{other}", "{big}", "--all", "--output", "json"],
    "rules": ["rules", "--output", "json"],
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("head")
    big = folder / "big.sse"
    big.write_bytes(BIG)
    # Every chunk with the wrong object breaks a rule: a finding per line.
    bad = folder / "bad.sse"
    bad.write_bytes(BIG.replace(b'"chat.completion.chunk"', b'"chat.completion"'))
    # Every text delta differs: a difference per event.
    other = folder / "other.sse"
    other.write_bytes(BIG.replace(b'"word', b'"WORD'))
    many = folder / "many.sse"
    many.write_bytes(CHAT_BODY * 3000)  # 3000 streams: one JSON object each
    return {"big": str(big), "bad": str(bad), "other": str(other), "many": str(many)}


@pytest.mark.parametrize("name", sorted(HEAD_CASES))
def test_head_closes_the_pipe_and_chatx_exits_quietly(inputs, name):
    args = [a.format(**inputs) for a in HEAD_CASES[name]]
    proc = start(*args, stdin=subprocess.DEVNULL)
    try:
        assert proc.stdout.readline()  # type: ignore[union-attr]
        proc.stdout.close()  # type: ignore[union-attr]  # what head does after one line
        _, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert stderr == b"", stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, -signal.SIGPIPE), proc.returncode


def test_head_in_a_shell_pipeline(inputs):
    """The same through sh: `chatx convert big | head -1`, with pipefail's view of it."""
    chatx = f"{shlex.quote(sys.executable)} -m chatx"
    big = shlex.quote(str(inputs["big"]))
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {chatx} convert {big} | head -1"],
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.stdout.startswith(b"event: response.created")
    assert done.stderr == b""
    assert done.returncode == 0


# -- --traceback and CHATX_DEBUG --------------------------------------------------------------


def test_errors_have_no_traceback_unless_asked(tmp_path):
    path = tmp_path / "cut.sse"
    path.write_bytes(b"data: {\n\n")
    plain = subprocess.run(
        [sys.executable, "-m", "chatx", "convert", str(path)], capture_output=True, timeout=TIMEOUT
    )
    assert plain.returncode == 2
    assert plain.stderr.startswith(b"chatx: error: ")
    no_traceback(plain.stderr)
    for env, args in (({}, ["--traceback"]), ({"CHATX_DEBUG": "1"}, [])):
        debug = subprocess.run(
            [sys.executable, "-m", "chatx", "convert", str(path), *args],
            capture_output=True,
            timeout=TIMEOUT,
            env={**os.environ, **env},
        )
        assert debug.returncode == 1  # Python's own exit for an uncaught exception
        assert b"Traceback (most recent call last)" in debug.stderr
        assert b"chatx.errors.InputError" in debug.stderr


def test_a_bug_is_one_line_without_traceback_and_the_traceback_on_request(monkeypatch):
    def broken(self, chunk):  # noqa: ANN001
        raise KeyError("boom")

    monkeypatch.setattr(pipeline.Transcoder, "feed_frames", broken)
    result = run(["convert", "-"], CHAT_BODY)
    assert result.code == ExitStatus.INTERNAL
    assert result.err == (
        "chatx: error: internal error: KeyError: 'boom' "
        "(a bug in chatx: run again with --traceback and report it)\n"
    )
    with pytest.raises(KeyError):
        run(["convert", "-", "--traceback"], CHAT_BODY)
    monkeypatch.setenv("CHATX_DEBUG", "1")
    with pytest.raises(KeyError):
        run(["convert", "-"], CHAT_BODY)


def test_usage_errors_are_said_the_chatx_way():
    result = run(["convert", "--no-such-option"], CHAT_BODY)
    assert result.code == 2
    lines = result.err.splitlines()
    assert lines[0].startswith("Usage: chatx convert")
    # click's wording varies by version: "No such option: --x" or "No such option '--x'."
    assert lines[-1].startswith("chatx: error: No such option")
    assert "--no-such-option" in lines[-1]


def test_main_can_run_many_times_in_one_process():
    """Each call registers nothing twice and leaves no signal handler behind."""
    from chatx.cli import _apps, app

    before = signal.getsignal(signal.SIGTERM)
    for _ in range(3):
        assert run(["formats"]).code == 0
    for registered in (app, *_apps.values()):
        names = [c.name for c in registered.registered_commands]
        assert len(names) == len(set(names))
    assert [c.name for c in _apps["formats"].registered_commands] == ["formats"]
    assert signal.getsignal(signal.SIGTERM) is before


# -o FILE interrupted: the file is left as it was (tests/cli/test_safety.py).


# -- closed and full standard streams --------------------------------------------------------


@pytest.mark.parametrize(
    ("shell", "code", "said"),
    [
        ("chatx convert {file} >&-", 2, b"chatx: error: standard output is closed\n"),
        ("chatx convert <&-", 2, b"chatx: error: <stdin>:1: empty input"),
        ("chatx convert {file} 2>&- >/dev/null", 0, b""),
        (
            "chatx convert {file} >/dev/full",
            2,
            b"chatx: error: <stdout>: cannot write: No space left on device\n",
        ),
    ],
    ids=["stdout-closed", "stdin-closed", "stderr-closed", "disk-full"],
)
def test_closed_or_full_standard_streams(tmp_path, shell, code, said):
    if "/dev/full" in shell and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    path = tmp_path / "in.sse"
    path.write_bytes(CHAT_BODY)
    chatx = f"{shlex.quote(sys.executable)} -m chatx"
    command = shell.replace("chatx", chatx).format(file=shlex.quote(str(path)))
    done = subprocess.run(["bash", "-c", command], capture_output=True, timeout=TIMEOUT)
    assert done.returncode == code
    assert done.stderr.startswith(said), done.stderr
    no_traceback(done.stderr)

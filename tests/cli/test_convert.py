"""``chatx convert`` as a process: ``python -m chatx`` run with subprocess."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chatx import pipeline
from tests.builders.chat_chunk import chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.streams import CHAT, RESPONSES, payloads, sse

CHAT_BODY = sse(chat_text("Hello", " there"))
TIMEOUT = 60


def chatx(*args: str, stdin: bytes = b"", cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chatx", *args],
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT,
        cwd=cwd,
    )


def no_traceback(stderr: bytes) -> None:
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    assert b"Exception ignored" not in stderr, stderr.decode(errors="replace")


# -- converting ------------------------------------------------------------------------


def test_stdin_to_stdout():
    done = chatx("convert", "--to", RESPONSES, stdin=CHAT_BODY)
    assert done.returncode == 0, done.stderr
    assert done.stdout == pipeline.convert(CHAT_BODY, dst=RESPONSES)
    assert done.stderr == b""
    dash = chatx("convert", "-", "--to", RESPONSES, stdin=CHAT_BODY)
    assert dash.stdout == done.stdout


def test_file_to_output_file(tmp_path):
    source = tmp_path / "in.sse"
    source.write_bytes(CHAT_BODY)
    target = tmp_path / "out.sse"
    done = chatx("convert", str(source), "--to", RESPONSES, "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert target.read_bytes() == pipeline.convert(CHAT_BODY, dst=RESPONSES)


@pytest.mark.parametrize(
    ("src", "dst", "body"),
    [
        (CHAT, RESPONSES, CHAT_BODY),
        (CHAT, CHAT, CHAT_BODY),
        (RESPONSES, CHAT, ResponsesBuilder().message("hi").end().bytes()),
        (RESPONSES, RESPONSES, ResponsesBuilder().message("hi").end().bytes()),
    ],
)
def test_from_and_to(src, dst, body):
    done = chatx("convert", "--from", src, "--to", dst, stdin=body)
    assert done.returncode == 0, done.stderr
    assert done.stdout == pipeline.convert(body, dst=dst, src=src)
    assert payloads(done.stdout)


def test_stdout_carries_only_data_and_notes_go_to_stderr():
    body = (
        ResponsesBuilder()
        .builtin({"id": "ws_1", "type": "web_search_call", "action": {"type": "search"}})
        .message("Sunny")
        .end()
        .bytes()
    )
    done = chatx("convert", "--to", CHAT, stdin=body)
    assert done.returncode == 0, done.stderr
    assert done.stdout == pipeline.convert(body, dst=CHAT)
    assert all(line.startswith(b"data: ") for line in done.stdout.splitlines() if line)
    assert b"web_search_call" in done.stderr
    assert all(line.startswith(b"chatx: ") for line in done.stderr.splitlines())
    quiet = chatx("convert", "--to", CHAT, "--quiet", stdin=body)
    assert quiet.stderr == b"" and quiet.stdout == done.stdout


def test_repairs_are_said_on_stderr_with_the_line():
    body = sse([chunk({"content": "no role"}), chunk({}, "stop")])
    done = chatx("convert", "--to", CHAT, stdin=body)
    assert done.returncode == 0
    assert re.search(rb"^chatx: repaired: <stdin>:1: ", done.stderr, re.M), done.stderr


# -- bad input -------------------------------------------------------------------------


def _error_line(stderr: bytes, name: str) -> re.Match[bytes] | None:
    return re.search(rb"^chatx: error: " + re.escape(name.encode()) + rb":(\d+): ", stderr, re.M)


BAD_INPUTS = {
    "non-utf8": b'data: {"id": "\xff\xfe"}\n\n',
    "half-written-json": b'data: {"id": "chatcmpl-1", "object": "chat.comp',
    "unknown-format": b'{"hello": "world"}\n{"hello": "again"}\n',
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_an_error_with_file_and_line(tmp_path, name):
    path = tmp_path / f"{name}.sse"
    path.write_bytes(BAD_INPUTS[name])
    done = chatx("convert", path.name, "--to", RESPONSES, cwd=tmp_path)
    assert done.returncode == 2
    assert _error_line(done.stderr, path.name), done.stderr
    assert done.stdout == b""
    no_traceback(done.stderr)


@pytest.mark.parametrize("body", [b"", b"just some text\n"], ids=["empty", "not-a-stream"])
def test_empty_file_is_an_error_with_file_and_line(tmp_path, body):
    path = tmp_path / "empty.sse"
    path.write_bytes(body)
    done = chatx("convert", path.name, "--to", RESPONSES, cwd=tmp_path)
    assert done.returncode == 2
    no_traceback(done.stderr)
    assert _error_line(done.stderr, path.name), done.stderr


def test_empty_file_is_an_error(tmp_path):
    path = tmp_path / "empty.sse"
    path.write_bytes(b"")
    done = chatx("convert", path.name, "--to", RESPONSES, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(b"chatx: error: empty.sse"), done.stderr
    no_traceback(done.stderr)


def test_half_written_last_event_lenient_and_strict(tmp_path):
    path = tmp_path / "cut.sse"
    path.write_bytes(CHAT_BODY[:-30])
    lenient = chatx("convert", path.name, "--to", RESPONSES, cwd=tmp_path)
    assert lenient.returncode == 2
    assert re.search(rb"cut\.sse:\d+: .*half-written", lenient.stderr), lenient.stderr
    assert b"Hello" in lenient.stdout  # what could be read is converted
    no_traceback(lenient.stderr)
    strict = chatx("convert", path.name, "--to", RESPONSES, "--strict", cwd=tmp_path)
    assert strict.returncode == 2
    assert _error_line(strict.stderr, "cut.sse"), strict.stderr
    no_traceback(strict.stderr)


def test_nonexistent_file(tmp_path):
    done = chatx("convert", "missing.sse", "--to", RESPONSES, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(b"chatx: error: missing.sse: "), done.stderr
    no_traceback(done.stderr)


def test_unknown_target_format():
    done = chatx("convert", "--to", "no-such-format", stdin=CHAT_BODY)
    assert done.returncode == 2
    assert done.stderr.startswith(b"chatx: error: ") and b"no-such-format" in done.stderr
    no_traceback(done.stderr)


def test_several_choices_need_choice():
    body = sse(
        [
            chunk(
                choices=[
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": "a"},
                        "finish_reason": None,
                    },
                    {
                        "index": 1,
                        "delta": {"role": "assistant", "content": "b"},
                        "finish_reason": None,
                    },
                ]
            ),
            chunk({}, "stop", 0),
            chunk({}, "stop", 1),
        ]
    )
    done = chatx("convert", "--to", RESPONSES, stdin=body)
    assert done.returncode == 2
    assert b"--choice" in done.stderr
    no_traceback(done.stderr)
    one = chatx("convert", "--to", RESPONSES, "--choice", "1", stdin=body)
    assert one.returncode == 0, one.stderr
    assert b'"delta":"b"' in one.stdout and b'"delta":"a"' not in one.stdout


# -- pipes and signals -----------------------------------------------------------------


def _head_one(tmp_path: Path) -> tuple[int, bytes]:
    """``chatx convert big | head -1``: the reader goes away after one line."""
    path = tmp_path / "big.sse"
    path.write_bytes(sse(chat_text(*(f"word{i} " for i in range(15000)))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", "convert", str(path), "--to", RESPONSES],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout.readline().startswith(b"event: ")
        proc.stdout.close()
        _, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    return proc.returncode, stderr


def test_broken_pipe_exits_quietly(tmp_path):
    _, stderr = _head_one(tmp_path)
    assert stderr == b"", stderr


def test_broken_pipe_exit_status(tmp_path):
    code, _ = _head_one(tmp_path)
    assert code in (0, 141, -signal.SIGPIPE)


def test_sigint_exits_130_without_traceback():
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", "convert", "--from", CHAT, "--to", RESPONSES],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # Enough events for any detection; the pipe stays open, so chatx waits for more.
        proc.stdin.write(CHAT_BODY.split(b"data: [DONE]")[0])
        proc.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        got = b""
        while b"response.created" not in got and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1)
            if ready:
                got += os.read(proc.stdout.fileno(), 65536)
        assert b"response.created" in got, "chatx streams what it has before the input ends"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 130
    no_traceback(stderr)

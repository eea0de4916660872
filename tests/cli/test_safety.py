"""Nothing clobbered, nothing lost without a word (issue 14, the command line's part).

``-o FILE`` is replaced only by a whole conversion, never by a run that stopped; an
output never overwrites its input; every command that cannot write its output says so
and exits 2, while a stderr that cannot be written changes nothing; file names that are
not UTF-8 are written escaped; a directory walk passes over FIFOs, sockets and devices.
Each test runs ``python -m chatx`` as a process.
"""

from __future__ import annotations

import os
import resource
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from chatx import pipeline, settings
from chatx.errors import ExitStatus
from chatx.outdir import planning, running
from tests.builders.chat_chunk import chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.streams import CHAT, RESPONSES, sse

TIMEOUT = 60
CHAT_BODY = sse(chat_text("Hello", " there"))
BIG = sse(chat_text(*(f"word{i} " for i in range(20000))))
KEEP = b"an earlier output, to be kept\n"
# A Responses stream with an item chat chunks cannot hold: --strict stops on it.
WEB_SEARCH = (
    ResponsesBuilder()
    .builtin({"id": "ws_1", "type": "web_search_call", "action": {"type": "search"}})
    .message("Sunny")
    .end()
    .bytes()
)
DEV_FULL = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")


def chatx(
    *args: str | bytes | Path,
    stdin: bytes | None = b"",
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    **popen: object,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "chatx", *map(str_or_bytes, args)],
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        **popen,  # type: ignore[arg-type]
    )


def str_or_bytes(arg: str | bytes | Path) -> str | bytes:
    return arg if isinstance(arg, bytes) else str(arg)


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``command`` run by bash, ``chatx`` standing for ``python -m chatx``."""
    line = command.replace("chatx ", f"{shlex.quote(sys.executable)} -m chatx ")
    return subprocess.run(["bash", "-c", line], capture_output=True, timeout=TIMEOUT, cwd=cwd)


def leftovers(folder: Path) -> list[str]:
    """Temporary files left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def no_traceback(stderr: bytes) -> None:
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr, stderr


# -- 1. -o FILE is replaced only by a whole conversion ---------------------------------------

STOPS = {
    # name: (input, extra arguments, exit code, what stderr says)
    "not-a-stream": (b"just some text\n", [], ExitStatus.ERROR, b"in.sse:1: "),
    "strict-loss": (WEB_SEARCH, ["--strict"], ExitStatus.FAILED, b"web_search_call"),
    "records-skipped": (
        CHAT_BODY[:-40],
        [],
        ExitStatus.ERROR,
        b"chatx: error: out.sse: not written, since records were skipped",
    ),
}


@pytest.mark.parametrize("case", sorted(STOPS))
@pytest.mark.parametrize("existing", [True, False], ids=["existing", "new"])
def test_o_is_left_as_it_was_when_the_run_stops(tmp_path, case, existing):
    body, extra, code, said = STOPS[case]
    (tmp_path / "in.sse").write_bytes(body)
    if existing:
        (tmp_path / "out.sse").write_bytes(KEEP)
    done = chatx("convert", "in.sse", "--to", CHAT, "-o", "out.sse", *extra, cwd=tmp_path)
    assert done.returncode == code, done.stderr
    assert said in done.stderr
    no_traceback(done.stderr)
    if existing:
        assert (tmp_path / "out.sse").read_bytes() == KEEP
    else:
        assert not (tmp_path / "out.sse").exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGINT, ExitStatus.INTERRUPTED), (signal.SIGTERM, ExitStatus.TERMINATED)],
    ids=["SIGINT", "SIGTERM"],
)
def test_o_is_left_as_it_was_when_interrupted(tmp_path, signum, code):
    target = tmp_path / "out.sse"
    target.write_bytes(KEEP)
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", "convert", "--to", RESPONSES, "-o", str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # Half the stream, more than the 1 MiB chatx buffers; the pipe stays open, so
        # chatx has written part of its output and waits for more.
        proc.stdin.write(BIG[: len(BIG) // 2])  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and not any(
            p.stat().st_size for p in tmp_path.glob(".out.sse.*.tmp")
        ):
            time.sleep(0.05)
        assert leftovers(tmp_path), "chatx writes beside the file"
        assert target.read_bytes() == KEEP, "the file is not touched while converting"
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == code, stderr
    no_traceback(stderr)
    assert target.read_bytes() == KEEP
    assert leftovers(tmp_path) == []


def _small_files() -> None:
    """In the child: files may not grow past 64 KiB (EFBIG, as a full disk is ENOSPC)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))


def test_o_is_left_as_it_was_when_writing_fails(tmp_path):
    (tmp_path / "big.sse").write_bytes(BIG)
    (tmp_path / "out.sse").write_bytes(KEEP)
    done = chatx("convert", "big.sse", "-o", "out.sse", cwd=tmp_path, preexec_fn=_small_files)
    assert done.returncode == ExitStatus.ERROR
    assert done.stderr == f"chatx: error: out.sse: cannot write: {os.strerror(27)}\n".encode()
    assert (tmp_path / "out.sse").read_bytes() == KEEP
    assert leftovers(tmp_path) == []


def test_o_replaces_the_file_keeping_its_mode_and_symlinks(tmp_path):
    (tmp_path / "in.sse").write_bytes(CHAT_BODY)
    real = tmp_path / "real.sse"
    real.write_bytes(KEEP)
    real.chmod(0o640)
    (tmp_path / "link.sse").symlink_to("real.sse")
    done = chatx("convert", "in.sse", "--to", RESPONSES, "-o", "link.sse", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "link.sse").is_symlink()
    assert real.read_bytes() == pipeline.convert(CHAT_BODY, dst=RESPONSES)
    assert real.stat().st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


def test_o_naming_a_descriptor_or_a_fifo_writes_it_as_a_stream(tmp_path):
    """/dev/stdout is the file a shell opened (>> appends to it); a FIFO is read live."""
    (tmp_path / "in.sse").write_bytes(CHAT_BODY)
    (tmp_path / "log").write_bytes(KEEP)
    done = shell("chatx convert in.sse -o /dev/stdout >> log", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "log").read_bytes() == KEEP + pipeline.convert(CHAT_BODY, dst=RESPONSES)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    done = chatx("convert", "in.sse", "-o", "fifo", cwd=tmp_path)
    reader.join(TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert got == [pipeline.convert(CHAT_BODY, dst=RESPONSES)]
    assert leftovers(tmp_path) == []


def test_o_naming_a_pipe_whose_reader_goes_away_ends_quietly(tmp_path):
    (tmp_path / "big.sse").write_bytes(BIG)
    done = shell("chatx convert big.sse -o >(head -c 10 > /dev/null)", tmp_path)
    assert (done.returncode, done.stderr) == (0, b"")


# -- 2. -o naming the input is refused -------------------------------------------------------


@pytest.mark.parametrize("how", ["same-path", "other-spelling", "symlink", "hard-link", "stdin"])
def test_o_naming_the_input_is_refused_before_anything_is_written(tmp_path, how):
    source = tmp_path / "x.sse"
    source.write_bytes(CHAT_BODY)
    output = {"same-path": "x.sse", "other-spelling": "./sub/../x.sse"}.get(how, "other.sse")
    (tmp_path / "sub").mkdir()
    if how == "symlink":
        (tmp_path / output).symlink_to("x.sse")
    elif how == "hard-link":
        os.link(source, tmp_path / output)
    if how == "stdin":
        done = shell("chatx convert -o x.sse < x.sse", tmp_path)
        said = b"chatx: error: -o x.sse is the file stdin reads from"
    else:
        done = chatx("convert", "x.sse", "-o", output, cwd=tmp_path)
        said = f"chatx: error: -o {output} is the input x.sse".encode()
    assert done.returncode == ExitStatus.ERROR
    assert done.stderr.startswith(said), done.stderr
    assert source.read_bytes() == CHAT_BODY
    assert leftovers(tmp_path) == []


# -- 3. --out-dir never overwrites an input ----------------------------------------------------


def test_out_dir_refuses_to_overwrite_a_walked_input(tmp_path):
    """Converting a folder into itself: an output named like an earlier one that is in
    fact a link to an input is refused, before anything is written."""
    captures = tmp_path / "captures"
    captures.mkdir()
    (captures / "a.sse").write_bytes(CHAT_BODY)
    (captures / "a.chat-chunk.sse").symlink_to("a.sse")
    done = chatx("convert", "captures", "--to", CHAT, "--out-dir", "captures", cwd=tmp_path)
    assert done.returncode == ExitStatus.ERROR
    assert done.stderr == (
        b"chatx: error: converting captures/a.sse to chat-chunk would overwrite the input "
        b"captures/a.sse: choose another --out-dir\n"
    )
    assert (captures / "a.sse").read_bytes() == CHAT_BODY
    assert sorted(p.name for p in captures.iterdir()) == ["a.chat-chunk.sse", "a.sse"]


def test_out_dir_refuses_to_overwrite_a_named_input(tmp_path):
    (tmp_path / "a.sse").write_bytes(CHAT_BODY)
    (tmp_path / "a.chat-chunk.sse").write_bytes(CHAT_BODY)
    done = chatx(
        "convert", "a.sse", "a.chat-chunk.sse", "--to", CHAT, "--out-dir", ".", cwd=tmp_path
    )
    assert done.returncode == ExitStatus.ERROR
    assert b"would overwrite the input a.chat-chunk.sse" in done.stderr
    assert (tmp_path / "a.chat-chunk.sse").read_bytes() == CHAT_BODY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.chat-chunk.sse", "a.sse"]


def test_out_dir_replaces_a_hard_link_to_an_input_without_writing_through_it(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    source = tmp_path / "in" / "a.sse"
    source.write_bytes(CHAT_BODY)
    os.link(source, tmp_path / "out" / "a.responses-event.sse")
    done = chatx("convert", "in", "--to", RESPONSES, "--out-dir", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert source.read_bytes() == CHAT_BODY
    written = (tmp_path / "out" / "a.responses-event.sse").read_bytes()
    assert written == pipeline.convert(CHAT_BODY, dst=RESPONSES)


def test_out_dir_write_errors_name_the_output_not_its_temporary_file(tmp_path, monkeypatch):
    source = tmp_path / "a.sse"
    source.write_bytes(CHAT_BODY)
    jobs, _ = planning.plan([str(source)], [CHAT], tmp_path / "out")

    def full(source: str, target: str) -> None:  # said of the temporary file
        raise OSError(28, os.strerror(28), source)

    monkeypatch.setattr(os, "replace", full)
    outcome = running.convert_job(jobs[0], settings.Settings())
    assert outcome.status == "failed"
    assert outcome.error == f"{tmp_path}/out/a.chat-chunk.sse: {os.strerror(28)}"
    assert leftovers(tmp_path / "out") == []


# -- 4. an output that cannot be written is an error; a failing stderr is not -----------------

WRITERS = {
    "convert": ["convert", "in.sse"],
    "collect": ["collect", "in.sse"],
    "validate": ["validate", "in.sse"],
    "validate-json": ["validate", "bad.sse", "--output", "json"],
    "rules": ["rules"],
    "rules-json": ["rules", "--output", "json"],
    "rules-one": ["rules", "RSP005"],
    "show": ["show", "in.sse"],
    "diff": ["diff", "in.sse", "other.sse"],
    "diff-json": ["diff", "in.sse", "other.sse", "--output", "json"],
    "formats": ["formats"],
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "in.sse").write_bytes(CHAT_BODY)
    (tmp_path / "other.sse").write_bytes(sse(chat_text("Hello", " here")))
    (tmp_path / "bad.sse").write_bytes(
        CHAT_BODY.replace(b'"chat.completion.chunk"', b'"chat.completion.chunkk"')
    )
    return tmp_path


@DEV_FULL
@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_full_stdout_is_an_error(folder, name):
    done = shell(f"chatx {' '.join(WRITERS[name])} > /dev/full", folder)
    assert done.returncode == ExitStatus.ERROR, done.stderr
    assert done.stderr.endswith(b"chatx: error: <stdout>: cannot write: No space left on device\n")
    no_traceback(done.stderr)


@DEV_FULL
def test_a_full_o_file_is_an_error(folder):
    done = chatx("convert", "in.sse", "-o", "/dev/full", cwd=folder)
    assert done.returncode == ExitStatus.ERROR
    assert done.stderr == b"chatx: error: /dev/full: cannot write: No space left on device\n"


@DEV_FULL
@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("chatx convert in.sse", ExitStatus.OK),
        ("chatx convert bad-json.sse", ExitStatus.ERROR),
        ("chatx convert web.sse --to chat", ExitStatus.OK),  # notes on stderr
        ("chatx convert web.sse --to chat --strict", ExitStatus.FAILED),
        ("chatx validate bad.sse", ExitStatus.FAILED),
        ("chatx diff in.sse other.sse", ExitStatus.FAILED),
        ("chatx convert --no-such-option", ExitStatus.ERROR),
    ],
)
def test_a_full_stderr_changes_no_exit_code(folder, command, code):
    (folder / "bad-json.sse").write_bytes(b"data: {\n\n")
    (folder / "web.sse").write_bytes(WEB_SEARCH)
    assert shell(f"{command} > /dev/null", folder).returncode == code
    assert shell(f"{command} > /dev/null 2> /dev/full", folder).returncode == code


# -- 5. rules --format takes format names only -------------------------------------------------


@pytest.mark.parametrize("args", [["--format", "bogus"], ["--output", "bogus"]])
def test_rules_with_a_bogus_value_is_a_usage_error(args):
    done = chatx("rules", *args)
    assert done.returncode == ExitStatus.ERROR
    assert done.stdout == b""
    assert b"chatx: error: " in done.stderr and b"bogus" in done.stderr


# -- 6. file names that are not UTF-8 ----------------------------------------------------------

ODD = b"odd\xfe.sse"  # not UTF-8: Python holds the byte as U+DCFE


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    Path(os.fsdecode(bytes(tmp_path) + b"/" + ODD)).write_bytes(
        sse([chunk({"content": "no role"}), chunk({}, "stop")])  # a CHK002 warning
    )
    (tmp_path / "in.sse").write_bytes(CHAT_BODY)
    return tmp_path


def test_validate_json_escapes_a_file_name_that_is_not_utf8(odd):
    done = chatx("validate", ODD, "--output", "json", cwd=odd)
    assert done.returncode == 0, done.stderr
    findings = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert findings and {f["file"] for f in findings} == {"odd\\xfe.sse"}


def test_diff_json_escapes_a_file_name_that_is_not_utf8(odd):
    done = chatx("diff", ODD, "in.sse", "--output", "json", cwd=odd)
    assert done.returncode == ExitStatus.FAILED, done.stderr
    assert orjson.loads(done.stdout)["a"]["file"] == "odd\\xfe.sse"


@pytest.mark.parametrize(
    "args",
    [["validate", ODD], ["show", ODD], ["convert", ODD, "-o", b"out\xfe.sse", "--check"]],
    ids=["validate", "show", "check"],
)
def test_text_output_escapes_a_file_name_that_is_not_utf8_in_a_strict_locale(odd, args):
    """A UTF-8 locale's stdout refuses what is not UTF-8 (C.UTF-8 passes the byte on)."""
    done = chatx(*args, cwd=odd, env={"PYTHONIOENCODING": "utf-8"})
    assert done.returncode in (0, 1), done.stderr
    no_traceback(done.stderr)
    assert b"\\xfe.sse" in done.stdout and b"\xfe" not in done.stdout


def test_errors_escape_a_file_name_that_is_not_utf8(tmp_path):
    done = chatx("convert", b"gone\xfe.sse", cwd=tmp_path)
    assert done.returncode == ExitStatus.ERROR
    assert done.stderr.startswith(b"chatx: error: gone\\xfe.sse: ")


# -- 7. a walk passes over FIFOs, sockets and devices -------------------------------------------


@pytest.fixture
def specials(tmp_path: Path) -> Path:
    """A folder with one capture, and a FIFO, a socket and a device named like captures."""
    root = tmp_path / "captures"
    root.mkdir()
    (root / "a.sse").write_bytes(CHAT_BODY)
    os.mkfifo(root / "fifo.sse")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(root / "socket.sse"))
    finally:
        server.close()
    (root / "device.sse").symlink_to(os.devnull)
    return tmp_path


SKIPPED = [
    b"chatx: warning: captures/device.sse: a device, not a capture file: skipped",
    b"chatx: warning: captures/fifo.sse: a FIFO, not a capture file: skipped",
    b"chatx: warning: captures/socket.sse: a socket, not a capture file: skipped",
]


def test_convert_out_dir_skips_what_is_no_file_with_a_warning(specials):
    done = chatx("convert", "captures", "--to", CHAT, "--out-dir", "out", cwd=specials)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        *SKIPPED,
        b"chatx: 1 converted, 0 unchanged, 1 written, 0 failed",
    ]
    assert sorted(p.name for p in (specials / "out").iterdir()) == ["a.chat-chunk.sse"]


def test_validate_dir_skips_what_is_no_file_with_a_warning(specials):
    done = chatx("validate", "captures", cwd=specials)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == SKIPPED
    assert done.stdout.startswith(b"captures/a.sse: ok")


def test_a_fifo_named_on_the_command_line_is_read(specials):
    fifo = specials / "captures" / "fifo.sse"
    writer = threading.Thread(target=lambda: fifo.write_bytes(CHAT_BODY))
    writer.start()
    done = chatx("convert", fifo, "--to", RESPONSES)
    writer.join(TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == pipeline.convert(CHAT_BODY, dst=RESPONSES)

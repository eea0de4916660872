"""Issue 23, class 5: nothing clobbered, nothing silently empty.

Every run that exits 2 leaves ``-o`` byte for byte as it was (or absent, when it was),
with no temporary file behind, a file of exchanges one of whose other exchanges cannot
be decoded included; ``capture`` answered with an empty 200 leaves an existing ``OUT``
as it was and says so (exit 2); ``convert DIR --out-dir DIR`` says each input it does
not take because its name looks like an output; a many-file run keeps the earlier
output of an input that now fails; Ctrl-C in the middle keeps ``-o`` and ``OUT``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx import pipeline
from tests.builders.chat_chunk import chat_text
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, Running
from tests.paths import ROOT
from tests.streams import CHAT, RESPONSES, sse
from tests.trust.files_support import TIMEOUT, Fixed

KEEP = b"an earlier output, byte for byte\n"
BODY = sse(chat_text("Hello", " there"))
STREAM = (FIXTURES / "chat-chunk/text.sse").read_bytes()
CONTAINERS = FIXTURES / "containers"


def cassette(folder: Path) -> Path:
    """A VCR cassette: #0 a chat stream, #1 a gzip body cut short (cannot be decoded)."""

    def interaction(body: str, headers: str) -> str:
        return (
            "- request:\n"
            '    body: \'{"model": "m", "stream": true}\'\n'
            "    method: POST\n"
            "    uri: https://api.example.test/v1/chat/completions\n"
            "  response:\n"
            f"    body:\n      string: {body}\n"
            f"    headers:\n      Content-Type:\n      - text/event-stream\n{headers}"
            "    status:\n      code: 200\n      message: OK\n"
        )

    stream = orjson.dumps(STREAM.decode()).decode()
    gzip = "      Content-Encoding:\n      - gzip\n"
    text = (
        "interactions:\n"
        + interaction(stream, "")
        + interaction("!!binary |\n        H4sIAAAAAAAAA8tIzcnJBwCGphA2", gzip)
        + "version: 1\n"
    )
    path = folder / "calls.yaml"
    path.write_text(text)
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# -- 1. exit 2 leaves -o as it was --------------------------------------------------------------

# name: (arguments before -o, what stderr says); {t} is the test's folder.
STOPS = {
    "other-exchange-undecodable-har": (
        [str(CONTAINERS / "bad-bodies.har"), "--to", CHAT],
        "not written, since exchanges were skipped",
    ),
    "other-exchange-undecodable-cassette": (
        ["{t}/calls.yaml", "--to", RESPONSES],
        "not written, since exchanges were skipped",
    ),
    "records-skipped": (["{t}/cut.sse"], "not written, since records were skipped"),
    "not-a-stream": (["{t}/prose.sse"], "prose.sse:1: "),
    "empty-input": (["{t}/empty.sse"], "empty input"),
    "missing-input": (["{t}/nowhere.sse"], "nowhere.sse"),
    "several-streams-none-named": ([str(CONTAINERS / "many.har")], "4 streams, name one"),
    "no-such-stream": ([str(CONTAINERS / "many.har") + "#99"], "no stream #99"),
    "no-such-choice": (["{t}/in.sse", "--choice", "3"], "has no choice 3"),
    "wrong-from": (["{t}/in.sse", "--from", "llama-stack-event"], "is not llama-stack-event"),
    "missing-request": (["{t}/in.sse", "--request", "{t}/nowhere.json"], "nowhere.json"),
    "unknown-format": (["{t}/in.sse", "--to", "nope"], "nope"),
    "a-directory-without-out-dir": (["{t}/folder"], "need --out-dir"),
}


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    (tmp_path / "in.sse").write_bytes(BODY)
    (tmp_path / "cut.sse").write_bytes(BODY[:-40])
    (tmp_path / "prose.sse").write_bytes(b"just some text\n")
    (tmp_path / "empty.sse").write_bytes(b"")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "a.sse").write_bytes(BODY)
    cassette(tmp_path)
    return tmp_path


@pytest.mark.parametrize("case", sorted(STOPS))
@pytest.mark.parametrize("existing", [True, False], ids=["existing", "new"])
def test_a_run_that_exits_2_leaves_o_as_it_was(inputs: Path, case: str, existing: bool) -> None:
    args, said = STOPS[case]
    out = inputs / "out.sse"
    if existing:
        out.write_bytes(KEEP)
    before = sorted(p.name for p in inputs.iterdir())
    result = run(["convert", *(a.format(t=inputs) for a in args), "-o", str(out)])
    assert_clean(result, {2})
    assert said in result.err
    if existing:
        assert out.read_bytes() == KEEP
    else:
        assert not out.exists()
    assert sorted(p.name for p in inputs.iterdir()) == before
    assert leftovers(inputs) == []


def test_the_stream_named_in_a_file_with_an_undecodable_exchange_is_written(inputs: Path) -> None:
    """Named, the stream is read alone: nothing is skipped, the output is written."""
    out = inputs / "out.sse"
    out.write_bytes(KEEP)
    result = run(["convert", str(inputs / "calls.yaml") + "#0", "--to", CHAT, "-o", str(out)])
    assert_clean(result, {0})
    assert out.read_bytes() == pipeline.convert(STREAM, dst=CHAT)


def test_stdout_still_gets_the_stream_of_a_file_with_an_undecodable_exchange(inputs: Path) -> None:
    result = run(["convert", str(inputs / "calls.yaml"), "--to", CHAT])
    assert_clean(result, {2})
    assert result.stdout == pipeline.convert(STREAM, dst=CHAT)


def test_check_with_o_writes_nothing(inputs: Path) -> None:
    out = inputs / "out.sse"
    out.write_bytes(KEEP)
    result = run(["convert", str(inputs / "in.sse"), "--to", CHAT, "-o", str(out), "--check"])
    assert_clean(result, {1})
    assert out.read_bytes() == KEEP and leftovers(inputs) == []


@pytest.mark.parametrize("command", ["collect", "validate"])
def test_collect_and_validate_write_no_file(inputs: Path, command: str) -> None:
    """They write stdout only: -o is no option of theirs, refused before anything runs."""
    out = inputs / "out.sse"
    out.write_bytes(KEEP)
    result = run([command, str(inputs / "in.sse"), "-o", str(out)])
    assert_clean(result, {2})
    assert "No such option: -o" in result.err and out.read_bytes() == KEEP


# -- 2. --out-dir: a failing input keeps its earlier output --------------------------------------


def test_out_dir_a_failing_input_among_good_ones_keeps_its_earlier_output(tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    for name in ("a", "b", "c"):
        (source / f"{name}.sse").write_bytes(BODY)
    out = tmp_path / "out"
    assert_clean(run(["convert", str(source), "--to", CHAT, "--out-dir", str(out)]), {0})
    (out / "b.chat-chunk.sse").write_bytes(KEEP)  # what an earlier run wrote
    (source / "b.sse").write_bytes(b"just some text\n")
    (source / "c.sse").write_bytes(sse(chat_text("changed")))
    result = run(["convert", str(source), "--to", CHAT, "--out-dir", str(out)])
    assert_clean(result, {2})
    assert f"{source / 'b.sse'}:1: " in result.err
    assert "2 converted, 1 unchanged, 1 written, 1 failed" in result.err
    assert (out / "b.chat-chunk.sse").read_bytes() == KEEP
    assert (out / "c.chat-chunk.sse").read_bytes() == pipeline.convert(
        sse(chat_text("changed")), dst=CHAT
    )
    assert leftovers(out) == []


# -- 3. convert DIR --out-dir DIR: what is not taken is said -------------------------------------


def test_out_dir_into_its_input_dir_says_each_name_that_looks_like_an_output(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.sse").write_bytes(BODY)
    (tmp_path / "mine.chat-chunk.sse").write_bytes(BODY)  # a capture of yours, named so
    first = run(["convert", str(tmp_path), "--to", CHAT, "--out-dir", str(tmp_path)])
    assert_clean(first, {0})
    said = f"{tmp_path / 'mine.chat-chunk.sse'}: named like an output"
    assert said in first.err and "name it to convert it" in first.err
    assert "1 converted, 0 unchanged, 1 written, 0 failed" in first.err
    again = run(["convert", str(tmp_path), "--to", CHAT, "--out-dir", str(tmp_path)])
    assert_clean(again, {0})
    assert said in again.err
    assert f"{tmp_path / 'a.chat-chunk.sse'}: named like an output" in again.err
    assert "1 converted, 1 unchanged, 0 written, 0 failed" in again.err
    quiet = run(["convert", str(tmp_path), "--to", CHAT, "--out-dir", str(tmp_path), "-q"])
    assert_clean(quiet, {0})
    assert quiet.err == ""  # -q: only errors, as for every other warning
    named = run(
        ["convert", str(tmp_path / "mine.chat-chunk.sse"), "--to", CHAT, "--out-dir", str(tmp_path)]
    )
    assert_clean(named, {0})
    assert (tmp_path / "mine.chat-chunk.chat-chunk.sse").exists()


def test_only_names_that_look_like_outputs_in_dir_is_said_and_no_captures(tmp_path: Path) -> None:
    (tmp_path / "x.responses-event.sse").write_bytes(BODY)
    result = run(["convert", str(tmp_path), "--to", CHAT, "--out-dir", str(tmp_path)])
    assert_clean(result, {2})
    assert "x.responses-event.sse: named like an output" in result.err
    assert "no captures in this directory" in result.err


# -- 4. capture: an empty 200 never empties OUT ---------------------------------------------------


def capture(url: str, out: Path, *more: str) -> Any:
    ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    return run(
        [
            "capture",
            "--base-url",
            f"{url}/v1",
            "-d",
            orjson.dumps(ask).decode(),
            "-o",
            str(out),
            *more,
        ]
    )


@pytest.mark.parametrize("status", [200, 204])
@pytest.mark.parametrize("existing", [True, False], ids=["existing", "new"])
def test_capture_of_an_empty_body_writes_nothing(
    tmp_path: Path, status: int, existing: bool
) -> None:
    out = tmp_path / "a.sse"
    if existing:
        out.write_bytes(KEEP)
    with Running(Fixed(b"", status)) as upstream:
        result = capture(upstream.url, out, "--tee", RESPONSES)
    assert_clean(result, {2})
    assert (
        f"chatx: error: the response (HTTP {status}) has an empty body, no stream: "
        f"nothing written, {out} left as it was\n"
    ) in result.err
    assert result.stdout == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == (["a.sse"] if existing else [])
    if existing:
        assert out.read_bytes() == KEEP


def test_capture_of_an_http_error_leaves_out_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "a.sse"
    out.write_bytes(KEEP)
    with Running(Fixed(b'{"error": {"message": "no"}}', 500, b"application/json")) as upstream:
        result = capture(upstream.url, out)
    assert_clean(result, {2})
    assert out.read_bytes() == KEEP and sorted(p.name for p in tmp_path.iterdir()) == ["a.sse"]


# -- 5. Ctrl-C in the middle --------------------------------------------------------------------


class Held:
    """An upstream that sends the first event of a stream and then holds the connection
    until the test is done with it."""

    def __init__(self) -> None:
        self.done = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import asyncio

        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": STREAM[:100], "more_body": True})
        while not self.done.is_set():
            await asyncio.sleep(0.02)
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
def held() -> Iterator[tuple[Running, Held]]:
    app = Held()
    with Running(app) as running:
        yield running, app
        app.done.set()


def wait_for(test: Any) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not test():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_capture_interrupted_leaves_an_existing_out_as_it_was(
    held: tuple[Running, Held], tmp_path: Path, signum: int, code: int
) -> None:
    out = tmp_path / "a.sse"
    out.write_bytes(KEEP)
    part = tmp_path / "a.sse.part"
    ask = orjson.dumps({"model": "m"}).decode()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", "capture", "--base-url", f"{held[0].url}/v1"]
        + ["-d", ask, "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        wait_for(lambda: part.exists() and part.stat().st_size)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert b"Traceback" not in err and f"{out} left as it was".encode() in err
    assert out.read_bytes() == KEEP
    assert part.read_bytes() == STREAM[:100]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.sse",
        "a.sse.part",
        "a.sse.part.request.json",
        "a.sse.part.timing",
    ]


def test_convert_interrupted_mid_write_leaves_o_as_it_was(tmp_path: Path) -> None:
    """The input a FIFO that stays open: chatx has begun its output and waits."""
    fifo = tmp_path / "in.sse"
    os.mkfifo(fifo)
    out = tmp_path / "out.sse"
    out.write_bytes(KEEP)
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", "convert", str(fifo), "--to", RESPONSES, "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    writer = os.open(fifo, os.O_WRONLY)  # waits for chatx to open it for reading
    try:
        os.write(writer, sse(chat_text(*(f"w{i} " for i in range(3000)))))
        wait_for(lambda: leftovers(tmp_path))  # its temporary file, beside -o
        assert out.read_bytes() == KEEP
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        os.close(writer)
        proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert out.read_bytes() == KEEP and leftovers(tmp_path) == []

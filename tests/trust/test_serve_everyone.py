"""``chatx serve`` serves everyone: a long stream, a delay, a client that stalls, reads
nothing or leaves never holds up another client; Ctrl-C during a stream says one line
and no exception; the ``X-Chatx-Capture`` value an answer sends names its capture back
as it is; ``"stream": false`` on ``/v1/responses`` carries the request's envelope as
the stream does.

Concurrency is shown by order, never by time: the long streams are held open (by a
stall in making their events, a delay of an hour, or a client that does not read) while
another request is answered, and the test checks they are still open when it returns.
Timeouts are only there to fail instead of hanging.
"""

from __future__ import annotations

import json
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatx.collect import collect
from chatx.collect.streams import streams_of
from chatx.live import replay
from chatx.live.app import ServeApp
from chatx.live.choose import header_names, header_value
from chatx.live.served_captures import load as load_captures
from chatx.reading.framing import load
from tests.live.support import FIXTURES, ROOT, TIMEOUT, Running

HOUR = 3600.0  # a delay no test waits out: the streams under it stay open
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    data = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1,
            "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + orjson.dumps(data) + b"\n\n"


def chat_sse(words: int) -> bytes:
    """A chat stream of ``words`` text events, its finish and [DONE]."""
    body = [chunk({"role": "assistant", "content": ""})]
    body += [chunk({"content": f"w{i} "}) for i in range(words)]
    return b"".join([*body, chunk({}, "stop"), b"data: [DONE]\n\n"])


SHORT = chat_sse(2)
LONG = chat_sse(20)


@cache
def huge() -> bytes:
    """17 MB of stream: more than a socket's buffers hold, so a client that does not read
    keeps it under way."""
    return chat_sse(120_000)


class Log:
    """The app's lines, and a wait for one that says something."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def __call__(self, line: str) -> None:
        with self.changed:
            self.lines.append(line)
            self.changed.notify_all()

    def count(self, text: str) -> int:
        with self.changed:
            return sum(text in line for line in self.lines)

    def wait_for(self, text: str, times: int = 1) -> None:
        with self.changed:
            said = self.changed.wait_for(
                lambda: sum(text in line for line in self.lines) >= times, TIMEOUT
            )
        assert said, f"no {times} lines saying {text!r} in {self.lines}"


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@contextmanager
def serving(folder: Path, **options: Any) -> Iterator[tuple[Running, ServeApp, Log]]:
    log = Log()
    app = ServeApp(load_captures([str(folder)]), log=log, **options)
    with Running(app) as running:
        yield running, app, log


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "long.sse").write_bytes(LONG)
    (tmp_path / "short.sse").write_bytes(SHORT)
    return tmp_path


class Reader(threading.Thread):
    """A client streaming one capture: ``first`` once bytes came, ``finished`` once the
    response ended; it hangs up when ``leave`` is set (unless it has finished)."""

    def __init__(self, url: str, name: str, leave: threading.Event | None = None) -> None:
        super().__init__(daemon=True)
        self.url, self.name = url, name
        self.leave = leave
        self.first, self.finished = threading.Event(), threading.Event()
        self.body = b""
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx2.stream(
                "POST",
                self.url + CHAT,
                content=b'{"stream": true}',
                headers={"x-chatx-capture": self.name},
                timeout=TIMEOUT,
            ) as response:
                for piece in response.iter_raw():
                    self.body += piece
                    self.first.set()
                    if self.leave is not None and self.leave.wait(TIMEOUT):
                        return  # closing the response hangs up
            self.finished.set()
        except BaseException as exc:  # said by the test that joins it
            self.error = exc
            self.first.set()


def readers(url: str, count: int, name: str, leave: threading.Event | None = None) -> list[Reader]:
    started = [Reader(url, name, leave) for _ in range(count)]
    for reader in started:
        reader.start()
    for reader in started:
        assert reader.first.wait(TIMEOUT), "a stream never started"
        assert reader.error is None, reader.error
    return started


def short_requests(url: str, streamed: bool = True) -> None:
    """A final object and the models list, each answered whole, and a short stream
    (under an hour's --delay, only its first event is due)."""
    whole = httpx2.post(
        url + CHAT, content=b"{}", headers={"x-chatx-capture": "short"}, timeout=TIMEOUT
    )
    assert whole.status_code == 200 and whole.json()["object"] == "chat.completion"
    models = httpx2.get(url + "/v1/models", timeout=TIMEOUT)
    assert models.status_code == 200 and models.json()["data"][0]["id"] == "m"
    if streamed:
        got = httpx2.post(
            url + CHAT,
            content=b'{"stream": true}',
            headers={"x-chatx-capture": "short.sse"},
            timeout=TIMEOUT,
        )
        assert got.status_code == 200 and got.content == SHORT


# -- one client never holds up another ----------------------------------------------------


def test_streams_whose_events_are_slow_to_make_hold_up_no_other_client(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Making a stream's events takes time (a long capture read, a transcoder's work):
    while four streams are stuck making their second event, a fifth request is answered.
    The stall holds a worker thread, never the event loop."""
    released = threading.Event()
    real = replay.stream

    def stalling(*args: Any) -> Iterator[bytes]:
        events = real(*args)
        if args[0].name.endswith("long.sse"):
            yield next(events)
            released.wait(TIMEOUT * 4)  # set by the test, or it fails first
        yield from events

    monkeypatch.setattr(replay, "stream", stalling)
    with serving(folder) as (running, _, log):
        try:
            four = readers(running.url, 4, "long.sse")
            short_requests(running.url)
            assert not any(r.finished.is_set() for r in four)
            assert log.count("long.sse (as recorded): ") == 0  # none has ended
        finally:
            released.set()
        for reader in four:
            reader.join(TIMEOUT)
            assert reader.finished.is_set() and reader.body == LONG, reader.error


def test_a_delay_holds_up_no_other_client_and_a_client_leaving_it_is_seen_at_once(
    folder: Path,
) -> None:
    """Four streams under an hour's --delay, a fifth request answered; the four clients
    hang up and their streams end then, not an hour later."""
    leave = threading.Event()
    with serving(folder, delay=HOUR) as (running, app, log):
        try:
            four = readers(running.url, 4, "long.sse", leave)
            short_requests(running.url, streamed=False)
            fifth = readers(running.url, 1, "short.sse", leave)
            assert not any(r.finished.is_set() for r in four)
            assert app.under_way == 5
        finally:
            leave.set()
        log.wait_for("the client left after 1 events", 5)
        wait_until(lambda: app.under_way == 0, "the streams of clients that left run on")
        for reader in four + fifth:
            reader.join(TIMEOUT)
            assert reader.error is None and not reader.finished.is_set()


def test_many_clients_at_once(folder: Path) -> None:
    leave = threading.Event()
    with serving(folder, delay=HOUR) as (running, app, log):
        try:
            many = readers(running.url, 48, "long.sse", leave)
            assert app.under_way == 48  # all open at once, none finished
            with ThreadPoolExecutor(16) as pool:
                bodies = list(pool.map(lambda _: _final(running.url), range(160)))
            assert all(body == bodies[0] for body in bodies)
        finally:
            leave.set()
        log.wait_for("the client left", 48)
        wait_until(lambda: app.under_way == 0, "streams of clients that left run on")
        for reader in many:
            reader.join(TIMEOUT)


def _final(url: str) -> bytes:
    got = httpx2.post(
        url + CHAT, content=b"{}", headers={"x-chatx-capture": "long"}, timeout=TIMEOUT
    )
    assert got.status_code == 200
    return got.content


def _connect(url: str, receive_buffer: int | None = None) -> socket.socket:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket()
    if receive_buffer is not None:  # before connecting: the window it offers stays small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(TIMEOUT)
    sock.connect((host, int(port)))
    return sock


def test_clients_that_stall_or_never_read_hold_up_no_other(tmp_path: Path) -> None:
    """Slowloris: one client sends half a request head, one half a body, one nothing,
    and one asks for 17 MB and reads none of it; a short request is answered meanwhile,
    the unread stream still under way."""
    (tmp_path / "short.sse").write_bytes(SHORT)
    (tmp_path / "huge.sse").write_bytes(huge())
    with serving(tmp_path) as (running, app, log):
        stalled = [_connect(running.url) for _ in range(4)]
        head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\n"
        stalled[0].sendall(head.encode())
        stalled[1].sendall(f"{head}Content-Length: 40\r\n\r\n{{".encode())
        stalled.append(_ask(running.url, "huge.sse", receive_buffer=4096))
        try:
            wait_until(lambda: app.under_way == 1, "the unread stream did not start")
            short_requests(running.url)
            assert log.count("huge.sse (as recorded): ") == 0  # the unread stream is not done
        finally:
            for sock in stalled:
                sock.close()
        wait_until(lambda: app.under_way == 0, "the unread stream runs on after its client left")
        log.wait_for("huge.sse (as recorded): the client left after")
        short_requests(running.url)


def _ask(url: str, name: str, receive_buffer: int | None = None) -> socket.socket:
    """A socket that has asked for a stream of ``name``."""
    sock = _connect(url, receive_buffer)
    body = b'{"stream": true}'
    head = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nx-chatx-capture: {name}\r\n"
    sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return sock


def test_clients_leaving_mid_stream_leave_nothing_behind(tmp_path: Path) -> None:
    """Twelve clients read the head of a 17 MB stream and hang up; each stream ends
    there, the server goes on."""
    (tmp_path / "short.sse").write_bytes(SHORT)
    (tmp_path / "huge.sse").write_bytes(huge())
    with serving(tmp_path) as (running, app, log):
        for _ in range(12):
            with _ask(running.url, "huge.sse", receive_buffer=4096) as sock:
                assert sock.recv(4096).startswith(b"HTTP/1.1 200 ")
        log.wait_for("huge.sse (as recorded): the client left after", 12)
        wait_until(lambda: app.under_way == 0, "streams of clients that left run on")
        assert not [line for line in log.lines if "internal error" in line]
        short_requests(running.url)


# -- Ctrl-C ---------------------------------------------------------------------------------

LISTENING = re.compile(rb"(http://127\.0\.0\.1:\d+)")
EXCEPTION_TEXT = re.compile(r"Traceback|\b\w*(Error|Exception|Interrupt|Cancelled)\w*\b")


class Process:
    """``chatx serve`` as a process, its stderr read as it comes."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chatx", "serve", *args, "--port", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        self.said = b""
        found = self.wait_for(LISTENING)
        self.url = found.group(1).decode()

    def wait_for(self, pattern: re.Pattern[bytes]) -> re.Match[bytes]:
        stderr = self.proc.stderr
        assert stderr is not None
        deadline = time.monotonic() + TIMEOUT
        while (found := pattern.search(self.said)) is None:
            assert time.monotonic() < deadline, self.said.decode(errors="replace")
            if select.select([stderr], [], [], 0.5)[0]:
                line = stderr.readline()
                assert line, self.said.decode(errors="replace")
                self.said += line
        return found

    def end(self) -> str:
        _, rest = self.proc.communicate(timeout=TIMEOUT)
        return (self.said + rest).decode(errors="replace")


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_during_a_stream_says_no_exception(folder: Path, presses: int) -> None:
    """One Ctrl-C: the stream under its hour's delay runs out the grace and is cut; two:
    cut at once. Either way one line says it stops, one that it stopped, exit 130."""
    served = Process(str(folder), "--delay", str(int(HOUR * 1000)))
    try:
        reader = readers(served.url, 1, "long.sse")[0]
        served.proc.send_signal(signal.SIGINT)
        if presses == 2:
            served.wait_for(re.compile(rb"chatx: serve: stopping"))
            served.proc.send_signal(signal.SIGINT)
        text = served.end()
    finally:
        served.proc.kill()
    reader.join(TIMEOUT)
    assert served.proc.returncode == 130, text
    assert not EXCEPTION_TEXT.search(text), text
    lines = text.splitlines()
    assert all(line.startswith("chatx: serve: ") for line in lines), text
    assert sum("stopping" in line for line in lines) == 1 and lines[-1] == "chatx: serve: stopped"
    assert "long.sse (as recorded): cut short at shutdown after 1 events" in text
    assert not reader.finished.is_set()  # the client saw the stream cut, not ended


# -- X-Chatx-Capture ------------------------------------------------------------------------

ODD_NAMES = [
    "plain.sse",
    "with space.sse",
    " leading space.sse",
    "trailing space .sse",
    "tab\there.sse",
    "new\nline.sse",
    "carriage\rreturn.sse",
    "naïve café.sse",
    "日本語.sse",
    "emoji 🙂.sse",
    "100%.sse",
    "a%20b.sse",
    "a b.sse",
    "%41.sse",
    "A.sse",
    "semi;colon,comma.sse",
    'quote"d.sse',
    "hash#1.sse",
    "colon: value.sse",
    "sub dir/inner é.sse",
    "sub dir/deeper/x#y.sse",
]


def _har(entries: int) -> str:
    def entry(i: int) -> dict[str, Any]:
        return {
            "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                        "headers": [], "postData": {"mimeType": "application/json",
                                                    "text": json.dumps({"model": f"m{i}"})}},
            "response": {"status": 200, "headers": [],
                         "content": {"mimeType": "text/event-stream", "text": SHORT.decode()}},
        }  # fmt: skip

    return json.dumps({"log": {"version": "1.2", "entries": [entry(i) for i in range(entries)]}})


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    top = tmp_path / "odd dir é"
    for i, name in enumerate(ODD_NAMES):
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_bytes(chat_sse(i))  # each its own length: told apart by its body
    (top / "calls é #1.har").write_text(_har(2))
    with suppress(OSError, UnicodeError):  # a file system that takes only UTF-8 names
        (top / "not utf-8 \udcff.sse").write_bytes(chat_sse(99))
    return top


def test_the_capture_header_an_answer_sends_names_its_capture_back(odd: Path) -> None:
    """Every capture is answered in turn (rule 4, no header); the header each answer
    sends, sent back as it came, gets that capture again, streamed and not."""
    with serving(odd) as (running, app, _):
        names = [capture.name for capture in app.captures]
        assert any("#1" in n for n in names) and any("\n" in n for n in names)
        sent: dict[bytes, bytes] = {}
        for name in names:
            got = httpx2.post(running.url + CHAT, content=b'{"stream": true}', timeout=TIMEOUT)
            value = _capture_header(got)
            assert re.fullmatch(rb"[\x21-\x7e]+", value), value  # safe in any header
            assert header_names(value.decode())[0] == name
            sent[value] = got.content
        assert len(sent) == len(names)
        for value, body in sent.items():
            for stream in (True, False):
                again = httpx2.post(
                    running.url + CHAT,
                    content=orjson.dumps({"stream": stream}),
                    headers=[(b"x-chatx-capture", value)],
                    timeout=TIMEOUT,
                )
                assert again.status_code == 200, (value, again.text)
                assert _capture_header(again) == value
                if stream:
                    assert again.content == body


def test_a_name_typed_as_it_is_still_names_its_capture(odd: Path) -> None:
    """A name typed in the header, not taken from an answer: found as it is when its
    percent-decoded reading names no capture; when both name one, the decoded reading
    wins (the answer's header for the literal name says so: a%2520b.sse)."""
    with serving(odd) as (running, _, _):
        for typed, meant in [
            ("100%.sse", "100%.sse"),
            ("%41.sse", "A.sse"),
            ("a%20b.sse", "a b.sse"),
            ("a%2520b.sse", "a%20b.sse"),
            ("hash#1.sse", "hash#1.sse"),
            ("odd dir é/sub dir/deeper/x#y", "sub dir/deeper/x#y.sse"),
            ("calls é #1.har#1", "calls é #1.har#1"),
        ]:
            got = httpx2.post(
                running.url + CHAT,
                content=b"{}",
                headers=[(b"x-chatx-capture", typed.encode())],
                timeout=TIMEOUT,
            )
            assert got.status_code == 200, (typed, got.text)
            assert header_names(_capture_header(got).decode())[0] == f"odd dir é/{meant}"
        missing = httpx2.post(
            running.url + CHAT,
            content=b"{}",
            headers={"x-chatx-capture": "no%20such.sse"},
            timeout=TIMEOUT,
        )
        assert missing.status_code == 404
        assert "'no%20such.sse'" in missing.json()["error"]["message"]


def _capture_header(response: httpx2.Response) -> bytes:
    values = [v for k, v in response.headers.raw if k.lower() == b"x-chatx-capture"]
    assert len(values) == 1, response.headers.raw
    return values[0]


@given(st.text() | st.sampled_from(["\udcff", "a\udc80b", "%", "%%", "%zz", " "]))
def test_header_values_are_visible_ascii_and_decode_to_the_name(name: str) -> None:
    value = header_value(name)
    assert re.fullmatch(rb"[\x21-\x7e]*", value), value
    assert header_names(value.decode())[0] == name


# -- stream: false on /v1/responses ----------------------------------------------------------

FOREIGN = [
    path
    for fmt in ("chat-chunk", "llama-stack-event", "anthropic-event")
    for path in sorted((FIXTURES / fmt).iterdir())
    if path.is_file() and not path.name.endswith(".request.json")
]
REQUESTS = [
    {"model": "asked", "input": "hi", "instructions": "Be brief.", "temperature": 0.25,
     "max_output_tokens": 77, "top_p": 0.5, "user": "u-1", "metadata": {"k": "v"},
     "tools": [{"type": "function", "name": "get", "parameters": {"type": "object"}}],
     "tool_choice": "required", "text": {"format": {"type": "json_object"}},
     "reasoning": {"effort": "low", "summary": "auto"}, "store": True},
    {"model": "asked", "messages": [{"role": "system", "content": "From the system."},
                                    {"role": "user", "content": "hi"}],
     "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
     "response_format": {"type": "json_object"}, "max_tokens": 12, "verbosity": "low",
     "reasoning_effort": "high"},
]  # fmt: skip


@pytest.fixture(scope="module")
def fixtures_served() -> Iterator[Running]:
    app = ServeApp(
        load_captures(
            [str(FIXTURES / f) for f in ("chat-chunk", "llama-stack-event", "anthropic-event")]
        )
    )
    with Running(app) as running:
        yield running


@pytest.mark.parametrize("path", FOREIGN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_final_response_carries_the_requests_envelope_as_the_stream_does(
    fixtures_served: Running, path: Path
) -> None:
    name = f"{path.parent.name}/{path.name}"
    for request in REQUESTS:
        answers = [
            httpx2.post(
                fixtures_served.url + RESPONSES,
                content=orjson.dumps({**request, "stream": stream}),
                headers={"x-chatx-capture": name},
                timeout=TIMEOUT,
            )
            for stream in (True, False)
        ]
        assert answers[0].status_code == 200, answers[0].text
        sent = streams_of(load(answers[0].content, name))[0]
        if sent.errors:  # a stream that ends in an error is, whole, that error's status
            assert answers[1].status_code >= 400, answers[1].text
            assert answers[1].json()["error"]["message"] == sent.errors[0].message
            continue
        assert answers[1].status_code == 200, answers[1].text
        streamed = collect(sent, "responses", source="responses-event")
        final = answers[1].json()
        assert final == streamed
        assert final["tools"] and final["text"]["format"] == {"type": "json_object"}
        if "instructions" in request:
            assert final["instructions"] == "Be brief." and final["temperature"] == 0.25
        else:
            assert final["instructions"] == "From the system."
            assert final["max_output_tokens"] == 12 and final["reasoning"]["effort"] == "high"

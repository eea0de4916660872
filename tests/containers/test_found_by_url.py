"""A stream of a file of exchanges is found by the URL it was asked at and by its
records: the API the URL's path names wins when one of the first records is that API's
format, unless a record is another format's for certain. Every command reads a stream
as ``ls`` lists it, and a many-file run as ``convert FILE#N`` does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from chatx.reading.framing import read_records
from chatx.reading.telling import told
from tests.containers.common import FIXTURES, SAMPLES, chatx

GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash"
VERTEX = (
    "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p/locations/us-central1"
    "/publishers/google/models/gemini-2.0-flash"
)
# Google's error without its ``status`` (some of Google's front ends leave it out): to the
# eye an OpenAI error too, so only the URL tells whose it is.
GOOGLE_ERROR = json.dumps({"error": {"code": 400, "message": "API key not valid."}})
OPENAI_ERROR = json.dumps(
    {"error": {"message": "bad", "type": "invalid_request_error", "param": None, "code": None}}
)
GEMINI_SSE = (
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},'
    '"finishReason":"STOP"}],"modelVersion":"gemini-2.0-flash"}\r\n\r\n'
)
CHAT_SSE = (
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
    '[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)

# (url, body, status, the format ls must find)
EXCHANGES = [
    (f"{GEMINI}:streamGenerateContent?alt=sse", GOOGLE_ERROR, 400, "gemini-event"),
    (f"{GEMINI}:generateContent", GOOGLE_ERROR, 403, "gemini-event"),
    ("https://api.openai.com/v1/chat/completions", GOOGLE_ERROR, 400, "chat-chunk"),
    (f"{VERTEX}:streamGenerateContent?alt=sse", GEMINI_SSE, 200, "gemini-event"),
    (f"{VERTEX}:streamGenerateContent", GOOGLE_ERROR, 429, "gemini-event"),
    # A gateway's Gemini route that sent chat chunks: the records are chat's for certain.
    ("https://gw.example/v1beta/models/m:streamGenerateContent?alt=sse", CHAT_SSE, 200,
     "chat-chunk"),
    # An OpenAI error at a Gemini URL: Gemini's probe rejects it (a ``type``), content wins.
    (f"{GEMINI}:streamGenerateContent?alt=sse", OPENAI_ERROR, 400, "chat-chunk"),
    # A URL no API answers: the records alone, as for a bare stream.
    ("https://example.com/upload", GOOGLE_ERROR, 400, "chat-chunk"),
]  # fmt: skip


def _har(path: Path, exchanges: list[tuple[str, str, int, str]]) -> str:
    entries = [
        {"request": {"method": "POST", "url": url, "headers": [],
                     "postData": {"mimeType": "application/json", "text": "{}"}},
         "response": {"status": status, "headers": [],
                      "content": {"mimeType": "application/json", "text": body}}}
        for url, body, status, _ in exchanges
    ]  # fmt: skip
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return str(path)


def _cassette(path: Path, exchanges: list[tuple[str, str, int, str]]) -> str:
    """A vcrpy cassette (YAML) of the same exchanges."""
    lines = ["interactions:"]
    for url, body, status, _ in exchanges:
        lines += [
            "- request:",
            "    body: '{}'",
            "    headers: {}",
            "    method: POST",
            f"    uri: {json.dumps(url)}",
            "  response:",
            f"    body: {{string: {json.dumps(body)}}}",
            "    headers: {}",
            f"    status: {{code: {status}, message: x}}",
        ]
    path.write_text("\n".join([*lines, "version: 1", ""]))
    return str(path)


def _listed(file: str) -> list[dict[str, Any]]:
    result = chatx("ls", "--output", "json", file)
    assert result.code == 0, result.err
    return [json.loads(line) for line in result.stdout.splitlines()]


def _validated_as(address: str) -> str:
    """The format ``validate`` read ``address`` as, from its summary line."""
    result = chatx("validate", address)
    found = re.search(r"\(([a-z-]+), [a-z]+, \d+ records?\)", result.err + result.stdout.decode())
    assert found is not None, (result.err, result.stdout)
    return found.group(1)


def _read_as_listed(address: str, fmt: str) -> None:
    """Every command reads ``address`` as the format ``ls`` found: what it writes
    without ``--from`` is what it writes with ``--from`` that format."""
    assert _validated_as(address) == fmt
    for command in (["collect", "-q"], ["show"], *(["convert", "-q", "--to", t] for t in _TARGETS)):
        plain = chatx(*command, address)
        named = chatx(*command, address, "--from", fmt)
        # the same output and status (2 where the target cannot hold the stream: several
        # choices into a format of one), and never a reading the format refuses
        assert plain.code == named.code, (command, plain.err, named.err)
        assert plain.stdout == named.stdout and plain.err == named.err, command
        assert "the input is not" not in named.err, (command, named.err)


_TARGETS = ("chat-chunk", "responses-event", "anthropic-event", "gemini-event")


@pytest.mark.parametrize("write", [_har, _cassette], ids=["har", "cassette"])
def test_ls_finds_each_stream_by_its_url_and_records(tmp_path: Path, write: Any) -> None:
    file = write(tmp_path / "exchanges", EXCHANGES)
    rows = _listed(file)
    assert [row["format"] for row in rows] == [fmt for *_, fmt in EXCHANGES]


@pytest.mark.parametrize("index", range(len(EXCHANGES)))
def test_every_command_reads_a_stream_as_ls_found_it(tmp_path: Path, index: int) -> None:
    file = _har(tmp_path / "t.har", EXCHANGES)
    _read_as_listed(f"{file}#{index}", EXCHANGES[index][3])


def test_the_google_error_is_read_as_googles(tmp_path: Path) -> None:
    """Read as Gemini's, the error is what ``collect`` gives (a chat reading gives an
    empty ``chat.completion`` and says the error lost) and Gemini's rule checks it."""
    file = _har(tmp_path / "t.har", EXCHANGES[:1])
    out = chatx("collect", f"{file}#0")
    assert out.code == 0, out.err
    assert json.loads(out.stdout) == json.loads(GOOGLE_ERROR)
    assert "lost" not in out.err
    said = chatx("validate", f"{file}#0")
    assert "GEM008" in said.stdout.decode() + said.err


def test_a_many_file_run_reads_each_stream_as_convert_of_its_address(tmp_path: Path) -> None:
    file = _har(tmp_path / "t.har", EXCHANGES)
    out = tmp_path / "out"
    run = chatx("convert", file, "--to", "responses-event", "--out-dir", str(out), "-q")
    assert run.code == 0, run.err
    for index, (*_, fmt) in enumerate(EXCHANGES):
        (written,) = out.glob(f"t.{index}.responses-event.*")
        one = chatx("convert", f"{file}#{index}", "--to", "responses-event", "-q")
        named = chatx("convert", f"{file}#{index}", "--from", fmt, "--to", "responses-event", "-q")
        assert written.read_bytes() == one.stdout == named.stdout, index


def test_an_address_given_to_a_many_file_run_is_read_as_ls_found_it(tmp_path: Path) -> None:
    file = _har(tmp_path / "t.har", EXCHANGES)
    out = tmp_path / "out"
    run = chatx("convert", f"{file}#0", "--to", "gemini-event", "--out-dir", str(out), "-q")
    assert run.code == 0, run.err
    (written,) = out.glob("t.0.gemini-event.*")
    one = chatx("convert", f"{file}#0", "--from", "gemini-event", "--to", "gemini-event", "-q")
    assert written.read_bytes() == one.stdout


@pytest.mark.parametrize(
    ("url", "fmt"),
    [(f"{GEMINI}:streamGenerateContent?alt=sse", "gemini-event"),
     ("/v1/models/gemini-2.0-flash:streamGenerateContent", "gemini-event"),
     (f"{VERTEX}:generateContent", "gemini-event"),
     ("https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=1", None),
     ("https://api.openai.com/v1/chat/completions/extra", None),
     ("https://api.openai.com/v1/chat/completionsX", None),
     (f"{GEMINI}:countTokens", None),
     ("https://models/:streamGenerateContent", None),  # no model segment
     ("http://[::1/v1beta/models/m:streamGenerateContent", None),  # a malformed URL
     (None, None)],
)  # fmt: skip
def test_the_url_alone_decides_nothing_the_records_reject(url: str | None, fmt: str | None) -> None:
    """Google's error without ``status`` is chat's by its records; the URL makes it
    Gemini's only where the path is a Gemini route (the model one segment, the route at
    the path's end)."""
    _, records = read_records(GOOGLE_ERROR.encode())
    codec = told(list(records), url)
    assert codec is not None
    assert codec.name == (fmt or "chat-chunk")


def test_a_chat_route_with_a_base_path_is_chats(tmp_path: Path) -> None:
    """Azure's ``/openai/deployments/D/chat/completions`` ends in chat's route: an error
    there read as chat's, and a Gemini stream there is still Gemini's (certain)."""
    url = "https://x.openai.azure.com/openai/deployments/d/chat/completions"
    file = _har(tmp_path / "t.har", [(url, GEMINI_SSE, 200, ""), (url, GOOGLE_ERROR, 400, "")])
    assert [row["format"] for row in _listed(file)] == ["gemini-event", "chat-chunk"]


def _exchange_files() -> list[Any]:
    files = sorted(
        p
        for p in FIXTURES.iterdir()
        if p.is_file() and p.suffix != ".md" and not p.name.startswith("no-streams")
    )
    if SAMPLES.is_dir():
        files += sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix != ".md")
    return [pytest.param(path, id=path.name[:40]) for path in files]


@pytest.mark.parametrize("path", _exchange_files())
def test_every_command_reads_every_recorded_stream_as_ls_lists_it(path: Path) -> None:
    listed = chatx("ls", "--output", "json", str(path))
    assert listed.stdout, listed.err  # a row for each exchange (exit 2 where one is unreadable)
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    for row in rows:
        if row["kind"] == "stream" and row["address"].rsplit("#", 1)[0] == str(path):
            _read_as_listed(row["address"], row["format"])

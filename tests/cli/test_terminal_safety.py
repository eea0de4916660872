"""Nothing from a stream reaches the terminal as a command (DESIGN §6).

Streams of every format carry ANSI and OSC escape sequences, C1 controls, a carriage
return, a backspace, a bidi override and rich markup in every place text can be: model
text, reasoning, refusal, tool names, arguments and call ids, ids, the model name, finish
reasons, error messages, SSE event names, unknown fields, and the file name. Every
human-readable output (show, validate, diff, notes and errors on stderr) must show them as
visible escapes, and show the markup as the characters it is. Data outputs (convert's
stream, collect's JSON, ``--output json``) are JSON: their stderr is checked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.builders.chat_chunk import chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.inprocess import Result, run
from tests.streams import sse

MARKUP = "[bold red]MARKUP[/] [link=http://evil.example]L[/link]"
EVIL = (
    "\x1b[31mRED\x1b[0m"  # SGR colour
    "\x1b]0;pwned\x07"  # OSC: set the window title
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"  # OSC 8 hyperlink
    "\x9b31m"  # C1 CSI
    "\r\b\x00\u202e\u2028"  # carriage return, backspace, NUL, bidi override, line separator
    + MARKUP
)
# What must never appear in human output: ESC, BEL, C1 (UTF-8), CR, BS, NUL, bidi, LS.
UNSAFE = re.compile(rb"[\x1b\x07\x0d\x08\x00]|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xae]")


def chat_stream() -> bytes:
    evil_top = {"id": "chatcmpl-" + EVIL, "model": EVIL}
    chunks = [
        chunk({"role": "assistant", "content": EVIL}, **evil_top),
        chunk({"reasoning_content": EVIL}, **evil_top),
        chunk({"refusal": EVIL}, **evil_top),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_" + EVIL,
                        "type": "function",
                        "function": {"name": EVIL, "arguments": EVIL},
                    }
                ]
            },
            **evil_top,
        ),
        chunk({}, EVIL, **evil_top),
        chunk(choices=[], usage={"prompt_tokens": 1, "completion_tokens": 1}, **{EVIL: EVIL}),
        {"error": {"message": EVIL, "type": EVIL, "code": EVIL}},
    ]
    name = EVIL.replace("\r", "").replace("\u2028", "")  # an event name cannot hold a line end
    return (
        "".join(f"event: {name}\ndata: {json.dumps(c)}\n\n" for c in chunks).encode()
        + b"data: [DONE]\n\n"
    )


def responses_stream() -> bytes:
    builder = ResponsesBuilder(rid="resp_" + EVIL, model=EVIL)
    builder.reasoning(EVIL).message(EVIL).message(refusal=EVIL).call(EVIL, "call_" + EVIL, EVIL)
    builder.builtin({"id": "ws_" + EVIL, "type": "web_search_call", "action": {"query": EVIL}})
    builder.emit("response.output_text.delta", item_id=EVIL, output_index=9, delta=EVIL)
    builder.emit(EVIL, delta=EVIL)
    builder.error(EVIL, code=EVIL)
    return builder.bytes()


def llama_stream() -> bytes:
    def event(kind: str, delta: dict[str, Any], stop: str | None = None) -> str:
        body = {"event_type": kind, "delta": delta, "logprobs": None, "stop_reason": stop}
        return json.dumps({"event": body, "metrics": None}) + "\n"

    call = {"call_id": EVIL, "tool_name": EVIL, "arguments": {EVIL: EVIL}, "arguments_json": EVIL}
    return "".join(
        [
            event("start", {"type": "text", "text": ""}),
            event("progress", {"type": "text", "text": EVIL}),
            event("progress", {"type": "tool_call", "tool_call": EVIL, "parse_status": "started"}),
            event(
                "progress", {"type": "tool_call", "tool_call": call, "parse_status": "succeeded"}
            ),
            event("complete", {"type": "text", "text": ""}, EVIL),
            json.dumps({"error": {"message": EVIL, "type": EVIL}}) + "\n",
        ]
    ).encode()


def broken_stream() -> bytes:
    """Records that cannot be read, whose error messages quote the stream."""
    first = sse([chunk({"role": "assistant", "content": "hi"})], done=False)
    return (
        first
        + f'data: {{"x": "{EVIL}\n\n'.encode()  # raw controls: invalid JSON, quoted back
        + f"{EVIL}: value\n\n".replace("\r", "").replace("\u2028", "").encode()  # no SSE field
        + b"data: [DONE]\n\n"
    )


STREAMS = {
    "chat": (chat_stream, "x.sse"),
    "responses": (responses_stream, "x.sse"),
    "llama": (llama_stream, "x.jsonl"),
    "broken": (broken_stream, "x.sse"),
}

# Human output on stdout and stderr; data on stdout (only its stderr is checked).
HUMAN = {
    "show": ["show", "{file}"],
    "show-events": ["show", "{file}", "--events"],
    "validate": ["validate", "{file}"],
    "diff-semantic": ["diff", "{file}", "{other}", "--semantic", "--all"],
    "diff-wire": ["diff", "{file}", "{other}", "--wire", "--all"],
    "diff-wire-first": ["diff", "{file}", "{other}", "--wire"],
}
DATA = {
    "convert-chat": ["convert", "{file}", "--to", "chat-chunk"],
    "convert-responses": ["convert", "{file}", "--to", "responses-event"],
    "convert-llama": ["convert", "{file}", "--to", "llama-stack-event"],
    "collect": ["collect", "{file}"],
    "validate-json": ["validate", "{file}", "--output", "json"],
    "diff-json": ["diff", "{file}", "{other}", "--output", "json"],
}


def _run(tmp_path: Path, stream: str, args: list[str], monkeypatch: Any) -> Result:
    make, name = STREAMS[stream]
    (tmp_path / name).write_bytes(make())
    other = tmp_path / ("other" + name[1:])
    other.write_bytes(make().replace(b"RED", b"BLUE"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside the markup
    return run([a.format(file=name, other=other.name) for a in args])


def _safe(data: bytes, where: str) -> None:
    match = UNSAFE.search(data)
    assert match is None, (
        f"{where}: {match.group()!r} near {data[max(0, match.start() - 60) : match.end() + 20]!r}"
    )  # type: ignore[union-attr]


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("command", sorted(HUMAN))
def test_human_output_is_escaped(tmp_path, monkeypatch, stream, command):
    result = _run(tmp_path, stream, HUMAN[command], monkeypatch)
    assert result.code in (0, 1, 2), result.err
    _safe(result.stdout, "stdout")
    _safe(result.stderr, "stderr")
    # Markup is text: when stream text is shown, its brackets are shown too.
    out = result.stdout.decode() + result.err
    assert "MARKUP" not in out or "[bold red]MARKUP[/]" in out, out


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("command", sorted(DATA))
def test_notes_and_errors_of_data_commands_are_escaped(tmp_path, monkeypatch, stream, command):
    result = _run(tmp_path, stream, DATA[command], monkeypatch)
    assert result.code in (0, 1, 2), result.err
    _safe(result.stderr, "stderr")


@pytest.mark.parametrize("command", ["show", "validate", "diff-wire"])
def test_on_a_colour_terminal_only_chatx_styles(tmp_path, monkeypatch, command):
    """With colours forced on, rich writes its own SGR codes; the stream's never pass."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    result = _run(tmp_path, "chat", HUMAN[command], monkeypatch)
    out = result.stdout + result.stderr
    for raw in (b"\x1b]", b"\x07", b"\x1b[31mRED", b"\xc2\x9b", b"\r", b"\x08", b"\xe2\x80\xae"):
        assert raw not in out, raw


def test_file_names_are_escaped(tmp_path, monkeypatch):
    name = "name\x1b]0;pwned\x07.sse"
    (tmp_path / name).write_bytes(chat_stream())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "400")
    for args in (["convert", name], ["validate", name], ["show", name], ["collect", name],
                 ["diff", name, name + "-missing"], ["convert", name + "-missing"]):  # fmt: skip
        result = run(args)
        _safe(result.stderr, f"{args} stderr")
        if args[0] in ("validate", "show"):
            _safe(result.stdout, f"{args} stdout")


def test_command_line_text_in_errors_is_escaped():
    for args in (
        ["convert", "--to", "\x1b[31mx"],
        ["convert", "--\x1b]0;x\x07"],
        ["convert", "--choice", "\x1b[31m"],
        ["validate", "--format", "\x9bx"],
        ["rules", "\x1b[31mRSP"],
        ["diff", "-", "\x1b[2J"],
    ):
        result = run(args, b"")
        assert result.code == 2, (args, result.err)
        _safe(result.stderr, f"{args} stderr")

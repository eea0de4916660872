"""``chatx show``: a readable, safe rendering of every stream."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from chatx import codecs
from chatx.cli import app, main
from chatx.reading.framing import load
from chatx.show import record_kinds, render, safe
from tests.captures import CAPTURES, captures
from tests.streams import sse

BASE = {
    "id": "chatcmpl-evil",
    "object": "chat.completion.chunk",
    "created": 1767225600,
    "model": "m\x1b[31m",
}
EVIL_TEXT = "[bold]not bold[/bold] \x1b[2J\x1b]0;title\x07 [link=http://x]y[/link]\nline two"


@pytest.fixture(autouse=True)
def _fresh_app() -> Iterator[None]:
    """main() registers the commands again on each call: undo that after each test so
    in-process runs stay fast (a command list that grows makes every call slower)."""
    saved = list(app.registered_commands)
    yield
    app.registered_commands[:] = saved


def _chunk(delta: dict, finish: str | None = None, index: int = 0) -> dict:
    return {**BASE, "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def _call(index: int, call_id: str, name: str, arguments: str) -> dict:
    function = {"name": name, "arguments": arguments}
    return {"index": index, "id": call_id, "type": "function", "function": function}


def _evil_stream() -> bytes:
    return sse(
        [
            _chunk({"role": "assistant", "reasoning_content": "think [red]hard[/red]\x1b[5m"}),
            _chunk({"content": EVIL_TEXT}),
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_[i]",
                            "type": "function",
                            "function": {
                                "name": "f\x1b[1m[b]",
                                "arguments": '{"cmd": "\\u001b[31mrm"}',
                            },
                        }
                    ]
                }
            ),
            _chunk({}, "tool_calls"),
            {"error": {"message": "bad [blink]thing[/blink]\x1b[0m", "code": 500}},
        ]
    )


def _render(data: bytes, *, events: bool = False, terminal: bool = False) -> str:
    side = load(data, "mem.sse")
    console = Console(
        file=io.StringIO(),
        width=100,
        highlight=False,
        force_terminal=terminal,
        color_system="truecolor" if terminal else None,
    )
    for renderable in render(side, events=events):
        console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _check_escaped(out: str) -> None:
    assert "[bold]not bold[/bold]" in out  # markup shown as the characters it is
    assert "[link=http://x]y[/link]" in out and "[red]hard[/red]" in out
    assert "[blink]thing[/blink]" in out and "f\\x1b[1m[b]" in out
    assert "\\x1b[2J" in out and "\\x1b]0;title\\x07" in out and "m\\x1b[31m" in out
    assert "line two" in out  # line breaks in text are kept as line breaks


@pytest.mark.parametrize("terminal", [False, True])
def test_model_text_is_shown_escaped_never_obeyed(terminal: bool) -> None:
    out = _render(_evil_stream(), events=True, terminal=terminal)
    _check_escaped(out)
    if terminal:
        # The only escape sequences are rich's own styles (SGR ...m), never the stream's.
        import re

        leftover = re.sub(r"\x1b\[[0-9;]*m", "", out)
        assert "\x1b" not in leftover and "\x07" not in leftover
    else:
        assert "\x1b" not in out


def test_cli_show_is_plain_when_stdout_is_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "evil.sse"
    path.write_bytes(_evil_stream())
    assert main(["show", str(path), "--events"]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out and err == ""
    _check_escaped(out)


def test_no_color_is_honoured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "evil.sse"
    path.write_bytes(_evil_stream())
    monkeypatch.setenv("FORCE_COLOR", "1")  # as if on a terminal
    assert main(["show", str(path)]) == 0
    assert "\x1b[31m" in capsys.readouterr().out  # red: the error
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["show", str(path)]) == 0
    assert "\x1b[31m" not in capsys.readouterr().out


def test_sections_of_a_stream() -> None:
    out = _render(_evil_stream(), events=True)
    for expected in (
        "format  chat-chunk (sse, 6 records)",
        "id       chatcmpl-evil",
        "created  1767225600 (2026-01-01 00:00:00 UTC)",
        "reasoning",
        "message",
        "tool calls",
        "call_[i]",
        '"cmd": "\\u001b[31mrm"',
        "finish  tool_calls",
        "usage  not reported",
        "error  500: bad",
        "events",
    ):
        assert expected in out, expected
    # The timeline: index, line, type, preview.
    assert "    1      3  content" in out
    assert "role+reasoning" in out and "error           bad [blink]" in out


def test_several_choices_one_after_another() -> None:
    data = sse(
        [
            _chunk({"role": "assistant", "content": "first"}, index=0),
            _chunk({"role": "assistant", "content": "second"}, index=1),
            _chunk({}, "stop", 0),
            _chunk({}, "length", 1),
        ]
    )
    out = _render(data)
    assert out.index("choice 0") < out.index("first") < out.index("choice 1") < out.index("second")
    assert "finish  length" in out


def test_decode_notes_are_shown() -> None:
    data = sse([_chunk({"content": "no role first"}), _chunk({}, "stop")])
    assert "repaired" in _render(data)


def test_safe_keeps_line_breaks_and_escapes_the_rest() -> None:
    assert safe("a\nb\x1b[1mc\r") == "a\nb\\x1b[1mc\\x0d"


def test_record_kinds() -> None:
    records = load(_evil_stream(), "mem").records()
    assert [record_kinds(r) for r in records][:2] == [["role", "reasoning"], ["content"]]


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_every_capture_shows() -> None:
    count = 0
    for fmt in codecs.names():
        for path in captures(fmt):
            side = load(path.read_bytes(), path.name)
            console = Console(file=io.StringIO(), width=100)
            for renderable in render(side):
                console.print(renderable)
            assert "file" in console.file.getvalue()  # type: ignore[attr-defined]
            count += 1
    assert count > 0


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_cli_show_events_on_a_few_captures(capsys: pytest.CaptureFixture[str]) -> None:
    for fmt in codecs.names():
        for path in captures(fmt)[:3]:
            assert main(["show", str(path), "--events"]) == 0, path
            out, err = capsys.readouterr()
            assert "preview" in out and "Traceback" not in err


@pytest.mark.parametrize("terminal", [False, True])
def test_a_long_message_is_laid_out_as_one_text_would_be(terminal: bool) -> None:
    """Long texts are laid out in pieces cut at line ends, each handing rich its rows
    one by one (rich's layout of one long Text grows with the square of its length):
    what reaches the terminal is the same, styles included."""
    from rich.text import Text

    from chatx.textview import CHUNK, long_text

    long_line = ("wörd😀 " * (CHUNK // 3)) + "x" * 300  # one line of 40k characters
    text = "\n".join(("word " * (n % 40)) + (long_line if n == 7 else "") for n in range(3000))
    assert len(text) > 10 * CHUNK

    def rendered(renderables) -> str:  # noqa: ANN001
        out = io.StringIO()
        console = Console(
            file=out,
            width=70,
            force_terminal=terminal,
            color_system="truecolor" if terminal else None,
        )
        for renderable in renderables:  # printed one by one, as chatx show prints them
            console.print(renderable)
        return out.getvalue()

    pieces = list(long_text(text, "dim"))
    plain = [piece.text.plain for piece in pieces]
    assert len(pieces) > 10 and all(len(p) <= CHUNK or long_line in p for p in plain)
    assert rendered(pieces) == rendered([Text(text, style="dim")])
    assert rendered(long_text("short")) == rendered([Text("short")])


def test_long_tool_arguments_are_shown_below_the_table() -> None:
    """A call's arguments too long for a table cell (rich measures every cell) are
    printed after the table, whole."""
    arguments = '{"q": "' + "word 😀 " * 5000 + '"}'
    chunks = [
        _chunk({"role": "assistant", "tool_calls": [_call(0, "call_1", "f", "")]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}),
        _chunk({"tool_calls": [_call(1, "call_2", "g", '{"a": 1}')]}),
        _chunk({}, "tool_calls"),
    ]
    out = _render(sse(chunks))
    assert "characters: below" in out and "arguments of call 0" in out
    assert '"a": 1' in out  # a short one stays in its cell
    assert "".join(out.split()).count("word😀" * 5000) == 1

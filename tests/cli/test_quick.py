"""``convert``'s command line read without click (``chatx.cli.convert.quick``) gives what
click gives: for each command line of the table, the same exit status, stdout and stderr
as the typer app's reading of it, and the same arguments handed to the command. A line
quick() leaves to click (--help, an unknown option, a bad value) is read by click, as
before; the table holds such lines too, so that a line quick() wrongly took would show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import chatx.cli
from chatx.cli import convert as convert_module
from tests.inprocess import Result, run
from tests.interpreter import fresh_python
from tests.paths import FIXTURES

CHAT = str(FIXTURES / "chat-chunk" / "text.sse")
ANTHROPIC = str(FIXTURES / "anthropic-event" / "cache-usage.sse")

# (argv after "convert", stdin): usual lines, the spellings click takes, and lines whose
# reading fails or says something (each error as click or the command says it).
LINES: list[tuple[list[str], bytes]] = [
    ([CHAT], b""),
    ([CHAT, "--to", "responses-event"], b""),
    ([CHAT, "--to=anthropic", "-q"], b""),
    ([CHAT, "-t", "llama", "--from", "chat"], b""),
    (["-t", "gemini", "-f", "chat-chunk", CHAT], b""),
    ([ANTHROPIC, "--to", "chat", "--reasoning-field", "reasoning"], b""),
    ([CHAT, "--to", "responses", "--reasoning", "text", "--finish", "--strict"], b""),
    ([CHAT, "--to", "chat", "--out-container", "jsonl"], b""),
    ([CHAT, "--to", "chat", "--out-container=json", "--container", "sse"], b""),
    ([CHAT, "--to", "chat", "--choice", "0"], b""),
    ([CHAT, "--to", "chat", "--choice", "3"], b""),
    ([CHAT, "--to", "chat", "-o", "-"], b""),
    ([CHAT, "--to", "chat", "--to", "chat"], b""),
    ([CHAT, "--to", "chat,anthropic"], b""),
    ([CHAT, "--to", "all"], b""),
    ([CHAT, "--to", "chat", "--quiet", "--quiet"], b""),
    ([CHAT, "--from", "anthropic", "--from", "chat", "--to", "chat"], b""),
    ([], b'data: {"object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n'),
    (["-", "--to", "anthropic-event"], b'data: {"object":"chat.completion.chunk"}\n\n'),
    (["--to", "chat"], b"not a stream\n"),
    (["--to", "chat"], b""),
    ([CHAT, CHAT], b""),
    ([CHAT, "--to", "chat", "--check"], b""),
    ([CHAT, "--to", "chat", "-j", "0", "--out-dir", "nowhere"], b""),
    ([CHAT, "--to", "chat", "--reasoning", "both"], b""),
    ([CHAT, "--to", "chat", "--reasoning-field", "thinking"], b""),
    ([CHAT, "--request", "no-such-request.json"], b""),
    (["no-such-file.sse", "--to", "chat"], b""),
    ([""], b""),
    # left to click: each says what click (or the format check) says of it
    ([CHAT, "--to", "bogus"], b""),
    ([CHAT, "--to", "chat,bogus"], b""),
    ([CHAT, "--from", "chatt"], b""),
    ([CHAT, "--from", ""], b""),
    ([CHAT, "--to"], b""),
    ([CHAT, "--to", "-q"], b""),
    ([CHAT, "--choice", "x"], b""),
    ([CHAT, "--choice", "-1", "--to", "chat"], b""),
    ([CHAT, "--choice", "1.5"], b""),
    ([CHAT, "--jobs", " 2"], b""),
    ([CHAT, "--check=yes"], b""),
    ([CHAT, "--bogus"], b""),
    ([CHAT, "-x"], b""),
    ([CHAT, "-qt", "chat"], b""),
    ([CHAT, "-tchat"], b""),
    ([CHAT, "-o=out.sse"], b""),
    ([CHAT, "--", "--to"], b""),
    ([CHAT, "--help"], b""),
    (["--help"], b""),
    ([CHAT, "--to", "chat", "--traceback"], b""),
]


def _clicked(argv: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch) -> Result:
    """``chatx convert ARGV`` read by the typer app alone."""
    with monkeypatch.context() as patch:
        patch.setattr(chatx.cli, "_QUICK", ())
        return run(["convert", *argv], stdin)


@pytest.mark.parametrize(("argv", "stdin"), LINES, ids=lambda v: repr(v)[:60])
def test_quick_reading_gives_what_click_gives(
    argv: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    quick = run(["convert", *argv], stdin)
    clicked = _clicked(argv, stdin, monkeypatch)
    assert (quick.code, quick.stdout, quick.err) == (clicked.code, clicked.stdout, clicked.err)


def _arguments(argv: list[str], monkeypatch: pytest.MonkeyPatch, quick: bool) -> Any:
    """What the command was called with, read by quick() or by click."""
    called: list[tuple[Any, ...]] = []

    def record(*args: Any, **kwargs: Any) -> int:
        called.append((args, kwargs))
        return 0

    with monkeypatch.context() as patch:
        patch.setattr(convert_module, "run", record)
        if not quick:
            patch.setattr(chatx.cli, "_QUICK", ())
        run(["convert", *argv])
    if not called:
        return None
    args, kwargs = called[0]
    names = list(convert_module.run.__code__.co_varnames[:16])
    # quick() names its arguments, typer's function passes them in order
    return {**dict(zip(names, args, strict=False)), **kwargs}


@pytest.mark.parametrize(("argv", "stdin"), LINES, ids=lambda v: repr(v)[:60])
def test_quick_reading_passes_what_click_passes(
    argv: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    took = convert_module.quick([arg for arg in argv if arg != "--traceback"])
    quick = _arguments(argv, monkeypatch, quick=True)
    clicked = _arguments(argv, monkeypatch, quick=False)
    if took is None:  # left to click: the same reading, twice
        assert quick == clicked
        return
    defaults = {
        name: parameter.default
        for name, parameter in __import__("inspect")
        .signature(convert_module.run)
        .parameters.items()
    }
    assert {**defaults, **quick} == {**defaults, **clicked}


def test_the_quick_lines_of_the_table_are_most_of_it() -> None:
    """The table tries quick() on lines it reads and on lines it leaves: neither half is
    empty (a quick() that left every line to click would pass the tests above)."""
    took = [argv for argv, _ in LINES if convert_module.quick(argv) is not None]
    assert len(took) >= 25
    assert len(LINES) - len(took) >= 15


def test_a_usual_convert_imports_neither_typer_click_nor_rich() -> None:
    script = (
        "import os, sys\n"
        "from chatx.cli import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"code = main(['convert', {CHAT!r}, '--to', 'responses-event'])\n"
        "loaded = {m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'rich'}\n"
        "sys.__stderr__.write(f'{code} {sorted(loaded)}')\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        "main(['convert', '--help'])\n"
        "loaded = {m.split('.')[0] for m in sys.modules} & {'typer', 'click'}\n"
        "sys.__stderr__.write(f' {sorted(loaded)}')\n"
    )
    done = fresh_python(script)
    assert done.stderr == "0 [] ['click', 'typer']"


def test_quick_knows_each_option_as_the_typer_command_declares_it() -> None:
    """An option renamed, added a spelling or given another type in the typer
    declaration and not in quick()'s table would be read otherwise by the two: each
    spelling, parameter and kind agree (an option quick() does not know is left to
    click, which is safe, but none is today)."""
    from chatx.cli import _command

    command = _command("convert").commands["convert"]
    kinds = {"StringParamType": "str", "IntParamType": "int", "TyperPath": "path"}
    declared = {}
    for param in command.params:
        if param.name == "files":
            continue
        if param.name == "to":
            kind = "formats"
        elif param.name == "src":
            kind = "format"
        elif getattr(param, "is_flag", False):
            kind = "flag"
        else:
            kind = kinds[type(param.type).__name__]
        declared[tuple(param.opts)] = (param.name, kind)
        assert not param.secondary_opts, param.name
        assert param.envvar is None, param.name
    assert declared == convert_module._QUICK_OPTIONS


def test_is_dir_answers_as_pathlib(tmp_path: Path) -> None:
    """convert tells a directory without pathlib (``_is_dir``), as ``Path.is_dir`` did."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_bytes(b"")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "to-dir").symlink_to(tmp_path / "dir")
    names = ["", ".", "..", "dir", "dir/", "dir/.", "file", "file/", "file/x", "loop"]
    names += ["dangling", "to-dir", "to-dir/", "missing", "a\0b", "//", "dir//"]
    for name in names:
        path = str(tmp_path / name) if name not in ("", ".", "..", "//", "a\0b") else name
        assert convert_module._is_dir(path) == Path(path).is_dir(), name

"""What a user expects of any command line: ``--version``, shell completion, one name per
concept (format names and aliases read the same by every command), "did you mean" for a
misspelt format, ``validate DIR``, and a word on stderr when chatx waits on a terminal."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.inprocess import run
from tests.paths import ROOT

ROOT = ROOT
FIXTURES = ROOT / "fixtures"
CHAT = FIXTURES / "chat-chunk" / "text.sse"


def chatx(
    args: list[str], env: dict[str, str] | None = None, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """The installed entry point, in a new process (as a shell runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "chatx", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=60,
        **kwargs,  # type: ignore[call-overload]
    )


# -- --version ------------------------------------------------------------------------


def test_version_prints_the_package_version() -> None:
    done = chatx(["--version"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"chatx {importlib.metadata.version('chatx')}\n"
    assert done.stderr == ""


def test_version_in_process() -> None:
    result = run(["--version"])
    assert (result.code, result.stdout) == (
        0,
        f"chatx {importlib.metadata.version('chatx')}\n".encode(),
    )


# -- shell completion -----------------------------------------------------------------


def test_show_completion_for_a_named_shell_whatever_shell_runs_it() -> None:
    done = chatx(["--show-completion", "bash"], env={"SHELL": "/usr/bin/zsh"})
    assert done.returncode == 0, done.stderr
    assert "_CHATX_COMPLETE=complete_bash" in done.stdout
    assert done.stdout.rstrip().endswith("complete -o default -F _chatx_completion chatx")
    zsh = chatx(["--show-completion", "zsh"], env={"SHELL": "/bin/bash"})
    assert zsh.returncode == 0 and "compdef _chatx_completion chatx" in zsh.stdout


def test_show_completion_falls_back_on_the_login_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    import shellingham

    def undetected(*args: object) -> None:
        raise shellingham.ShellDetectionFailure

    monkeypatch.setattr(shellingham, "detect_shell", undetected)
    monkeypatch.setenv("SHELL", "/usr/local/bin/fish")
    result = run(["--show-completion"])
    assert result.code == 0, result.err
    assert b"complete --command chatx" in result.stdout
    assert b"_CHATX_COMPLETE=complete_fish" in result.stdout
    monkeypatch.setenv("SHELL", "")
    result = run(["--show-completion"])
    assert result.code == 2
    assert "chatx: error: cannot tell which shell this is: name it" in result.err


def test_show_completion_run_from_sh_uses_the_login_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    import shellingham

    monkeypatch.setattr(shellingham, "detect_shell", lambda *args: ("sh", "/bin/sh"))
    monkeypatch.setenv("SHELL", "/bin/zsh")
    result = run(["--show-completion"])
    assert result.code == 0, result.err
    assert b"compdef _chatx_completion chatx" in result.stdout


def test_show_completion_unknown_shell_is_a_usage_error() -> None:
    result = run(["--show-completion", "tcsh"])
    assert result.code == 2
    assert "Invalid value for '--show-completion': unknown shell 'tcsh'" in result.err


def test_install_completion_writes_the_script_and_sources_it(tmp_path: Path) -> None:
    done = chatx(["--install-completion", "bash"], env={"HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "bash completion installed in" in done.stdout
    script = (tmp_path / ".bash_completions" / "chatx.sh").read_text()
    assert "_CHATX_COMPLETE=complete_bash" in script
    assert "source" in (tmp_path / ".bashrc").read_text()


@pytest.mark.parametrize(
    "words, cword, expected",
    [
        ("chatx con", 1, ["convert"]),
        ("chatx va", 1, ["validate"]),
        ("chatx convert --to", 2, ["--to"]),
    ],
)
def test_completing_answers_the_shell(words: str, cword: int, expected: list[str]) -> None:
    done = chatx(
        [],
        env={"_CHATX_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected


# -- one name per concept: formats --------------------------------------------------------

STREAMS = {
    "chat-chunk": FIXTURES / "chat-chunk" / "text.sse",
    "responses-event": FIXTURES / "responses-event" / "text.sse",
    "llama-stack-event": FIXTURES / "llama-stack-event" / "text.jsonl",
    "anthropic-event": FIXTURES / "anthropic-event" / "text.sse",
    "gemini-event": FIXTURES / "gemini-event" / "text.sse",
}
# Every name a user may give a format by, and the format it stands for.
SPELLINGS = {
    "chat-chunk": "chat-chunk",
    "chat": "chat-chunk",
    "chat-completions": "chat-chunk",
    "responses-event": "responses-event",
    "responses": "responses-event",
    "llama-stack-event": "llama-stack-event",
    "llama-stack": "llama-stack-event",
    "llama": "llama-stack-event",
    "anthropic-event": "anthropic-event",
    "anthropic": "anthropic-event",
    "gemini-event": "gemini-event",
    "gemini": "gemini-event",
    "google": "gemini-event",
}


def test_every_spelling_is_a_codec_name_or_alias() -> None:
    from chatx.cli.formats import spellings

    assert sorted(spellings()) == sorted(SPELLINGS)


def _reading(command: str, stream: str, fmt: str) -> list[str]:
    """``command`` reading ``stream`` with its format given as ``fmt``."""
    return {
        "convert --from": ["convert", stream, "--from", fmt, "--to", "chat-chunk", "-q"],
        "validate --format": ["validate", stream, "--format", fmt],
        "validate --from": ["validate", stream, "--from", fmt],
        "validate -f": ["validate", stream, "-f", fmt],
        "collect --from": ["collect", stream, "--from", fmt, "-q"],
        "show --from": ["show", stream, "--from", fmt],
        "diff --from": ["diff", stream, stream, "--from", fmt],
        "diff --from-a": ["diff", stream, stream, "--from-a", fmt],
    }[command]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(
    "command",
    [
        "convert --from",
        "validate --format",
        "validate --from",
        "validate -f",
        "collect --from",
        "show --from",
        "diff --from",
        "diff --from-a",
    ],
)
def test_every_command_reads_every_spelling_of_a_source(command: str, spelling: str) -> None:
    fmt = SPELLINGS[spelling]
    stream = str(STREAMS[fmt])
    given = run(_reading(command, stream, spelling))
    assert given.code == 0, given.err
    # The same run as with the full name: the alias stands for that format, nothing else.
    assert given == run(_reading(command, stream, fmt))


def test_validate_from_is_format() -> None:
    chat = str(STREAMS["chat-chunk"])
    result = run(["validate", "--from", "chat", chat])
    assert result.stdout.decode() == f"{chat}: ok (chat-chunk, sse, 8 records)\n"
    # Given, not detected: the chat stream read as a Llama Stack one breaks its rules.
    result = run(["validate", "--from", "llama", chat])
    assert result.code == 1
    assert result.stdout.decode().splitlines()[-1].endswith("(llama-stack-event, sse, 8 records)")


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_command_writes_every_spelling_of_a_target(spelling: str) -> None:
    fmt = SPELLINGS[spelling]
    chat = str(STREAMS["chat-chunk"])
    for args in (
        ["convert", chat, "-q", "--to"],
        ["collect", chat, "-q", "--as"],
        ["rules", "--format"],
    ):
        given = run([*args, spelling])
        assert given.code == 0, (args, given.err)
        assert given == run([*args, fmt]), args


def test_collect_as_builds_the_named_formats_object() -> None:
    import json

    chat = str(STREAMS["chat-chunk"])
    built = {
        spelling: json.loads(run(["collect", chat, "-q", "--as", spelling]).stdout)
        for spelling in SPELLINGS
    }
    for spelling, fmt in SPELLINGS.items():
        if fmt == "chat-chunk":
            assert built[spelling]["object"] == "chat.completion", spelling
        elif fmt == "responses-event":
            assert built[spelling]["object"] == "response", spelling
        elif fmt == "anthropic-event":
            assert built[spelling]["type"] == "message", spelling
        elif fmt == "gemini-event":
            assert "candidates" in built[spelling], spelling
        else:
            assert "completion_message" in built[spelling], spelling


def test_rules_format_any_is_still_the_stream_rules() -> None:
    lines = run(["rules", "--format", "any"]).stdout.decode().splitlines()
    assert lines and all(line.split()[2] == "any" for line in lines)


def test_formats_lists_the_aliases() -> None:
    out = run(["formats"]).stdout.decode()
    assert "also: llama-stack, llama" in out
    assert "also: chat, chat-completions" in out


# -- did you mean -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, option, typo, near",
    [
        (["convert", "--to", "chta"], "--to", "chta", "chat"),
        (["convert", "--to", "chat,resposnes", "-d", "unused"], "--to", "resposnes", "responses"),
        (["convert", "--from", "lama"], "--from", "lama", "llama"),
        (["validate", "--from", "respones-event"], "--format", "respones-event", "responses-event"),
        (["validate", "--format", "Chat"], "--format", "Chat", "chat"),
        (["collect", "--as", "llama-stak"], "--as", "llama-stak", "llama-stack"),
        (["collect", "--from", "chat-chnk"], "--from", "chat-chnk", "chat-chunk"),
        (["show", "--from", "responsse"], "--from", "responsse", "responses"),
        (["diff", "-", "x", "--from-b", "llma"], "--from-b", "llma", "llama"),
        (["rules", "--format", "chatt"], "--format", "chatt", "chat"),
    ],
)
def test_a_misspelt_format_is_a_usage_error_that_names_the_nearest(
    args: list[str], option: str, typo: str, near: str
) -> None:
    # stdin holds no stream: the name is refused before any input is read.
    result = run(args, stdin=b"not a stream\n")
    assert result.code == 2
    assert result.stdout == b""
    assert result.err.startswith(
        f"chatx: error: {option}: unknown format {typo!r}; did you mean {near!r}? (known: "
    ), result.err
    assert result.err.count("\n") == 1


def test_no_suggestion_when_nothing_is_near() -> None:
    result = run(["convert", "--to", "xml"])
    assert result.code == 2
    assert result.err == (
        "chatx: error: --to: unknown format 'xml' (known: chat-chunk, responses-event, "
        "llama-stack-event, anthropic-event, gemini-event; aliases: chat, chat-completions, "
        "responses, llama-stack, llama, anthropic, gemini, google)\n"
    )


def test_completing_a_format_offers_its_names() -> None:
    done = chatx(
        [],
        env={
            "_CHATX_COMPLETE": "complete_bash",
            "COMP_WORDS": "chatx convert --to ll",
            "COMP_CWORD": "3",
        },
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["llama-stack-event", "llama-stack", "llama"]


# -- validate DIR -------------------------------------------------------------------------


def _tree(top: Path) -> None:
    """Captures in a folder, with what a walk leaves out (hidden entries, other files)."""
    (top / "sub" / "deeper").mkdir(parents=True)
    (top / ".hidden").mkdir()
    (top / "b.sse").write_bytes(STREAMS["chat-chunk"].read_bytes())
    (top / "a.jsonl").write_bytes(STREAMS["llama-stack-event"].read_bytes())
    (top / "sub" / "r.sse").write_bytes(STREAMS["responses-event"].read_bytes())
    (top / "sub" / "deeper" / "c.ndjson").write_bytes(STREAMS["llama-stack-event"].read_bytes())
    (top / ".hidden" / "h.sse").write_bytes(STREAMS["chat-chunk"].read_bytes())
    (top / ".dot.sse").write_bytes(STREAMS["chat-chunk"].read_bytes())
    (top / "README.md").write_text("not a capture\n")


def test_validate_walks_a_directory_as_convert_does(tmp_path: Path) -> None:
    top = tmp_path / "captures"
    _tree(top)
    result = run(["validate", str(top)])
    assert result.code == 0, result.err
    assert result.stdout.decode().splitlines() == [
        f"{top}/a.jsonl: ok (llama-stack-event, jsonl, 5 records)",
        f"{top}/b.sse: ok (chat-chunk, sse, 8 records)",
        f"{top}/sub/r.sse: ok (responses-event, sse, 11 records)",
        f"{top}/sub/deeper/c.ndjson: ok (llama-stack-event, jsonl, 5 records)",
    ]
    # The files convert finds in the same folder: one output each, at its relative path.
    out = tmp_path / "out"
    assert run(["convert", str(top), "--to", "chat", "-d", str(out), "-q"]).code == 0
    converted = sorted(str(p.relative_to(out)).split(".")[0] for p in out.rglob("*.sse"))
    validated = sorted(
        line.split(":")[0][len(str(top)) + 1 :].split(".")[0]
        for line in result.stdout.decode().splitlines()
    )
    assert converted == validated


def test_validate_dir_with_a_violation_and_an_empty_dir(tmp_path: Path) -> None:
    top = tmp_path / "captures"
    _tree(top)
    # A stream that breaks a rule (exit 1): the others are still read.
    (top / "b.sse").write_bytes((FIXTURES / "validate" / "CHK001.bad.sse").read_bytes())
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run(["validate", str(top)])
    assert result.code == 1, result.err
    summaries = [line for line in result.stdout.decode().splitlines() if line.endswith("records)")]
    assert len(summaries) == 4
    assert summaries[1].startswith(f"{top}/b.sse: 1 error (chat-chunk, ")
    result = run(["validate", str(empty), str(top / "a.jsonl")])
    assert result.code == 2
    assert result.err == (
        f"chatx: error: {empty}: no captures in this directory "
        "(looked for *.sse, *.jsonl, *.ndjson, *.json, *.har, *.yaml, *.yml, *.httprr, "
        "*.mitm, each also compressed: .gz, .bz2, .xz, .zst)\n"
    )
    assert result.stdout.decode() == f"{top}/a.jsonl: ok (llama-stack-event, jsonl, 5 records)\n"


# -- a terminal on stdin ------------------------------------------------------------------

HINT = "chatx: reading a stream from stdin (Ctrl-D to end, Ctrl-C to stop)\n"


def _on_a_terminal(args: list[str], typed: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """``chatx ARGS`` with a terminal on stdin: ``typed`` is typed in, then Ctrl-D.

    Typed ahead: the terminal keeps it until chatx reads, as a user's typing is kept.
    """
    import pty
    import termios

    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO  # what is typed is not echoed back (nobody reads it here)
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    try:
        for line in typed.splitlines(keepends=True):
            os.write(master, line)
        os.write(master, b"\x04")
        done = subprocess.run(
            [sys.executable, "-m", "chatx", *args],
            stdin=slave,
            capture_output=True,
            cwd=ROOT,
            timeout=60,
        )
    finally:
        os.close(slave)
        os.close(master)
    return done


@pytest.mark.parametrize(
    "args",
    [
        ["convert"],
        ["convert", "-", "--to", "chat"],
        ["validate"],
        ["collect", "-"],
        ["show"],
        ["diff", "-", str(CHAT)],
    ],
    ids=" ".join,
)
def test_a_terminal_stdin_says_what_chatx_waits_for(args: list[str]) -> None:
    done = _on_a_terminal(args)
    assert done.stderr.decode().startswith(HINT), done.stderr


def test_the_hint_names_the_format_given() -> None:
    done = _on_a_terminal(["validate", "--from", "chat"])
    assert done.stderr.decode().startswith(
        "chatx: reading a chat-chunk stream from stdin (Ctrl-D to end, Ctrl-C to stop)\n"
    )


def test_a_stream_typed_on_the_terminal_is_converted() -> None:
    done = _on_a_terminal(["convert", "--to", "chat", "-q"], typed=CHAT.read_bytes())
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode() == HINT
    assert done.stdout == run(["convert", str(CHAT), "--to", "chat", "-q"]).stdout


def test_no_hint_when_stdin_is_not_read_or_not_a_terminal() -> None:
    done = _on_a_terminal(["validate", str(CHAT)])
    assert (done.returncode, done.stderr) == (0, b"")
    piped = chatx(["convert", "--to", "chat", "-q"], input=CHAT.read_text())
    assert (piped.returncode, piped.stderr) == (0, "")

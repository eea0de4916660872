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

ROOT = Path(__file__).resolve().parents[1]
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

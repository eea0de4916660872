"""Shell completion: ``--show-completion`` / ``--install-completion`` and the completing
itself (the shell runs ``chatx`` with ``_CHATX_COMPLETE`` set).

Typer's own options are off (``add_completion=False``): they take no shell name when the
shell can be detected, and :func:`chatx.cli.main` invokes the command without click's
``main()``, the only place that answers a completion request. Typer's scripts and
completion classes are used as they are; this module is imported only when asked.
"""

from __future__ import annotations

import os
from typing import Any

import typer

from chatx.errors import UsageError

PROG = "chatx"
VAR = "_CHATX_COMPLETE"  # as chatx.cli.main looks for it
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def shell_name(given: str) -> str:
    """The shell asked for, else the one chatx runs under, else the login shell ($SHELL)."""
    if given:
        if given not in SHELLS:
            raise typer.BadParameter(f"unknown shell {given!r} (known: {', '.join(SHELLS)})")
        return given
    login = os.path.basename(os.environ.get("SHELL", "")).lower()
    for detected in (_running_shell(), login):  # run from sh or a script: the login shell
        if detected in SHELLS:
            return detected
    raise UsageError(
        "cannot tell which shell this is: name it, e.g. --show-completion bash "
        f"(known: {', '.join(SHELLS)})"
    )


def _running_shell() -> str | None:
    try:
        import shellingham

        return shellingham.detect_shell()[0]
    except Exception:  # not found, no /proc nor ps, not installed: fall back on $SHELL
        return None


def show(given: str) -> None:
    """Print the completion script for the shell."""
    from typer._completion_shared import get_completion_script

    script = get_completion_script(prog_name=PROG, complete_var=VAR, shell=shell_name(given))
    typer.echo(script)


def install(given: str) -> None:
    """Install the completion script where the shell reads it at start."""
    from typer._completion_shared import install as install_script

    shell, path = install_script(shell=shell_name(given), prog_name=PROG, complete_var=VAR)
    typer.echo(f"{shell} completion installed in {path}")
    typer.echo("Completion will take effect once you restart the terminal")


def complete(command: Any, instruction: str) -> int:
    """Answer the shell's request (``complete_bash``…) for the words it passed in."""
    from typer.completion import completion_init, shell_complete

    completion_init()  # typer's completion classes, for its instruction names
    return shell_complete(command, {}, PROG, VAR, instruction)

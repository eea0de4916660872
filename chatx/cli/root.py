"""Options of chatx itself, before the command: ``--version`` and shell completion.

Plain click options added to the group typer builds: typer has no option whose value may
be left out (``--show-completion [SHELL]``, click's ``flag_value``).
"""

from __future__ import annotations

import click
import typer


def options() -> list[click.Option]:
    """The options, made anew for each command typer builds."""
    return [
        click.Option(
            ["--version"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_version,
            help="Print the version and exit.",
        ),
        _completion_option(
            "--install-completion",
            "Install completion for SHELL (bash, zsh, fish, powershell, pwsh; "
            "the current shell when not given).",
        ),
        _completion_option(
            "--show-completion",
            "Print the completion script for SHELL (the current shell when not given), "
            "to copy or customize.",
        ),
    ]


def _completion_option(name: str, said: str) -> click.Option:
    """A completion option: its SHELL may be left out (``flag_value``), and it acts
    before any command (``is_eager``), as ``--version`` does."""
    return click.Option(
        [name],
        metavar="[SHELL]",
        is_flag=False,
        flag_value="",
        expose_value=False,
        is_eager=True,
        callback=_completion,
        help=said,
    )


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("chatx")
    except PackageNotFoundError:  # a source tree that was never installed
        from chatx import __version__ as number
    typer.echo(f"chatx {number}")
    raise typer.Exit


def _completion(ctx: click.Context, param: click.Parameter, shell: str | None) -> None:
    if shell is None or ctx.resilient_parsing:
        return
    from chatx.cli import completion

    if param.name == "install_completion":
        completion.install(shell)
    else:
        completion.show(shell)
    raise typer.Exit

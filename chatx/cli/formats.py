"""``chatx formats``: the codecs and containers chatx knows; and how every command reads
a format named on its command line.

One reading for every option that names a format (``convert --from/--to``, ``validate
--format/--from``, ``collect --as/--from``, ``diff --from``, ``show --from``, ``rules
--format``): a codec's name or one of its aliases, resolved by :func:`chatx.codecs.get`
when the command line is parsed, so a misspelt name stops the command before it reads
its input (a terminal's stdin included), as a usage error with the nearest name.
"""

# No ``from __future__ import annotations`` here: typer reads the callbacks' annotations at
# every start, and evaluating them from strings made a start 2 ms slower.
from typing import Annotated

import typer

from chatx.errors import UsageError


def register(app: typer.Typer) -> None:
    app.command("formats", help="List the stream formats (codecs), their aliases and containers.")(
        formats
    )


def formats() -> None:
    from chatx import codecs, containers

    typer.echo("formats:")
    for codec in codecs.CODECS:
        typer.echo(f"  {codec.name:<20} {codec.description} [writes {codec.container}]")
        if codec.aliases:
            typer.echo(f"  {'':<20} also: {', '.join(codec.aliases)}")
    typer.echo("containers:")
    for name, container in containers.CONTAINERS.items():
        typer.echo(f"  {name:<20} {container.description}")


def spellings() -> list[str]:
    """Every name a format may be given by: the codecs' names, then their aliases."""
    from chatx import codecs

    return codecs.names() + [alias for codec in codecs.CODECS for alias in codec.aliases]


def format_name(value: str) -> str:
    """The codec name ``value`` stands for; a UsageError that suggests the nearest names."""
    import difflib

    from chatx import codecs

    try:
        return codecs.get(value).name
    except UsageError:
        pass
    near = difflib.get_close_matches(value.lower(), spellings(), n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    aliases = [alias for codec in codecs.CODECS for alias in codec.aliases]
    raise UsageError(
        f"unknown format {value!r}{hint} (known: {', '.join(codecs.names())}; "
        f"aliases: {', '.join(aliases)})"
    )


def format_option(param: typer.CallbackParam, value: str | None) -> str | None:
    """Typer callback of an option naming one format: the codec name, or a usage error."""
    return None if value is None else _resolved(param, value)


def rules_format_option(param: typer.CallbackParam, value: str | None) -> str | None:
    """``rules --format``: a format, or ``any`` for the rules every stream has."""
    return value if value == "any" else format_option(param, value)


def formats_option(param: typer.CallbackParam, values: list[str] | None) -> list[str] | None:
    """Typer callback of ``--to`` (repeated, comma-separated, ``all``): each name checked
    here; :func:`chatx.outdir.targets` expands them."""
    for value in values or ():
        for part in value.split(","):
            if part.strip() not in ("", "all"):
                _resolved(param, part.strip())
    return values


def _resolved(param: typer.CallbackParam, value: str) -> str:
    try:
        return format_name(value)
    except UsageError as exc:
        # One line, as chatx's other usage errors (exit 2): the option, then what is wrong.
        raise UsageError(f"{param.opts[0]}: {exc}") from None


def complete_format(incomplete: str) -> list[str]:
    """What the shell offers after an option naming a format."""
    return [name for name in spellings() if name.startswith(incomplete)]


# The source format option of the commands that read one stream (convert, collect, show).
SourceFormat = Annotated[
    str | None,
    typer.Option(
        "--from",
        "-f",
        help="Source format (detected when not given).",
        callback=format_option,
        autocompletion=complete_format,
    ),
]

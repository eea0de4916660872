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
from typing import Annotated, Any

import typer

from chatx.errors import UsageError


def formats(
    output: Annotated[
        str, typer.Option("--output", help="text, or json (one object a line, with its kind).")
    ] = "text",
) -> None:
    if output not in ("text", "json"):
        raise UsageError("--output takes 'text' or 'json'")
    rows = _rows()
    if output == "json":
        import orjson

        for row in rows:
            typer.echo(orjson.dumps(row).decode())
        return
    for kind, heading in _HEADINGS.items():
        mine = [row for row in rows if row["kind"] == kind]
        width = max(20, *(len(row["name"]) for row in mine))
        typer.echo(heading)
        for row in mine:
            typer.echo(f"  {row['name']:<{width}} {_text(row)}")
            if row.get("aliases"):
                typer.echo(f"  {'':<{width}} also: {', '.join(row['aliases'])}")


_HEADINGS = {
    "format": "formats:",
    "container": "containers:",
    "exchanges": "files of recorded exchanges (told by content; chatx ls lists their streams):",
    "compression": "compressed input (told by its first bytes, below every container):",
    "body-encoding": "recorded bodies still encoded (their Content-Encoding header):",
}


def _rows() -> list[dict[str, Any]]:
    """What chatx reads and writes, each a JSON object with its kind."""
    from chatx import codecs, containers
    from chatx.containers import bodies, compressed, demux

    rows: list[dict[str, Any]] = [
        {"kind": "format", "name": c.name, "description": c.description,
         "aliases": list(c.aliases), "writes": c.container}
        for c in codecs.CODECS
    ]  # fmt: skip
    rows += [
        {"kind": "container", "name": name, "description": container.description}
        for name, container in containers.CONTAINERS.items()
    ]
    rows += [
        {"kind": "exchanges", "name": name, "description": description}
        for name, description in demux.KINDS.items()
    ]
    rows += [
        {"kind": "compression", "name": name, "suffix": suffix, **_reader(module, extra)}
        for name, suffix, module, extra in compressed.READERS
    ]
    rows += [
        {"kind": "body-encoding", "name": name, **_reader(module, extra)}
        for name, module, extra in bodies.ENCODINGS
    ]
    return rows


def _reader(modules: str | tuple[str, ...], extra: str | None) -> dict[str, Any]:
    """What reads a compression: a standard library module, or a package (the first of
    ``modules`` installed, or the first named) and its extra, and whether it is installed."""
    from importlib.util import find_spec

    names = (modules,) if isinstance(modules, str) else modules
    found = names[0] if extra is None else next((n for n in names if find_spec(n)), None)
    return {"module": found or names[0], "extra": extra, "installed": found is not None}


def _text(row: dict[str, Any]) -> str:
    kind = row["kind"]
    if kind == "format":
        return f"{row['description']} [writes {row['writes']}]"
    if kind in ("container", "exchanges"):
        return str(row["description"])
    suffix = f"{row['suffix']}, " if row.get("suffix") else ""
    if row["extra"] is None:
        return f"{suffix}read by the standard library ({row['module']})"
    state = (
        "installed" if row["installed"] else f"not installed (pip install 'chatx[{row['extra']}]')"
    )
    return f"{suffix}read by the {row['module']} package: {state}"


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
    here; :func:`chatx.settings.targets` expands them."""
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


def format_choice(*names: str, help: str, metavar: str | None = None) -> Any:
    """An option naming one format (``--from``, ``--tee``, ``--as``…): the name checked
    and made the codec's (:func:`format_option`), the formats offered to the shell."""
    return typer.Option(
        *names,
        help=help,
        callback=format_option,
        autocompletion=complete_format,
        metavar=metavar,
    )


# The argument of the commands that read one stream from a file (collect, show).
InputFile = Annotated[str, typer.Argument(help="Input file, or - for stdin.")]
# The argument of the commands that read streams from files and folders (convert, validate).
InputFiles = Annotated[
    list[str] | None,
    typer.Argument(
        help="Input files or directories (walked for *.sse, *.jsonl, *.ndjson, *.json); "
        "- for stdin (the default).",
        show_default=False,
        metavar="FILE|DIR",
    ),
]
# --quiet of the servers (proxy, serve), which print a line per request.
QuietServer = Annotated[
    bool, typer.Option("--quiet", "-q", help="Do not print a line per request.")
]
# The source format option of the commands that read one stream (convert, collect, show).
SourceFormat = Annotated[
    str | None, format_choice("--from", "-f", help="Source format (detected when not given).")
]
# The input container of the commands that read streams (convert, validate).
InputContainer = Annotated[
    str | None,
    typer.Option(
        "--container", help="Input container: sse, jsonl or json (detected when not given)."
    ),
]
# --output of the commands that print text or JSON lines and say no more of them (diff, rules).
TextOrJson = Annotated[str, typer.Option("--output", help="text or json.")]
# Where the servers (proxy, serve) listen: loopback unless told.
HOST = "127.0.0.1"
ListenHost = Annotated[str, typer.Option("--host", help="Address to listen on.")]
ListenPort = Annotated[
    int, typer.Option("--port", "-p", help="Port to listen on (0: a free one, said on stderr).")
]

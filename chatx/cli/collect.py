"""``chatx collect``: the final object a client would build from a stream, as JSON."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from chatx.containers.payload import lenient_dumps
from chatx.errors import ExitStatus, UsageError


def register(app: typer.Typer) -> None:
    # main() registers on every call (tests call it many times): add the command once.
    if any(c.name == "collect" for c in app.registered_commands):
        return
    app.command(
        "collect",
        help="Print the final object a client would build from a stream "
        "(chat.completion, response, Llama Stack response) as JSON.",
    )(collect)


def collect(
    file: Annotated[str, typer.Argument(help="Input file, or - for stdin.")] = "-",
    as_: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Object to build: chat, responses or llama-stack (default: the "
            "stream's own format).",
        ),
    ] = None,
    src: Annotated[
        str | None, typer.Option("--from", "-f", help="Source format (detected when not given).")
    ] = None,
    choice: Annotated[
        int | None, typer.Option("--choice", help="The choice to build a one-choice object from.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not print notes.")] = False,
) -> int:
    import orjson

    from chatx.assemble import streams_of
    from chatx.cli.convert import NoteReporter
    from chatx.collect import DEFAULT_TARGET, TARGETS, collect
    from chatx.reading import open_side

    if as_ is not None and as_ not in TARGETS:
        raise UsageError(f"--as takes {', '.join(TARGETS)}, not {as_!r}")
    side = open_side(file, src)
    streams = streams_of(side)
    target = as_ or DEFAULT_TARGET.get(side.format, "chat")
    # Concatenated captures hold several streams: one JSON value each, as jq prints them.
    for stream in streams:
        built = collect(stream, target, source=side.format, choice=choice, notes=side.notes)
        sys.stdout.buffer.write(lenient_dumps(built, option=orjson.OPT_INDENT_2) + b"\n")
    NoteReporter(side.notes, side.name, quiet).flush(final=True)
    skipped = any(note.kind == "skipped" for note in side.notes.items)
    return ExitStatus.ERROR if skipped else ExitStatus.OK

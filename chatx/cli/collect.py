"""``chatx collect``: the final object a client would build from a stream, as JSON."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from chatx.cli.formats import InputFile, SourceFormat, format_choice
from chatx.containers.payload import lenient_dumps
from chatx.errors import ExitStatus


def collect(
    file: InputFile = "-",
    as_: Annotated[
        str | None,
        format_choice(
            "--as",
            help="The format whose final object to build (chat-chunk: a chat.completion, "
            "responses-event: a response…), or an alias (default: the stream's own format).",
            metavar="FORMAT",
        ),
    ] = None,
    src: SourceFormat = None,
    choice: Annotated[
        int | None, typer.Option("--choice", help="The choice to build a one-choice object from.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not print notes.")] = False,
) -> int:
    import orjson

    from chatx.cli import reading_stdin
    from chatx.collect import collect_side
    from chatx.drive import NoteReporter
    from chatx.reading.framing import open_side

    if file == "-":
        reading_stdin(src)
    side = open_side(file, src)
    # --as names a format (chat, responses and llama-stack, its old values, are aliases):
    # the object built is that format's own.
    # Concatenated captures hold several streams: one JSON value each, as jq prints them.
    for built in collect_side(side, as_, choice):
        sys.stdout.buffer.write(lenient_dumps(built, option=orjson.OPT_INDENT_2) + b"\n")
    NoteReporter(side.notes, side.name, quiet).flush(final=True)
    skipped = any(note.kind == "skipped" for note in side.notes.items)
    return ExitStatus.ERROR if skipped else ExitStatus.OK

"""``chatx show``: a human view of one stream."""

from __future__ import annotations

from typing import Annotated

import typer

from chatx.cli.formats import InputFile, SourceFormat
from chatx.errors import ExitStatus


def show(
    file: InputFile = "-",
    events: Annotated[bool, typer.Option("--events", help="Add a timeline of the events.")] = False,
    src: SourceFormat = None,
) -> int:
    from rich.console import Console

    from chatx.cli import reading_stdin
    from chatx.reading.framing import open_side
    from chatx.show import show as render

    if file == "-":
        reading_stdin(src)
    side = open_side(file, src)
    # Colour only on a terminal (rich decides; it also honours NO_COLOR).
    render(side, Console(highlight=False), events=events)
    # As convert and collect do: a view with records left out is not a clean run.
    skipped = any(note.kind == "skipped" for note in side.notes.items)
    return ExitStatus.ERROR if skipped else ExitStatus.OK

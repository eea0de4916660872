"""Long stream text laid out with rich, a piece at a time.

rich's layout of one Text grows with the square of its length, and all of a long text
laid out at once would hold it several times over: :func:`long_text` cuts a text at line
ends into pieces made as they are printed, and each piece hands rich its rows one by one.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.text import Text

from chatx.textsafe import escape_text

CHUNK = 1 << 14  # characters of a long text laid out at a time


def long_text(text: str, style: str = "") -> Iterator[Rows]:
    """``text`` made safe (control characters escaped), as pieces of at most
    :data:`CHUNK` characters cut at line ends; a longer line is a piece of its own.
    The 5 MB message of a 1M-chunk stream took a minute to lay out as one Text."""
    lines: list[str] = []
    size = 0
    for line in _lines(text):
        line = escape_text(line)
        if lines and size + len(line) > CHUNK:
            yield Rows("\n".join(lines), style=style)
            lines, size = [], 0
        lines.append(line)
        size += len(line) + 1
    yield Rows("\n".join(lines), style=style)


class Rows:
    """A Text that hands rich its wrapped rows one by one. rich joins them into one
    string and then cuts it at each line end, copying the rest every time: a line of
    1 MB (a long paragraph, a tool call's arguments) took a minute to print. Not a Text
    itself: ``Console.print`` joins the Texts it is given into a new one."""

    def __init__(self, text: str, style: str = "") -> None:
        self.text = Text(text, style=style)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        text = self.text
        rows = text.wrap(
            console,
            options.max_width,
            justify=text.justify or options.justify or "default",
            overflow=text.overflow or options.overflow or "fold",
            tab_size=(console.tab_size if text.tab_size is None else text.tab_size) or 8,
            no_wrap=bool(text.no_wrap if text.no_wrap is not None else options.no_wrap),
        )
        newline = Segment("\n")
        alone = Text().join  # as rich does it: a row's own style becomes a span of it
        for number, row in enumerate(rows):
            if number:
                yield newline
            yield from alone([row]).render(console)
        yield newline  # the end of the line a Text is printed as


def _lines(text: str) -> Iterator[str]:
    """``text.split("\\n")``, a line at a time."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]

"""A human view of one stream: what a client would reconstruct, rendered with rich.

Everything that comes from the stream (text, ids, model, tool names, previews) goes
through :func:`safe` and into ``Text`` objects, never into markup strings: an ANSI escape
or ``[bold]`` in model output is shown as characters, not obeyed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from rich.console import Console, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from chatx import codecs
from chatx.codecs.base import Describe
from chatx.collect.assembler import Assembler
from chatx.collect.items import Item, Lane
from chatx.collect.streams import streams_of
from chatx.containers.payload import parse
from chatx.reading.framing import Side
from chatx.record import Record
from chatx.textsafe import escape_text
from chatx.textview import CHUNK, long_text

_PREVIEW = 60


def safe(text: str) -> str:
    """Stream text made printable: control characters escaped, line breaks kept."""
    return "\n".join(escape_text(line) for line in text.split("\n"))


# -- what each record is -------------------------------------------------------------------


def _read(record: Record) -> Record:
    # A long payload left raw that no decoder parsed (one that stopped early) is parsed
    # here: what it carries is named all the same.
    if record.raw is not None and record.data is None:
        return parse(record.raw, record.event, record.line)
    return record


def _describes(fmt: str | None) -> list[Describe]:
    """The formats' descriptions, in the order they are asked: the stream's own format
    first when its shapes are its own (rank above 0: a Responses ``error`` event is
    Responses' in a Responses stream, though Anthropic's has its shape), then every
    format by rank, ties in registry order."""
    found = [codec.describe for codec in codecs.CODECS if codec.describe is not None]
    ranked = sorted(found, key=lambda describe: -describe.rank)
    own = codecs.get(fmt).describe if fmt is not None else None
    if own is None or own.rank <= 0:
        return ranked
    return [own, *(describe for describe in ranked if describe is not own)]


def record_kinds(record: Record, fmt: str | None = None) -> list[str]:
    """What a record carries, as short names (a chat chunk can carry several); ``fmt``
    is the stream's format."""
    record = _read(record)
    if record.done:
        return ["[DONE]"]
    if record.error is not None:
        return ["unreadable"]
    data = record.data
    if not isinstance(data, dict):
        return [type(data).__name__]
    for describe in _describes(fmt):
        kinds = describe.kinds(data)
        if kinds is not None:
            return kinds
    return [type(data).__name__]


def record_preview(record: Record, fmt: str | None = None) -> str:
    """A short, escaped glimpse of what the record says; ``fmt`` is the stream's format."""
    record = _read(record)
    data = record.data
    text: str | None = None
    if record.error is not None:
        text = record.error
    elif isinstance(data, dict):
        for describe in _describes(fmt):
            text = describe.preview(data)
            if text is not None:
                break
    text = escape_text(text or "")
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


# -- rendering -------------------------------------------------------------------------------


def render(side: Side, *, events: bool = False) -> Iterator[RenderableType]:
    """Read ``side`` to its end, then yield everything ``chatx show`` prints, as rich
    renderables, one after the other: a long text comes in pieces, each laid out and
    printed before the next is made. The records are kept only for the timeline
    (``events``)."""
    kinds: Counter[str] = Counter()
    kept: list[Record] = []

    def tally() -> Iterator[Record]:
        for record in side.records():
            if events:
                kept.append(record)
            yield record
            # Named once decoded: a long payload comes raw, and its decoder parses it.
            kinds.update(record_kinds(record, side.format))

    side.decode_only()
    streams = streams_of(side, tally())
    yield _header(side, kinds)
    for number, stream in enumerate(streams):
        if len(streams) > 1:
            yield Rule(f"stream {number + 1} of {len(streams)}")
        yield from _stream(stream)
    notes = side.notes.summary()
    if notes:
        yield Text("notes", style="bold yellow")
        yield from (Text("  " + escape_text(str(note)), style="yellow") for note in notes)
    if events:
        yield Text("events", style="bold")
        yield timeline(kept, side.format)


def show(side: Side, console: Console, *, events: bool = False) -> None:
    for renderable in render(side, events=events):
        console.print(renderable)


def _header(side: Side, kinds: Counter[str]) -> RenderableType:
    return _facts(
        [
            ("file", escape_text(side.name)),
            ("format", f"{side.format} ({side.container}, {side.events} records)"),
            ("events", " · ".join(f"{escape_text(k)} {n}" for k, n in kinds.most_common())),
        ]
    )


def _facts(rows: list[tuple[str, str]], style: str = "") -> Table:
    """Key/value lines; the values are already escaped."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for key, value in rows:
        grid.add_row(key, Text(value, style=style))
    return grid


def _stream(stream: Assembler) -> Iterator[RenderableType]:
    yield _facts(
        [
            ("id", safe(stream.id or "")),
            ("model", safe(stream.model or "")),
            ("created", _when(stream.created)),
        ]
    )
    lanes = stream.choices
    for lane in lanes:
        if len(lanes) > 1:
            yield Rule(f"choice {lane.index}")
        yield from _lane(lane)
    yield _facts([("usage", _usage(stream))])
    for error in stream.errors:
        what = " ".join(str(x) for x in (error.code, error.type) if x is not None)
        yield _facts([("error", safe(f"{what}: {error.message or ''}".strip(": ")))], style="red")
    if not stream.ended:
        yield Text("the stream stops without its ending", style="yellow")


def _lane(lane: Lane) -> Iterator[RenderableType]:
    for item in lane.items:
        if item.kind == "reasoning":
            text = item.reasoning_text()
            if text:
                yield Text("reasoning", style="bold")
                yield from long_text(text, "dim")
            else:  # OpenAI sends encrypted reasoning with no summary
                yield _facts([("reasoning", "(no text)")], style="dim")
        elif item.kind == "message":
            for title, text, style in (
                ("message", item.text.text(), ""),
                ("refusal", item.refusal.text(), "red"),
            ):
                if text:
                    yield Text(title, style="bold")
                    yield from long_text(text, style)
        elif item.kind == "other":
            yield _facts([("item", safe(_other(item)))], style="cyan")
    if lane.calls:
        arguments = [_pretty(call.arguments) for call in lane.calls]
        yield Text("tool calls", style="bold")
        yield _calls(lane, arguments)
        for call, text in zip(lane.calls, arguments, strict=True):
            if len(text) > CHUNK:
                yield Text(f"arguments of call {call.call}", style="bold")
                yield from long_text(text)
    finish = lane.finish or "none (the stream did not say)"
    if lane.raw_finish:
        finish += f" ({lane.raw_finish})"
    yield _facts([("finish", safe(finish))])


def _other(item: Item) -> str:
    data = item.data if isinstance(item.data, dict) else {}
    describe = codecs.get(item.format).describe if item.format is not None else None
    if describe is not None and describe.item is not None:
        return describe.item(data)
    return " ".join(str(data[k]) for k in ("type", "name", "status") if data.get(k))


def _calls(lane: Lane, arguments: list[str]) -> Table:
    """The calls as a table; arguments too long for a cell are said below it (rich
    measures every cell: a call of 1 MB of arguments took a minute to lay out)."""
    table = Table(show_lines=True, expand=False)
    for column in ("#", "call id", "name", "arguments"):
        table.add_column(column)
    for call, text in zip(lane.calls, arguments, strict=True):
        table.add_row(
            str(call.call),
            Text(safe(call.call_id or "")),
            Text(safe(call.name or "")),
            Text(f"({len(text):,} characters: below)" if len(text) > CHUNK else safe(text)),
        )
    return table


def _pretty(arguments: str) -> str:
    from chatx.containers.payload import nests_too_deep

    # Arguments are text inside a record: nested past MAX_DEPTH, json.loads would recurse
    # past Python's limit (5000 levels was exit 70). They are shown as they came.
    if nests_too_deep(arguments):
        return arguments
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def _usage(stream: Assembler) -> str:
    usage = stream.usage
    if usage is None:
        return "not reported"
    parts = [f"input {usage.input}", f"output {usage.output}", f"total {usage.total}"]
    if usage.cached is not None:
        parts.append(f"cached {usage.cached}")
    if usage.reasoning is not None:
        parts.append(f"reasoning {usage.reasoning}")
    return " · ".join(parts)


def _when(created: Any) -> str:
    if not isinstance(created, int | float) or isinstance(created, bool):
        return "not given"
    if created <= 0:
        return str(created)
    try:
        stamp = datetime.fromtimestamp(created, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, ValueError, OSError):  # milliseconds, or nonsense
        return str(created)
    return f"{created} ({stamp})"


def timeline(records: list[Record], fmt: str | None = None) -> Text:
    """The compact event list: index, line, type, preview — one line per record.

    Plain fixed-width lines, not a rich Table: a table measures every cell, which
    costs seconds on a capture of a few thousand events.
    """
    width = max((len("+".join(record_kinds(r, fmt))) for r in records), default=4)
    width = min(width, 40)
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"{'#':>5} {'line':>6}  {'type':<{width}}  preview", style="bold")
    for index, record in enumerate(records):
        kind = escape_text("+".join(record_kinds(record, fmt)))
        if len(kind) > width:
            kind = kind[: width - 1] + "…"
        out.append(f"\n{index:>5} {record.line:>6}  ")
        out.append(f"{kind:<{width}}", style="cyan")
        out.append("  " + record_preview(record, fmt))
    return out

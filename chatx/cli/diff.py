"""``chatx diff``: compare two streams (exit 0 same, 1 different, 2 trouble)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from chatx.cli.formats import TextOrJson, format_choice
from chatx.errors import ExitStatus, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from chatx.diffing import Difference, DiffResult

_WINDOW = 40  # characters of a long string shown around where it starts to differ


def diff(
    a: Annotated[str, typer.Argument(metavar="A", help="First stream, or - for stdin.")],
    b: Annotated[str, typer.Argument(metavar="B", help="Second stream, or - for stdin.")],
    semantic: Annotated[
        bool | None,
        typer.Option(
            "--semantic/--wire", help="Compare what a client builds / the events themselves."
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore",
            metavar="FIELD",
            help="Leave out a field: a key name anywhere, or a dotted path "
            "(choices.delta.role). Semantic names: text, reasoning, refusal, "
            "tool_calls, call_id, arguments, finish_reason, usage, errors, "
            "items.",
        ),
    ] = None,
    no_normalize: Annotated[
        bool,
        typer.Option(
            "--no-normalize",
            help="Also compare ids, timestamps, sequence numbers, obfuscation "
            "and system_fingerprint (wire); keep format differences "
            "(semantic).",
        ),
    ] = False,
    all_: Annotated[
        bool, typer.Option("--all", help="List every difference, not only the first.")
    ] = False,
    output: TextOrJson = "text",
    src: Annotated[
        str | None,
        format_choice("--from", "-f", help="Format of both streams (detected when not given)."),
    ] = None,
    from_a: Annotated[
        str | None, format_choice("--from-a", help="Format of A (default: --from, or detected).")
    ] = None,
    from_b: Annotated[
        str | None, format_choice("--from-b", help="Format of B (default: --from, or detected).")
    ] = None,
) -> int:
    import orjson

    from chatx.cli import reading_stdin
    from chatx.diffing import diff_sides
    from chatx.reading.framing import open_side

    if a == "-" and b == "-":
        raise UsageError("only one of A and B can be - (stdin)")
    if output not in ("text", "json"):
        raise UsageError(f"--output takes text or json, not {output!r}")
    if "-" in (a, b):
        reading_stdin((from_a if a == "-" else from_b) or src)
    mode: Literal["wire", "semantic"] | None = (
        None if semantic is None else ("semantic" if semantic else "wire")
    )
    result = diff_sides(
        open_side(a, from_a or src),
        open_side(b, from_b or src),
        mode=mode,
        normalize=not no_normalize,
        ignore=tuple(ignore or ()),
        first_only=not all_,
    )
    trouble = _say_notes(result)
    if output == "json":
        try:
            data = orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2, default=str)
        except TypeError:  # a file name that is not UTF-8 (its bytes as \xNN), a big integer
            from chatx.containers.payload import lenient_dumps
            from chatx.textsafe import json_safe

            safe = json_safe(result.to_json())
            data = lenient_dumps(safe, orjson.OPT_INDENT_2, str)
        sys.stdout.buffer.write(data + b"\n")
    else:
        from rich.console import Console

        render(result, Console(highlight=False), everything=all_)
    if trouble:
        # As diff(1): what could not be read cannot be called the same, nor different.
        return ExitStatus.ERROR
    return ExitStatus.OK if result.same else ExitStatus.FAILED


def _say_notes(result: DiffResult) -> bool:
    """Say every warning about a side (an input line the reader ignored…) and every
    record it could not read or decode; true when a record was skipped."""
    from chatx.textsafe import escape_text

    found = False
    for side in (result.a, result.b):
        warnings = [(n.line, n.message) for n in side.notes.items if n.kind == "warning"]
        skipped: dict[int | None, str] = {
            note.line: note.message
            for note in side.notes.items
            if note.kind == "skipped" and note.where is None
        }
        for line, why in side.unreadable:  # wire mode decodes nothing: no note says them
            skipped.setdefault(line, f"record skipped: {why}")
        said: list[tuple[int | None, str, str]] = [
            (line, "warning", message) for line, message in warnings
        ]
        said += [(line, "skipped", message) for line, message in skipped.items()]
        # Other exchanges of the file, skipped on the way to this one: first, each named.
        for note in side.notes.items:
            if note.kind == "skipped" and note.where is not None:
                found = True
                sys.stderr.write(
                    f"chatx: skipped: {escape_text(note.where)}: {escape_text(note.message)}\n"
                )
        for at, kind, message in sorted(said, key=lambda item: item[0] or 0):
            found = found or kind == "skipped"
            where = f"{side.name}:{at}" if at else side.name
            sys.stderr.write(f"chatx: {kind}: {escape_text(where)}: {escape_text(message)}\n")
    return found


def render(result: DiffResult, console: Console, *, everything: bool = False) -> None:
    """The human report: the differences, their values, and (wire) the events around."""
    from rich.text import Text

    from chatx.textsafe import escape_text

    if result.same:
        return  # as diff(1): silence and exit 0
    a, b = result.a, result.b
    console.print(
        Text(f"--- {escape_text(a.name)} ({a.format}, {a.events} events)", style="red"),
        soft_wrap=True,
    )
    console.print(
        Text(f"+++ {escape_text(b.name)} ({b.format}, {b.events} events)", style="green"),
        soft_wrap=True,
    )
    for diff in result.differences:
        _difference(console, result, diff)
    if result.context:
        _context(console, result)
    count = len(result.differences)
    what = "difference" if count == 1 else "differences"
    more = (
        " in the first differing event (--all for every one)"
        if result.mode == "wire" and not everything
        else ""
    )
    console.print(Text(f"different ({result.mode}): {count} {what}{more}", style="bold"))


def _difference(console: Console, result: DiffResult, diff: Difference) -> None:
    from rich.text import Text

    from chatx.diffing import ABSENT
    from chatx.textsafe import escape_text

    whole = diff.path == "$"
    head = Text("the whole event" if whole else escape_text(diff.path), style="bold")
    if result.mode == "wire":
        head = Text(f"event {_where(diff)}: ", style="bold") + head
        if whole and (diff.a is ABSENT or diff.b is ABSENT):
            side = result.a.name if diff.b is ABSENT else result.b.name
            head.append(f" only in {escape_text(side)}")
    old, new, at = _values(diff.a, diff.b)
    if at is not None:
        head.append(f" (differs at character {at})")
    console.print(head, soft_wrap=True)
    # An event only one side has: show that side only.
    if not (whole and diff.a is ABSENT):
        console.print(Text(f"  - {old}", style="red"), soft_wrap=True)
    if not (whole and diff.b is ABSENT):
        console.print(Text(f"  + {new}", style="green"), soft_wrap=True)


def _where(diff: Difference) -> str:
    if diff.index_a is not None and diff.index_a == diff.index_b:
        return f"{diff.index_a} (lines {diff.line_a} / {diff.line_b})"
    parts = []
    if diff.index_a is not None:
        parts.append(f"A {diff.index_a} (line {diff.line_a})")
    if diff.index_b is not None:
        parts.append(f"B {diff.index_b} (line {diff.line_b})")
    return ", ".join(parts)


def _values(a: Any, b: Any) -> tuple[str, str, int | None]:
    """Both values, escaped; long strings cut around where they start to differ."""
    if isinstance(a, str) and isinstance(b, str) and max(len(a), len(b)) > 2 * _WINDOW:
        at = next(
            (n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        return _cut(a, at), _cut(b, at), at
    return _show(a), _show(b), None


def _cut(text: str, at: int) -> str:
    start = max(0, at - _WINDOW // 2)
    piece = _show(text[start : start + _WINDOW])
    return ("…" if start else "") + piece + ("…" if start + _WINDOW < len(text) else "")


def _show(value: Any) -> str:
    import orjson

    from chatx.diffing import ABSENT
    from chatx.textsafe import escape_text

    if value is ABSENT:
        return "<absent>"
    try:
        text = orjson.dumps(value, default=str).decode()
    except TypeError:  # an integer beyond 64 bits
        from chatx.containers.payload import lenient_dumps

        text = lenient_dumps(value, 0, str).decode()
    return escape_text(text if len(text) <= 300 else text[:299] + "…")


def _context(console: Console, result: DiffResult) -> None:
    """The aligned events around the first difference, with what each one is."""
    from rich.table import Table
    from rich.text import Text

    from chatx.show import record_kinds, record_preview
    from chatx.textsafe import escape_text

    table = Table(box=None, padding=(0, 1), title="context", title_justify="left")
    for column in ("", "A", "B", "event"):
        table.add_column(column)
    first = result.differences[0].row
    for row in result.context:
        fmt = result.a.format if row.index_a is not None else result.b.format
        kinds = record_kinds(row.record, fmt)
        label = escape_text("+".join(kinds)) + " " + record_preview(row.record, fmt)
        table.add_row(
            ">" if row.number == first else "",
            _index(row.index_a, row.line_a),
            _index(row.index_b, row.line_b),
            Text(label),
        )
    console.print(table)


def _index(index: int | None, line: int | None) -> str:
    return "-" if index is None else f"{index}:{line}"

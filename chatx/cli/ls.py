"""``chatx ls``: the streams in each file, one line each, with the address (``FILE#N``)
every other command takes.

A file of recorded exchanges (HAR, cassette, recording, httprr trace) lists every
exchange: a stream or a non-streaming object chatx reads, with its format and records;
anything else with what it is. A bare stream is one stream, ``FILE#0``. Exit 0: every
file holds a stream chatx reads · 2: one holds none, an exchange's body could not be
decoded, or a file could not be read.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatx.errors import ExitStatus, InputError, UsageError
from chatx.textsafe import escape_text

if TYPE_CHECKING:
    from chatx.reading.telling import Exchange


def ls(
    files: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files (or - for stdin, the default).", show_default=False, metavar="FILE"
        ),
    ] = None,
    output: Annotated[
        str,
        typer.Option("--output", help="text (one line per stream) or json (one object a line)."),
    ] = "text",
) -> int:
    from chatx.cli import error, reading_stdin

    if output not in ("text", "json"):
        raise UsageError("--output takes 'text' or 'json'")
    status = ExitStatus.OK
    for file in files or ["-"]:
        if file == "-":
            reading_stdin()
        rows: list[Exchange] = []
        try:
            trouble = _list(file, rows)
        except InputError as exc:
            trouble = [str(exc.located(file))]
        _print(rows, output)
        for message in trouble:
            error(message)
        if trouble:
            status = ExitStatus.ERROR
    return int(status)


def _list(spec: str, rows: list[Exchange]) -> list[str]:
    """Fill ``rows`` with what ``spec`` holds; return the errors to say after them."""
    from chatx.reading import finding, opening

    address = opening.parse(spec)
    with opening.open_source(address) as source:
        if source.kind is None:
            rows.append(_bare(source, address))
            if rows[0].kind == "unknown":
                return [f"{source.name}: a stream of an unknown format ({rows[0].note}):"
                        " no format chatx reads"]  # fmt: skip
            return []
        for stream in finding.streams(source, address.index):
            # Listed: neither the body nor the exchange that holds it is kept.
            stream.data, stream.pieces = b"", None
            if stream.entry is not None:
                stream.entry.load, stream.entry.stream = _gone, None
            rows.append(stream)
    trouble = [
        f"{row.address}: its body cannot be decoded ({row.note})"
        for row in rows
        if row.kind == "unreadable"
    ]
    if address.index is None and not any(row.readable for row in rows):
        unknown = sum(row.kind == "unknown" for row in rows)
        trouble.append(str(finding.none_streaming(source.name, len(rows), [], unknown)))
    elif address.index is not None and rows[0].kind == "unknown":
        trouble.append(f"{rows[0].address}: a stream of an unknown format: no format chatx reads")
    elif address.index is not None and not rows[0].readable and not trouble:
        trouble.append(f"{rows[0].address}: not a stream: {rows[0].kind}")
    return trouble


def _gone() -> bytes:
    return b""


def _bare(source: Any, address: Any) -> Exchange:
    """A bare stream as its one stream, #0: its records counted, its format told."""
    from chatx.reading import telling
    from chatx.reading.framing import records_of

    if address.index not in (None, 0):
        raise InputError(
            f"no stream #{address.index}: a bare stream is one stream (#0)", file=address.name
        )
    stream = telling.Exchange(address.of(0), 0, None)
    telling.judge(stream, records_of(source))
    if stream.kind == "unknown":
        return stream  # listed as what it looks like; no stream chatx reads (exit 2)
    if not stream.readable:
        raise InputError("cannot tell the stream's format from its first records",
                         file=address.name)  # fmt: skip
    return stream


def _print(rows: list[Exchange], output: str) -> None:
    if output == "json":
        import orjson

        for row in rows:
            sys.stdout.write(orjson.dumps(_json(row)).decode() + "\n")
        return
    cells = [_cells(row) for row in rows]
    widths = [max((len(c[i]) for c in cells), default=0) for i in range(7)]
    for line in cells:
        text = "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        sys.stdout.write(escape_text(text.rstrip()) + "\n")


def _cells(row: Exchange) -> list[str]:
    """address, format, records, method and URL, status, model, and what a row that is
    not a stream is."""
    what = {
        "stream": "",
        "object": f"not streamed: {row.note}",
        "unreadable": f"body not decoded: {row.note}",
        "unknown": f"stream of an unknown format: {row.note}",
    }.get(row.kind, f"not a stream: {row.kind}" + (f" ({row.note})" if row.note else ""))
    request = " ".join(part for part in (_method(row), _url(row)) if part) or "-"
    status = str(row.entry.status) if row.entry is not None and row.entry.status else "-"
    counted = row.readable or row.kind == "unknown"
    records = f"{row.records} record{'' if row.records == 1 else 's'}" if counted else "-"
    return [row.address, row.format or "-", records, request, status, row.model or "-", what]


def _method(row: Exchange) -> str | None:
    return row.entry.method if row.entry is not None else None


def _url(row: Exchange) -> str | None:
    return row.entry.url if row.entry is not None else None


def _json(row: Exchange) -> dict[str, Any]:
    entry = row.entry
    return {
        "address": row.address,
        "index": row.index,
        "kind": row.kind,
        "format": row.format,
        "container": row.container,
        "records": row.records if row.readable else None,
        "method": entry.method if entry else None,
        "url": entry.url if entry else None,
        "status": entry.status if entry else None,
        "content_type": entry.content_type if entry else None,
        "model": row.model,
        "note": row.note,
    }

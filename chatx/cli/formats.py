"""``chatx formats``: the codecs and containers chatx knows."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("formats", help="List the stream formats (codecs) and containers.")(formats)


def formats() -> None:
    from chatx import codecs, containers

    typer.echo("formats:")
    for codec in codecs.CODECS:
        typer.echo(f"  {codec.name:<20} {codec.description} [writes {codec.container}]")
    typer.echo("containers:")
    for name, container in containers.CONTAINERS.items():
        typer.echo(f"  {name:<20} {container.description}")

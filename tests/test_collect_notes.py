"""What ``collect`` says it leaves out.

Across formats, ``collect --as X`` of a stream is ``collect`` of ``convert --to X`` of it
(tests/test_collect_rule.py), so what it leaves out is what ``convert --to X`` leaves
out: the ``lost:`` lines of the two are the same, field paths and record counts too,
for every fixture and capture of every format and every other format X (a several-choice
chat stream once per ``--choice``). No kind of stream differs by design: collect hands
the IR batches it assembles to X's encoder for its notes (chatx/collect_notes.py).

In its own format, ``collect`` keeps a stream's residue where the final object has a
place for it, as the server's non-streaming object does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatx.assemble import load
from chatx.cli import main
from chatx.collect import collect_side
from chatx.notes import Notes
from tests.streams import convert
from tests.test_collect_rule import FIXTURES, FORMATS, streams


def lost(notes: Notes) -> list[str]:
    return sorted(n.message for n in notes.summary() if n.kind == "lost")


def collect_notes(
    data: bytes, fmt: str | None, choice: int | None = None
) -> tuple[list[Any], Notes]:
    """``chatx collect [--as fmt] [--choice N]``: the objects, and the notes."""
    side = load(data, "input")
    return collect_side(side, fmt, choice), side.notes


@pytest.mark.parametrize(("path", "choice"), streams())
def test_collect_says_lost_what_convert_says(path: Path, choice: int | None) -> None:
    data = path.read_bytes()
    for target in FORMATS:
        if target == path.parent.name:
            continue
        _, converted = convert(data, target, choice=choice)
        _, collected = collect_notes(data, target, choice)
        assert lost(collected) == lost(converted), f"--as {target}"


def test_the_streams_lose_something() -> None:
    """The rule is not empty: the fixtures alone (no captures) give many losses."""
    count = 0
    for param in streams():
        path, choice = param.values
        if path.parent.parent == FIXTURES:
            for target in FORMATS:
                if target != path.parent.name:
                    _, notes = collect_notes(path.read_bytes(), target, choice)
                    count += bool(lost(notes))
    assert count > 100


def test_azure_filter_results_are_said_lost_from_a_response(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = FIXTURES / "chat-chunk" / "azure-content-filter-results.sse"
    code = main(["collect", "--as", "responses", str(path)])
    err = capsys.readouterr().err
    assert code == 0
    said = [line.split(": ", 3)[-1] for line in err.splitlines() if ": lost: " in line]
    assert (
        "field content_filter_results.hate.severity has no place in the target format (2 records)"
        in said
    )
    assert "field prompt_filter_results has no place in the target format (1 record)" in said
    assert len(said) == 11

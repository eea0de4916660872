"""The real captures (``../shared/captures``) and the spec: tests read them by path and
skip with a reason when the folder is absent. Nothing is copied in."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from tests.meaning import lanes_of
from tests.streams import CHAT

CAPTURES = Path(__file__).resolve().parents[1].parent / "shared" / "captures"
SPEC = Path(__file__).resolve().parents[1].parent / "shared" / "spec"

skip_without_captures = pytest.mark.skipif(
    not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent"
)


def capture_files(pattern: str) -> list[Path]:
    """Every capture file matching ``pattern``, of any format; the test skips when the
    folder is absent, and fails when it holds none."""
    if not CAPTURES.is_dir():
        pytest.skip(f"no captures folder at {CAPTURES}")
    files = sorted(CAPTURES.rglob(pattern))
    assert files, f"no {pattern} files under {CAPTURES}"
    return files


def captures(fmt: str) -> list[Path]:
    """The capture files of one format, sorted by name (empty when the folder is absent)."""
    folder = CAPTURES / fmt
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".sse", ".jsonl", ".json"))


def capture_params(fmt: str) -> list[Any]:
    """``pytest.param`` per capture, named by file; one skipped param when there are none."""
    paths = captures(fmt)
    if not paths:
        return [
            pytest.param(
                None, marks=pytest.mark.skip(reason=f"no {fmt} captures in {CAPTURES}"), id="absent"
            )
        ]
    return [pytest.param(p, id=p.name) for p in paths]


@functools.cache
def capture_choices(path: Path) -> list[int | None]:
    """The choices to convert a capture with: each lane of a several-choice chat stream,
    else ``None`` (computed once per process: parametrizations ask for it at collection)."""
    if path.parent.name != CHAT:
        return [None]
    lanes = sorted(lanes_of(path.read_bytes(), CHAT))
    return list(lanes) if len(lanes) > 1 else [None]

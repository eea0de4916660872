"""Compare two streams, as diff(1) compares files: same (0), different (1), trouble (2).

*Wire* mode (:mod:`chatx.diffing.wire`) compares the records event by event, after
dropping the fields that legitimately vary between two runs or two conversions (ids,
timestamps, ``sequence_number``, ``obfuscation``, ``system_fingerprint``). *Semantic*
mode (:mod:`chatx.diffing.semantic`) compares what a client reconstructs.
"""

from __future__ import annotations

from chatx.diffing.semantic import semantic_diff, view
from chatx.diffing.values import (
    ABSENT,
    Difference,
    DiffResult,
    FieldFilter,
    Mode,
    Row,
    compare,
)
from chatx.diffing.wire import NORMALIZED, wire_diff, wire_value
from chatx.reading.framing import Side, load

__all__ = [
    "ABSENT",
    "NORMALIZED",
    "DiffResult",
    "Difference",
    "FieldFilter",
    "Mode",
    "Row",
    "compare",
    "diff",
    "diff_sides",
    "semantic_diff",
    "view",
    "wire_diff",
    "wire_value",
]


def diff(
    a: bytes,
    b: bytes,
    *,
    mode: Mode | None = None,
    src_a: str | None = None,
    src_b: str | None = None,
    normalize: bool = True,
    ignore: tuple[str, ...] = (),
    first_only: bool = False,
    name_a: str = "a",
    name_b: str = "b",
) -> DiffResult:
    """Compare two streams held in memory.

    ``mode`` defaults to wire for two streams of one format and semantic across formats.

    >>> chatx.diffing.diff(open("a.sse", "rb").read(), open("b.sse", "rb").read()).same
    """
    return diff_sides(
        load(a, name_a, src_a),
        load(b, name_b, src_b),
        mode=mode,
        normalize=normalize,
        ignore=ignore,
        first_only=first_only,
    )


def diff_sides(
    a: Side,
    b: Side,
    *,
    mode: Mode | None = None,
    normalize: bool = True,
    ignore: tuple[str, ...] = (),
    first_only: bool = False,
) -> DiffResult:
    """Compare two inputs read as they come (:func:`chatx.reading.framing.open_side`, or
    :func:`chatx.reading.framing.load` for bytes); both are read to the end."""
    mode = mode or ("wire" if a.format == b.format else "semantic")
    if mode == "wire":
        return wire_diff(a, b, normalize=normalize, ignore=ignore, first_only=first_only)
    return semantic_diff(a, b, normalize=normalize, ignore=ignore)

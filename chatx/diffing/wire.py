"""Wire mode: the records event by event, after dropping what legitimately varies.

An event only one side has is found by looking a few events ahead, so one inserted
event is reported as itself, not as a shift of everything after it.
"""

from __future__ import annotations

from typing import Any

from chatx.assemble import Side
from chatx.diffing.values import ABSENT, Difference, DiffResult, FieldFilter, compare, same
from chatx.record import Record

# Fields that differ between two runs of the same request or two conversions of one
# stream, dropped wherever they occur (``--no-normalize`` keeps them).
NORMALIZED = frozenset(
    (
        "id",
        "item_id",
        "response_id",
        "call_id",
        "created",
        "created_at",
        "completed_at",
        "sequence_number",
        "obfuscation",
        "system_fingerprint",
    )
)
# How far ahead to look for the counterpart of an event before calling it changed.
_LOOKAHEAD = 8
_AGREE = 3  # events that must match after a skip for the skip to count
_CONTEXT_AFTER = 2  # rows aligned after the first difference when only it is wanted


def wire_value(record: Record) -> Any:
    """What a record says on the wire: its payload, ``[DONE]``, or why it is unreadable."""
    if record.done:
        return "[DONE]"
    if record.error is not None:
        return {"<unreadable>": record.error}
    return record.data


def wire_diff(
    a: Side,
    b: Side,
    *,
    normalize: bool = True,
    ignore: tuple[str, ...] = (),
    first_only: bool = False,
) -> DiffResult:
    """Compare event by event after normalising; ``first_only`` stops at the first."""
    fields = FieldFilter(NORMALIZED if normalize else frozenset(), ignore)
    va = [fields.apply(wire_value(r)) for r in a.records]
    vb = [fields.apply(wire_value(r)) for r in b.records]
    result = DiffResult("wire", a, b, [])
    i = j = 0
    stop = None  # with first_only: the row after which to stop (a little context kept)
    while (i < len(va) or j < len(vb)) and (stop is None or len(result.rows) < stop):
        if i < len(va) and j < len(vb) and _equal(va[i], vb[j]):
            result.rows.append((i, j))
            i, j = i + 1, j + 1
            continue
        keep = stop is None
        skip_a, skip_b = _resync(va, vb, i, j)
        if skip_a:
            # An event one side lacks is shown as it came, not normalised.
            for k in range(i, i + skip_a):
                _add_event(result, k, None, wire_value(a.records[k]), ABSENT, keep)
            i += skip_a
        elif skip_b:
            for k in range(j, j + skip_b):
                _add_event(result, None, k, ABSENT, wire_value(b.records[k]), keep)
            j += skip_b
        else:
            _add_event(result, i, j, va[i], vb[j], keep)
            i, j = i + 1, j + 1
        if first_only and stop is None:
            stop = len(result.rows) + _CONTEXT_AFTER
    return result


def _equal(x: Any, y: Any) -> bool:
    return same(x, y)


def _resync(va: list[Any], vb: list[Any], i: int, j: int) -> tuple[int, int]:
    """(k, 0) when A has k events B lacks here, (0, k) the other way, (0, 0) otherwise."""
    if i >= len(va):
        return 0, len(vb) - j
    if j >= len(vb):
        return len(va) - i, 0
    for k in range(1, _LOOKAHEAD + 1):
        if _agree(va, vb, i + k, j):
            return k, 0
        if _agree(va, vb, i, j + k):
            return 0, k
    return 0, 0


def _agree(va: list[Any], vb: list[Any], i: int, j: int) -> bool:
    if i >= len(va) or j >= len(vb):
        return False
    span = min(_AGREE, len(va) - i, len(vb) - j)
    return all(_equal(va[i + n], vb[j + n]) for n in range(span))


def _add_event(
    result: DiffResult, i: int | None, j: int | None, x: Any, y: Any, keep: bool = True
) -> None:
    row = len(result.rows)
    result.rows.append((i, j))
    if not keep:
        return
    line_a = result.a.records[i].line if i is not None else None
    line_b = result.b.records[j].line if j is not None else None
    if i is None or j is None:
        found = [Difference("$", x, y)]  # a whole event only one side has
    else:
        found = compare(x, y)
    for diff in found:
        diff.index_a, diff.index_b, diff.line_a, diff.line_b, diff.row = i, j, line_a, line_b, row
        result.differences.append(diff)

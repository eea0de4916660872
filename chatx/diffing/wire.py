"""Wire mode: the records event by event, after dropping what legitimately varies.

An event only one side has is found by looking a few events ahead, so one inserted
event is reported as itself, not as a shift of everything after it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from chatx import codecs
from chatx.diffing.values import ABSENT, Difference, DiffResult, FieldFilter, Row, compare, same
from chatx.reading.framing import Side
from chatx.record import Record

# Fields that differ between two runs of the same request or two conversions of one
# stream, dropped wherever they occur (``--no-normalize`` keeps them): every format's
# (``Codec.volatile``), since the two sides may be of two formats.
NORMALIZED = frozenset(name for codec in codecs.CODECS for name in codec.volatile)
# How far ahead to look for the counterpart of an event before calling it changed.
_LOOKAHEAD = 8
_AGREE = 3  # events that must match after a skip for the skip to count
CONTEXT = 2  # rows kept before and after the first difference, to show around it


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
    """Compare event by event after normalising; ``first_only`` stops at the first.

    Both sides are read as they come: only the events the look-ahead needs are held,
    and of the alignment only the rows around the first difference.
    """
    fields = FieldFilter(NORMALIZED if normalize else frozenset(), ignore)
    left, right = _Window(a.records(), fields), _Window(b.records(), fields)
    rows = _Rows(DiffResult("wire", a, b, []))
    stop = None  # with first_only: the row after which to stop (a little context kept)
    while (left.has(0) or right.has(0)) and (stop is None or rows.count < stop):
        if left.has(0) and right.has(0) and same(left.value(0), right.value(0)):
            rows.add(left.pop(), right.pop(), differs=False)
            continue
        keep = stop is None  # past the first difference, rows are counted, not compared
        if not (left.has(0) and right.has(0)):
            # One side has ended: every event after it is one the other side lacks.
            for x in left.rest():
                rows.add(x, None, differs=keep)
            for y in right.rest():
                rows.add(None, y, differs=keep)
        else:
            skip_a, skip_b = _resync(left, right)
            for _ in range(skip_a):
                rows.add(left.pop(), None, differs=keep)
            for _ in range(skip_b):
                rows.add(None, right.pop(), differs=keep)
            if not (skip_a or skip_b):
                rows.add(left.pop(), right.pop(), differs=keep)
        if first_only and stop is None:
            stop = rows.count + CONTEXT
    # The counts, unreadable records and notes are of the whole input.
    a.drain()
    b.drain()
    return rows.result


_Event = tuple[int, Record, Any]  # index in its side, the record, its normalised value


class _Window:
    """The events of one side not aligned yet: read on demand, a few at a time."""

    def __init__(self, records: Iterator[Record], fields: FieldFilter) -> None:
        self._records = records
        self._fields = fields
        self._events: deque[_Event] = deque()
        self._read = 0  # events read so far
        self._ended = False

    def has(self, k: int) -> bool:
        """True when the side has a ``k``-th event from here (reading up to it)."""
        while len(self._events) <= k and not self._ended:
            record = next(self._records, None)
            if record is None:
                self._ended = True
                break
            self._events.append((self._read, record, self._fields.apply(wire_value(record))))
            self._read += 1
        return k < len(self._events)

    def value(self, k: int) -> Any:
        return self._events[k][2]

    def pop(self) -> _Event:
        return self._events.popleft()

    def rest(self) -> Iterator[_Event]:
        """The events from here to the end, taken one by one."""
        while self.has(0):
            yield self.pop()


def _resync(left: _Window, right: _Window) -> tuple[int, int]:
    """(k, 0) when A has k events B lacks here, (0, k) the other way, (0, 0) otherwise."""
    for k in range(1, _LOOKAHEAD + 1):
        if _agree(left, right, k, 0):
            return k, 0
        if _agree(left, right, 0, k):
            return 0, k
    return 0, 0


def _agree(left: _Window, right: _Window, i: int, j: int) -> bool:
    for n in range(_AGREE):
        has_a, has_b = left.has(i + n), right.has(j + n)
        if not (has_a and has_b):
            return n > 0  # one side ends: what both have agrees
        if not same(left.value(i + n), right.value(j + n)):
            return False
    return True


class _Rows:
    """Numbers the rows of the alignment; keeps the differences and the context."""

    def __init__(self, result: DiffResult) -> None:
        self.result = result
        self.count = 0
        self._before: deque[Row] = deque(maxlen=CONTEXT)
        self._until = -1  # the last row of the context after the first difference

    def add(self, x: _Event | None, y: _Event | None, *, differs: bool) -> None:
        """The next row; ``differs``: the two events differ and the difference is kept."""
        number = self.count
        self.count += 1
        row = Row(
            number,
            x[0] if x else None,
            y[0] if y else None,
            x[1].line if x else None,
            y[1].line if y else None,
            x[1] if x else y[1],  # type: ignore[index]
        )
        context = self.result.context
        found = self._differences(row, x, y) if differs else []
        if found and not context:
            context.extend(self._before)
            context.append(row)
            self._until = number + CONTEXT
        elif context and number <= self._until:
            context.append(row)
        elif not context:
            self._before.append(row)

    def _differences(self, row: Row, x: _Event | None, y: _Event | None) -> list[Difference]:
        if x is None or y is None:
            # A whole event only one side has, shown as it came, not normalised.
            found = [
                Difference(
                    "$",
                    wire_value(x[1]) if x else ABSENT,
                    wire_value(y[1]) if y else ABSENT,
                )
            ]
        else:
            found = compare(x[2], y[2])
        for diff in found:
            diff.index_a, diff.index_b = row.index_a, row.index_b
            diff.line_a, diff.line_b, diff.row = row.line_a, row.line_b, row.number
        self.result.differences.extend(found)
        return found

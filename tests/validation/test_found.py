"""validate_records(found=...): the findings as they are known, what ``chatx validate``
prints a live input's findings with."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from chatx.reading.framing import read_records
from chatx.record import Record
from chatx.validation import Finding, validate_records
from tests.paths import ROOT

FIXTURES = ROOT / "fixtures" / "validate"


def _live(path: Path) -> tuple[list[Record], list[Finding], list[tuple[int, list[Finding]]]]:
    """The records of ``path``, its findings, and each ``found`` call with how many
    records had been read when it came."""
    container, records = read_records(path.read_bytes())
    read: list[int] = []
    calls: list[tuple[int, list[Finding]]] = []

    def counted() -> Iterator[Record]:
        for record in records:
            read.append(record.line)
            yield record

    everything = validate_records(
        counted(),
        container=container,
        file=path.name,
        found=lambda new: calls.append((len(read), list(new))),
    )
    assert validate_records(records, container=container, file=path.name) == everything
    return records, everything, calls


def test_found_gets_every_finding_in_order_each_as_soon_as_known():
    early = 0
    for path in sorted(FIXTURES.glob("*.bad.sse")):
        records, everything, calls = _live(path)
        assert [f for _, new in calls for f in new] == everything, path.name
        # One call after each record (before the next is read), one at the end.
        assert [n for n, _ in calls] == [*range(1, len(records) + 1), len(records)]
        for n, new in calls[:-1]:
            assert all(f.index < n for f in new), path.name
            early += len(new)
    assert early > 0  # some findings are said before the stream ends

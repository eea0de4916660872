"""``fixtures/containers/`` is what ``python -m tests.containers.make_fixtures`` writes."""

from __future__ import annotations

from tests.containers import make_fixtures


def test_container_fixtures_are_up_to_date() -> None:
    built = make_fixtures.build()
    assert len(built) == 10
    for name, data in built.items():
        assert (make_fixtures.OUT / name).read_bytes() == data, f"stale: {name}"

"""The golden fixtures are what chatx writes now (regenerate with `make fixtures`)."""

from __future__ import annotations

from tests import goldens


def test_there_are_fixture_inputs_for_every_format_pair() -> None:
    formats = {fmt for fmt, _ in goldens.inputs()}
    assert {"chat-chunk", "responses-event"} <= formats


def test_no_golden_fixture_is_stale() -> None:
    stale = [str(path.relative_to(goldens.ROOT)) for path, _ in goldens.stale()]
    assert not stale, "stale fixtures (run `make fixtures`): " + ", ".join(stale)

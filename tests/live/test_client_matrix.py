"""The client matrix over a small sample of the shared captures: every cell (a capture
through the openai SDK sync and async, streamed and not, Responses, the anthropic SDK,
openai-agents and pydantic-ai) is served as its provider would serve it. The whole
matrix, with its counts per client: ``python -m tests.live.client_matrix``."""

from __future__ import annotations

import importlib.util

import pytest

from tests.live.client_matrix import CAPTURES, CLIENTS, run_matrix, sample

pytestmark = pytest.mark.skipif(
    not CAPTURES.is_dir(), reason=f"the shared captures are not at {CAPTURES}"
)


def test_the_agent_frameworks_are_installed() -> None:
    # They come with the dev extra: a venv made before they were added needs `make dev`.
    missing = [m for m in ("agents", "pydantic_ai") if importlib.util.find_spec(m) is None]
    assert not missing, f"{missing} missing: run make dev"


def test_no_cell_of_the_sample_fails_because_of_chatx() -> None:
    failures: list[str] = []
    cells = run_matrix(sample(2), failures.append)
    assert len({c.client for c in cells}) == len(CLIENTS)
    assert len(cells) >= 60
    assert failures == []

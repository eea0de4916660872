"""The client matrix's Node column (the Vercel AI SDK, tests/live/node_column.py): how
a cell is judged, always; a sample of cells through the SDK itself where node and its
packages are ($CHATX_NODE_MODULES, or ``npm install --prefix tests/live/node``), else
skipped with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from chatx.live.served_captures import load
from tests.live import node_column
from tests.live.client_matrix import CAPTURES, run_matrix, sample
from tests.live.support import FIXTURES

TOOL = FIXTURES / "chat-chunk" / "tool-call-parallel.sse"
TEXT = FIXTURES / "anthropic-event" / "text.sse"


def _read(client: str, **said: Any) -> dict[str, Any]:
    read = {"client": client, "text": "", "calls": [], "finish": "stop", "raw": None}
    return {**read, "errors": [], "thrown": None, **said}


def test_a_cell_that_reads_the_capture_passes_and_one_that_misreads_it_is_chatxs() -> None:
    (capture,) = load([str(TEXT)])
    meaning = node_column.meaning(capture)
    assert meaning.text and meaning.finish == "stop"
    right = _read("chat generate", text=meaning.text)
    assert node_column.judge(capture, "text", right).outcome == "ok"
    wrong = _read("chat generate", text=meaning.text[:-1])
    verdict = node_column.judge(capture, "text", wrong)
    assert verdict.outcome == "chatx" and verdict.said.startswith("text ")
    thrown = _read("responses stream", thrown={"name": "AI_APICallError", "message": "x"})
    assert node_column.judge(capture, "text", thrown).outcome == "chatx"


def test_what_the_sdk_makes_of_the_providers_own_bytes_is_not_chatxs() -> None:
    # Sent as recorded (Anthropic's SSE to its own API): a misreading is the SDK's.
    (capture,) = load([str(TEXT)])
    misread = _read("anthropic stream", text="other")
    assert node_column.judge(capture, "text", misread).outcome == "expected"
    assert node_column.judge(capture, "text", _read("chat stream", text="x")).outcome == "chatx"


def test_calls_and_finish_are_held_against_the_capture() -> None:
    (capture,) = load([str(TOOL)])
    meaning = node_column.meaning(capture)
    assert meaning.calls and meaning.finish == "tool_calls"
    calls = [{"name": n, "input": a, "invalid": True, "provider": False} for n, a in meaning.calls]
    good = _read("anthropic generate", text=meaning.text, calls=calls, finish="tool-calls")
    assert node_column.judge(capture, "tools", good).outcome == "ok"
    for wrong in ({"calls": []}, {"finish": "stop"}, {"calls": calls[:1] * 2}):
        said = node_column.judge(capture, "tools", {**good, **wrong})
        assert said.outcome == "chatx", wrong


def test_an_error_capture_read_as_a_success_is_chatxs() -> None:
    (capture,) = load([str(TEXT)])
    assert node_column.judge(capture, "error", _read("chat generate")).outcome == "chatx"
    raised = _read(
        "chat generate", thrown={"name": "AI_APICallError", "message": "x", "status": 429}
    )
    assert node_column.judge(capture, "error", raised).outcome == "expected"
    part = _read("chat stream", errors=[{"name": "error part", "message": "x"}])
    assert node_column.judge(capture, "error", part).outcome == "expected"


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"the shared captures are not at {CAPTURES}")
@pytest.mark.skipif(
    node_column.unavailable() is not None, reason=f"no Node column: {node_column.unavailable()}"
)
def test_no_node_cell_of_the_sample_fails_because_of_chatx() -> None:
    failures: list[str] = []
    cells = run_matrix(sample(2), failures.append, python=False, node=node_column.CLIENTS)
    assert {c.client for c in cells} == set(node_column.CLIENTS)
    assert len(cells) >= 60
    assert failures == []


def test_without_node_or_its_packages_the_column_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("CHATX_NODE_MODULES", str(tmp_path))
    said = node_column.unavailable()
    assert said is not None and str(tmp_path) in said and "ai" in said
    monkeypatch.setenv("PATH", str(tmp_path))
    assert node_column.unavailable() == "node is not on PATH"

"""The anthropic-event rules calibrated on the real captures (``../shared/captures``):
every capture is clean but those listed here, and each of those has exactly the findings
listed, for the reason given. Skipped with the reason when the captures are absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatx.codecs.anthropic_event.check import AnthropicChecker
from chatx.reading.framing import frame_bytes
from chatx.validation import validate_records
from tests import captures

FORMAT = "anthropic-event"

# capture → its findings (rule, line), and why the capture breaks the rule.
EXPECTED: dict[str, tuple[list[tuple[str, int]], str]] = {
    "anthropic-sdk-python__incomplete_partial_json_response.sse": (
        [("ANT010", 43)],
        "the SDK's own test fixture for fine-grained tool streaming: its tool_use block gets "
        "no content_block_stop before the message_delta that stops on max_tokens (its "
        "input JSON is cut off mid-string); NOTES.md says the author may have trimmed it",
    ),
}


def findings(path: Path) -> list[tuple[str, int]]:
    """The checker's own findings, fed as ``validate`` feeds it (ignored lines included)."""
    ignored: list[tuple[int, str]] = []
    container, records = frame_bytes(path.read_bytes(), None, ignored, path.name)
    checker = AnthropicChecker(path.name, container)
    for record in records:
        checker.ignored_lines(ignored, record.line)
        checker.feed(record)
    checker.ignored_lines(ignored)
    return [(f.rule, f.line) for f in checker.finish()]


@pytest.mark.parametrize("path", captures.capture_params(FORMAT))
def test_capture_findings_are_the_expected_ones(path: Path) -> None:
    expected, _why = EXPECTED.get(path.name, ([], ""))
    assert findings(path) == expected


@captures.skip_without_captures
def test_every_expected_capture_exists_and_says_why() -> None:
    names = {path.name for path in captures.captures(FORMAT)}
    assert set(EXPECTED) <= names
    assert all(why for _, why in EXPECTED.values())


@pytest.mark.parametrize("path", captures.capture_params(FORMAT))
def test_capture_matches_the_sdk_types(path: Path) -> None:
    pytest.importorskip("anthropic", reason="the anthropic SDK (chatx[anthropic]) is the oracle")
    found = validate_records(path.read_bytes(), FORMAT, schema=True, file=path.name)
    expected, _why = EXPECTED.get(path.name, ([], ""))
    assert [(f.rule, f.line) for f in found] == expected

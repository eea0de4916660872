"""The request bodies the mapping tests read: the real ones in ``../shared/requests``
(sent by Codex CLI, Claude Code, openai-agents and the SDKs) and small hand-written ones
here, so that the mappings are tested without ../shared too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.paths import SHARED

REQUESTS = SHARED / "requests"
# Each API's folder in ../shared/requests, by the codec whose mapping reads it.
FOLDERS = {
    "chat-chunk": "chat",
    "responses-event": "responses",
    "anthropic-event": "anthropic-messages",
    "llama-stack-event": "llama-stack",  # no real bodies: hand-written ones only
    # none in ../shared: the google-genai SDK's own (tests/requests/gemini_sdk.py) and
    # hand-written ones
    "gemini-event": "gemini",
}
HERE = Path(__file__).parent / "fixtures"


def shared_bodies(codec: str) -> list[Any]:
    """pytest params of ``(file name, body)`` for each shared body of ``codec``'s API;
    one skipped param saying why when ../shared is absent."""
    folder = REQUESTS / FOLDERS[codec]
    if not folder.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"{folder} is absent"))]
    files = sorted(folder.glob("*.json"))
    assert files, f"no request bodies in {folder}"
    return [pytest.param(f.name, load(f), id=f.stem) for f in files]


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def fixture(name: str) -> Any:
    """A hand-written body under tests/requests/fixtures."""
    return load(HERE / name)


def fixtures(codec: str) -> list[Any]:
    """pytest params of ``(file name, body)`` for the hand-written bodies of ``codec``'s
    API (``fixtures/<folder>__*.json``)."""
    files = sorted(HERE.glob(f"{FOLDERS.get(codec, codec)}__*.json"))
    assert files, f"no hand-written request bodies for {codec} in {HERE}"
    return [pytest.param(f.name, load(f), id=f.stem) for f in files]

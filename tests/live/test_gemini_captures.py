"""The google-genai client reads every real capture, of every format, through ``chatx
serve``'s ``:streamGenerateContent?alt=sse``: the answer text, the calls (name and
arguments) and the finish the capture says (``tests.meaning``: what chatx reads of the
source itself), and a failed capture as the SDK's ``APIError``.

Where the source says a finish Gemini has no word for (``pause_turn``…), ``OTHER``; a
refusal is Gemini text; a stream the source left unfinished ends ``STOP``. A file of
several streams is served as one: the text and calls of all of them, the last one's
finish. A Gemini capture is served as it is (gemini → gemini keeps its JSON values): the
client reads what the SDK's own types read of the capture's chunks, and fails where
they fail (``enum-encoding=int``, fields google-genai does not know).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.captures import CAPTURES, captures
from tests.live.support import serving
from tests.meaning import summarize

genai = pytest.importorskip(
    "google.genai", reason="the google-genai SDK (dev extra) is not installed"
)
from google.genai import errors, types  # noqa: E402

FORMATS = ("chat-chunk", "responses-event", "anthropic-event", "llama-stack-event", "gemini-event")
WORDS = {"stop": "STOP", "tool_calls": "STOP", "function_call": "STOP", "length": "MAX_TOKENS"}
WORDS["content_filter"] = "SAFETY"


def _params() -> list[Any]:
    paths = [p for fmt in FORMATS for p in captures(fmt)]
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{CAPTURES} is absent"))]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in paths]


@pytest.fixture(scope="module")
def sdk() -> Iterator[Any]:
    if not CAPTURES.is_dir():
        pytest.skip(f"{CAPTURES} is absent")
    dirs = [str(CAPTURES / fmt) for fmt in FORMATS]
    with serving(dirs) as (running, _):
        options = types.HttpOptions(base_url=running.url)
        with genai.Client(api_key="test-key", http_options=options) as made:
            yield made


def _word(finish: str | None) -> str | None:
    return None if finish is None else WORDS.get(finish, "OTHER")


def _args(arguments: tuple[str, str]) -> Any:
    """The ``args`` Gemini holds of a call's arguments (``tests.meaning``'s pair): an
    object, ``{}`` for none, nothing (said lost) for anything else."""
    kind, text = arguments
    if kind == "text":
        return {} if not text.strip() else None
    value = json.loads(text)
    return value if isinstance(value, dict) else None


def _read(stream: Any) -> tuple[str, list[Any], str | None]:
    """The first candidate's answer text, calls and finish as the client reads them."""
    parts: list[Any] = []
    finish = None
    for chunk in stream:
        for candidate in chunk.candidates or []:
            if candidate.index not in (None, 0):
                continue
            parts += (candidate.content.parts or []) if candidate.content else []
            finish = candidate.finish_reason or finish
    text = "".join(p.text or "" for p in parts if not p.thought)
    calls = [(p.function_call.name, p.function_call.args) for p in parts if p.function_call]
    return text, calls, finish.value if finish else None


def _said(path: Path) -> tuple[str, list[Any], str | None, bool]:
    """What the capture says, lane 0 of its first stream (serve answers a file of several
    streams with the first, one provider answer): text, calls, finish, whether it failed."""
    source = path.parent.name
    text, calls, finish, failed = "", [], None, False
    for stream in list(summarize(path.read_bytes(), source))[:1]:
        failed = failed or bool(stream["errors"])
        lane = stream["lanes"].get(0) or next(iter(stream["lanes"].values()), None)
        if lane is None:
            continue
        text += lane["text"] + lane["refusal"]
        calls += [(name, _args(arguments)) for name, _, arguments in lane["calls"]]
        finish = lane["finish"]
    return text, calls, finish, failed


def _own(path: Path) -> tuple[str, list[Any], str | None] | type[Exception]:
    """What the SDK's types read of a Gemini capture's own chunks (or the error)."""
    from tests.streams import records

    chunks = [r.data for r in records(path.read_bytes()) if isinstance(r.data, dict)]
    if any("error" in c and "candidates" not in c for c in chunks):
        return errors.APIError
    # As the client reads a chunk (google/genai/models.py): the Developer API's names
    # mapped, the fields it does not know left out.
    from google.genai.models import _GenerateContentResponse_from_mldev as from_mldev

    read = types.GenerateContentResponse._from_response
    try:
        return _read(read(response=from_mldev(c, None, None), kwargs={}) for c in chunks)
    except (ValueError, AttributeError):
        return Exception


@pytest.mark.parametrize("path", _params())
def test_the_sdk_reads_what_the_capture_says(sdk: Any, path: Path) -> None:
    source = path.parent.name
    config = types.GenerateContentConfig(
        http_options=types.HttpOptions(
            api_version="v1beta", headers={"X-Chatx-Capture": f"{source}/{path.name}"}
        )
    )
    stream = sdk.models.generate_content_stream(model="gemini-test", contents="hi", config=config)
    if source == "gemini-event":
        own = _own(path)
        if isinstance(own, type):
            with pytest.raises(own):
                _read(stream)
        else:
            assert _read(stream) == own
        return
    text, calls, finish, failed = _said(path)
    if failed and not text and not calls:
        with pytest.raises(errors.APIError):
            _read(stream)
        return
    try:
        read = _read(stream)
    except errors.APIError:
        assert failed, "an error the source did not say"
        return
    assert read[:2] == (text, calls)
    if not failed:
        assert read[2] == _word(finish) or (finish is None and read[2] == "STOP")

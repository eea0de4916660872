"""What ``collect`` says it leaves out.

Across formats, ``collect --as X`` of a stream is ``collect`` of ``convert --to X`` of it
(tests/test_collect_rule.py), so what it leaves out is what ``convert --to X`` leaves
out: the ``lost:`` lines of the two are the same, field paths and record counts too,
for every fixture and capture of every format and every other format X (a several-choice
chat stream once per ``--choice``). No kind of stream differs by design: collect hands
the IR batches it assembles to X's encoder for its notes (chatx/collect/notes.py).

In its own format, ``collect`` keeps a stream's residue where the final object has a
place for it, as the server's non-streaming object does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatx.cli import main
from chatx.collect import collect_side
from chatx.notes import Notes
from chatx.reading.framing import load
from tests.builders.chat_chunk import chunk
from tests.streams import CHAT, convert, payloads, sse
from tests.test_collect_rule import FIXTURES, FORMATS, streams


def lost(notes: Notes) -> list[str]:
    return sorted(n.message for n in notes.summary() if n.kind == "lost")


def collect_notes(
    data: bytes, fmt: str | None, choice: int | None = None
) -> tuple[list[Any], Notes]:
    """``chatx collect [--as fmt] [--choice N]``: the objects, and the notes."""
    side = load(data, "input")
    return collect_side(side, fmt, choice), side.notes


@pytest.mark.parametrize(("path", "choice"), streams())
def test_collect_says_lost_what_convert_says(path: Path, choice: int | None) -> None:
    data = path.read_bytes()
    for target in FORMATS:
        if target == path.parent.name:
            continue
        _, converted = convert(data, target, choice=choice)
        _, collected = collect_notes(data, target, choice)
        assert lost(collected) == lost(converted), f"--as {target}"


def test_the_streams_lose_something() -> None:
    """The rule is not empty: the fixtures alone (no captures) give many losses."""
    count = 0
    for param in streams():
        path, choice = param.values
        if path.parent.parent == FIXTURES:
            for target in FORMATS:
                if target != path.parent.name:
                    _, notes = collect_notes(path.read_bytes(), target, choice)
                    count += bool(lost(notes))
    assert count > 100


def test_azure_filter_results_are_said_lost_from_a_response(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = FIXTURES / "chat-chunk" / "azure-content-filter-results.sse"
    code = main(["collect", "--as", "responses", str(path)])
    err = capsys.readouterr().err
    assert code == 0
    said = [line.split(": ", 3)[-1] for line in err.splitlines() if ": lost: " in line]
    assert (
        "field content_filter_results.hate.severity has no place in the target format (2 records)"
        in said
    )
    assert "field prompt_filter_results has no place in the target format (1 record)" in said
    assert len(said) == 11


# -- the same format: residue where the final object has a place -----------------------------


def collect_chat(name: str) -> dict[str, Any]:
    (completion,), notes = collect_notes((FIXTURES / CHAT / name).read_bytes(), None)
    assert not lost(notes)
    return completion


def test_azure_filter_results_stay_where_azure_puts_them() -> None:
    completion = collect_chat("azure-content-filter-results.sse")
    safe = {"filtered": False, "severity": "safe"}
    filters = {key: safe for key in ("hate", "self_harm", "sexual", "violence")}
    # The choice's last filter results, not the closing chunk's {}: an empty value says
    # nothing new.
    assert completion["choices"][0]["content_filter_results"] == filters
    assert completion["prompt_filter_results"] == [
        {"prompt_index": 0, "content_filter_results": filters}
    ]
    # The prelude chunk's empty id and model are no values of the completion.
    assert (completion["id"], completion["model"]) == ("chatcmpl-fixtureazcf", "gpt-test-2026")


def test_openrouter_fields_stay_on_choice_message_and_object() -> None:
    completion = collect_chat("openrouter-reasoning-details.sse")
    (choice,) = completion["choices"]
    assert choice["native_finish_reason"] == "stop"  # the last null says nothing
    assert completion["provider"] == "FixtureCloud"
    (detail,) = choice["message"]["reasoning_details"]  # index 0 throughout: one entry
    assert (detail["text"], detail["data"]) == ("Twelve halves are six.", "Zml4dHVyZS1vcGFxdWU=")


_BUILT = frozenset(
    ("role", "content", "refusal", "tool_calls", "reasoning", "reasoning_content", "annotations")
)


def _sdk_completion(data: bytes) -> dict[str, Any] | None:
    from openai._models import construct_type
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    try:
        for chunk in payloads(data):
            if "error" in chunk:
                break  # the SDK's stream raises at the error frame
            # As the SDK's stream reads a chunk: unvalidated (a finish_reason "error" is
            # none of the openai types' words, and stays).
            state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=chunk))
        snapshot: dict[str, Any] = state.current_completion_snapshot.to_dict()
    except Exception:  # a chunk the SDK does not take (a prelude, a list without index)
        return None
    return snapshot


def test_a_message_keeps_what_the_sdk_accumulates_of_its_deltas() -> None:
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    compared = 0
    for path in sorted((FIXTURES / CHAT).glob("*.sse")):
        data = path.read_bytes()
        sdk = _sdk_completion(data)
        if sdk is None:
            continue
        (ours,), _ = collect_notes(data, None)
        for theirs, mine in zip(sdk["choices"], ours["choices"], strict=True):
            said = {k: v for k, v in theirs["message"].items() if v is not None}
            assert {k: v for k, v in said.items() if k not in _BUILT} == {
                k: v for k, v in mine["message"].items() if k not in _BUILT
            }, path.name
            assert theirs.get("finish_reason") == mine["finish_reason"], path.name
            compared += 1
    assert compared > 40


def test_a_chat_streams_own_error_finish_stays() -> None:
    data = sse(
        [chunk({"role": "assistant", "content": "Half"}), chunk({}, "error")],
    )
    (completion,), notes = collect_notes(data, None)
    assert completion["choices"][0]["finish_reason"] == "error"
    assert not lost(notes) and not notes.items
    pytest.importorskip("openai", reason="the openai SDK is the oracle")
    sdk = _sdk_completion(data)
    assert sdk is not None and sdk["choices"][0]["finish_reason"] == "error"

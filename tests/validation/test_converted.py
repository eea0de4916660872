"""The invariant: what ``convert`` writes passes ``chatx validate`` with no error, in
every direction (DESIGN §9).

Sources: every project fixture (``fixtures/<format>/`` and the validate fixtures' good
twins), always; every real capture in ``../shared/captures`` when that folder is there
(skipped with the reason otherwise). Each is converted into every format chatx writes,
in that format's own container, and the output is checked with that format's rules.

Two things are by design, not exceptions:

* A several-choice chat stream goes to a one-choice format through ``--choice``: each
  choice is converted and checked.
* A source that stops short (no ``[DONE]``, terminal or ``complete`` event) is converted as
  far as it goes, and chatx says so on stderr (DESIGN §4: no invented ending). Its output
  may break only the rules about a missing ending; converted with ``--finish`` it must pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatx import codecs
from chatx.codecs.base import EncodeOptions
from chatx.errors import UsageError
from chatx.notes import Notes
from chatx.pipeline import convert
from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests import captures as capture_files
from tests.meaning import lanes_of
from tests.paths import ROOT

ROOT = ROOT / "fixtures"
FORMATS = codecs.names()

# The rules a stream that stops short breaks, per format: no ending.
ENDING_RULES = {
    "chat-chunk": {"CHK009", "CHK015"},
    "responses-event": {"RSP007"},
    "llama-stack-event": {"LLS002"},
    "anthropic-event": {"ANT003"},
    "gemini-event": {"GEM006"},
}
# What chatx says when an input stops short (the decoders' and encoders' warnings).
STOPPED_SHORT = (
    "input ended without",
    "the stream ends without a complete event",
    "the stream ends without message_stop",
)
# Warnings chatx's output may carry, each because the source says the same thing:
WARNINGS = {
    "CHK017",  # an error frame: valid, but the generation failed
    "LLS009",  # the same, in Llama Stack's words
    "ANT014",  # the same, as an Anthropic error event
    "GEM008",  # the same, as Gemini's error object
    "RSP029",  # an event type the openai SDK does not know, which Responses keeps
    # A function call whose arguments came whole in its added item and in no delta
    # (vercel's openai-compatible fixture): the arguments.done chatx adds carries them.
    "RSP024",
}
# Warnings the output may repeat when the source has them, because a same-format
# conversion keeps the source's records as they are:
SOURCE_WARNINGS = {
    "CHK003",  # many servers stamp each chunk with its own created time
    "CHK008",  # arguments that are not JSON are what the model wrote
    "CHK012",  # older Ollama finishes a tool call with "stop": the source's word
    "CHK014",  # usage on every chunk is a server option (vLLM continuous_usage_stats)
    "RSP003",  # a Responses source without response.in_progress keeps its lifecycle
    "RSP024",  # LM Studio gives arguments only in their .done event, kept where they are
    "GEM002",  # 2024 Vertex repeats STOP on every chunk, code execution goes on after one
}
# Warnings the output may carry when the source breaks a rule of its own format that says
# the same: an Anthropic tool block that never stopped (its input cut at max_tokens, as
# the SDK's fine-grained tool fixture has it) holds arguments that do not parse as JSON.
SOURCE_SAYS = {"ANT010": {"CHK008"}}


def project_sources() -> list[Path]:
    found = [path for fmt in FORMATS for path in sorted((ROOT / fmt).iterdir())]
    found += sorted((ROOT / "validate").glob("*.good.*"))
    assert len(found) > 100, "the fixtures are missing"
    return found


def capture_params() -> list:
    if not capture_files.CAPTURES.is_dir():
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(reason=f"no captures: {capture_files.CAPTURES} is absent"),
            )
        ]
    return [
        pytest.param(path, id=f"{path.parent.name}/{path.name}")
        for fmt in FORMATS
        for path in capture_files.captures(fmt)
    ]


def _convert(data: bytes, dst: str, choice: int | None, finish: bool) -> tuple[bytes, Notes]:
    notes = Notes()
    options = EncodeOptions(finish=True) if finish else None
    out = convert(data, dst=dst, choice=choice, options=options, notes=notes)
    return out, notes


def _findings(out: bytes, dst: str, name: str) -> list:
    container, records = read_records(out)
    return validate_records(records, dst, container=container, file=name)


def check(path: Path, dst: str) -> None:
    data = path.read_bytes()
    try:
        runs = [(None, *_convert(data, dst, None, False))]
    except UsageError:
        # Several choices into a one-choice format: each choice, as --choice writes it.
        lanes = sorted(lanes_of(data))
        assert len(lanes) > 1 and codecs.get(dst).single_lane
        runs = [(lane, *_convert(data, dst, lane, False)) for lane in lanes]
    source = validate_records(data, file=path.name)
    source_warnings = {f.rule for f in source if f.severity == "W"}
    source_warnings |= {rule for f in source for rule in SOURCE_SAYS.get(f.rule, ())}
    for choice, out, notes in runs:
        findings = _findings(out, dst, path.name)
        errors = {f.rule for f in findings if f.severity == "E"}
        if errors:
            said = [note.message for note in notes.items if note.kind == "warning"]
            assert errors <= ENDING_RULES[dst] and any(
                s in m for m in said for s in STOPPED_SHORT
            ), [str(f) for f in findings if f.severity == "E"][:5]
            finished, _ = _convert(data, dst, choice, True)
            findings = _findings(finished, dst, path.name)
            assert [f for f in findings if f.severity == "E"] == [], "with --finish"
        warnings = {f.rule for f in findings if f.severity == "W"}
        assert warnings <= WARNINGS | (source_warnings & SOURCE_WARNINGS), findings


@pytest.mark.parametrize("dst", FORMATS)
@pytest.mark.parametrize(
    "path", project_sources(), ids=lambda p: f"{p.parent.name}/{p.name}" if p else "none"
)
def test_fixture_converted_validates(path: Path, dst: str) -> None:
    check(path, dst)


@pytest.mark.parametrize("dst", FORMATS)
@pytest.mark.parametrize("path", capture_params())
def test_capture_converted_validates(path: Path, dst: str) -> None:
    check(path, dst)


def test_the_fixtures_hold_every_shape_checked_here() -> None:
    """The project's own fixtures reach the paths the invariant guards without captures:
    an error before any token, an error frame with and without [DONE] after it, a finish
    then an error, a JSON-lines chat source, a file of several streams, Llama Stack's
    OpenAI-compat tool-call shape and a total that counts more than prompt + completion."""
    names = {path.name for path in project_sources()}
    assert {
        "error-only.sse",
        "error-frame.sse",
        "error-frame-done.sse",
        "finish-then-error.sse",
        "jsonl-container.jsonl",
        "two-turns.jsonl",
        "tool-call-openai-compat.jsonl",
        "usage-total-reasoning.jsonl",
        "error.jsonl",
        "truncated.sse",
    } <= names

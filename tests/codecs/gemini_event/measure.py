"""The numbers of docs/gemini.md, measured over ../shared/captures:
``python -m tests.codecs.gemini_event.measure``.

For each other format B: gemini → B (converted, and the notes said), gemini → B →
gemini (the same meaning: text, reasoning, calls, finish, usage, errors, and the
grounding B holds), and B's captures → gemini (converted, ``validate`` with no error but
the missing ending of a source that had none, google-genai's types). ``lost`` is what
the code reports: each ``lost:`` note, in how many captures.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from typing import Any

from chatx.errors import ChatxError
from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.captures import captures
from tests.codecs.gemini_event.test_grounding import grounding
from tests.codecs.gemini_event.test_roundtrip import _llama_view
from tests.meaning import summarize
from tests.streams import convert

GEMINI = "gemini-event"
OTHERS = ("chat-chunk", "responses-event", "anthropic-event", "llama-stack-event")
_LINE = re.compile(r"^line \d+: |\(\d+ records?\)$")


def lost(notes: Any) -> set[str]:
    """A conversion's ``lost:`` notes, without line numbers and record counts."""
    return {_LINE.sub("", n.message).strip() for n in notes.summary() if n.kind == "lost"}


def kept(before: bytes, after: bytes, middle: str) -> bool:
    """Whether a round trip through ``middle`` says what the source says (the grounding
    where ``middle`` holds it: pages and spans, pages only through Anthropic; through
    Llama Stack what it can say, as tests/codecs/gemini_event/test_roundtrip.py)."""
    if middle == "llama-stack-event":  # what Llama Stack can say (no reasoning…)
        return _llama_view(summarize(before, GEMINI)) == _llama_view(summarize(after, GEMINI))
    if summarize(before, GEMINI) != summarize(after, GEMINI):
        return False
    one, two = grounding(before), grounding(after)
    key = "pages" if middle == "anthropic-event" else "cites"
    return one[key] == two[key]


def valid(data: bytes) -> tuple[bool, bool]:
    """No validate error (the missing ending of a stream cut short aside); google-genai
    accepts every chunk."""
    container, records = read_records(data)
    findings = validate_records(records, GEMINI, container=container, schema=True)
    errors = [f for f in findings if f.severity == "error" and f.rule not in ("GEM006", "GEM100")]
    return not errors, not [f for f in findings if f.rule == "GEM100"]


def main() -> None:
    sources = captures(GEMINI)
    if not sources:
        sys.exit("no captures in ../shared/captures")
    out = sys.stdout
    out.write("| direction | converted | meaning kept (and back) |\n|---|---|---|\n")
    losses: dict[str, Counter[str]] = {}
    for other in OTHERS:
        said: Counter[str] = Counter()
        done = same = 0
        for path in sources:
            data = path.read_bytes()
            try:
                middle, notes = convert(data, other, GEMINI)
                back, _ = convert(middle, GEMINI, other)
            except ChatxError:
                continue
            done += 1
            said.update(lost(notes) | ({"*"} if lost(notes) else set()))
            same += kept(data, back, other)
        losses[f"gemini → {other}"] = said
        out.write(f"| gemini → {other} → gemini | {done} / {len(sources)} | {same} / {done} |\n")
    out.write("\n| direction | converted | validate | google-genai types |\n|---|---|---|---|\n")
    for other in OTHERS:
        said = Counter()
        paths = captures(other)
        done = checked = typed = 0
        for path in paths:
            try:
                data, notes = convert(path.read_bytes(), GEMINI, other)
            except ChatxError:
                continue
            done += 1
            said.update(lost(notes) | ({"*"} if lost(notes) else set()))
            ok, sdk = valid(data)
            checked += ok
            typed += sdk
        losses[f"{other} → gemini"] = said
        out.write(f"| {other} → gemini | {done} / {len(paths)} | {checked} | {typed} |\n")
    for direction, said in losses.items():
        out.write(f"\n{direction}: what is lost, in how many captures ({said['*']} with a loss)\n")
        del said["*"]
        for message, count in said.most_common(25):
            out.write(f"  {count:4d}  {message}\n")


if __name__ == "__main__":
    main()

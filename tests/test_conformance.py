"""Every real capture in ``../shared/captures`` converted in every direction: a table.

For each (source format → target format) pair, every capture of the source format is
converted once (a several-choice chat capture once per choice when the target holds one
choice), and counted three times:

* **converted**: chatx wrote it without an error;
* **SDK same**: the openai SDK's own stream accumulator (``ChatCompletionStreamState`` /
  ``ResponseStreamState``, through ``tests.test_oracle``) rebuilds from the output the
  text, refusal, tool calls, usage and errors the source says (Llama Stack and Anthropic
  output are not the openai SDK's: ``-``). A → A gives the recording back as it is, so there a capture the SDK already
  refuses as recorded (an SDK ``model_dump`` with ``type: null`` in tool-call deltas, a
  usage without ``cache_write_tokens``…) counts when the output is refused alike; how
  many are is printed under the table;
* **same meaning**: ``chatx.diffing.diff(source, output, mode="semantic")`` finds
  nothing: per choice the text, reasoning, refusal, tool calls and finish, and usage,
  errors and built-in items, however the deltas were split.

``pytest -s tests/test_conformance.py`` prints the table. The counts are asserted against
:data:`EXPECTED`, so a regression (or a fix) in any direction fails until the table is
updated; the failure names the captures behind the change. Round trips (A → B → A) and
A → A identity record by record are ``tests/test_captures_roundtrip.py``'s job, not this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatx import codecs
from chatx.diffing import diff
from chatx.errors import ChatxError
from tests.captures import CAPTURES, captures
from tests.meaning import lanes_of
from tests.streams import CHAT, RESPONSES, convert

LLAMA = "llama-stack-event"
ANTHROPIC = "anthropic-event"
FORMATS = (CHAT, RESPONSES, LLAMA, ANTHROPIC)
# Targets the openai SDK does not read (the anthropic SDK's accumulator checks anthropic
# output in tests/codecs/anthropic_event/test_oracle.py): "SDK same" is "-".
NO_SDK = (LLAMA, ANTHROPIC)

pytestmark = pytest.mark.skipif(
    not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent"
)

# (converted, SDK same, same meaning) per direction; SDK same is None for Llama Stack
# output. Where "same meaning" falls short, it is for what the target cannot say, each
# reported on stderr as lost:
# * → llama-stack-event: no reasoning (24 chat and 20 Responses captures; a chat choice
#   that said only reasoning before an error frame disappears, 2), no refusal (written as
#   text, 2), no Responses built-in items (46); and chat text starting with Llama's
#   <|python_tag|> becomes the built-in tool call Llama Stack reads it as (1).
# * responses-event → chat-chunk: built-in items (web search, file search, MCP, code
#   interpreter, compaction…) have no chat form (46).
# * chat-chunk → chat-chunk: a choice the source never finished (Snowflake, and Kimi
#   behind OpenRouter in simonw/llm) gets the finish_reason every chat choice ends with,
#   said as repaired (4).
# * → anthropic-event: a source without usage gets zero counts, as a message must say
#   some (30 chat and the 12 Llama Stack captures with metrics null; said as a
#   warning); a usage total that is not input + output has no place (4); no refusal
#   (written as text, 2); a chat choice never finished gets a stop reason (4); no
#   Responses built-in items (46), and the usage a response.failed says after its error.
# * anthropic-event → *: server tool blocks (web search and fetch, code execution, MCP,
#   tool search, advisor, compaction…) have no place in the other formats (29); Llama
#   Stack has no reasoning either, and reads a call whose input was cut as text. The
#   openai SDK refuses pause_turn as a Responses incomplete reason (1), which Open
#   Responses takes (said lost).
EXPECTED: dict[tuple[str, str], tuple[int, int | None, int]] = {
    (CHAT, CHAT): (172, 172, 168),
    (CHAT, RESPONSES): (177, 177, 177),
    (CHAT, LLAMA): (177, None, 148),
    (RESPONSES, CHAT): (121, 121, 75),
    (RESPONSES, RESPONSES): (121, 121, 121),
    (RESPONSES, LLAMA): (121, None, 57),
    (LLAMA, CHAT): (36, 36, 36),
    (LLAMA, RESPONSES): (36, 36, 36),
    (LLAMA, LLAMA): (36, None, 36),
    (CHAT, ANTHROPIC): (177, None, 137),
    (RESPONSES, ANTHROPIC): (121, None, 74),
    (LLAMA, ANTHROPIC): (36, None, 24),
    (ANTHROPIC, CHAT): (104, 104, 75),
    (ANTHROPIC, RESPONSES): (104, 103, 75),
    (ANTHROPIC, LLAMA): (104, None, 59),
    (ANTHROPIC, ANTHROPIC): (104, None, 104),
}


def conversions(src: str, dst: str) -> Iterator[tuple[Path, int | None]]:
    """(capture, choice) per conversion: one per choice into a one-choice format."""
    single_lane = codecs.get(dst).single_lane
    for path in captures(src):
        lanes = sorted(lanes_of(path.read_bytes(), src)) if src == CHAT and single_lane else []
        for choice in lanes if len(lanes) > 1 else [None]:
            yield path, choice


def sdk_same(out: bytes, dst: str, data: bytes, src: str, choice: int | None) -> bool:
    """The SDK's accumulator rebuilds from ``out`` what ``data`` says."""
    from tests.test_oracle import input_says, sdk_rebuild

    try:
        return sdk_rebuild(out, dst) == input_says(data, src, choice)
    except Exception:  # the SDK refused a payload (pydantic.ValidationError, AssertionError)
        return False


def check(path: Path, src: str, dst: str, choice: int | None) -> dict[str, bool]:
    """Convert one capture; which checks it passes (``refused``: the SDK refuses the
    recording itself, for A → A)."""
    data = path.read_bytes()
    try:
        out, _ = convert(data, dst, src, choice=choice)
    except ChatxError:
        return {"converted": False, "sdk": False, "same": False, "refused": False}
    sdk = refused = False
    if dst not in NO_SDK:
        sdk = sdk_same(out, dst, data, src, choice)
        if not sdk and src == dst:
            refused = not sdk_same(data, src, data, src, choice)
            sdk = refused
    # The source as the one choice kept, numbered 0 as --choice does.
    source = data if choice is None else convert(data, CHAT, CHAT, choice=choice)[0]
    same = diff(source, out, mode="semantic", src_a=src, src_b=dst).same
    return {"converted": True, "sdk": sdk, "same": same, "refused": refused}


Rows = dict[tuple[str, str], tuple[int, int | None, int]]


def table() -> tuple[Rows, dict[str, list[str]], dict[str, int]]:
    """The counts per direction; per direction and check the captures that fail it; per
    format how many recordings the SDK refuses as they are."""
    rows: Rows = {}
    failing: dict[str, list[str]] = {}
    refused: dict[str, int] = {}
    for src in FORMATS:
        for dst in FORMATS:
            counts = {"converted": 0, "sdk": 0, "same": 0, "refused": 0}
            for path, choice in conversions(src, dst):
                name = path.name if choice is None else f"{path.name}#choice{choice}"
                for key, ok in check(path, src, dst, choice).items():
                    counts[key] += ok
                    if not ok and key != "refused" and not (key == "sdk" and dst in NO_SDK):
                        failing.setdefault(f"{src} → {dst}: {key}", []).append(name)
            sdk = None if dst in NO_SDK else counts["sdk"]
            rows[(src, dst)] = (counts["converted"], sdk, counts["same"])
            if src == dst and dst not in NO_SDK:
                refused[src] = counts["refused"]
    return rows, failing, refused


def render(rows: Rows, refused: dict[str, int]) -> str:
    lines = [
        f"real captures, every direction ({CAPTURES})",
        f"  {'source':<18} {'target':<18}{'converted':>10}{'SDK same':>10}{'same meaning':>14}",
    ]
    for (src, dst), (converted, sdk, same) in rows.items():
        shown = "-" if sdk is None else str(sdk)
        lines.append(f"  {src:<18} {dst:<18}{converted:>10}{shown:>10}{same:>14}")
    said = ", ".join(f"{fmt} {count}" for fmt, count in refused.items())
    lines.append(f"  (recordings the SDK refuses as they are, counted in A → A: {said})")
    return "\n".join(lines)


def test_every_direction_table(capsys: Any) -> None:
    rows, failing, refused = table()
    with capsys.disabled():
        print("\n\n" + render(rows, refused))
    changed = {k: (EXPECTED.get(k), v) for k, v in rows.items() if EXPECTED.get(k) != v}
    if changed:
        details = [
            f"{src} → {dst}: expected {was}, now {now}"
            for (src, dst), (was, now) in changed.items()
        ]
        for (src, dst), _ in changed.items():
            for key, names in failing.items():
                if key.startswith(f"{src} → {dst}:"):
                    details.append(f"  {key}: {', '.join(names[:20])}")
        pytest.fail("the table changed (update EXPECTED if it is a fix):\n" + "\n".join(details))


def test_every_format_has_captures() -> None:
    assert all(captures(fmt) for fmt in FORMATS), "a format without captures is no coverage"

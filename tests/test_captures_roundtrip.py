"""Every real capture in ``../shared/captures`` through chatx, both ways.

* A → B → A says the same as A (the semantic summary of ``tests.meaning.summarize``: per lane
  text, reasoning, refusal, tool calls, finish; usage; error messages). Several-choice chat
  captures go through ``choice=i`` once per choice. Responses built-in items (web search,
  MCP…) have no chat form, so only what chat can hold is compared.
* A → A gives back the same JSON values record for record; a malformed capture comes
  back repaired and chatx says so. Such captures are listed below, each with a reason,
  so that a new difference fails.
* A table of counts (converted, accepted by the SDK, same meaning after the round trip),
  printed with ``-s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.captures import capture_choices, capture_params, captures, skip_without_captures
from tests.meaning import summarize
from tests.streams import CHAT, OTHER, RESPONSES, convert, records


def fmt_of(path: Path) -> str:
    return path.parent.name


def round_trip_params(fmt: str) -> list[Any]:
    out = []
    for param in capture_params(fmt):
        path = param.values[0]
        if path is None:
            out.append(pytest.param(None, None, marks=param.marks, id=param.id))
            continue
        marks = (
            [pytest.mark.xfail(strict=True, reason=ROUND_TRIP_BUGS[path.name])]
            if path.name in ROUND_TRIP_BUGS
            else []
        )
        for choice in capture_choices(path):
            suffix = f"-choice{choice}" if choice is not None else ""
            out.append(pytest.param(path, choice, marks=marks, id=path.name + suffix))
    return out


# -- A → B → A -------------------------------------------------------------------------

# What a round trip cannot keep, because the other format has no way to say it.
EXPECTED_DIFFERENCES: dict[str, tuple[set[str], str]] = {
    "pydantic-ai__openrouter_stream_error__i0.sse": (
        {"finish"},
        "finish_reason length, then an error chunk: a Responses stream ends in "
        "one status (failed), so the length finish does not come back (its usage, "
        "response.failed's, comes back on the chat error chunk)",
    ),
    "pydantic-ai__snowflake_model_streaming__i0.sse": (
        {"finish"},
        "no finish_reason in the source; chat output writes one per choice",
    ),
    "pydantic-ai__snowflake_thinking_streaming__i0.sse": (
        {"finish"},
        "no finish_reason in the source; chat output writes one per choice",
    ),
    "simonw-llm__tools_streaming_variant_a__i0.sse": (
        {"finish"},
        "no finish_reason in the source; chat output writes one per choice",
    ),
    "simonw-llm__tools_streaming_variant_b__i0.sse": (
        {"finish"},
        "no finish_reason in the source; chat output writes one per choice",
    ),
}

# Round trips that lose meaning they should keep: bugs, each with what is wrong.
ROUND_TRIP_BUGS: dict[str, str] = {}


def differences(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> set[str]:
    """Which parts of the summary differ: streams, usage, errors, or a lane field."""
    if len(before) != len(after):
        return {"streams"}
    out = set()
    for a, b in zip(before, after, strict=True):
        for key in ("usage", "errors"):
            if a[key] != b[key]:
                out.add(key)
        if a["lanes"].keys() != b["lanes"].keys():
            out.add("lanes")
            continue
        for number, lane in a["lanes"].items():
            out |= {k for k, v in lane.items() if b["lanes"][number][k] != v}
    return out


def round_trip(path: Path, choice: int | None) -> tuple[list[Any], list[Any]]:
    fmt = fmt_of(path)
    data = path.read_bytes()
    middle, _ = convert(data, OTHER[fmt], fmt, choice=choice)
    back, _ = convert(middle, fmt, OTHER[fmt])
    return summarize(data, fmt, lane=choice), summarize(back, fmt)


def check_round_trip(path: Path, choice: int | None) -> None:
    before, after = round_trip(path, choice)
    found = differences(before, after)
    expected, reason = EXPECTED_DIFFERENCES.get(path.name, (set(), ""))
    if expected and not found:
        pytest.fail(f"now the same: drop it from EXPECTED_DIFFERENCES ({reason})")
    if found != expected:
        assert after == before, f"differs in {sorted(found)}"


@pytest.mark.parametrize(("path", "choice"), round_trip_params(CHAT))
def test_chat_capture_round_trip_says_the_same(path, choice):
    check_round_trip(path, choice)


@pytest.mark.parametrize(("path", "choice"), round_trip_params(RESPONSES))
def test_responses_capture_round_trip_says_the_same(path, choice):
    check_round_trip(path, choice)


@skip_without_captures
def test_summaries_are_not_empty():
    """The comparison above has teeth: the captures say things the summary sees."""
    texts = calls = usages = reasonings = errors = 0
    for fmt in (CHAT, RESPONSES):
        for path in captures(fmt):
            for stream in summarize(path.read_bytes(), fmt):
                lanes = stream["lanes"].values()
                texts += any(lane["text"] for lane in lanes)
                calls += any(lane["calls"] for lane in lanes)
                reasonings += any(lane["reasoning"] for lane in lanes)
                usages += stream["usage"] is not None
                errors += bool(stream["errors"])
    assert texts > 200 and calls > 80 and reasonings > 40 and usages > 200 and errors >= 3


# -- A → A -----------------------------------------------------------------------------

# Malformed captures that chatx repairs (a `repaired` note says so), with what it repairs.
REPAIRED: dict[str, str] = {
    "pydantic-ai__groq_model_web_search_tool_stream__i0.sse": "a choice whose first delta has no role: role added",
    "pydantic-ai__mistral_model_thinking_part_iter__i0.sse": "Mistral content as a list of parts: written as strings",
    "vercel-ai__mistral-mistral-incremental-tool-call.jsonl": "a choice whose first delta has no role: role added",
    "vercel-ai__mistral-mistral-reasoning.jsonl": "Mistral content as a list of parts: written as strings",
    "vercel-ai__mistral-mistral-tool-call.jsonl": "a tool call without an index: numbered",
    "vercel-ai__openai-compatible-azure-text.jsonl": "a choice without a delta: delta added",
    "vercel-ai__openai-compatible-issue-13703-mistral-thinking.jsonl": "Mistral content as a list of parts: written as strings",
    "vercel-ai__openai-issue-18970-programmatic-approval.1.jsonl": "an output_item.done for an item never added",
    "vercel-ai__openai-openai-custom-text-tool.1.jsonl": "trimmed fixture: sequence gap, output_index renumbered from 0",
    "vercel-ai__openai-openai-phase.1.jsonl": "trimmed fixture: sequence gaps, output_index renumbered from 0",
    "vercel-ai__openai-openai-issue-8562-missing-reasoning-summary.1.jsonl": "trimmed fixture: sequence gap, message given only in output_item.done",
    "pydantic-ai__openai_responses_raw_cot_stream_openrouter__i0.sse": "items overlap (reasoning closed after the message) and a trailing [DONE]: written one after another, [DONE] left out",
    "pydantic-ai__openai_responses_stream__i1.sse": "output_text.delta without logprobs: logprobs [] added",
    "vercel-ai__openai-compatible-tool-call.1.jsonl": "function call whole in the added item, no arguments.done: added",
    "vercel-ai__openai-compatible-reasoning.1.jsonl": "message without output_text.done/content_part.done: added",
    "vercel-ai__openai-github-copilot-id-rotation.1.jsonl": "item ids rotate within an item: the first id is kept",
    "pydantic-ai__openai_responses_model_mcp_list_tools_stream_backfills_missing_results__i0.sse": "two mcp_list_tools items never closed: their output_item.done written from the terminal object",
    "vercel-ai__xai-xai-13218-web-search-provider-tool-result.1.jsonl": "the terminal output's web search action differs from the item closed: the closed item written",
    "vercel-ai__openai-openai-shell-container.1.jsonl": "trimmed fixture: the done text differs from its deltas, which are kept",
    "vercel-ai__perplexity-perplexity-citations.jsonl": "the last chunk's object is chat.completion.done: the stream's written",
    "vercel-ai__perplexity-perplexity-text.jsonl": "the last chunk's object is chat.completion.done: the stream's written",
    **{
        name: "a second finish_reason for the choice: left out"
        for name in (
            "pydantic-ai__openrouter_advisor_tool_stream__i0.sse",
            "pydantic-ai__openrouter_stream_error__i0.sse",
            "pydantic-ai__openrouter_web_search_annotations_stream__i0.sse",
            "pydantic-ai__openrouter_web_search_tool_usage_stream__i0.sse",
        )
    },
    **{
        name: "a choice that never gets a finish_reason: one written"
        for name in (
            "pydantic-ai__snowflake_model_streaming__i0.sse",
            "pydantic-ai__snowflake_thinking_streaming__i0.sse",
            "simonw-llm__tools_streaming_variant_a__i0.sse",
            "simonw-llm__tools_streaming_variant_b__i0.sse",
        )
    },
}

# Captures A → A changes without saying so (no `repaired` note): bugs.
AA_BUGS: dict[str, str] = {}


def aa_params(fmt: str) -> list[Any]:
    out = []
    for param in capture_params(fmt):
        path = param.values[0]
        if path is not None and path.name in AA_BUGS:
            out.append(
                pytest.param(
                    path,
                    id=param.id,
                    marks=pytest.mark.xfail(strict=True, reason=AA_BUGS[path.name]),
                )
            )
        else:
            out.append(param)
    return out


def _values(data: bytes) -> list[Any]:
    # The JSON values only: [DONE] is SSE framing, which chatx writes at the end of every
    # SSE chat stream whatever the source's container (validate checks where it goes).
    return [r.data for r in records(data) if r.error is None and not r.done]


def _well_numbered(values: list[Any]) -> bool:
    """Sequence numbers 0, 1, 2… in each stream (a stream starts at response.created)."""
    expected = 0
    for value in values:
        if not isinstance(value, dict):
            continue
        if value.get("type") == "response.created":
            expected = 0
        if value.get("sequence_number") != expected:
            return False
        expected += 1
    return True


def _without_sequence(values: list[Any]) -> list[Any]:
    return [
        {k: v for k, v in value.items() if k != "sequence_number"}
        if isinstance(value, dict)
        else value
        for value in values
    ]


def check_identity(path: Path) -> None:
    fmt = fmt_of(path)
    data = path.read_bytes()
    out, notes = convert(data, fmt, fmt)
    before, after = _values(data), _values(out)
    same = before == after
    if not same and fmt == RESPONSES and not _well_numbered(before):
        same = _without_sequence(before) == _without_sequence(after) and _well_numbered(after)
    repaired = [n.message for n in notes.items if n.kind == "repaired"]
    if path.name in REPAIRED:
        assert not same, f"now the same: drop it from REPAIRED ({REPAIRED[path.name]})"
        assert repaired, "changed without a repaired note"
        return
    if not same:
        first = next(
            (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
            min(len(before), len(after)),
        )
        pytest.fail(
            f"A → A changed the capture: {len(before)} records in, {len(after)} out; record "
            f"{first}: {str(before[first : first + 1])[:300]} → {str(after[first : first + 1])[:300]}"
            f" (notes: {[str(n) for n in notes.summary()]})"
        )


@pytest.mark.parametrize("path", aa_params(CHAT))
def test_chat_capture_chat_to_chat_is_identity(path):
    check_identity(path)


@pytest.mark.parametrize("path", aa_params(RESPONSES))
def test_responses_capture_responses_to_responses_is_identity(path):
    check_identity(path)


# -- the table -------------------------------------------------------------------------

# Expected counts, per source format: conversions (one per chat choice), accepted by the
# SDK oracle, same meaning after A → B → A. A change in either direction fails.
EXPECTED_COUNTS = {CHAT: (177, 177, 177), RESPONSES: (121, 121, 121)}


@skip_without_captures
def test_capture_table(capsys):
    from tests.test_oracle import sdk_problems

    rows = {}
    unstable = []
    for fmt in (CHAT, RESPONSES):
        converted = accepted = same = 0
        for param in round_trip_params(fmt):
            path, choice = param.values
            data = path.read_bytes()
            out, _ = convert(data, OTHER[fmt], fmt, choice=choice)
            converted += 1
            if convert(data, OTHER[fmt], fmt, choice=choice)[0] != out:
                unstable.append(path.name)  # same input, same bytes (DESIGN §4)
            accepted += not sdk_problems(out, OTHER[fmt])
            back, _ = convert(out, fmt, OTHER[fmt])
            found = differences(summarize(data, fmt, lane=choice), summarize(back, fmt))
            same += not found or found == EXPECTED_DIFFERENCES.get(path.name, (None,))[0]
        rows[fmt] = (converted, accepted, same)
    with capsys.disabled():
        print(
            "\n\ncaptures through chatx (same meaning: equal or only an expected, listed "
            "difference)"
        )
        print(f"  {'source':<18}{'converted':>10}{'SDK ok':>8}{'same meaning':>14}")
        for fmt, (converted, accepted, same) in rows.items():
            print(f"  {fmt:<18}{converted:>10}{accepted:>8}{same:>14}")
    assert unstable == []
    assert rows == EXPECTED_COUNTS

"""``chatx diff``: hand-made pairs that differ in one thing, real captures against their
own conversions, and the command's exit codes and output."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx import codecs, pipeline
from chatx.cli import app, main
from chatx.diffing import ABSENT, FieldFilter, compare, diff
from chatx.notes import Notes
from tests.captures import CAPTURES, capture_params
from tests.paths import ROOT
from tests.streams import sse

PAIRS = ROOT / "fixtures" / "diff"
CHAT, RESPONSES, LLAMA = "chat-chunk", "responses-event", "llama-stack-event"
TARGETS = [f for f in (CHAT, RESPONSES, LLAMA) if f in codecs.names()]


@pytest.fixture(autouse=True)
def _fresh_app() -> Iterator[None]:
    """main() registers the commands again on each call: undo that after each test so
    in-process runs stay fast (a command list that grows makes every call slower)."""
    saved = list(app.registered_commands)
    yield
    app.registered_commands[:] = saved


def _pairs() -> list[Path]:
    found = sorted(p for p in PAIRS.iterdir() if (p / "expect.json").is_file())
    assert found, f"no diff fixtures under {PAIRS}"  # an empty glob is an error, not a pass
    return found


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["diff", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


# -- hand-made pairs (fixtures/diff/<case>/{a,b}.*, expect.json) ---------------------------


@pytest.mark.parametrize("case", _pairs(), ids=lambda p: p.name)
def test_hand_made_pair(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect = json.loads((case / "expect.json").read_text())
    (a,) = case.glob("a.*")
    (b,) = case.glob("b.*")
    for run in expect["runs"]:
        code, out, err = _run(capsys, str(a), str(b), "--all", "--output", "json", *run["args"])
        assert (code, err) == (run["exit"], ""), run
        report = json.loads(out)
        assert report["same"] == (code == 0)
        if "differences" in run:
            found = [
                {k: d.get(k, "<absent>") for k in want}
                for d, want in zip(report["differences"], run["differences"], strict=False)
            ]
            assert len(report["differences"]) == len(run["differences"]), report
            assert found == [{k: v for k, v in want.items()} for want in run["differences"]]


def test_text_report_names_the_event_lines_path_and_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = PAIRS / "text"
    code, out, err = _run(capsys, str(case / "a.sse"), str(case / "b.sse"))
    assert (code, err) == (1, "")
    assert "event 3 (lines 7 / 7): choices[0].delta.content" in out
    assert '- " Paris."' in out and '+ " Lyon."' in out
    assert "context" in out and "content ' is'" in out  # the events around it
    assert "\x1b[" not in out  # no colour when stdout is not a terminal


def test_an_extra_event_is_reported_as_itself(capsys: pytest.CaptureFixture[str]) -> None:
    case = PAIRS / "extra-event"
    code, out, _ = _run(capsys, str(case / "a.sse"), str(case / "b.sse"))
    assert code == 1
    assert "event B 2 (line 5): the whole event only in" in out
    assert "1 difference" in out  # not a shift of every event after it


def test_same_streams_say_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    case = PAIRS / "ids-and-timestamps"
    assert _run(capsys, str(case / "a.sse"), str(case / "b.sse")) == (0, "", "")


def test_stdin_and_formats_given(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = PAIRS / "cross-format"
    stdin = type("In", (), {"buffer": __import__("io").BytesIO((case / "b.sse").read_bytes())})
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = _run(
        capsys,
        str(case / "a.sse"),
        "-",
        "--from-a",
        CHAT,
        "--from-b",
        RESPONSES,
        "--output",
        "json",
    )
    assert (code, err) == (0, "")
    assert json.loads(out)["mode"] == "semantic" and json.loads(out)["b"]["file"] == "<stdin>"


@pytest.mark.parametrize(
    "args, message",
    [
        (["-", "-"], "only one of A and B"),
        (["{a}", "{missing}"], "No such file"),
        (["{a}", "{empty}"], "empty input"),
        (["{a}", "{garbage}"], "not a stream"),
        (["{a}", "{a}", "--output", "yaml"], "--output takes"),
        (["{a}", "{a}", "--from-b", "nonsense"], "unknown format"),
    ],
)
def test_trouble_exits_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty.sse").write_bytes(b"")
    (tmp_path / "garbage.sse").write_bytes(b"\x00\xffnot json at all\n")
    paths = {
        "a": str(PAIRS / "text" / "a.sse"),
        "missing": str(tmp_path / "nope.sse"),
        "empty": str(tmp_path / "empty.sse"),
        "garbage": str(tmp_path / "garbage.sse"),
    }
    code, out, err = _run(capsys, *[a.format(**paths) for a in args])
    assert code == 2 and out == ""
    assert err.startswith("chatx: error:") and message in err and "Traceback" not in err


def test_skipped_records_are_said_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (PAIRS / "text" / "a.sse").read_bytes()
    broken = good.replace(b'"content":" is"', b'"content":" is"\x00broken', 1)
    (tmp_path / "broken.sse").write_bytes(broken)
    code, out, err = _run(
        capsys, str(PAIRS / "text" / "a.sse"), str(tmp_path / "broken.sse"), "--semantic"
    )
    # Records that could not be read: trouble (2), with what does differ still shown.
    assert code == 2 and "choices[0].text" in out
    assert err.startswith("chatx: skipped: ") and ":5: record skipped" in err


def test_long_text_is_cut_around_where_it_differs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = {"id": "chatcmpl-l", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def stream(text: str) -> bytes:
        return sse(
            [
                {**base, "choices": [{"index": 0, "delta": {"content": text}}]},
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
        )

    words = "lorem ipsum " * 40
    (tmp_path / "a.sse").write_bytes(stream(words + "dolor"))
    (tmp_path / "b.sse").write_bytes(stream(words + "DOLOR"))
    code, out, _ = _run(capsys, str(tmp_path / "a.sse"), str(tmp_path / "b.sse"), "--semantic")
    assert code == 1
    assert f"choices[0].text (differs at character {len(words)})" in out
    assert '- …"m ipsum lorem ipsum dolor"' in out
    assert '+ …"m ipsum lorem ipsum DOLOR"' in out


# -- the library pieces -----------------------------------------------------------------------


def test_field_filter_names_and_paths() -> None:
    value = {
        "id": 1,
        "choices": [{"delta": {"role": "assistant", "content": "x"}, "id": 2}],
        "usage": {"total": 3},
    }
    assert FieldFilter({"id"}).apply(value) == {
        "choices": [{"delta": {"role": "assistant", "content": "x"}}],
        "usage": {"total": 3},
    }
    assert FieldFilter(ignore=("choices.delta.role", "usage")).apply(value) == {
        "id": 1,
        "choices": [{"delta": {"content": "x"}, "id": 2}],
    }
    assert FieldFilter(ignore=("choices.0.*",)).apply(value) == {
        "id": 1,
        "choices": [{}],
        "usage": {"total": 3},
    }
    assert FieldFilter(ignore=("choices.1.id",)).apply(value) == value


def test_compare_is_json_equality() -> None:
    assert compare({"a": 1}, {"a": 1.0}) == []
    (found,) = compare({"a": True}, {"a": 1})
    assert (found.path, found.a, found.b) == ("a", True, 1)
    (found,) = compare({"a": [1]}, {"a": [1, 2]})
    assert (found.path, found.a, found.b) == ("a[1]", ABSENT, 2)
    (found,) = compare({"weird key": 1}, {})
    assert found.path == '["weird key"]'


def test_wire_resyncs_after_a_missing_event() -> None:
    base = {"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [{**base, "choices": [{"index": 0, "delta": {"content": str(n)}}]} for n in range(10)]
    result = diff(sse(chunks), sse(chunks[:4] + chunks[5:]))
    (only,) = result.differences
    assert (only.index_a, only.index_b, only.b) == (4, None, ABSENT)


_LOOK, _AGREE = 8, 3


def _agrees(va: list[int], vb: list[int], i: int, j: int) -> bool:
    if i >= len(va) or j >= len(vb):
        return False
    span = min(_AGREE, len(va) - i, len(vb) - j)
    return all(va[i + n] == vb[j + n] for n in range(span))


def _resync(va: list[int], vb: list[int], i: int, j: int) -> tuple[int, int]:
    if i >= len(va):
        return 0, len(vb) - j
    if j >= len(vb):
        return len(va) - i, 0
    for k in range(1, _LOOK + 1):
        if _agrees(va, vb, i + k, j):
            return k, 0
        if _agrees(va, vb, i, j + k):
            return 0, k
    return 0, 0


def _reference_rows(va: list[int], vb: list[int], first_only: bool) -> tuple[list, list]:
    """The alignment as first written, over whole lists: (rows, rows that differ)."""
    rows: list[tuple[int | None, int | None]] = []
    differing: list[int] = []
    i = j = 0
    stop = None
    while (i < len(va) or j < len(vb)) and (stop is None or len(rows) < stop):
        if i < len(va) and j < len(vb) and va[i] == vb[j]:
            rows.append((i, j))
            i, j = i + 1, j + 1
            continue
        keep = stop is None
        skip_a, skip_b = _resync(va, vb, i, j)
        steps = [(k, None) for k in range(i, i + skip_a)] + [
            (None, k) for k in range(j, j + skip_b)
        ]
        for step in steps or [(i, j)]:
            if keep:
                differing.append(len(rows))
            rows.append(step)
        i, j = (i + skip_a, j + skip_b) if steps else (i + 1, j + 1)
        if first_only and stop is None:
            stop = len(rows) + 2
    return rows, differing


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=40),
    st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["drop", "add", "change"])), max_size=4),
    st.booleans(),
)
def test_wire_alignment_in_a_window_is_the_whole_list_alignment(
    va: list[int], edits: list[tuple[int, str]], first_only: bool
) -> None:
    """Read as they come, a few events held: the same rows, differences and context."""
    from chatx.diffing import wire_diff
    from chatx.reading.framing import Side
    from chatx.record import Record

    vb = list(va)
    for at, what in edits:
        at = min(at, len(vb))
        if what == "drop" and at < len(vb):
            del vb[at]
        elif what == "add":
            vb.insert(at, 9)
        elif at < len(vb):
            vb[at] = 8

    def side(values: list[int]) -> Side:
        records = iter([Record({"n": v}, line=2 * n + 1) for n, v in enumerate(values)])
        return Side("x", "chat-chunk", "sse", records)

    result = wire_diff(side(va), side(vb), first_only=first_only)
    rows, differing = _reference_rows(va, vb, first_only)
    assert [(d.row, d.index_a, d.index_b) for d in result.differences] == [
        (n, *rows[n]) for n in differing
    ]
    if differing:
        first = differing[0]
        want = [(n, *rows[n]) for n in range(max(0, first - 2), min(len(rows), first + 3))]
        assert [(r.number, r.index_a, r.index_b) for r in result.context] == want
    assert (result.a.events, result.b.events) == (len(va), len(vb))


# -- real captures against their own conversions ----------------------------------------------

# Built-in tool items (web search, MCP, code interpreter, shell…) have no place in chat
# chunks or Llama Stack events: conversion says so ("lost"), and the comparison leaves
# them out. Reasoning has no place in Llama Stack events either.
LOSSES = {CHAT: ("items",), RESPONSES: (), LLAMA: ("items", "reasoning")}
# Legitimate differences, by capture and target, with the reason.
DIFFERS = {
    (
        "openai-python__parse_pydantic_model_refusal_173417.sse",
        LLAMA,
    ): "Llama Stack has no refusal: it is written as message text",
    (
        "openai-python__refusal_logprobs_events_569c87.sse",
        LLAMA,
    ): "Llama Stack has no refusal: it is written as message text",
    (
        "llama-stack-rec__ollama-tool_runtime-dd48d347f0ab.jsonl",
        LLAMA,
    ): "the text starts with Llama's <|python_tag|>: the Llama Stack decoder reads it as "
    "a tool call",
}


def _lanes(data: bytes) -> list[int]:
    from chatx.collect.streams import streams_of
    from chatx.reading.framing import load

    side = load(data, "capture")
    return sorted({lane.index for s in streams_of(side) for lane in s.choices}) or [0]


def _semantic_same(path: Path, dst: str) -> None:
    data = path.read_bytes()
    lanes = _lanes(data)
    # Several choices go to one-choice formats one at a time (--choice N), each compared
    # with that choice alone.
    choices = [None] if len(lanes) == 1 or dst == CHAT else lanes
    for choice in choices:
        source = data if choice is None else pipeline.convert(data, dst=CHAT, choice=choice)
        converted = pipeline.convert(data, dst=dst, choice=choice, notes=Notes())
        result = diff(
            source, converted, mode="semantic", ignore=LOSSES[dst], name_a=path.name, name_b=dst
        )
        reason = DIFFERS.get((path.name, dst))
        shown = [(d.path, d.a, d.b) for d in result.differences[:3]]
        assert result.same != bool(reason), reason or shown


@pytest.mark.parametrize("dst", [t for t in TARGETS if t != CHAT])
@pytest.mark.parametrize("path", capture_params(CHAT))
def test_chat_capture_says_the_same_after_conversion(path: Path, dst: str) -> None:
    _semantic_same(path, dst)


@pytest.mark.parametrize("dst", [t for t in TARGETS if t != RESPONSES])
@pytest.mark.parametrize("path", capture_params(RESPONSES))
def test_responses_capture_says_the_same_after_conversion(path: Path, dst: str) -> None:
    _semantic_same(path, dst)


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_lost_items_are_reported_by_the_conversion() -> None:
    """What the comparisons above leave out ("items") is said by convert, not dropped."""
    path = CAPTURES / RESPONSES / "vercel-ai__openai-openai-web-search-tool.1.jsonl"
    if not path.is_file():
        pytest.skip(f"{path.name} is absent")
    notes = Notes()
    pipeline.convert(path.read_bytes(), dst=CHAT, notes=notes)
    assert any("web_search_call" in note.message for note in notes.summary())
    result = diff(path.read_bytes(), pipeline.convert(path.read_bytes(), dst=CHAT))
    assert {d.path.split("[")[0] for d in result.differences} == {"items"}


# -- the CLI never loads the openai SDK ----------------------------------------------------


def test_diff_show_collect_do_not_import_openai(tmp_path: Path) -> None:
    case = PAIRS / "text"
    script = f"""
import sys
from chatx.cli import app, main
a, b = {str(case / "a.sse")!r}, {str(case / "b.sse")!r}
codes = [main(["diff", a, b]), main(["diff", a, b, "--semantic"]), main(["show", a]),
         main(["show", a, "--events"]), main(["collect", a]),
         main(["collect", a, "--as", "responses"])]
assert codes == [1, 1, 0, 0, 0, 0], codes
assert "openai" not in sys.modules, "openai was imported"
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]

"""``chatx validate`` and ``chatx rules`` from the command line: output and exit codes."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chatx.cli import main
from chatx.validation import RULES
from tests.paths import ROOT

FIXTURES = ROOT / "fixtures" / "validate"
LINE = re.compile(r"^(?P<file>.+):(?P<line>\d+): (?P<rule>[A-Z]{3}\d{3}) (?P<sev>[EW]) .+$")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_clean_stream_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", fixture("RSP023.good.sse"))
    assert code == 0
    assert out == f"{fixture('RSP023.good.sse')}: ok (responses-event, sse, 10 records)\n"
    assert err == ""


def test_violation_is_one_linter_line_then_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", fixture("RSP023.bad.sse"))
    assert code == 1
    finding, summary = out.splitlines()
    match = LINE.match(finding)
    assert match and match["rule"] == "RSP023" and match["sev"] == "E"
    assert match["line"] == "19"  # the output_text.done event
    assert summary.endswith(": 1 error (responses-event, sse, 10 records)")
    assert err == ""


def test_every_violation_in_one_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", fixture("RSP018.bad.sse"))
    assert code == 1
    assert [LINE.match(x)["rule"] for x in out.splitlines()[:-1]] == ["RSP018"] * 3


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "validate",
        "--output",
        "json",
        fixture("CHK011.bad.sse"),
        fixture("CHK011.good.sse"),
    )
    assert code == 1
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects == [
        {
            "file": fixture("CHK011.bad.sse"),
            "line": 7,
            "index": 3,
            "rule": "CHK011",
            "severity": "E",
            "message": "delta for choice 0 after its finish_reason (line 5)",
        }
    ]


def test_warnings_pass_unless_strict(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", fixture("CHK004.bad.sse"))
    assert code == 0 and " CHK004 W " in out and "1 warning" in out
    code, _, _ = run(capsys, "validate", "--strict", fixture("CHK004.bad.sse"))
    assert code == 1


def test_stdin_and_container_override(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same chunks without [DONE]: a violation on SSE, fine as JSON lines.
    stdin(monkeypatch, (FIXTURES / "CHK015.good.jsonl").read_bytes())
    code, out, _ = run(capsys, "validate", "-")
    assert code == 0 and out.startswith("<stdin>: ok (chat-chunk, jsonl,")
    stdin(monkeypatch, (FIXTURES / "CHK015.bad.sse").read_bytes())
    code, out, _ = run(capsys, "validate", "--container", "sse")
    assert code == 1 and " CHK015 E " in out


def test_format_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "validate", "--format", "llama-stack-event", fixture("LLS008.bad.jsonl")
    )
    assert code == 1 and " LLS008 E " in out
    code, _, err = run(capsys, "validate", "--format", "nonsense", fixture("LLS008.bad.jsonl"))
    assert code == 2 and "unknown format 'nonsense'" in err


@pytest.mark.parametrize("data", [b"", b"hello world\n", b'{"a":\n{"b"\n', b"\x00\xff\xfe" * 50])
def test_not_a_stream_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    stdin(monkeypatch, data)
    code, out, err = run(capsys, "validate", "--format", "chat-chunk")
    assert code == 2
    assert out == ""
    assert err.startswith("chatx: error: <stdin>") and "Traceback" not in err


def test_unreadable_file_does_not_stop_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(
        capsys, "validate", str(tmp_path / "missing.sse"), fixture("RSP023.good.sse")
    )
    assert code == 2
    assert "missing.sse: cannot read" in err
    assert out.endswith(": ok (responses-event, sse, 10 records)\n")


def test_stream_text_is_escaped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    evil = tmp_path / "evil.jsonl"
    events = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {"id": "r", "status": "in_progress", "output": []},
        },
        {
            "type": "response.in_progress",
            "sequence_number": 1,
            "response": {"id": "r", "status": "in_progress", "output": []},
        },
        {"type": "acme.\x1b[31mred\x07[bold]x[/bold]", "sequence_number": 2},
    ]
    evil.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, out, _ = run(capsys, "validate", str(evil))
    assert code == 1  # no terminal event
    assert "\x1b" not in out and "\x07" not in out
    assert "acme.\\x1b[31mred\\x07[bold]x[/bold]" in out


def test_schema_option(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openai")
    code, out, _ = run(capsys, "validate", "--schema", fixture("RSP100.bad.sse"))
    assert code == 1 and " RSP100 E " in out
    code, _, _ = run(capsys, "validate", fixture("RSP100.bad.sse"))
    assert code == 0


def test_plain_validate_does_not_import_openai() -> None:
    code = (
        f"import sys; from chatx.cli import main; "
        f"code = main(['validate', {fixture('RSP023.good.sse')!r}]); "
        f"assert 'openai' not in sys.modules, 'openai imported'; sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines()]
    assert listed == list(RULES)
    assert "RSP005  E  responses-event    sequence_number does not increase by exactly 1" in out


def test_rules_explains_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "rsp005")
    assert code == 0
    assert out.startswith("RSP005 (error, responses-event)\n")
    assert "Bad example:\n    {" in out


def test_rules_json_and_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--format", "chat-chunk", "--output", "json")
    rules = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and {r["format"] for r in rules} == {"chat-chunk", "any"}
    code, out, err = run(capsys, "rules", "NOPE001")
    assert code == 2 and out == "" and "unknown rule 'NOPE001'" in err


def test_an_ignored_sse_line_is_a_warning_in_text_and_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "validate", fixture("STR002.bad.sse"))
    finding, summary = out.splitlines()
    assert code == 0 and summary.endswith(": 1 warning (responses-event, sse, 10 records)")
    match = LINE.match(finding)
    assert match and (match["rule"], match["sev"], match["line"]) == ("STR002", "W", "5")
    assert "'x-request-id' is not an SSE field" in finding
    code, out, _ = run(
        capsys, "validate", "--strict", "--output", "json", fixture("STR002.bad.sse")
    )
    (found,) = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and (found["rule"], found["line"], found["index"]) == ("STR002", 5, 1)


def test_the_library_says_ignored_lines_when_given_bytes() -> None:
    import chatx

    data = (FIXTURES / "STR002.bad.sse").read_bytes()
    (found,) = chatx.validate(data)  # the format detected, the lines the reader ignored said
    assert (found.rule, found.line, found.index) == ("STR002", 5, 1)
    assert chatx.validate((FIXTURES / "STR002.good.sse").read_bytes(), "responses-event") == []

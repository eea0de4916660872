"""Many-file conversion: ``chatx.outdir`` and ``chatx convert … --out-dir DIR [--check] [-j N]``.

The library is tested in-process (planning, safe paths, writing only what changed, check
mode, parallel = serial); the command line as a process, stdout and stderr apart.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chatx import codecs, outdir, pipeline, settings
from chatx.errors import ExitStatus, UsageError
from chatx.outdir import planning, running
from tests.builders.chat_chunk import chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.streams import CHAT, RESPONSES, sse

LLAMA = "llama-stack-event"
FORMATS = codecs.names()  # every registered format, in registry order
SINGLE_LANE = [codec.name for codec in codecs.CODECS if codec.single_lane]
CHAT_BODY = sse(chat_text("Hello", " there"))
RESPONSES_BODY = ResponsesBuilder().message("Hi").end().bytes()
TWO_CHOICES = sse(
    [
        chunk({"role": "assistant", "content": "red"}, index=0),
        chunk({"role": "assistant", "content": "blue"}, index=1),
        chunk({}, "stop", index=0),
        chunk({}, "stop", index=1),
    ]
)
HALF_WRITTEN = CHAT_BODY[:-40]  # the last chunk cut in the middle of its JSON
TIMEOUT = 60


def chatx(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chatx", *args], capture_output=True, timeout=TIMEOUT, cwd=cwd
    )


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def captures(tmp_path: Path) -> Path:
    """A folder of captures: two formats, a subfolder, and things a walk must leave out."""
    root = tmp_path / "captures"
    (root / "openai").mkdir(parents=True)
    (root / "chat.sse").write_bytes(CHAT_BODY)
    (root / "openai" / "resp.sse").write_bytes(RESPONSES_BODY)
    (root / "openai" / "lines.jsonl").write_bytes(
        pipeline.convert(CHAT_BODY, dst=CHAT, out_container="jsonl")
    )
    (root / "NOTES.md").write_text("not a capture")
    (root / ".hidden.sse").write_bytes(CHAT_BODY)
    (root / ".git").mkdir()
    (root / ".git" / "x.sse").write_bytes(CHAT_BODY)
    return root


# -- naming and planning ---------------------------------------------------------------


def test_targets_repeated_comma_separated_all_and_aliases_once():
    assert settings.targets(["responses-event,chat-chunk", "chat-chunk"]) == [RESPONSES, CHAT]
    assert settings.targets(["all"]) == FORMATS
    assert FORMATS[:3] == [CHAT, RESPONSES, LLAMA]  # registry order
    assert settings.targets([" chat-chunk , "]) == [CHAT]
    with pytest.raises(UsageError, match="unknown format"):
        settings.targets(["chat-chunk,nope"])
    with pytest.raises(UsageError):
        settings.targets([","])


def test_output_name_is_stem_format_container():
    assert planning.output_name("capture", RESPONSES, "sse") == "capture.responses-event.sse"
    jobs, problems = planning.plan(["a/x.jsonl"], [CHAT, RESPONSES], Path("out"), "jsonl")
    assert problems == ["a/x.jsonl: No such file or directory"] and jobs == []


def test_files_go_flat_and_directories_keep_relative_paths(tmp_path, captures):
    single = tmp_path / "single.sse"
    single.write_bytes(CHAT_BODY)
    out = tmp_path / "out"
    jobs, problems = planning.plan([str(single), str(captures)], [RESPONSES, CHAT], out)
    assert problems == []
    assert [str(j.output.relative_to(out)) for j in jobs] == [
        "single.responses-event.sse",
        "single.chat-chunk.sse",
        "chat.responses-event.sse",
        "chat.chat-chunk.sse",
        "openai/lines.responses-event.sse",
        "openai/lines.chat-chunk.sse",
        "openai/resp.responses-event.sse",
        "openai/resp.chat-chunk.sse",
    ]
    assert all(j.root == out for j in jobs)
    assert jobs[4].name == str(captures / "openai" / "lines.jsonl")


def test_out_container_names_the_extension(tmp_path):
    source = tmp_path / "a.sse"
    source.write_bytes(CHAT_BODY)
    jobs, _ = planning.plan([str(source)], [RESPONSES, LLAMA], tmp_path / "out", "jsonl")
    assert [j.output.name for j in jobs] == ["a.responses-event.jsonl", "a.llama-stack-event.jsonl"]


def test_a_walk_leaves_out_earlier_outputs_in_the_output_dir(captures):
    out = captures / "converted"
    first, _ = planning.plan([str(captures)], [RESPONSES], out)
    list(running.run(first, settings.Settings()))
    (captures / "beside.chat-chunk.sse").write_bytes(CHAT_BODY)  # named like an output
    again, _ = planning.plan([str(captures)], [RESPONSES], out)
    assert [j.source for j in again] == sorted(
        [j.source for j in first] + [captures / "beside.chat-chunk.sse"]
    )
    # Outputs written beside the inputs are left out too, inputs named like them are not.
    beside, _ = planning.plan([str(captures)], [CHAT], captures)
    assert captures / "beside.chat-chunk.sse" not in [j.source for j in beside]


def test_an_empty_directory_is_a_problem_not_a_pass(tmp_path):
    (tmp_path / "empty").mkdir()
    jobs, problems = planning.plan([str(tmp_path / "empty")], [CHAT], tmp_path / "out")
    assert jobs == [] and "no captures" in problems[0]


def test_two_inputs_with_one_output_name_are_refused(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "x.sse").write_bytes(CHAT_BODY)
    with pytest.raises(UsageError, match="would both write .*give their directory"):
        planning.plan([str(tmp_path / "a/x.sse"), str(tmp_path / "b/x.sse")], [CHAT], tmp_path)
    # Beside each other, only the suffix tells them apart: giving the directory cannot help.
    for name in ("x.jsonl", "x.sse.gz"):
        (tmp_path / "b" / name).write_bytes(CHAT_BODY)
        with pytest.raises(UsageError, match="would both write .*differ only in suffix"):
            planning.plan([str(tmp_path / "b")], [CHAT], tmp_path / "out")
        (tmp_path / "b" / name).unlink()
    # The same file named twice is converted once.
    jobs, _ = planning.plan([str(tmp_path / "b/x.sse")] * 2, [CHAT], tmp_path / "out")
    assert len(jobs) == 1


def test_an_output_that_would_overwrite_an_input_is_refused(tmp_path):
    (tmp_path / "a.sse").write_bytes(CHAT_BODY)
    (tmp_path / "a.chat-chunk.sse").write_bytes(CHAT_BODY)
    names = [str(tmp_path / "a.sse"), str(tmp_path / "a.chat-chunk.sse")]
    with pytest.raises(UsageError, match="overwrite the input"):
        planning.plan(names, [CHAT], tmp_path)


# -- paths never leave DIR ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["..sse", "...sse", "work/../in.sse", "-rf.sse", "a b;rm.sse", "\x1b[31mred.sse", "ü.sse"],
)
def test_odd_input_names_stay_inside_the_output_dir(tmp_path, name):
    work = tmp_path / "deep" / "work"
    work.mkdir(parents=True)
    source = work / name
    source.resolve().write_bytes(CHAT_BODY)
    out = tmp_path / "deep" / "out"
    jobs, _ = planning.plan([str(source)], [CHAT], out)
    for job in jobs:
        assert job.output.parent == out
        assert ".." not in job.output.relative_to(out).parts
        assert running.convert_job(job, settings.Settings()).status == "written"
    assert {p.parent for p in tmp_path.rglob("*.chat-chunk.sse")} <= {out}


def test_relative_and_absolute_inputs_above_the_cwd_stay_inside(tmp_path, monkeypatch):
    (tmp_path / "up.sse").write_bytes(CHAT_BODY)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    jobs, _ = planning.plan(["../up.sse", str(tmp_path / "up.sse")], [CHAT], Path("out"))
    assert [str(j.output) for j in jobs] == ["out/up.chat-chunk.sse"]  # once: same file


def test_a_symlink_under_dir_pointing_outside_is_not_written_through(tmp_path, captures):
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "openai").symlink_to(outside, target_is_directory=True)
    jobs, _ = planning.plan([str(captures)], [CHAT], out)
    outcomes = list(running.run(jobs, settings.Settings()))
    escaped = [o for o in outcomes if o.job.output.parent.name == "openai"]
    assert escaped and all(o.status == "failed" for o in escaped)
    assert "outside" in escaped[0].error
    assert list(outside.iterdir()) == []
    assert all(o.status == "written" for o in outcomes if o not in escaped)


def test_a_symlinked_directory_is_not_walked(tmp_path, captures):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "far.sse").write_bytes(CHAT_BODY)
    (captures / "link").symlink_to(elsewhere, target_is_directory=True)
    jobs, _ = planning.plan([str(captures)], [CHAT], tmp_path / "out")
    assert all("far" not in j.name for j in jobs)


# -- running -----------------------------------------------------------------------------


def test_outputs_are_what_convert_writes_and_are_rewritten_only_when_changed(tmp_path, captures):
    out = tmp_path / "out"
    jobs, _ = planning.plan([str(captures)], [RESPONSES, CHAT], out)
    first = list(running.run(jobs, settings.Settings()))
    assert [o.status for o in first] == ["written"] * len(jobs)
    for job in jobs:
        expected = pipeline.convert(job.source.read_bytes(), dst=job.target)
        assert job.output.read_bytes() == expected
    stale, kept = jobs[0].output, jobs[1].output
    stale.write_bytes(b"old\n")
    for path in (stale, kept):
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    second = {o.job.output: o.status for o in running.run(jobs, settings.Settings())}
    assert second[stale] == "written" and stale.stat().st_mtime_ns != 1_000_000_000
    assert second[kept] == "unchanged" and kept.stat().st_mtime_ns == 1_000_000_000
    assert list(out.rglob(".*.tmp")) == []


def test_check_writes_nothing_and_names_stale_and_missing(tmp_path, captures):
    out = tmp_path / "out"
    jobs, _ = planning.plan([str(captures)], [RESPONSES], out)
    assert {o.status for o in running.run(jobs, settings.Settings(), check=True)} == {"missing"}
    assert not out.exists()
    list(running.run(jobs, settings.Settings()))
    jobs[0].output.write_bytes(b"stale")
    jobs[1].output.unlink()
    outcomes = list(running.run(jobs, settings.Settings(), check=True))
    assert [o.status for o in outcomes] == ["stale", "missing", "unchanged"]
    assert jobs[0].output.read_bytes() == b"stale" and not jobs[1].output.exists()
    tally = running.Tally()
    for outcome in outcomes:
        tally.add(outcome)
    assert tally.exit_status == ExitStatus.FAILED
    assert tally.summary(check=True) == "3 converted, 1 unchanged, 1 stale, 1 missing, 0 failed"


def test_a_failing_input_is_reported_with_file_and_line_and_the_rest_goes_on(tmp_path):
    bad = tmp_path / "bad.sse"
    bad.write_bytes(b'data: {"id": "x"}\n\ndata: {"not": "chat"}\n\n')
    good = tmp_path / "good.sse"
    good.write_bytes(CHAT_BODY)
    jobs, _ = planning.plan([str(bad), str(good)], [RESPONSES], tmp_path / "out")
    first, second = running.run(jobs, settings.Settings())
    assert first.status == "failed" and re.match(rf"{re.escape(str(bad))}:\d+: ", first.error)
    assert first.exit_status == ExitStatus.ERROR and not first.job.output.exists()
    assert second.status == "written"


def test_skipped_records_are_written_but_the_run_ends_in_2(tmp_path):
    cut = tmp_path / "cut.sse"
    cut.write_bytes(HALF_WRITTEN)
    (job,), _ = planning.plan([str(cut)], [RESPONSES], tmp_path / "out")
    outcome = running.convert_job(job, settings.Settings())
    assert outcome.status == "written" and outcome.exit_status == ExitStatus.ERROR
    assert any(n.kind == "skipped" and n.line for n in outcome.notes)


def test_several_choices_fail_one_choice_targets_unless_choice_is_given(tmp_path):
    n2 = tmp_path / "n2.sse"
    n2.write_bytes(TWO_CHOICES)
    jobs, _ = planning.plan([str(n2)], [CHAT, RESPONSES], tmp_path / "out")
    to_chat, to_responses = running.run(jobs, settings.Settings())
    assert to_chat.status == "written"
    assert to_responses.status == "failed"
    assert re.match(
        rf"{re.escape(str(n2))}:\d+: the stream has several choices", to_responses.error
    )
    _, picked = running.run(jobs, settings.Settings(choice=1))
    assert picked.status == "written"
    assert picked.job.output.read_bytes() == pipeline.convert(TWO_CHOICES, dst=RESPONSES, choice=1)


def test_strict_loss_fails_the_file_with_exit_1(tmp_path):
    source = tmp_path / "ws.sse"
    source.write_bytes(
        ResponsesBuilder()
        .builtin({"id": "ws_1", "type": "web_search_call", "action": {"type": "search"}})
        .message("Sunny")
        .end()
        .bytes()
    )
    (job,), _ = planning.plan([str(source)], [CHAT], tmp_path / "out")
    outcome = running.convert_job(job, settings.Settings(strict=True))
    assert outcome.status == "failed" and outcome.exit_status == ExitStatus.FAILED


def test_parallel_run_says_and_writes_what_a_serial_run_does(tmp_path, captures):
    (captures / "cut.sse").write_bytes(HALF_WRITTEN)
    (captures / "n2.sse").write_bytes(TWO_CHOICES)
    runs = {}
    for workers in (1, 3):
        out = tmp_path / f"out{workers}"
        jobs, _ = planning.plan([str(captures)], settings.targets(["all"]), out)
        outcomes = [
            (o.status, o.error, [str(n) for n in o.notes], o.exit_status)
            for o in running.run(jobs, settings.Settings(), workers=workers)
        ]
        runs[workers] = (outcomes, tree(out))
    assert runs[1] == runs[3]
    # n2 (two choices) fails for the formats that hold one choice only
    assert SINGLE_LANE and CHAT not in SINGLE_LANE
    assert len(runs[1][1]) == 5 * len(FORMATS) - len(SINGLE_LANE)
    failed = sorted(o[1].split(":")[0].rsplit("/", 1)[-1] for o in runs[1][0] if o[0] == "failed")
    assert failed == ["n2.sse"] * len(SINGLE_LANE)


def test_tally_exit_status_is_the_worst():
    tally = running.Tally()
    assert tally.exit_status == ExitStatus.OK
    job = planning.Job(Path("a"), "a", CHAT, Path("b"))
    tally.add(running.Outcome(job, "stale"))
    assert tally.exit_status == ExitStatus.FAILED
    tally.add(running.Outcome(job, "failed", error="x", exit_status=ExitStatus.ERROR))
    tally.add(running.Outcome(job, "written"))
    assert tally.exit_status == ExitStatus.ERROR
    assert tally.summary(check=False) == "2 converted, 0 unchanged, 1 written, 1 failed"


# -- the command line --------------------------------------------------------------------


def test_cli_converts_a_folder_and_check_passes_then_fails(tmp_path, captures):
    out = tmp_path / "out"
    done = chatx(
        "convert", str(captures), "--to", "responses-event,chat-chunk", "--out-dir", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert done.stderr.splitlines()[-1] == b"chatx: 6 converted, 0 unchanged, 6 written, 0 failed"
    assert len(tree(out)) == 6
    check = chatx("convert", str(captures), "-t", RESPONSES, "-t", CHAT, "-d", str(out), "--check")
    assert check.returncode == 0, check.stderr
    assert check.stdout == b""
    assert check.stderr.splitlines()[-1] == (
        b"chatx: 6 converted, 6 unchanged, 0 stale, 0 missing, 0 failed"
    )
    (out / "chat.responses-event.sse").write_bytes(b"stale")
    (out / "openai" / "resp.chat-chunk.sse").unlink()
    stale = chatx(
        "convert", str(captures), "--to", f"{RESPONSES},{CHAT}", "--out-dir", str(out), "--check"
    )
    assert stale.returncode == 1
    assert stale.stdout.decode().splitlines() == [
        f"stale {out / 'chat.responses-event.sse'}",
        f"missing {out / 'openai' / 'resp.chat-chunk.sse'}",
    ]
    assert (out / "chat.responses-event.sse").read_bytes() == b"stale"


def test_cli_one_bad_input_ends_in_2_after_the_others(tmp_path):
    (tmp_path / "a.sse").write_bytes(CHAT_BODY)
    (tmp_path / "b.sse").write_bytes(b'data: {"id": "chatcmpl-1", "object": "chat.comp\n\n')
    (tmp_path / "c.sse").write_bytes(CHAT_BODY)
    done = chatx(
        "convert", "a.sse", "b.sse", "c.sse", "missing.sse", "--to", CHAT, "-d", "out", cwd=tmp_path
    )
    assert done.returncode == 2
    stderr = done.stderr.decode()
    assert re.search(r"^chatx: error: b\.sse:1: ", stderr, re.M), stderr
    assert re.search(r"^chatx: error: missing\.sse: No such file", stderr, re.M), stderr
    assert stderr.splitlines()[-1] == "chatx: 2 converted, 0 unchanged, 2 written, 1 failed"
    assert sorted(tree(tmp_path / "out")) == ["a.chat-chunk.sse", "c.chat-chunk.sse"]
    assert "Traceback" not in stderr


def test_cli_check_with_o_compares_one_file(tmp_path):
    (tmp_path / "a.sse").write_bytes(CHAT_BODY)
    (tmp_path / "a.out").write_bytes(pipeline.convert(CHAT_BODY, dst=RESPONSES))
    same = chatx("convert", "a.sse", "-o", "a.out", "--check", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    (tmp_path / "a.out").write_bytes(b"")
    differs = chatx("convert", "a.sse", "-o", "a.out", "--check", "-q", cwd=tmp_path)
    assert (differs.returncode, differs.stdout, differs.stderr) == (1, b"stale a.out\n", b"")


@pytest.mark.parametrize(
    "args",
    [
        ["a.sse", "b.sse", "--to", CHAT],
        ["a.sse", "--to", f"{CHAT},{RESPONSES}"],
        [".", "--to", CHAT],
        ["a.sse", "-o", "x", "--out-dir", "out"],
        ["-", "--out-dir", "out"],
        ["a.sse", "--check"],
        ["a.sse", "--out-dir", "out", "-j", "0"],
    ],
    ids=["two-files", "two-formats", "directory", "o-and-out-dir", "stdin", "check", "j0"],
)
def test_cli_usage_errors(tmp_path, args):
    for name in ("a.sse", "b.sse"):
        (tmp_path / name).write_bytes(CHAT_BODY)
    done = chatx("convert", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(b"chatx: error: ") and b"Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() and done.stdout == b""


def test_cli_parallel_output_is_the_serial_output(tmp_path, captures):
    one = chatx("convert", str(captures), "--to", "all", "-d", str(tmp_path / "j1"))
    two = chatx("convert", str(captures), "--to", "all", "-d", str(tmp_path / "j2"), "-j", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert tree(tmp_path / "j1") == tree(tmp_path / "j2")
    assert one.stderr.replace(b"j1", b"j2") == two.stderr


def _with_terminal_stderr(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Run chatx with stderr on a pseudo-terminal; return (code, stdout, terminal bytes)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatx", *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "80", "TERM": "xterm"},
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process is gone
            break
        if not data:
            break
        seen += data
    os.close(leader)
    stdout, _ = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, stdout, seen


def test_progress_bar_on_a_terminal_only(tmp_path, captures):
    args = ["convert", str(captures), "--to", "all", "-d", str(tmp_path / "out")]
    code, stdout, terminal = _with_terminal_stderr(args, tmp_path)
    assert code == 0 and stdout == b""
    jobs = 3 * len(FORMATS)  # three captures, each to every format
    assert b"converting" in terminal and f"{jobs}/{jobs}".encode() in terminal
    assert f"{jobs} converted, 0 unchanged, {jobs} written, 0 failed".encode() in terminal
    piped = chatx("convert", str(captures), "--to", "all", "-d", str(tmp_path / "out2"))
    assert b"converting" not in piped.stderr
    assert all(line.startswith(b"chatx: ") for line in piped.stderr.splitlines())


def test_outdir_is_four_modules_under_400_lines_each():
    # walking (what a walk finds), planning (jobs), sources (the streams they read),
    # running (convert, write, count)
    package = Path(outdir.__file__).parent
    sizes = {p.name: len(p.read_text().splitlines()) for p in package.glob("*.py")}
    assert set(sizes) == {"__init__.py", "walking.py", "planning.py", "sources.py", "running.py"}
    assert max(sizes.values()) < 400, sizes

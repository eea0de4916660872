"""``chatx convert`` of many inputs (``--out-dir``), or of one checked against its
output (``--check``): the jobs planned (:mod:`chatx.outdir.planning`), run
(:mod:`chatx.outdir.running`) and reported on stderr, a progress bar on a terminal, a
summary line, and the stale outputs on stdout. A one-stream ``convert`` never loads it.
"""

import errno
import os
import sys
from typing import TYPE_CHECKING, Any

from chatx.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path


def plan(
    files: list[str],
    formats: list[str],
    out_dir: "Path | None",
    output: str,
    out_container: str | None,
    passed: list[str],
) -> tuple[list[Any], list[str]]:
    """The jobs of a many-file run (``--out-dir``) or of ``-o FILE --check``; what a
    walk passed over (a FIFO…) in ``passed``."""
    from pathlib import Path

    from chatx.outdir import planning

    if "-" in files:
        raise UsageError("--out-dir and --check read files and directories, not stdin (-)")
    if out_dir is not None:
        if output != "-":
            raise UsageError("-o and --out-dir do not go together: -o names one output file")
        return planning.plan(files, formats, out_dir, out_container, passed)
    if output == "-" or len(files) > 1 or len(formats) > 1 or Path(files[0]).is_dir():
        raise UsageError("--check compares with --out-dir DIR, or with -o FILE for one input")
    from chatx.reading import finding, opening

    address = opening.parse(files[0])
    if not Path(address.file).is_file():
        return [], [f"{files[0]}: {os.strerror(errno.ENOENT)}"]
    with finding.pick(address) as picked:  # FILE#N, or the only stream a file holds
        index = picked.stream.index if picked.stream is not None else None
    job = planning.Job(
        Path(address.file), picked.name, formats[0], Path(output), None, index, picked.format
    )
    return [job], []


def run_many(
    jobs: list[Any],
    problems: list[str],
    settings: Any,
    *,
    check: bool,
    workers: int,
    quiet: bool,
) -> int:
    """Convert (or check) every job; say what happened on stderr; list stale files."""
    from chatx.outdir import running

    if workers < 1:
        raise UsageError("-j takes a number of processes, 1 or more")
    tally = running.Tally()
    for problem in problems:
        say("error", problem)
        tally.problem()
    several = len({job.target for job in jobs}) > 1
    stale = []
    outcomes = running.run(jobs, settings, check=check, workers=workers)
    with _progress(len(jobs)) as progress:
        for outcome in outcomes:
            tally.add(outcome)
            _report(outcome, several, quiet, progress)
            if outcome.status in ("stale", "missing"):
                stale.append(outcome)
    from chatx.textsafe import escape_text

    for outcome in stale:  # data, for CI logs and scripts: one "stale PATH" per line
        sys.stdout.write(f"{outcome.status} {escape_text(str(outcome.job.output))}\n")
    if not quiet:
        say(None, tally.summary(check))
    return tally.exit_status


def _report(outcome: Any, several: bool, quiet: bool, progress: Any) -> None:
    to = f" (to {outcome.job.target})" if several else ""
    if not quiet:
        for note in outcome.notes:
            where = f"{outcome.job.name}:{note.line}" if note.line else outcome.job.name
            progress.say(note.kind, f"{where}: {note.message}{to}")
    if outcome.error is not None:
        progress.say("error", outcome.error + to)
    progress.advance()


def say(kind: str | None, message: str) -> None:
    from chatx.textsafe import escape_text  # loaded by the first message said

    prefix = f"chatx: {kind}: " if kind else "chatx: "
    sys.stderr.write(prefix + escape_text(message) + "\n")


class _NoProgress:
    """No progress bar: messages go straight to stderr."""

    def __enter__(self) -> "_NoProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def say(self, kind: str | None, message: str) -> None:
        say(kind, message)

    def advance(self) -> None:
        return None


class _Bar(_NoProgress):
    """A rich progress bar on stderr; messages are printed above it."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        console = Console(stderr=True, markup=False, highlight=False, emoji=False)
        self.progress = Progress(
            "converting",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.task = self.progress.add_task("converting", total=total)

    def __enter__(self) -> "_Bar":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def say(self, kind: str | None, message: str) -> None:
        from chatx.textsafe import escape_text

        prefix = f"chatx: {kind}: " if kind else "chatx: "
        self.progress.console.print(prefix + escape_text(message), soft_wrap=True)

    def advance(self) -> None:
        self.progress.advance(self.task)


def _progress(total: int) -> _NoProgress:
    """A bar for a multi-file run when stderr is a terminal; silent otherwise."""
    if total > 1 and sys.stderr.isatty():
        return _Bar(total)
    return _NoProgress()

"""Running a many-file run: each job converted in order, or in worker processes with
``-j``, its outcome said in job order; an output rewritten only when its bytes change,
or with ``--check`` compared; the run's counts and exit status."""

from __future__ import annotations

import errno
import os
import signal
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from chatx import atomic
from chatx.errors import ChatxError, ExitStatus, InputError
from chatx.notes import Note, Notes
from chatx.outdir import sources
from chatx.outdir.planning import Job
from chatx.outdir.walking import resolved
from chatx.settings import Settings

if TYPE_CHECKING:  # a process pool costs 20 ms to import: only -j needs one
    from concurrent.futures import Future, ProcessPoolExecutor

Status = Literal["written", "unchanged", "stale", "missing", "failed"]


@dataclass(slots=True)
class Outcome:
    """What became of one job; ``exit_status`` is its contribution to the run's code."""

    job: Job
    status: Status
    notes: list[Note] = field(default_factory=list)
    error: str | None = None
    exit_status: ExitStatus = ExitStatus.OK


def run(
    jobs: Sequence[Job], settings: Settings, *, check: bool = False, workers: int = 1
) -> Iterator[Outcome]:
    """Convert every job; yield the outcomes in job order (``workers`` processes)."""
    if workers <= 1 or len(jobs) <= 1:
        return _serial(jobs, settings, check)
    # Every worker is started here, before the caller starts any thread (a progress
    # bar): forking a process that runs threads is unsafe.
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(min(workers, len(jobs)), initializer=_quiet_worker)
    futures = [pool.submit(convert_job, job, settings, check) for job in jobs]
    return _in_order(pool, futures)


def _serial(jobs: Sequence[Job], settings: Settings, check: bool) -> Iterator[Outcome]:
    try:
        for job in jobs:
            yield convert_job(job, settings, check)
    finally:  # the file of exchanges the last jobs read stays open until here
        sources.release()


def _in_order(pool: ProcessPoolExecutor, futures: list[Future[Outcome]]) -> Iterator[Outcome]:
    try:
        for future in futures:
            yield future.result()
    finally:  # Ctrl-C, or the caller stopped early: drop what has not started
        pool.shutdown(wait=True, cancel_futures=True)


def _quiet_worker() -> None:
    """Ctrl-C is the parent's to handle: it cancels the rest and exits 130."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def convert_job(job: Job, settings: Settings, check: bool = False) -> Outcome:
    """Convert one input to one target and write (or, with ``check``, compare) it."""
    if job.root is not None and not resolved(job.output).is_relative_to(resolved(job.root)):
        # A symlink under DIR that points elsewhere: never written through.
        message = f"{job.name}: its output {job.output} would be written outside {job.root}"
        return _failed(job, Notes(), message, ExitStatus.ERROR)
    notes = Notes()
    try:
        data, request = sources.job_input(job.source, job.stream)
        transcoder = settings.recorded(request, job.found).transcoder(job.target, job.name, notes)
        out = transcoder.feed(data) + transcoder.finish()
        status = _compare(job, out) if check else _write(job, out)
    except ChatxError as exc:
        return _failed(job, notes, _located(exc, job.name, notes.line), exc.exit_status)
    except OSError as exc:
        where = exc.filename or job.name
        return _failed(job, notes, f"{where}: {exc.strerror or exc}", ExitStatus.ERROR)
    except Exception as exc:  # a bug: the other files still run
        message = f"{job.name}: internal error {type(exc).__name__}: {exc} (a chatx bug)"
        return _failed(job, notes, message, ExitStatus.ERROR)
    code = ExitStatus.ERROR if transcoder.skipped else ExitStatus.OK
    return Outcome(job, status, notes.summary(), None, code)


def _failed(job: Job, notes: Notes, message: str, code: ExitStatus) -> Outcome:
    return Outcome(job, "failed", notes.summary(), message, code)


def _located(exc: ChatxError, name: str, line: int | None) -> str:
    """``FILE:LINE: message``, however the error was raised."""
    if isinstance(exc, InputError):
        return str(exc.located(name))
    message = str(exc).removeprefix(f"{name}: ")
    return f"{name}:{line}: {message}" if line else f"{name}: {message}"


def _compare(job: Job, out: bytes) -> Status:
    existing = _existing(job.output)
    if existing is None:
        return "missing"
    return "unchanged" if existing == out else "stale"


def _existing(output: Path) -> bytes | None:
    """What the output file holds now (None: no file there). Something there that is no
    regular file (a FIFO, which would wait for a writer, a directory) is an OSError: it
    is neither read nor replaced."""
    try:
        info = os.stat(output)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        kind = atomic.what_is(info)
        raise OSError(errno.EEXIST, f"{kind} is there, not a file: not replaced", str(output))
    return output.read_bytes()


def _write(job: Job, out: bytes) -> Status:
    """Write ``out`` unless the file already holds it (its mtime then stays)."""
    output = job.output
    if _existing(output) == out:
        return "unchanged"
    output.parent.mkdir(parents=True, exist_ok=True)
    # Written beside it under an unpredictable name, created exclusively, and renamed:
    # an interrupted run never leaves half a file, and nothing planted in DIR is written
    # through. An OSError names the output, never the temporary file.
    atomic.replace_with(str(output), out)
    return "written"


# -- counting --------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """The run's counts and exit status (2 trouble > 1 stale or --strict loss > 0)."""

    converted: int = 0
    unchanged: int = 0
    written: int = 0
    stale: int = 0
    missing: int = 0
    failed: int = 0
    exit_status: ExitStatus = ExitStatus.OK

    def add(self, outcome: Outcome) -> None:
        if outcome.status == "failed":
            self.failed += 1
        else:
            self.converted += 1
            setattr(self, outcome.status, getattr(self, outcome.status) + 1)
        code = outcome.exit_status
        if outcome.status in ("stale", "missing"):
            code = max(code, ExitStatus.FAILED)
        self.exit_status = max(self.exit_status, code)

    def problem(self) -> None:
        """An input that could not even be planned (missing path, empty directory)."""
        self.exit_status = ExitStatus.ERROR

    def summary(self, check: bool) -> str:
        middle = (
            f"{self.stale} stale, {self.missing} missing" if check else f"{self.written} written"
        )
        return f"{self.converted} converted, {self.unchanged} unchanged, {middle}, {self.failed} failed"

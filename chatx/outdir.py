"""Many files at once: plan the outputs, convert them (in parallel if asked), check them.

``chatx convert FILE… --to FMT[,FMT…] --out-dir DIR`` writes one output per input per
target format, named ``<stem>.<format>.<container>``:

* a file named on the command line goes to ``DIR/<stem>.<format>.<container>``;
* a directory is walked (sorted, hidden entries and symlinked directories left out) for
  :data:`CAPTURE_SUFFIXES`, and each capture keeps its path relative to that directory:
  ``captures/openai/a.sse`` → ``DIR/openai/a.<format>.<container>``. A walk leaves out
  what a previous run wrote into ``DIR`` (files under ``DIR`` named like outputs);
* two inputs that would write the same output, or an output that would overwrite an
  input, stop the run before anything is converted (:class:`~chatx.errors.UsageError`);
* no output path leaves ``DIR``, whatever the input names (``..``, absolute paths,
  symlinks inside ``DIR``): checked when planning and again before writing.

Each job is one (input, target) pair; :func:`run` converts them in order, or in worker
processes with ``workers > 1``, and yields an :class:`Outcome` per job in job order, so a
parallel run says and writes exactly what a serial one does. An output file is rewritten
only when its bytes change (unchanged outputs keep their mtime). ``check=True`` writes
nothing and says whether each output is ``unchanged``, ``stale`` or ``missing``. A job
that fails is an outcome, not an exception: the others go on.
"""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal

from chatx import codecs, containers
from chatx import inputs as addressed
from chatx.codecs.base import EncodeOptions
from chatx.errors import ChatxError, ExitStatus, InputError, UsageError
from chatx.notes import Note, Notes
from chatx.pipeline import Transcoder

if TYPE_CHECKING:  # a process pool costs 20 ms to import: only -j needs one
    from concurrent.futures import Future, ProcessPoolExecutor

# What a directory walk picks up. Other names (vercel's ``*.chunks.txt``) are converted
# when named on the command line: a folder of captures often holds notes and READMEs too.
CAPTURE_SUFFIXES = (".sse", ".jsonl", ".ndjson", ".json")
# The request a capture was answered for, written beside it by capture and proxy: no stream.
REQUEST_SUFFIX = ".request.json"
NO_CAPTURES = (
    f"no captures in this directory (looked for {', '.join('*' + s for s in CAPTURE_SUFFIXES)})"
)

Status = Literal["written", "unchanged", "stale", "missing", "failed"]


@dataclass(frozen=True, slots=True)
class Job:
    """One conversion: read ``source``, write ``output`` in ``target`` format.

    ``name`` is how messages call the input (the path as given or found); ``root`` is the
    output directory ``output`` must stay inside (``None`` for an explicit ``-o FILE``);
    ``stream`` is N of ``FILE#N`` when ``source`` holds recorded exchanges (a HAR…).
    """

    source: Path
    name: str
    target: str
    output: Path
    root: Path | None = None
    stream: int | None = None


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a conversion needs besides its job (sent to worker processes)."""

    src: str | None = None
    container: str | None = None
    out_container: str | None = None
    options: EncodeOptions = field(default_factory=EncodeOptions)
    choice: int | None = None
    strict: bool = False

    def recorded(self, request: dict[str, Any] | None) -> Settings:
        """These settings with the request recorded beside a stream (a HAR, a cassette):
        it fills the Responses envelope as ``--request`` does, unless that was given."""
        if request is None or self.options.request is not None:
            return self
        return replace(self, options=replace(self.options, request=request))

    def transcoder(self, target: str, name: str, notes: Notes) -> Transcoder:
        """A Transcoder to ``target`` with these settings."""
        return Transcoder(
            target,
            src=self.src,
            container=self.container,
            out_container=self.out_container,
            options=self.options,
            choice=self.choice,
            strict=self.strict,
            name=name,
            notes=notes,
        )


@dataclass(slots=True)
class Outcome:
    """What became of one job; ``exit_status`` is its contribution to the run's code."""

    job: Job
    status: Status
    notes: list[Note] = field(default_factory=list)
    error: str | None = None
    exit_status: ExitStatus = ExitStatus.OK


# -- planning --------------------------------------------------------------------------


def targets(specs: Sequence[str]) -> list[str]:
    """``--to`` values (repeated and/or comma-separated, ``all``) as codec names, in order."""
    names: list[str] = []
    for spec in specs:
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            found = codecs.names() if part == "all" else [codecs.get(part).name]
            names += [n for n in found if n not in names]
    if not names:
        raise UsageError("--to names no format")
    return names


def output_name(stem: str, target: str, container: str) -> str:
    """The file name of one output: ``<stem>.<format>.<container>``."""
    return f"{stem}.{target}.{container}"


def out_container_of(target: str, out_container: str | None) -> str:
    return containers.get(out_container).name if out_container else codecs.get(target).container


@dataclass(frozen=True, slots=True)
class _Source:
    path: Path
    name: str
    subdir: PurePath  # where its outputs go under DIR
    index: int | None = None  # FILE#N as given


def plan(
    inputs: Sequence[str],
    formats: Sequence[str],
    out_dir: Path,
    out_container: str | None = None,
    passed: list[str] | None = None,
) -> tuple[list[Job], list[str]]:
    """The jobs for ``inputs`` (files and directories), and the inputs that cannot be used.

    Problems (a path that does not exist, a directory without captures) are returned as
    messages so the rest still runs; clashing outputs raise :class:`UsageError`. What a
    walk passed over (a FIFO, a socket, a device) is added to ``passed``.
    """
    sources, problems = _sources(inputs, out_dir, passed)
    jobs = []
    for source in sources:
        try:  # a file of recorded exchanges: one output per stream, <stem>.<N>.<format>…
            streams = addressed.planned(source.path, source.index)
        except InputError as exc:
            problems.append(str(exc.located(source.name)))
            continue
        for index in streams:
            stem = addressed.stem(source.path) + ("" if index is None else f".{index}")
            given = source.name if index is None else f"{source.name}#{index}"
            for target in formats:
                name = output_name(stem, target, out_container_of(target, out_container))
                relative = source.subdir / name
                if relative.is_absolute() or ".." in relative.parts:  # defence in depth
                    raise UsageError(f"{given}: its output would leave {out_dir}")
                jobs.append(Job(source.path, given, target, out_dir / relative, out_dir, index))
    return _refuse_clashes(jobs), problems


def _sources(
    inputs: Sequence[str], out_dir: Path, passed: list[str] | None
) -> tuple[list[_Source], list[str]]:
    sources: list[_Source] = []
    problems: list[str] = []
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            found = list(_walk(path, out_dir, passed))
            if not found:
                problems.append(f"{given}: {NO_CAPTURES}")
            sources += found
        elif path.exists():
            sources.append(_Source(path, given, PurePath()))
        elif (address := addressed.parse(given)).index is not None:
            sources.append(_Source(Path(address.file), address.file, PurePath(), address.index))
        else:
            problems.append(f"{given}: {os.strerror(2)}")
    return sources, problems


def walk(top: Path, passed: list[str] | None = None) -> list[Path]:
    """The captures under directory ``top`` as a many-file convert finds them (``validate
    DIR`` reads the same files), outputs of earlier runs included; what the walk passed
    over (a FIFO, a socket, a device) is added to ``passed``."""
    return [source.path for source in _walk(top, None, passed)]


def _walk(top: Path, out_dir: Path | None, passed: list[str] | None = None) -> Iterator[_Source]:
    """Captures under ``top``, sorted, each with its directory relative to ``top``; what
    an earlier run wrote into ``out_dir`` (when given) is left out, and so is what is no
    regular file (a FIFO would wait for a writer forever), said in ``passed``."""
    outputs = None if out_dir is None else _resolved(out_dir)
    for dirpath, dirnames, filenames in os.walk(top):  # symlinked directories not followed
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath)
        in_outputs = outputs is not None and _resolved(here).is_relative_to(outputs)
        for filename in sorted(filenames):
            if (
                filename.startswith(".")
                or not filename.endswith(CAPTURE_SUFFIXES)
                or filename.endswith(REQUEST_SUFFIX)
            ):
                continue
            if in_outputs and _looks_like_output(filename):
                continue  # what an earlier run wrote, not an input
            path = here / filename
            kind = _not_a_file(path)
            if kind:
                if passed is not None:
                    passed.append(f"{path}: {kind}, not a capture file: skipped")
                continue
            yield _Source(path, str(path), here.relative_to(top))


def _not_a_file(path: Path) -> str | None:
    """What ``path`` is when it is no regular file (a symlink is what it points to); None
    for a file, or for what cannot be looked at (reading it says why)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _looks_like_output(filename: str) -> bool:
    parts = filename.rsplit(".", 2)
    return len(parts) == 3 and parts[1] in codecs.names() and parts[2] in containers.CONTAINERS


def _refuse_clashes(jobs: list[Job]) -> list[Job]:
    """The jobs, each once; a UsageError when two write one file or one overwrites an input."""
    by_output: dict[Path, Job] = {}
    inputs = {_resolved(job.source): job for job in jobs}
    for job in jobs:
        key = _resolved(job.output)
        other = by_output.setdefault(key, job)
        if other is job or _resolved(other.source) == _resolved(job.source):
            pass  # the same input named twice: converted once
        else:
            raise UsageError(
                f"{other.name} and {job.name} would both write {job.output} "
                "(give their directory instead, to keep their relative paths)"
            )
        if key in inputs:
            raise UsageError(
                f"converting {job.name} to {job.target} would overwrite the input "
                f"{inputs[key].name}: choose another --out-dir"
            )
    return list(by_output.values())


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


# -- running ---------------------------------------------------------------------------


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
        addressed.release()


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
    if job.root is not None and not _resolved(job.output).is_relative_to(_resolved(job.root)):
        # A symlink under DIR that points elsewhere: never written through.
        message = f"{job.name}: its output {job.output} would be written outside {job.root}"
        return _failed(job, Notes(), message, ExitStatus.ERROR)
    notes = Notes()
    try:
        data, request = addressed.job_input(job.source, job.stream)
        transcoder = settings.recorded(request).transcoder(job.target, job.name, notes)
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
    try:
        return "unchanged" if job.output.read_bytes() == out else "stale"
    except FileNotFoundError:
        return "missing"


def _write(job: Job, out: bytes) -> Status:
    """Write ``out`` unless the file already holds it (its mtime then stays)."""
    output = job.output
    try:
        if output.read_bytes() == out:
            return "unchanged"
    except FileNotFoundError:
        pass
    output.parent.mkdir(parents=True, exist_ok=True)
    # Write beside it and rename: an interrupted run never leaves half a file.
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(out)
        os.replace(temporary, output)
    except OSError as exc:  # said of the output, never of the temporary file
        raise OSError(exc.errno, exc.strerror, str(output)) from None
    finally:
        temporary.unlink(missing_ok=True)
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

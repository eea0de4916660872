"""Planning a many-file run: the target formats, one :class:`Job` per input per
target (one per stream of a file of recorded exchanges), named
``<stem>.<format>.<container>`` under the output directory, and clashes refused before
anything is converted."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from chatx import codecs, containers
from chatx.errors import InputError, UsageError
from chatx.outdir.sources import planned, stem_of
from chatx.outdir.walking import NO_CAPTURES, InputFile, resolved, sources_under
from chatx.reading import finding, opening


@dataclass(frozen=True, slots=True)
class Job:
    """One conversion: read ``source``, write ``output`` in ``target`` format.

    ``name`` is how messages call the input (the path as given or found); ``root`` is the
    output directory ``output`` must stay inside (``None`` for an explicit ``-o FILE``);
    ``stream`` is N of ``FILE#N`` when ``source`` holds recorded exchanges (a HAR…), and
    ``found`` the format ``ls`` found for that stream (from its URL and records), which
    the job reads it as unless ``--from`` says.
    """

    source: Path
    name: str
    target: str
    output: Path
    root: Path | None = None
    stream: int | None = None
    found: str | None = None


def output_name(stem: str, target: str, container: str) -> str:
    """The file name of one output: ``<stem>.<format>.<container>``."""
    return f"{stem}.{target}.{container}"


def out_container_of(target: str, out_container: str | None) -> str:
    return containers.get(out_container).name if out_container else codecs.get(target).container


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
    walk passed over (a FIFO, a socket, a device, a YAML file that is no cassette, a file
    of exchanges none of which streams) is added to ``passed``.
    """
    sources, problems = _sources(inputs, out_dir, passed)
    jobs = []
    for source in sources:
        try:  # a file of recorded exchanges: one output per stream, <stem>.<N>.<format>…
            streams = planned(source.path, source.index)
        except finding.NoStreams as exc:
            if not source.walked:
                problems.append(str(exc.located(source.name)))
            elif passed is not None:  # a cassette of calls that do not stream, beside others
                passed.append(f"{exc.located(source.name)}: skipped")
            continue
        except InputError as exc:
            problems.append(str(exc.located(source.name)))
            continue
        for index, found in streams:
            stem = stem_of(source.path) + ("" if index is None else f".{index}")
            given = source.name if index is None else f"{source.name}#{index}"
            for target in formats:
                name = output_name(stem, target, out_container_of(target, out_container))
                relative = source.subdir / name
                if relative.is_absolute() or ".." in relative.parts:  # defence in depth
                    raise UsageError(f"{given}: its output would leave {out_dir}")
                jobs.append(
                    Job(source.path, given, target, out_dir / relative, out_dir, index, found)
                )
    return _refuse_clashes(jobs), problems


def _sources(
    inputs: Sequence[str], out_dir: Path, passed: list[str] | None
) -> tuple[list[InputFile], list[str]]:
    sources: list[InputFile] = []
    problems: list[str] = []
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            found = list(sources_under(path, out_dir, passed))
            if not found:
                problems.append(f"{given}: {NO_CAPTURES}")
            sources += found
        elif path.exists():
            sources.append(InputFile(path, given, PurePath()))
        elif (address := opening.parse(given)).index is not None:
            sources.append(InputFile(Path(address.file), address.file, PurePath(), address.index))
        else:
            problems.append(f"{given}: {os.strerror(2)}")
    return sources, problems


def _refuse_clashes(jobs: list[Job]) -> list[Job]:
    """The jobs, each once; a UsageError when two write one file or one overwrites an input."""
    by_output: dict[Path, Job] = {}
    inputs = {resolved(job.source): job for job in jobs}
    for job in jobs:
        key = resolved(job.output)
        other = by_output.setdefault(key, job)
        if other is job or resolved(other.source) == resolved(job.source):
            pass  # the same input named twice: converted once
        else:
            raise UsageError(
                f"{other.name} and {job.name} would both write {job.output} ({_way_out(other, job)})"
            )
        if key in inputs:
            raise UsageError(
                f"converting {job.name} to {job.target} would overwrite the input "
                f"{inputs[key].name}: choose another --out-dir"
            )
    return list(by_output.values())


def _way_out(one: Job, other: Job) -> str:
    """What the user can do about two inputs with one output name."""
    if resolved(one.source).parent == resolved(other.source).parent:
        # a.sse beside a.sse.gz or a.jsonl: one stem, one directory, so no walk tells
        # them apart; renaming one, or -o per file, does
        return "they differ only in suffix: rename one, or convert each with -o"
    return "give their directory instead, to keep their relative paths"

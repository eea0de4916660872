"""What a directory walk finds (``convert DIR --out-dir``, ``validate DIR``, ``serve
DIR``): the files whose names say they hold captures, sorted, hidden entries and
symlinked directories left out, what is no regular file (a FIFO) passed over and said.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from chatx import codecs, containers
from chatx.containers import compressed
from chatx.errors import InputError
from chatx.record import Record

# What a directory walk picks up: bare streams, and files of recorded exchanges (HAR,
# VCR cassettes, httprr traces; a Llama Stack recording is a .json), each also compressed
# (``a.sse.gz``, ``calls.yaml.zst``, or ``x.gz`` with no other suffix, not ``x.tar.gz``).
# Other names (vercel's ``*.chunks.txt``) are converted when named on the command line: a
# folder of captures often holds notes and READMEs too.
CAPTURE_SUFFIXES = (
    ".sse", ".jsonl", ".ndjson", ".json", ".har", ".yaml", ".yml", ".httprr", ".mitm"
)  # fmt: skip
# A YAML file is a capture only as a VCR cassette or httpmock's mocks (a folder may hold
# configuration too).
_CASSETTE_ONLY = (".yaml", ".yml")
# The request a capture was answered for, written beside it by capture and proxy: no stream.
REQUEST_SUFFIX = ".request.json"
NO_CAPTURES = (
    "no captures in this directory (looked for "
    f"{', '.join('*' + s for s in CAPTURE_SUFFIXES)}, each also compressed: "
    f"{', '.join(compressed.SUFFIXES)})"
)


def is_capture_name(name: str) -> bool:
    """Whether a walk takes a file of this name."""
    inner = compressed.without_suffix(name)
    if name.startswith(".") or inner.endswith(REQUEST_SUFFIX):
        return False
    return inner.endswith(CAPTURE_SUFFIXES) or (inner != name and "." not in inner)


def capture_stem(name: str) -> str:
    """A capture's name without its suffixes (``chat/a.sse.gz`` -> ``chat/a``); another
    name as it is."""
    inner = compressed.without_suffix(name)
    for suffix in CAPTURE_SUFFIXES:
        if inner.endswith(suffix):
            return inner.removesuffix(suffix)
    return inner


@dataclass(frozen=True, slots=True)
class InputFile:
    """An input of a many-file run: the file, how messages name it, and where its
    outputs go under the output directory."""

    path: Path
    name: str
    subdir: PurePath  # where its outputs go under DIR
    index: int | None = None  # FILE#N as given
    walked: bool = False  # found by a walk: a file that holds no stream is passed over


def walk(top: Path, passed: list[str] | None = None) -> list[Path]:
    """The captures under directory ``top`` as a many-file convert finds them (``validate
    DIR`` reads the same files), outputs of earlier runs included; what the walk passed
    over (a FIFO, a socket, a device) is added to ``passed``."""
    return [source.path for source in sources_under(top, None, passed)]


def sources_under(
    top: Path, out_dir: Path | None, passed: list[str] | None = None
) -> Iterator[InputFile]:
    """Captures under ``top``, sorted, each with its directory relative to ``top``; what
    an earlier run wrote into ``out_dir`` (when given: a file there named like an output)
    is left out, and so is what is no regular file (a FIFO would wait for a writer
    forever), each said in ``passed``."""
    outputs = None if out_dir is None else resolved(out_dir)
    for dirpath, dirnames, filenames in os.walk(top):  # symlinked directories not followed
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath)
        in_outputs = outputs is not None and resolved(here).is_relative_to(outputs)
        for filename in sorted(filenames):
            if not is_capture_name(filename):
                continue
            path = here / filename
            if in_outputs and _looks_like_output(filename):
                # What an earlier run wrote, most likely; said all the same, since a
                # capture of yours may be named so (naming it on the command line takes it)
                if passed is not None:
                    passed.append(
                        f"{path}: named like an output (STEM.FORMAT.CONTAINER) inside the "
                        "output directory: not taken as an input; name it to convert it"
                    )
                continue
            kind = _not_a_file(path) or _not_a_cassette(path) or _not_a_json_capture(path)
            if kind:
                if passed is not None:
                    passed.append(f"{path}: {kind}, not a capture file: skipped")
                continue
            yield InputFile(path, str(path), here.relative_to(top), walked=True)


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


def _not_a_cassette(path: Path) -> str | None:
    """What a YAML file is when it is no VCR cassette nor httpmock file (told by its first
    bytes); None for either, any other file, or what cannot be read (reading it says why)."""
    if not compressed.without_suffix(path.name).endswith(_CASSETTE_ONLY):
        return None
    from chatx.reading import opening

    try:
        with opening.open_source(str(path)) as source:
            kind = source.kind
    except InputError:
        return None
    return None if kind in ("vcr", "httpmock") else "a YAML file that is no VCR cassette"


def _not_a_json_capture(path: Path) -> str | None:
    """What a JSON file is when it is well-formed JSON of no format chatx knows (a
    folder of captures may hold a ``package.json`` or a settings file); None for a
    capture, any other file, or what cannot be read or parsed (reading it says why)."""
    if not compressed.without_suffix(path.name).endswith(".json"):
        return None
    from chatx.reading import opening
    from chatx.reading.framing import records_of

    head: list[Record] = []
    try:
        with opening.open_source(str(path)) as source:
            if source.kind is not None:  # a Llama Stack recording, a HAR named .json
                return None
            for record in records_of(source)[1]:
                if record.error:  # broken JSON is a broken capture: converting says where
                    return None
                head.append(record)
                if len(head) >= codecs.PROBE_RECORDS:
                    break
    except InputError:
        return None
    if not head or codecs.looks_like(head) is not None:
        return None
    return "a JSON file of no stream format chatx knows"


def _looks_like_output(filename: str) -> bool:
    parts = filename.rsplit(".", 2)
    return len(parts) == 3 and parts[1] in codecs.names() and parts[2] in containers.CONTAINERS


def resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))

"""The captures ``chatx serve`` replays, read once at start-up.

A capture is any stream chatx reads (SSE, JSON lines, a JSON array, a non-streaming
object), in any format; its recorded request, when one was written beside it (as
``capture`` and ``proxy`` write ``NAME.request.json``), is what a request is matched
against. A directory is walked as ``convert DIR`` walks one, in name order; recorded
requests and unfinished ``.part`` recordings are not captures.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from chatx import codecs
from chatx.assemble import Assembler, streams_of
from chatx.assemble import load as load_side
from chatx.errors import InputError, UsageError
from chatx.live.recording import request_path
from chatx.outdir import CAPTURE_SUFFIXES, REQUEST_SUFFIX, walk


@dataclass(slots=True, eq=False)
class Capture:
    name: str  # its file name; under a directory given, DIR/path (X-Chatx-Capture takes it)
    path: str
    data: bytes
    format: str
    container: str
    whole: bool  # a non-streaming object, not a stream
    streams: list[Assembler]
    request: dict[str, Any] | None
    model: str | None

    @property
    def stem(self) -> str:
        """The name without its suffix (``chat/text.sse`` -> ``chat/text``)."""
        name = PurePosixPath(self.name)
        return str(name.with_suffix("")) if name.suffix in CAPTURE_SUFFIXES else self.name

    @property
    def lanes(self) -> list[int]:
        """The choices of its first stream, in order (0 alone for most)."""
        stream = self.streams[0]
        return [lane.index for lane in stream.choices] or sorted(stream.lanes) or [0]


def load(paths: list[str], skipped: list[str] | None = None) -> list[Capture]:
    """Every capture under ``paths``, in order. A file named that is no stream is an
    error; one a directory walk found is left out, said in ``skipped``."""
    found: list[Capture] = []
    names: dict[str, str] = {}
    for given in paths:
        walked = Path(given).is_dir()
        for path, name in _files(given):
            if name in names:
                raise UsageError(
                    f"two captures named {name!r}: {names[name]} and {path} "
                    "(pass their directories, or rename one)"
                )
            try:
                capture = _read(path, name)
            except InputError as exc:
                if not walked:
                    raise
                if skipped is not None:
                    skipped.append(f"{exc}: not a capture, skipped")
                continue
            names[name] = str(path)
            found.append(capture)
    if not found:
        raise UsageError(
            f"no captures in {' '.join(paths)} "
            f"(looked for {', '.join('*' + s for s in CAPTURE_SUFFIXES)})"
        )
    return found


def _files(given: str) -> list[tuple[Path, str]]:
    top = Path(given)
    if top.is_dir():
        # Named under the directory's own name: two directories given keep theirs apart.
        label = top.resolve().name or "captures"
        return [(path, f"{label}/{path.relative_to(top).as_posix()}") for path in walk(top)]
    if not top.exists():
        raise UsageError(f"{given}: no such file or directory")
    if top.name.endswith(REQUEST_SUFFIX):
        raise UsageError(f"{given}: a recorded request, not a capture (name the capture beside it)")
    return [(top, top.name)]


def _read(path: Path, name: str) -> Capture:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    label = str(path)
    side = load_side(data, label, keep=True)
    streams = streams_of(side)
    first = next((record for record in side.kept or () if not record.done), None)
    if first is None:
        raise InputError("no events in the capture", file=label, line=1, expected="a stream")
    whole_of = codecs.get(side.format).whole
    whole = bool(whole_of is not None and first.data is not None and whole_of(first.data))
    request = _request(path)
    return Capture(
        name=name,
        path=label,
        data=data,
        format=side.format,
        container=side.container,
        whole=whole,
        streams=streams,
        request=request,
        model=_model(request) or streams[0].model or None,
    )


def _request(path: Path) -> dict[str, Any] | None:
    beside = request_path(path)
    if not beside.is_file():
        return None
    try:
        value = orjson.loads(beside.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", file=str(beside), line=1) from None
    except OSError as exc:
        raise UsageError(f"{beside}: cannot read: {exc.strerror or exc}") from None
    if not isinstance(value, dict):
        raise InputError("a recorded request is a JSON object", file=str(beside), line=1)
    return value


def _model(request: dict[str, Any] | None) -> str | None:
    if request is None:
        return None
    for key in ("model", "model_id"):
        value = request.get(key)
        if isinstance(value, str) and value:
            return value
    return None

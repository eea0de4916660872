"""The captures ``chatx serve`` replays, read once at start-up.

A capture is any stream chatx reads (SSE, JSON lines, a JSON array, a non-streaming
object), in any format, compressed or not, or each stream of a file of recorded
exchanges (a HAR, a VCR cassette: ``NAME#N``); its recorded request, when one was written
beside it (as ``capture`` and ``proxy`` write ``NAME.request.json``) or recorded with it
in the file, is what a request is matched against. A directory is walked as ``convert
DIR`` walks one, in name order; recorded requests and unfinished ``.part`` recordings are
not captures.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chatx import codecs, ir
from chatx.collect.assembler import Assembler, assemble
from chatx.collect.streams import other_items
from chatx.containers.payload import request_json
from chatx.errors import InputError, UsageError
from chatx.live import timing
from chatx.live.recorded_files import request_path
from chatx.live.timing import Timing
from chatx.outdir.walking import CAPTURE_SUFFIXES, REQUEST_SUFFIX, capture_stem, walk
from chatx.reading import decoding, finding, opening
from chatx.reading.framing import Side, open_side
from chatx.reading.framing import load as load_side
from chatx.record import Record

_BLOCK = 1 << 16


@dataclass(slots=True, eq=False)
class Capture:
    name: str  # its file name; under a directory given, DIR/path (X-Chatx-Capture takes it)
    path: str
    # The bytes of a stream of a file of exchanges (its body, decoded when the file was
    # read); None for a bare capture, read again from its file each time it is sent: a
    # 1 MB .sse.gz of 1 GiB is not held (it took 2.1 GiB at start-up).
    held: bytes | None
    format: str
    container: str
    whole: bool  # a non-streaming object, not a stream
    streams: list[Assembler]
    request: dict[str, Any] | None
    model: str | None
    # When its head and each read of it arrived (NAME.timing beside it: serve --timing
    # recorded).
    timing: Timing | None = None
    # A file of several streams one after another (a multi-step run's turns, as some
    # test suites keep them): the line its second stream begins on. Only the first is
    # answered, streamed as whole (collect's first stream), as one provider answer is.
    second_stream: int | None = None

    @property
    def stem(self) -> str:
        """The name without its suffixes (``chat/text.sse.gz`` -> ``chat/text``); a
        stream of a file of exchanges (``calls.har#2``) is named whole."""
        return capture_stem(self.name)

    def chunks(self) -> Iterator[bytes]:
        """The capture's bytes, decompressed, in pieces of at most 64 KiB."""
        if self.held is not None:
            held = self.held
            for at in range(0, len(held), _BLOCK):
                yield held[at : at + _BLOCK]
            return
        with opening.open_source(self.path) as source:
            read = getattr(source.stream, "read1", source.stream.read)
            while chunk := read(_BLOCK):
                yield chunk

    @property
    def data(self) -> bytes:
        """The capture's bytes, whole (a non-streaming object's): send a stream from
        :meth:`chunks`."""
        return self.held if self.held is not None else b"".join(self.chunks())

    @property
    def lanes(self) -> list[int]:
        """The choices of its first stream, in order (0 alone for most)."""
        stream = self.streams[0]
        return [lane.index for lane in stream.choices] or sorted(stream.lanes) or [0]


def load(
    paths: list[str], skipped: list[str] | None = None, *, none_is_fine: bool = False
) -> list[Capture]:
    """Every capture under ``paths``, in order: each stream of a file of recorded
    exchanges (a HAR, a cassette: ``NAME#N``, its recorded request beside it) is one. A
    file named that is no stream is an error; one a directory walk found is left out,
    said in ``skipped``. ``none_is_fine``: no capture at all is no error (serve records
    the first ones from its upstream)."""
    found: list[Capture] = []
    names: dict[str, str] = {}
    for given in paths:
        walked = Path(given).is_dir()
        for path, name in _files(given, skipped):
            try:
                read = _read(path, name, skipped)
            except InputError as exc:
                if not walked:
                    raise
                if skipped is not None:
                    skipped.append(f"{exc}: not a capture, skipped")
                continue
            for capture in read:
                if capture.name in names:
                    raise UsageError(
                        f"two captures named {capture.name!r}: {names[capture.name]} and "
                        f"{capture.path} (pass their directories, or rename one)"
                    )
                names[capture.name] = capture.path
                found.append(capture)
    if not found and not none_is_fine:
        raise UsageError(
            f"no captures in {' '.join(paths)} "
            f"(looked for {', '.join('*' + s for s in CAPTURE_SUFFIXES)})"
        )
    return found


def recorded(path: Path, folder: Path) -> list[Capture]:
    """The captures of a file just recorded into ``folder``, named as a walk of
    ``folder`` names them."""
    label = folder.resolve().name or "captures"
    return _read(path, f"{label}/{path.relative_to(folder).as_posix()}", None)


def _files(given: str, skipped: list[str] | None) -> list[tuple[Path, str]]:
    top = Path(given)
    if top.is_dir():
        # Named under the directory's own name: two directories given keep theirs apart.
        label = top.resolve().name or "captures"
        found = walk(top, skipped)
        return [(path, f"{label}/{path.relative_to(top).as_posix()}") for path in found]
    if not top.exists():
        raise UsageError(f"{given}: no such file or directory")
    if top.name.endswith(REQUEST_SUFFIX):
        raise UsageError(f"{given}: a recorded request, not a capture (name the capture beside it)")
    return [(top, top.name)]


def _read(path: Path, name: str, skipped: list[str] | None) -> list[Capture]:
    """The captures of one file: a bare stream (read decompressed), or each stream of a
    file of recorded exchanges with the request recorded with it."""
    label = str(path)
    with opening.open_source(label) as source:
        if source.kind is None:
            source.close()
            try:
                side = open_side(label)
            except OSError as exc:
                raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
            made = _capture(side, None, name, _request(path))
            made.timing = timing.read(path)
            return [made]
        read, total = [], 0
        for stream in finding.streams(source):
            total += 1
            if stream.readable:  # a stream, or a non-streaming object chatx reads
                address = f"{name}#{stream.index}"
                body = stream.body  # held whole: a served capture is answered from memory
                side = load_side(body, stream.address)
                read.append(_capture(side, body, address, stream.request))
            elif stream.kind == "unreadable" and skipped is not None:
                skipped.append(f"{stream.address}: its body cannot be decoded ({stream.note})")
    if not read:
        raise finding.none_streaming(label, total, [])
    return read


def _capture(side: Side, held: bytes | None, name: str, request: dict[str, Any] | None) -> Capture:
    """A capture read once, as it comes: assembled (what ``stream: false`` sends is built
    from it), its first record looked at; no record kept."""
    label = side.name
    first: list[Record] = []
    last: list[Record] = []  # the record being decoded (one at a time)
    starts: list[int] = []  # the line of each record that began a stream

    def looked_at(records: Iterator[Record]) -> Iterator[Record]:
        for record in records:
            if not first and not record.done:
                first.append(record)
            last[:] = [record]
            yield record

    def marked(batches: Iterator[list[ir.Event]]) -> Iterator[list[ir.Event]]:
        for batch in batches:
            if last and any(type(event) is ir.StreamStart for event in batch):
                starts.append(last[0].line)
            yield batch

    batches = decoding.decode(looked_at(side.records()), side.format, side.notes)
    streams = assemble(marked(batches), other_items)
    if not first:
        raise InputError("no events in the capture", file=label, line=1, expected="a stream")
    whole_of = codecs.get(side.format).whole
    data = first[0].data
    whole = bool(whole_of is not None and data is not None and whole_of(data))
    return Capture(
        name=name,
        path=label,
        held=held,
        format=side.format,
        container=side.container,
        whole=whole,
        streams=streams,
        request=request,
        model=_model(request) or streams[0].model or None,
        second_stream=starts[1] if len(streams) > 1 and len(starts) > 1 else None,
    )


def _request(path: Path) -> dict[str, Any] | None:
    beside = request_path(path)
    if not beside.is_file():
        return None
    try:
        value = request_json(beside.read_bytes())  # nested past MAX_DEPTH: refused too
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

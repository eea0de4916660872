"""What the container tests share: the fixtures, the samples of ``../shared``, and the
bare stream a file of exchanges stands for, as an independent reader finds it."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.inprocess import Result, run

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "containers"
STREAMS = ROOT / "fixtures"
SAMPLES = ROOT.parent / "shared" / "samples" / "containers"

skip_without_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason=f"no container samples: {SAMPLES} is absent"
)


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def chatx(*args: str, stdin: bytes = b"") -> Result:
    return run(list(args), stdin)


def write(folder: Path, name: str, data: bytes | dict[str, Any]) -> str:
    path = folder / name
    path.write_bytes(json.dumps(data).encode() if isinstance(data, dict) else data)
    return str(path)


def same_meaning(address: str, bare: str, request: str | None = None) -> None:
    """``address`` and the bare stream ``bare`` collect to the same object and convert to
    the same bytes in every direction (the recorded request given as ``--request``)."""
    one, other = chatx("collect", "-q", address), chatx("collect", "-q", bare)
    assert (one.code, other.code) == (0, 0), (one.err, other.err)
    assert one.stdout == other.stdout
    for target in ("chat-chunk", "responses-event", "llama-stack-event"):
        extra = ["--choice", "0"] if target != "chat-chunk" else []
        given = ["--request", request] if request else []
        one = chatx("convert", address, "--to", target, "-q", *extra)
        other = chatx("convert", bare, "--to", target, "-q", *extra, *given)
        assert one.code == other.code, (target, one.err, other.err)
        assert one.stdout == other.stdout, target


def runs(path: str) -> Iterator[list[str]]:
    """The commands to compare: ls, validate, and per stream ls lists, convert into
    each format, collect and show."""
    yield ["ls", path]
    yield ["validate", path]
    listed = chatx("ls", path).stdout.decode().splitlines()
    for line in listed:
        address, format_ = line.split()[:2]
        yield ["ls", address]
        if format_ == "-":
            yield ["convert", address, "--to", "chat-chunk"]
            continue
        for target in ("chat-chunk", "responses-event", "anthropic-event"):
            yield ["convert", address, "--to", target]
        yield ["collect", address]
        yield ["show", address]
    yield ["convert", path, "--to", "responses-event"]


def commands_alike(
    paths: list[str], monkeypatch: Any, module: Any, **sizes: int
) -> list[list[str]]:
    """Every command of :func:`runs` on each of ``paths``, as they read now and then with
    ``module``'s ``sizes`` set (a reader's thresholds made small, so that it walks):
    the same exit code, output and messages. The commands compared."""
    cases = [args for path in paths for args in runs(path)]
    before = [chatx(*args) for args in cases]
    for name, value in sizes.items():
        monkeypatch.setattr(module, name, value)
    for args, was in zip(cases, before, strict=True):
        now = chatx(*args)
        assert (now.code, now.stdout, now.err) == (was.code, was.stdout, was.err), args
    return cases


class Slow(io.BytesIO):
    """A file whose reads give at most ``block`` bytes (all asked for, when None)."""

    def __init__(self, data: bytes, block: int | None) -> None:
        super().__init__(data)
        self.block = block

    def read(self, size: int | None = -1) -> bytes:
        size = -1 if size is None else size
        return super().read(size if self.block is None or size < 0 else min(size, self.block))

    read1 = read


def outcome(entry: Any) -> tuple[Any, ...]:
    """What an exchange reads as: its fields and its body's bytes (or why it has none)."""
    from chatx.containers.bodies import BodyError

    try:
        body: Any = b"".join(entry.pieces())
    except BodyError as exc:
        body = ("BodyError", str(exc))
    return (entry.index, entry.line, entry.method, entry.url, entry.status,
            entry.content_type, entry.request, entry.refused, body)  # fmt: skip


def arrays_walked(monkeypatch: Any, run: int = 32) -> list[Any]:
    """Every JSON document walked, its arrays at their paths too (a value shorter than
    KEEP is read with the rest; ``run``: the most bytes of elements parsed at once):
    the sinks of the arrays walked from here on, in order."""
    from chatx.containers import json_document, json_walk

    monkeypatch.setattr(json_walk, "BIG", 0)
    monkeypatch.setattr(json_document, "KEEP", 0)
    monkeypatch.setattr(json_walk, "_RUN_BYTES", run)
    walks: list[Any] = []
    real = json_walk.Walk._array

    def counted(self: json_walk.Walk, sink: Any) -> None:
        walks.append(sink)
        real(self, sink)

    monkeypatch.setattr(json_walk.Walk, "_array", counted)
    return walks


def walked_as_whole(
    monkeypatch: Any, cases: list[tuple[str, bytes]], read: Any, size: int | None, run: int
) -> tuple[list[Any], list[Any]]:
    """Each of ``cases`` (name, bytes) read by ``read(data, size)`` with every array
    walked (:func:`arrays_walked`) gives what ``read(data)`` gives read whole: what the
    whole reads gave, and the sinks of the arrays walked."""
    whole = [read(data) for _, data in cases]
    walks = arrays_walked(monkeypatch, run)
    for (name, data), was in zip(cases, whole, strict=True):
        assert read(data, size) == was, name
    return whole, walks


def read_walked(
    entries: Any,
    data: bytes,
    big: int | None = None,
    piece: int | None = None,
    keep: int | None = None,
    block: int | None = None,
) -> Any:
    """The outcomes of ``entries`` (a reader) of ``data`` read ``block`` bytes at a time
    (None: all asked for), or the error, with the JSON walk's thresholds given (None: as
    they are)."""
    from chatx.containers import json_document, json_walk
    from chatx.errors import InputError

    with pytest.MonkeyPatch.context() as patch:
        for module, name, value in ((json_walk, "BIG", big), (json_walk, "PIECE", piece),
                                    (json_document, "KEEP", keep)):  # fmt: skip
            if value is not None:
                patch.setattr(module, name, value)
        try:
            return [outcome(entry) for entry in entries(Slow(data, block))]
        except InputError as exc:
            return ("InputError", exc.message, exc.line)

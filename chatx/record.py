"""The packet that crosses between containers and codecs.

A container reader frames bytes into records; a codec decoder gives them meaning.
Neither side knows the other: this module is all they share.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload


# A plain record of fields: the dataclass writes __init__ (positional in this order, as
# readers build it) and __eq__; __repr__ is its own, shorter.
@dataclass(slots=True)
class Record:
    """One framed payload from a stream.

    ``data`` is the parsed JSON value (any JSON type, ``None`` for ``[DONE]`` or when
    ``error`` is set), ``event`` the SSE event name if the block had one, ``line`` the
    1-based line where the record starts, ``done`` is true for the ``[DONE]`` sentinel,
    and ``error`` says why the payload could not be parsed (lenient readers yield such
    records instead of raising, so the caller decides whether to skip or stop).

    ``raw`` is set instead of all that when the reader was asked to leave the parsing
    to the decoder (a codec with a ``run_hook``): the payload's bytes, unparsed.
    :func:`chatx.containers.payload.parse` makes the parsed record of them. A decoder
    that parses them leaves the value in ``data`` as well, for a reader that looks at
    the record after the decoder did (``chatx show`` names each record).
    """

    data: Any = None
    event: str | None = None
    line: int = 0
    done: bool = False
    error: str | None = None
    raw: bytes | None = None

    def __repr__(self) -> str:
        if self.done:
            return f"Record(DONE, line={self.line})"
        if self.error:
            return f"Record(error={self.error!r}, line={self.line})"
        if self.raw is not None:
            return f"Record(raw={bytes(self.raw)!r}, event={self.event!r}, line={self.line})"
        return f"Record({self.data!r}, event={self.event!r}, line={self.line})"


class _Done:
    """The ``[DONE]`` sentinel as an encoder output; writers decide how to frame it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DONE"


DONE = _Done()


class Dumped:
    """Payloads an encoder wrote as their JSON bytes already, one record each (a run's,
    from a :class:`~chatx.codecs.byte_template.PayloadTemplate`), all of the one type
    ``name`` (what SSE names their events, when the format names them): the writers
    frame them as they are, where a dict would be dumped each time. Never empty.

    Not a JSON value: ``orjson.dumps`` refuses one, so a writer that does not know it
    fails loudly instead of writing something else."""

    __slots__ = ("name", "payloads")

    def __init__(self, name: str | None, payloads: list[bytes]) -> None:
        self.name = name
        self.payloads = payloads

    def __repr__(self) -> str:
        return f"Dumped({self.name!r}, {len(self.payloads)} payloads)"


class RawRegion(Sequence["Record"]):
    """Raw records a reader found framed alike, none of them named: each is one line,
    ``prefix`` and a payload (an SSE block of one ``data:`` line and a blank one is
    ``data: `` and the payload), record ``k`` at input line ``first + step * k``.
    ``lines`` holds those lines. A sequence of :class:`Record`, each made only when
    asked for: a run a template knows in these lines
    (:meth:`~chatx.codecs.block_reader.BlockReader.region`) makes none, and cuts out no
    payload.

    A reader gives one where it can tell at once that every record of a read is such a
    one (:class:`~chatx.containers.sse.SSEReader`); its records are the ones it would
    have made one by one."""

    __slots__ = ("first", "last", "lines", "prefix", "step")

    def __init__(self, lines: list[bytes], first: int, step: int, prefix: bytes) -> None:
        self.lines = lines
        self.first = first
        self.step = step
        self.prefix = prefix
        self.last: Record | None = None  # the record asked for last, given again when asked

    def __len__(self) -> int:
        return len(self.lines)

    def line(self, index: int) -> int:
        """The input line of record ``index``."""
        return self.first + self.step * index

    def payloads(self, start: int, stop: int) -> list[bytes]:
        """The payloads of records ``start`` to ``stop`` (not included)."""
        lines = self.lines[start:stop]
        cut = len(self.prefix)
        return [line[cut:] for line in lines] if cut else lines

    def records(self, start: int, stop: int) -> list[Record]:
        """The records ``start`` to ``stop`` (not included)."""
        lines = range(self.line(start), self.line(stop), self.step)
        return list(map(_raw, lines, self.payloads(start, stop)))

    @overload
    def __getitem__(self, index: int) -> Record: ...

    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...

    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        if type(index) is slice:
            return self.records(*index.indices(len(self.lines))[:2])
        assert type(index) is int
        if index < 0:
            index += len(self.lines)
            if index < 0:
                raise IndexError("record index out of range")
        line = self.first + self.step * index
        last = self.last
        if last is not None and last.line == line:
            return last
        raw = self.lines[index][len(self.prefix) :]  # (an index out of range raises here)
        self.last = last = Record(None, None, line, False, None, raw)
        return last

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records(0, len(self.lines)))

    def __repr__(self) -> str:
        return f"RawRegion({len(self.lines)} records from line {self.first})"


def _raw(line: int, payload: bytes) -> Record:
    return Record(None, None, line, False, None, payload)

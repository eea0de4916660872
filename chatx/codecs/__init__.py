"""The codec registry: one flat sequence, one line per format (as FFmpeg's allformats.c)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from importlib import import_module
from typing import Any, overload

from chatx.codecs.base import Codec, EncodeOptions
from chatx.errors import InputError, UsageError
from chatx.record import Record


class Registry(Sequence[Codec]):
    """The formats in registry order, each package (its descriptor, ``CODEC``) imported
    when a question first reaches it: a chat stream is known by chat's probe at its
    first record and ``--to responses-event`` found at the second line, so a ``convert``
    of one into the other loads neither the Llama Stack, the Anthropic nor the Gemini
    package. What goes through every format (``names()``, a tie of probe scores,
    ``formats``) loads them all; the answers are those of a tuple of the same codecs."""

    __slots__ = ("_packages", "_codecs")

    def __init__(self, *packages: str) -> None:
        self._packages = packages
        self._codecs: list[Codec] = []

    def __len__(self) -> int:
        return len(self._packages)

    @overload
    def __getitem__(self, index: int) -> Codec: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Codec, ...]: ...
    def __getitem__(self, index: int | slice) -> Codec | tuple[Codec, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += len(self._packages)
        if not 0 <= index < len(self._packages):
            raise IndexError("registry index out of range")
        loaded = self._codecs
        while len(loaded) <= index:
            self._load()
        return loaded[index]

    def __iter__(self) -> Iterator[Codec]:
        loaded = self._codecs
        if len(loaded) == len(self._packages):  # as fast as a tuple's (get() per event)
            return iter(loaded)
        return self._loading()

    def _loading(self) -> Iterator[Codec]:
        loaded, index = self._codecs, 0
        while index < len(self._packages):
            if index == len(loaded):
                self._load()
            yield loaded[index]
            index += 1

    def _load(self) -> None:
        """Import the next package's descriptor."""
        package = self._packages[len(self._codecs)]
        self._codecs.append(import_module(f"chatx.codecs.{package}").CODEC)


CODECS: Sequence[Codec] = Registry(
    "chat_chunk",
    "responses_event",
    "llama_stack_event",
    "anthropic_event",
    "gemini_event",
)

__all__ = [
    "CODECS",
    "PROBE_RECORDS",
    "Codec",
    "EncodeOptions",
    "detect",
    "get",
    "listed",
    "names",
    "sniff",
    "whole_object",
]

# `chatx rules` has listed the Responses rules first since validate checked Responses
# alone; the other formats follow in registry order.
_LISTED_FIRST = ("responses-event",)

# Records the format is told from when none of them names it for certain. The decision
# depends on these records only, never on how many of them one read returned.
PROBE_RECORDS = 4


def names() -> list[str]:
    """The formats chatx reads and writes."""
    return [codec.name for codec in CODECS]


def listed() -> tuple[Codec, ...]:
    """The codecs in the order ``chatx rules`` and ``validate`` list them."""
    first = tuple(get(name) for name in _LISTED_FIRST)
    return (*first, *(codec for codec in CODECS if codec not in first))


def whole_object(data: Any) -> tuple[str, str] | None:
    """What a payload is when it is a format's non-streaming object (``"a chat.completion
    object"``), and the name of that format; None for anything else."""
    for codec in CODECS:
        what = codec.whole(data) if codec.whole is not None else None
        if what is not None:
            return what, codec.name
    return None


def get(name: str) -> Codec:
    """The codec called ``name`` (or one of its aliases)."""
    if not isinstance(name, str):
        raise TypeError(f"a format is named by a string, not {type(name).__name__}")
    for codec in CODECS:
        if name == codec.name or name in codec.aliases:
            return codec
    raise UsageError(f"unknown format {name!r} (known: {', '.join(names())})")


def sniff(records: Sequence[Record], *, final: bool = True) -> Codec | None:
    """The format of a stream that begins with ``records``: every caller decides it here.

    The first record one codec recognises for certain (a ``chat.completion.chunk``, a
    ``response.*`` event, a Llama Stack ``event``) decides at once; else the best score
    over the first :data:`PROBE_RECORDS` records. Only those records count, so a stream
    gets the same format whether it is read whole, through a slow pipe or byte by byte.
    ``final=False``: ``None`` while fewer records than that have come and none is
    certain (the caller waits for more); ``final=True``: the input has no more records.
    Raises an InputError when no codec knows the records.
    """
    window = records[:PROBE_RECORDS]
    for record in window:
        codec = certain(record)
        if codec is not None:
            return codec
    if not final and len(window) < PROBE_RECORDS:
        return None
    return detect(window)


def sniff_iter(records: Iterator[Record]) -> tuple[Codec, list[Record]]:
    """:func:`sniff` over an iterator: the codec and the records read to decide it (read
    no further than needed, so a live input is not held back)."""
    head: list[Record] = []
    for record in records:
        head.append(record)
        codec = sniff(head, final=False)
        if codec is not None:
            return codec, head
    return sniff(head), head  # type: ignore[return-value]  # final: a codec or raises


def certain(record: Record) -> Codec | None:
    """The codec that recognises this one record for certain, if one does."""
    if record.error or record.done:
        return None
    one = [record]
    for codec in CODECS:
        if codec.probe(one) >= 100:
            return codec
    return None


def looks_like(records: Sequence[Record]) -> Codec | None:
    """What :func:`sniff` makes of ``records`` as a whole input, or None (no verdict)."""
    try:
        return sniff(records)
    except InputError:
        return None


def detect(records: Sequence[Record]) -> Codec:
    """The codec whose probe scores ``records`` highest (ties go to the first registered).

    A ``[DONE]`` counts only in a stream of nothing else: beside events no codec knows
    (the Assistants API's ``thread.run.*``, which ends with one) it tells nothing.
    Callers use :func:`sniff`, which picks the records this sees."""
    usable = [r for r in records if not r.error]
    said = [r for r in usable if not r.done] or usable
    best, score = None, 0
    for codec in CODECS:
        value = codec.probe(said)
        if value > score:
            best, score = codec, value
    if best is None:
        line = usable[0].line if usable else (records[0].line if records else None)
        raise InputError(
            "cannot tell the stream's format from its first records",
            line=line,
            expected=f"one of {', '.join(names())} (or pass --from)",
        )
    return best


def unknown(records: Sequence[Record]) -> str | None:
    """What a stream no codec knows says it is, from its first records: their SSE event
    names, else their ``type``, ``event_type`` or ``object`` (``event thread.run.created,
    thread.run.queued …``), else the first one's keys; None when no record is an object."""
    said: list[str] = []
    for record in records:
        data = record.data if isinstance(record.data, dict) else {}
        name = record.event or next(
            (data[k] for k in ("type", "event_type", "object") if isinstance(data.get(k), str)),
            None,
        )
        if isinstance(name, str) and name and name not in said:
            said.append(name)
    if not said:
        # Records that name themselves nowhere (Ollama's, Gemini's): their first keys.
        first = next((r.data for r in records if isinstance(r.data, dict) and r.data), None)
        if first is None:
            return None
        keys = list(first)
        return f"keys {', '.join(keys[:4])}{' …' if len(keys) > 4 else ''}"
    what = "event" if any(record.event for record in records) else "type"
    more = " …" if len(said) > 3 or len(records) >= PROBE_RECORDS else ""
    return f"{what} {', '.join(said[:3])}{more}"

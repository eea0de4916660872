"""The codec registry: one flat tuple, one line per format (as FFmpeg's allformats.c)."""

from __future__ import annotations

from chatx.codecs.base import Codec, EncodeOptions
from chatx.codecs.chat_chunk import CODEC as CHAT_CHUNK
from chatx.codecs.responses_event import CODEC as RESPONSES_EVENT
from chatx.errors import InputError, UsageError
from chatx.record import Record

CODECS: tuple[Codec, ...] = (
    CHAT_CHUNK,
    RESPONSES_EVENT,
)

try:  # registered once its module lands
    from chatx.codecs.llama_stack_event import CODEC as LLAMA_STACK_EVENT

    CODECS += (LLAMA_STACK_EVENT,)
except ImportError:  # pragma: no cover
    pass

__all__ = ["CODECS", "Codec", "EncodeOptions", "detect", "get", "names"]


def names() -> list[str]:
    """The formats chatx reads and writes."""
    return [codec.name for codec in CODECS]


def get(name: str) -> Codec:
    """The codec called ``name`` (or one of its aliases)."""
    for codec in CODECS:
        if name == codec.name or name in codec.aliases:
            return codec
    raise UsageError(f"unknown format {name!r} (known: {', '.join(names())})")


def detect(records: list[Record]) -> Codec:
    """The codec whose probe scores the first records highest."""
    usable = [r for r in records if not r.error]
    best, score = None, 0
    for codec in CODECS:
        value = codec.probe(usable)
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

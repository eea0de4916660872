"""``collect``: the final object a client builds from a stream, in a format's own shape
(a ``chat.completion``, a Responses ``response``, a Llama Stack completion response).

Each format builds its own (``Codec.final``, in ``chatx/codecs/<format>/final.py``) from
an :class:`~chatx.collect.assembler.Assembler`; this module picks the format and hands it the
stream, the source format (whose residue the same format merges back), the --choice and
the notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatx import codecs
from chatx.collect.assembler import Assembler
from chatx.collect.notes import encoder_notes
from chatx.errors import UsageError
from chatx.notes import Notes

if TYPE_CHECKING:
    from chatx.reading.framing import Side

# --as names → the format whose final object is built (formats without a final object
# have none).
TARGETS = {codec.collect_as: codec.name for codec in codecs.CODECS if codec.final is not None}
# The stream formats whose final object each --as target is.
DEFAULT_TARGET = {name: target for target, name in TARGETS.items()}


def collect(
    stream: Assembler,
    target: str,
    *,
    source: str | None = None,
    choice: int | None = None,
    notes: Notes | None = None,
    request: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the ``target`` object (an ``--as`` name: ``chat``, ``responses``…);
    ``request``, the request that produced the stream, fills what the object echoes of
    it (a Responses envelope), as ``convert``'s ``--request`` and recorded request do."""
    if request is not None:
        stream.request = request
    notes = notes if notes is not None else Notes()
    notes.line = None  # what collect says is about the whole stream, not its last line
    name = TARGETS.get(target)
    final = codecs.get(name).final if name is not None else None
    if final is None:
        raise UsageError(f"unknown --as {target!r} (known: {', '.join(TARGETS)})")
    return final(stream, source, choice, notes)


def target_for(fmt: str | None, source: str) -> str:
    """The ``--as`` target of ``collect --as FORMAT`` (a codec name), or without it of
    the stream's own format (the first registered format's when that has none)."""
    if fmt is None:
        return DEFAULT_TARGET.get(source, next(iter(TARGETS)))
    if fmt not in DEFAULT_TARGET:
        raise UsageError(
            f"--as: {fmt} has no final object (formats that have: {', '.join(DEFAULT_TARGET)})"
        )
    return DEFAULT_TARGET[fmt]


def collect_side(
    side: Side, fmt: str | None = None, choice: int | None = None
) -> list[dict[str, Any]]:
    """``chatx collect [--as fmt] [--choice N]`` of one input: one object per stream it
    holds. What another format's object leaves out is said as ``convert --to fmt`` says
    it (:mod:`chatx.collect.notes`); a same-format object's builder says its own."""
    from chatx.collect.assembler import assemble
    from chatx.collect.streams import other_items
    from chatx.reading.decoding import decode, decode_groups

    target = target_for(fmt, side.format)
    side.decode_only(raw=True)
    tap = encoder_notes(TARGETS[target], side.format, choice, side.notes, side.name, side.request)
    if tap is None:
        # a run of records the decoder knows by their bytes reaches the Assembler whole
        streams = assemble(decode_groups(side.groups(), side.format, side.notes), other_items)
    else:
        # the encoder's notes are said at each record's line: one batch a record
        streams = assemble(tap.tap(decode(side.records(), side.format, side.notes)), other_items)
    # The encoder said what the objects leave out: their builders' notes would say it twice.
    notes = side.notes if tap is None else Notes()
    return [
        collect(s, target, source=side.format, choice=choice, notes=notes, request=side.request)
        for s in streams
    ]

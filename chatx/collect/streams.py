"""Read an input to what a client reconstructs from it: decoded, then assembled.

:mod:`chatx.collect.assembler` holds the :class:`Assembler` itself, which knows no format (the
codecs' final-object builders read it). Here it is fed a decoder's batches, with each
format's word on which of its passthrough payloads are output items
(``Codec.other_item``). ``show``, ``collect`` and ``diff`` read their inputs so.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatx import codecs, ir
from chatx.collect.assembler import Assembler, assemble
from chatx.collect.items import OtherItem
from chatx.reading import decoding
from chatx.reading.framing import Side
from chatx.record import Record


def other_items(event: ir.Passthrough) -> OtherItem | None:
    """The output item a passthrough event adds or finishes, as its format says."""
    hook = codecs.get(event.format).other_item
    return hook(event.data) if hook is not None else None


def streams_of(side: Side, records: Iterable[Record] | None = None) -> list[Assembler]:
    """Decode and assemble the rest of one input (one Assembler per stream it holds);
    ``records`` is ``side.records()`` or a pass over it that looks at each record."""
    if records is None:  # nothing looks at the records: runs reach the Assembler whole
        side.decode_only(raw=True)
        return assemble(decoding.decode_groups(side.groups(), side.format, side.notes), other_items)
    batches = decoding.decode(records, side.format, side.notes)
    return assemble(batches, other_items)

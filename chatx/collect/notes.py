"""What ``collect --as X`` says it leaves out of another format's stream: what
``convert --to X`` says, word for word.

The rule of ``collect`` is that ``collect --as X`` of a stream is ``collect`` of
``convert --to X`` of it; so what it leaves out is what X's encoder leaves out, and it
says so in the encoder's words. Rather than a second account of every field each
encoder has no place for (kept in step with four encoders by hand, and wrong wherever
they drift apart), the IR batches ``collect`` assembles also go through X's encoder, its
output thrown away and its notes kept: the field paths and record counts are convert's
own. The final-object builder's notes are then not said (they would count the same
fields twice); a same-format collect, which has no encoder to ask, says its builder's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import suppress
from typing import Any

from chatx import codecs, ir
from chatx.choice import Lanes
from chatx.codecs.base import Codec, EncodeOptions, Encoder
from chatx.drive import Drive
from chatx.errors import ChatxError
from chatx.notes import Notes

__all__ = ["EncoderNotes"]


class EncoderNotes:
    """Hands each IR batch to ``target``'s encoder as ``convert`` would (the lanes
    ``--choice`` keeps, said as lane 0), for the notes it writes in ``notes``."""

    __slots__ = ("encoder", "lanes", "stopped")

    def __init__(
        self,
        target: Codec,
        source: str,
        choice: int | None,
        notes: Notes,
        name: str,
        request: dict[str, Any] | None = None,
    ) -> None:
        options = EncodeOptions(source_format=source, request=request)
        self.encoder: Encoder = target.encoder(notes, options)
        # Lanes reports a missing choice on a Drive of its own: the final object's
        # builder says that (a UsageError) in its own words.
        self.lanes = Lanes(choice, target, name, Drive(Notes()))
        self.stopped = False

    def tap(self, batches: Iterable[list[ir.Event]]) -> Iterator[list[ir.Event]]:
        """``batches`` as they come, each seen by the encoder first; at their end the
        encoder's finish (what it says of a stream left open)."""
        for batch in batches:
            self._feed(batch)
            yield batch
        if not self.stopped:
            # What the encoder cannot write, the final object's builder says it cannot build.
            with suppress(ChatxError):
                self.encoder.finish()

    def _feed(self, batch: list[ir.Event]) -> None:
        if self.stopped:
            return
        try:
            self.encoder.feed(self.lanes.select(batch))
        except ChatxError:
            # Several choices for a one-choice target without --choice (a UsageError):
            # the final object's builder refuses it in its own words.
            self.stopped = True


def encoder_notes(
    target_format: str,
    source: str,
    choice: int | None,
    notes: Notes,
    name: str,
    request: dict[str, Any] | None = None,
) -> EncoderNotes | None:
    """The tap for ``collect --as target_format`` of a ``source`` stream (``request``:
    the one recorded with it), or None for a same-format collect."""
    if target_format == source:
        return None
    return EncoderNotes(codecs.get(target_format), source, choice, notes, name, request)

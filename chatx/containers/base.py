"""The container contract: what a reader and a writer are, whatever the framing.

A *reader* is fed bytes as they arrive and returns the records they complete
(``finish()`` returns the rest at end of input); a *writer* is given payloads (JSON
values, or :data:`~chatx.record.DONE`) and returns their bytes, ``finish()`` the bytes
that close the output. Neither knows what a payload means.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from chatx.record import RawRegion, Record


class Reader(Protocol):
    """Feed bytes, get records."""

    def feed(self, chunk: bytes) -> list[Record] | RawRegion:
        """Read the next bytes; return the records they complete (possibly none). A raw
        reader (:class:`RawReader`) may give a read's records as one
        :class:`~chatx.record.RawRegion` when each is one plain line."""

    def finish(self) -> list[Record]:
        """End of input: return the records still pending."""


@runtime_checkable
class RawReader(Reader, Protocol):
    """A reader that can leave payloads unparsed (``Record.raw``) for a codec that
    finds runs (``Codec.run_hook``): all of them (``raw``), or those longer than
    ``raw_over`` bytes."""

    raw: bool
    raw_over: int


class Writer(Protocol):
    """Give payloads, get bytes."""

    def write(self, payloads: list[Any]) -> bytes:
        """The bytes of ``payloads``, framed."""

    def frames(self, payloads: list[Any]) -> list[bytes]:
        """:meth:`write`, in pieces to write one after the other."""

    def finish(self) -> bytes:
        """End of output: the bytes that close it (possibly none)."""

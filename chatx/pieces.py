"""Text that arrives in many small pieces (a delta each) and is needed whole at the end.

A list of one small str per delta costs about 60 bytes a piece over the text itself; a
1M-delta stream would hold 60 MB of overhead. Folding every 1024 pieces keeps memory at
the size of the text, and the two levels keep the joining linear.
"""

from __future__ import annotations

_FOLD = 1024


class Pieces:
    """Append pieces, read the whole text with :meth:`text` (joined once, then kept)."""

    __slots__ = ("_folded", "_loose")

    def __init__(self) -> None:
        self._folded: list[str] = []
        self._loose: list[str] = []

    @classmethod
    def of(cls, text: str) -> Pieces:
        """Pieces holding ``text`` already."""
        pieces = cls()
        pieces.append(text)
        return pieces

    def append(self, piece: str) -> None:
        loose = self._loose
        loose.append(piece)
        if len(loose) >= _FOLD:
            self._folded.append("".join(loose))
            loose.clear()

    def extend(self, pieces: list[str]) -> None:
        """Append each of ``pieces``."""
        loose = self._loose
        loose.extend(pieces)
        if len(loose) >= _FOLD:
            self._folded.append("".join(loose))
            loose.clear()

    def size(self) -> int:
        """The length of the text, without joining it."""
        return sum(map(len, self._folded)) + sum(map(len, self._loose))

    def text(self) -> str:
        """The text so far; joining it replaces the pieces, so a second call is free."""
        folded = self._folded
        if self._loose:
            folded.append("".join(self._loose))
            self._loose.clear()
        if len(folded) > 1:
            folded[:] = ["".join(folded)]
        return folded[0] if folded else ""

    def equals(self, text: str) -> bool:
        """Whether the pieces join to ``text``, without joining them (no second copy of a
        long text just to compare it)."""
        position = 0
        for group in (self._folded, self._loose):
            for piece in group:
                if not text.startswith(piece, position):
                    return False
                position += len(piece)
        return position == len(text)

    def __bool__(self) -> bool:
        return bool(self._folded or self._loose)

"""Text that arrives in many small pieces (a delta each) and is needed whole at the end.

A list of one small str per delta costs about 60 bytes a piece over the text itself; a
1M-delta stream would hold 60 MB of overhead. Every 1024 pieces are folded into one piece
of UTF-8 bytes, which keeps memory at the size of the text's bytes: a str holds four bytes
a character as soon as one character is an emoji, its UTF-8 about one. The folds keep the
joining linear.
"""

from __future__ import annotations

import codecs
import weakref

_FOLD = 1024
# Texts this long (in UTF-8) are shared: a second Pieces that joins to the same text gets
# the str the first one made, not a copy. A Responses stream's text is held by its
# decoder and its encoder, and by both sides of a diff.
_SHARED = 1 << 16
_joined: dict[tuple[int, int], weakref.ref[Pieces]] = {}


def _utf8(text: str) -> bytes:
    # surrogatepass: any str comes back as it went in, even one no JSON parser would give.
    return text.encode("utf-8", "surrogatepass")


class Pieces:
    """Append pieces, read the whole text with :meth:`text` (joined once, then kept)."""

    __slots__ = ("__weakref__", "_folded", "_head", "_loose", "_size")

    def __init__(self) -> None:
        # The text :meth:`text` joined last (None: nothing appended yet); the rest follows.
        self._head: str | None = None
        self._folded: list[bytes] = []  # the pieces folded since, as UTF-8
        self._size = 0  # characters in _folded
        self._loose: list[str] = []

    @classmethod
    def of(cls, text: str) -> Pieces:
        """Pieces holding ``text`` already."""
        pieces = cls()
        pieces._head = text
        return pieces

    def append(self, piece: str) -> None:
        loose = self._loose
        loose.append(piece)
        if len(loose) >= _FOLD:
            self._fold()

    def extend(self, pieces: list[str]) -> None:
        """Append each of ``pieces``."""
        loose = self._loose
        loose.extend(pieces)
        if len(loose) >= _FOLD:
            self._fold()

    def _fold(self) -> None:
        text = "".join(self._loose)
        self._loose.clear()
        self._folded.append(_utf8(text))
        self._size += len(text)

    def size(self) -> int:
        """The length of the text, without joining it."""
        return len(self._head or "") + self._size + sum(map(len, self._loose))

    def text(self) -> str:
        """The text so far; joining it replaces the pieces, so a second call is free."""
        if self._folded or self._loose:
            if self._loose:
                self._fold()
            folded = self._folded
            if self._head:
                folded.insert(0, _utf8(self._head))
            # One decode of the joined bytes: the only str as long as the text.
            whole = folded[0] if len(folded) == 1 else b"".join(folded)
            folded.clear()
            self._size = 0
            self._head = self._shared(whole)
        return self._head or ""

    def _shared(self, whole: bytes) -> str:
        """``whole`` decoded, or the very str another Pieces joined to the same text."""
        if len(whole) < _SHARED:
            return whole.decode("utf-8", "surrogatepass")
        key = (len(whole), hash(whole))
        ref = _joined.get(key)
        other = ref() if ref is not None else None
        text = other._head if other is not None else None
        if text is not None and _spells(whole, text):
            return text
        _joined[key] = weakref.ref(self, lambda ref: _forget(key, ref))
        return whole.decode("utf-8", "surrogatepass")

    def equals(self, text: str) -> bool:
        """Whether the pieces join to ``text``, without joining them (no second copy of a
        long text just to compare it)."""
        head = self._head or ""
        if not text.startswith(head):
            return False
        position = len(head)
        for folded in self._folded:
            piece = folded.decode("utf-8", "surrogatepass")
            if not text.startswith(piece, position):
                return False
            position += len(piece)
        for piece in self._loose:
            if not text.startswith(piece, position):
                return False
            position += len(piece)
        return position == len(text)

    def __bool__(self) -> bool:
        """Whether anything was appended (an empty piece too)."""
        return self._head is not None or bool(self._folded or self._loose)


def _forget(key: tuple[int, int], ref: weakref.ref[Pieces]) -> None:
    if _joined.get(key) is ref:
        del _joined[key]


def _spells(whole: bytes, text: str, step: int = 1 << 16) -> bool:
    """Whether ``whole`` is the UTF-8 of ``text``, decoded a slice at a time (no second
    copy of a long text just to compare it)."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    position = 0
    for at in range(0, len(whole), step):
        piece = decoder.decode(whole[at : at + step], at + step >= len(whole))
        if not text.startswith(piece, position):
            return False
        position += len(piece)
    return position == len(text)

"""A huge YAML scalar's text decoded in pieces, as PyYAML decodes it whole: the second
half of :mod:`chatx.containers.yaml_walk`, which finds where such a scalar is and keeps
what is written of it.

- A quoted scalar is cut where no line fold, escape or document marker can cross, and
  each piece is read by PyYAML as a scalar of its own: the pieces say what the whole
  says.
- A literal block is its lines without their indentation, chomped at the end as its
  header says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from chatx.containers import bodies
from chatx.containers.bounded_yaml import load_yaml
from chatx.errors import InputError


class Unfollowed(Exception):
    """The walk does not follow the file (or cannot read a scalar of it in pieces): the
    file is read whole."""


# Where a quoted text may be cut: between a character that is no blank, line break, quote
# (or backslash), dash or dot, and one that is none of those first four nor the inside of
# a UTF-8 character (nor what may start a line break, NEL, LS or PS). A line fold, a ''
# and a document marker (---, ... at a line's start, refused in a quoted scalar) stay
# whole in one piece.
_CUT = {
    b"'": re.compile(rb"[^\s'\-.\x85\xa8\xa9](?=[^\s'\x80-\xbf\xc2\xe2])"),
    b'"': re.compile(rb'[^\s"\\\-.\x85\xa8\xa9](?=[^\s"\\\x80-\xbf\xc2\xe2])'),
}
_ESCAPE_SIZE = {ord("x"): 4, ord("u"): 6, ord("U"): 10}


def quoted(written: Iterable[bytes], style: bytes, piece: int, uncut: int) -> Iterator[bytes]:
    """A quoted scalar's text, as written between its quotes (``style``), read by PyYAML
    in pieces of about ``piece`` bytes; Unfollowed when no place to cut it comes in
    ``uncut`` bytes, or a piece is refused (the whole file then says why)."""
    held = b""
    for data in written:
        held += data
        while len(held) >= 2 * piece:
            cut = _cut(held, piece, style)
            if cut < 0:
                if len(held) > uncut:
                    raise Unfollowed
                break
            yield _read(style, held[:cut])
            held = held[cut:]
    yield _read(style, held)


def _cut(text: bytes, at: int, style: bytes) -> int:
    """The first place from ``at`` where a quoted text may be cut; -1 for none."""
    while (found := _CUT[style].search(text, at)) is not None:
        at = found.end()
        if style == b"'" or _outside_escape(text, at):
            return at
    return -1


def _outside_escape(text: bytes, at: int) -> bool:
    """Whether no escape of a double-quoted text goes on past ``at`` (one is at most
    ten characters, ``\\UXXXXXXXX``; the last backslash before it opens one when an odd
    run of them ends there)."""
    last = text.rfind(b"\\", max(0, at - 10), at)
    if last < 0:
        return True
    first = last
    while first > 0 and text[first - 1] == ord("\\"):
        first -= 1
    if (last - first) % 2 == 1:
        return True  # the run is pairs: \\ each
    size = _ESCAPE_SIZE.get(text[last + 1], 3 if text[last + 1 : last + 3] == b"\r\n" else 2)
    return last + size <= at


def _read(style: bytes, text: bytes) -> bytes:
    """A piece of a quoted text read by PyYAML, as a scalar of its own."""
    try:
        value = load_yaml(style + text + style)
    except InputError as exc:
        raise Unfollowed from exc  # the whole file says what is wrong, and where
    return bodies.text_bytes(value)


def literal(written: Iterable[bytes], indent: int, chomp: bytes) -> Iterator[bytes]:
    """A literal block's text, from its lines as written (indented by ``indent``): its
    lines without their indentation, each line break kept, the last ones chomped
    (``-`` none, ``+`` all, else one). The lines whole in a piece lose it at once
    (:func:`_unindent`); a line that goes on past its piece is given out as it comes;
    line breaks are held back until text follows them, for the chomping."""
    unindent = _unindent(indent)
    held, breaks, within = b"", 0, False  # within: in a line whose indentation is gone
    for data in written:
        data, held = held + data, b""
        if within:
            end = data.find(b"\n")
            if end < 0:
                yield data
                continue
            yield data[:end]
            data, breaks, within = data[end + 1 :], 1, False
        whole = data.rfind(b"\n") + 1
        lines, rest = unindent.sub(b"", data[:whole]), data[whole:]
        text = lines.rstrip(b"\n")
        if text:
            yield b"\n" * breaks + text
            breaks = 0
        breaks += len(lines) - len(text)
        if rest.strip(b" ") or len(rest) >= indent:  # its indentation is all there
            yield b"\n" * breaks + unindent.sub(b"", rest)
            breaks, within = 0, True
        else:
            held = rest  # spaces, maybe the start of the next line's indentation
    if chomp == b"+":
        yield b"\n" * breaks
    elif chomp != b"-" and breaks:
        yield b"\n"


@lru_cache(maxsize=64)
def _unindent(indent: int) -> re.Pattern[bytes]:
    """A block's indentation at each line's start; a shorter line is only spaces (the
    block's lines are so), which all go."""
    return re.compile(rb"^ {1,%d}" % indent, re.MULTILINE)

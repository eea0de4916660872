"""A YAML cassette too big to hold, read with its huge bodies walked out of it.

A file larger than :data:`BIG` is read as it comes. Its lines are followed well enough to
know where each quoted (``'…'``, ``"…"``) and block (``|``, ``>``) scalar starts and ends:
those are what a cassette's writers use for a text that spans lines. A scalar whose text
is longer than :data:`SPOOLED` is kept in a temporary file (:class:`bodies.Spool`) and a
placeholder stands in its place; every other byte is kept as written. PyYAML reads that
skeleton, bounded as any cassette is (:mod:`chatx.containers.bounded_yaml`), and each huge
scalar is decoded in pieces into a spool of its text (:mod:`chatx.containers.yaml_scalar`):

- a quoted scalar is cut where no line fold and no escape can cross (between two
  characters neither of which is a blank, a line break, a quote or part of an escape),
  and each piece is read by PyYAML as a scalar of its own: the pieces say what the whole
  says;
- a literal block is its lines without their indentation, chomped at the end as its
  header says (a folded ``>`` one is read whole: see below).

The reading is held to PyYAML's before it is trusted. Each placeholder must be read back
as a whole plain scalar, the value of a body's key, at the line and column it was put at.
The bytes before it are the file's, so PyYAML's scanner starts a token there in the file
too, and a quoted scalar or a block ends where this reading ended it, by the scanner's
own rule. Anything else reads the file whole, as a smaller one is: a huge folded or plain
scalar, an anchor or a tag other than ``!!binary`` on one, a line break other than LF in a
huge block, a flow collection over lines, or a skeleton PyYAML refuses (the whole file
then says what is wrong, and where).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, BinaryIO, NamedTuple

from chatx.containers import bodies, yaml_scalar
from chatx.containers.bounded_yaml import load_yaml, load_yaml_documents, safe_loader
from chatx.containers.yaml_scalar import Unfollowed
from chatx.errors import InputError

BIG = 8 << 20  # a file larger than this is walked
SPOOLED = 1 << 20  # a scalar whose written text is longer than this is kept in a spool
PIECE = 64 << 10  # a huge quoted scalar is decoded in pieces of about this many bytes
_READ = 1 << 20  # the file is read this many bytes at a time
_LINE = 1 << 20  # a line longer than this outside a quoted or block scalar: read whole
# A quoted scalar with no place to cut in this many bytes (blanks or escapes all along) is
# read whole: its pieces cannot be read apart.
_UNCUT = 4 << 20
# Each body walked keeps its text in a temporary file until the document is built, then
# its decoded text in another: past this many, a huge body is kept as written (in memory).
SPANS = 128
_MARK = "chatx-walked-scalar-"
_WALKED = "tag:chatx,2026:walked"
_BODY_KEYS = {"string", "body", "base64_string", "body_base64"}
_BINARY = {b"!binary", b"!!binary", b"!<tag:yaml.org,2002:binary>"}
# Line breaks YAML reads beyond LF: a huge block holding one is read whole.
_OTHER_BREAKS = (b"\r", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


class _Key(NamedTuple):
    """What a value stands after on its line, a key or an item's dash: its column (the
    indentation a block scalar's lines must pass; -1 for neither), and whether it is a
    key that names a body's text."""

    column: int
    body: bool


@dataclass(slots=True)
class _Span:
    """A scalar that spans lines as written: what stands before its text (its tag and
    quote, or its block header), its text, and what closes it."""

    style: bytes  # ', ", | or >
    column: int  # where it starts (its tag, if any)
    key_column: int  # the column of its key, or of its item's dash; -1 for neither
    binary: bool  # tagged !!binary or Ruby's !binary
    written: bytes  # the bytes before its text
    raw: bodies.Spool | None = None  # its text (kept until the document is built)
    after: bytes = b""  # a closing quote
    chomp: bytes = b""  # a block's chomping indicator
    indent: int = 0  # a block's indentation
    placeholder: bytes = b""
    line: int = 0  # the skeleton's line (from 0) the placeholder is on
    found: bool = False

    def text(self) -> Iterator[bytes]:
        assert self.raw is not None
        return self.raw.pieces(PIECE)

    def stands(self) -> bytes:
        """What stands in the skeleton for it: its placeholder, and the line break that
        ended a block's last line."""
        return self.placeholder + (b"\n" if self.style in b"|>" else b"")


def load(stream: BinaryIO) -> Any:
    """The document of the YAML cassette read from ``stream``, as
    :func:`~chatx.containers.bounded_yaml.load_yaml` reads it, each huge body's scalar a
    :class:`bodies.Walked` of its text (see the module's docstring)."""
    return _walked_or_whole(stream, _one)


def load_documents(stream: BinaryIO) -> list[Any]:
    """Each document of the YAML stream read from ``stream`` (httpmock's mocks), as
    :func:`~chatx.containers.bounded_yaml.load_yaml_documents` reads them, each huge
    body's scalar a :class:`bodies.Walked` of its text."""
    return _walked_or_whole(stream, _all)


def _one(data: bytes, loader: Any = None, checked: Any = None) -> Any:
    return load_yaml(data, loader, checked)


def _all(data: bytes, loader: Any = None, checked: Any = None) -> list[Any]:
    return list(load_yaml_documents(data, loader, checked))


def _walked_or_whole(stream: BinaryIO, read: Any) -> Any:
    """``read`` (:func:`_one`, :func:`_all`) of the file in ``stream``: of its bytes
    when it is small or not followed, else of its skeleton, walked."""
    pieces, size = [], 0  # read in pieces: a reader may make room for all it is asked
    while size <= BIG and (data := stream.read(min(_READ, BIG + 1 - size))):
        pieces.append(data)
        size += len(data)
    if size <= BIG:
        return read(b"".join(pieces))
    walk = _YamlWalk(stream, pieces)
    try:
        walk.scan()
        if not walk.spans:
            raise Unfollowed
        return walk.document(read)
    except Unfollowed:
        return read(walk.original())


# The block header: style, chomping, a comment. An indentation said in digits is not
# followed (read whole): the block's indentation would hang on its parent's.
_BLOCK_HEADER = re.compile(rb"([|>])([+-]?) *(?:#[^\n]*)?(?=\n|$)")
# A key written plain, up to the first ``:`` that a blank or the line's end follows.
_PLAIN_KEY = re.compile(rb"(?![-?:](?:[ \t\n]|$))[^\s'\"#,\[\]{}&*!|>%@`][^\n]*?:(?=[ \t\n]|$)")
_QUOTED_KEY_END = re.compile(rb"[ \t]*:(?=[ \t\n]|$)")
_BLANKS = re.compile(rb"[ \t]*")
_INDENT = re.compile(rb" *")
_PROPERTY = re.compile(rb"([!&][^ \t\n]*)[ \t]+")
_EMPTY_FLOW = re.compile(rb"(?:\[[ \t]*\]|\{[ \t]*\})[ \t]*(?:#[^\n]*)?(?=\n|$)")
_REST_BLANK = re.compile(rb"[ \t]*(?:#[^\n]*)?(?=\n|$)")
# A double-quoted text, to its end: its runs and escapes in turn (0.26 s for 64 MB of
# JSON text, where one alternation of the two took 0.40 s).
_DOUBLE = re.compile(rb'[^"\\]*+(?:\\[\s\S][^"\\]*+)*+')


class _YamlWalk:
    """One pass over the file, as it comes: the skeleton, with placeholders, and the
    scalars that span lines, huge ones kept in spools."""

    def __init__(self, stream: BinaryIO, head: list[bytes]) -> None:
        self.stream = stream
        self.head = head[::-1]  # the file's first pieces, read already: popped in turn
        self.buf = b""
        self.pos = 0
        self.eof = False
        self.out: list[bytes | _Span] = []  # the file read so far: a huge span as its span
        self.kept = bytearray()  # the file's bytes read since the last span of ``out``
        self.reading: _Text | None = None  # the scalar being read, if any
        self.spans: list[_Span] = []  # at most SPANS: each holds two open files

    # -- reading the file ------------------------------------------------------------

    def _more(self) -> bool:
        """The next bytes of the file after ``buf``'s; False at its end."""
        data = self.head.pop() if self.head else b"" if self.eof else self.stream.read(_READ)
        if not data:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + data
        self.pos = 0
        return True

    def _ahead(self, size: int) -> None:
        """``size`` bytes from ``pos`` in ``buf``, or all the file has left."""
        while len(self.buf) - self.pos < size and self._more():
            pass

    def _line_end(self) -> int:
        """Where the line at ``pos`` ends (its LF, or the file's end); for a line longer
        than _LINE, where its first _LINE bytes end (such a line must open a scalar
        that goes on past them: see :meth:`_value`)."""
        self._ahead(_LINE)
        end = self.buf.find(b"\n", self.pos)
        return len(self.buf) if end < 0 else end

    def _take(self, end: int) -> bytes:
        data = self.buf[self.pos : end]
        self.pos = end
        return data

    def _pass(self, end: int) -> None:
        """The file's bytes up to ``end`` of ``buf`` kept as written."""
        self.kept += self._take(end)

    def _pass_line(self, end: int) -> None:
        """The rest of the line, to ``end`` (from :meth:`_line_end`), kept as written;
        one longer than _LINE is read whole."""
        if end == len(self.buf) and not self.eof:
            raise Unfollowed
        self._pass(min(end + 1, len(self.buf)))

    def original(self) -> bytes:
        """The whole file: what was read, then the rest of the stream. The walk lets go
        of its own copy as it joins them: the file is then read whole, by PyYAML."""
        parts = [
            p.written + b"".join(p.text()) + p.after if isinstance(p, _Span) else p
            for p in self.out
        ]
        parts.append(bytes(self.kept))
        self.out, self.kept = [], bytearray()
        if self.reading is not None:
            parts.append(b"".join(self.reading.text()))
        parts += (self.buf[self.pos :], *self.head[::-1], self.stream.read())
        self.buf, self.head = b"", []
        whole = b"".join(parts)
        parts.clear()
        return whole

    # -- lines -------------------------------------------------------------------------

    def scan(self) -> None:
        self._ahead(1)
        while self.pos < len(self.buf):
            end = self._line_end()  # which may read on: ``pos`` then moves in ``buf``
            self._line(self.pos, end)
            self._ahead(1)

    def _line(self, start: int, end: int) -> None:
        """A line outside every scalar that spans lines: one that starts such a scalar
        goes on to its end."""
        buf = self.buf
        at = _INDENT.match(buf, start, end).end()  # type: ignore[union-attr]
        key = _Key(-1, False)  # an item's value stands after its dash: the dash's column
        while buf.startswith(b"-", at) and (at + 1 == end or buf[at + 1] in b" \t"):
            key = _Key(at - start, False)
            at = _BLANKS.match(buf, at + 1, end).end()  # type: ignore[union-attr]
        if buf[at : at + 1] in (b"'", b'"'):
            close = _closed(buf, at, end)
            gap = _QUOTED_KEY_END.match(buf, close, end) if close >= 0 else None
            if gap is None:  # a quoted scalar, an item or alone: it may go on
                self._scalar(start, at, at, key, end)
                return
            key, at = _Key(at - start, _body_key(buf[at + 1 : close - 1])), gap.end()
        elif (plain := _PLAIN_KEY.match(buf, at, end)) is not None:
            key, at = _Key(at - start, _body_key(buf[at : plain.end() - 1].rstrip())), plain.end()
        self._value(start, _BLANKS.match(buf, at, end).end(), end, key)  # type: ignore[union-attr]

    def _value(self, start: int, at: int, end: int, key: _Key) -> None:
        buf = self.buf
        props = at
        while (prop := _PROPERTY.match(buf, at, end)) is not None:
            at = prop.end()
        char = buf[at : at + 1]
        if char and char in b"'\"|>":
            self._scalar(start, props, at, key, end)
            return
        if char and char in b"[{" and not _EMPTY_FLOW.match(buf, at, end):
            raise Unfollowed  # a flow collection, which may go on over lines
        self._pass_line(end)

    # -- scalars that span lines -------------------------------------------------------

    def _scalar(self, start: int, props: int, at: int, key: _Key, end: int) -> None:
        """A scalar that may span lines, from its tag or anchor at ``props`` (or its
        quote or header at ``at``), the value of ``key``: one past SPOOLED is walked
        when it is a body's text, tagged as a body's may be, else kept as written."""
        tags = self.buf[props:at].split()
        binary = len(tags) == 1 and tags[0] in _BINARY
        self._pass(props)
        span = _Span(self.buf[at : at + 1], props - start, key.column, binary, b"")
        walked = key.body and (not tags or binary)
        if span.style in b"|>":
            self._block(span, at, end, walked)
        else:
            span.written = self._take(at + 1)
            self._quoted(span, walked)
        self.reading = None

    def _keep(self, text: _Text) -> None:
        """A scalar not walked: kept as written."""
        self.kept += b"".join(text.text())

    def _quoted(self, span: _Span, walked: bool) -> None:
        """A quoted scalar from its opening quote to its closing one; then the rest of
        its line."""
        text = self.reading = _Text(span.written)
        while True:
            close, resume = _quote_end(self.buf, self.pos, span.style, len(self.buf), self.eof)
            if close >= 0:
                break
            text.add(self._take(resume))
            if not self._more():
                raise Unfollowed  # no closing quote: the whole file says so
        text.add(self._take(close))
        span.after = text.after = self._take(close + 1)
        self._ahead(_LINE)
        if self._walks(walked, text) and _REST_BLANK.match(self.buf, self.pos):
            span.raw = text.spool
            self._put(span)
        else:
            self._keep(text)
        self._pass_line(self._line_end())

    def _block(self, span: _Span, at: int, end: int, walked: bool) -> None:
        """A block scalar from its header to its last line: each line of it has the
        block's indentation, or only spaces."""
        header = _BLOCK_HEADER.match(self.buf, at, end)
        if header is None or span.key_column < 0:
            raise Unfollowed
        span.chomp = header[2]
        span.written = self._take(min(end + 1, len(self.buf)))
        text = self.reading = _Text(span.written)
        span.indent = self._indent(span.key_column)
        self._block_lines(text, span.indent)
        if self._walks(walked, text) and span.style == b"|" and not text.other_breaks:
            span.raw = text.spool
            self._put(span)
        else:
            self._keep(text)

    def _block_lines(self, text: _Text, indent: int) -> None:
        """The lines of a block indented by ``indent`` into ``text``: the whole ones in
        ``buf`` at once, a longer one as it comes."""
        whole = _lines_indented(indent)
        while True:
            text.add(self._take(whole.match(self.buf, self.pos).end()))  # type: ignore[union-attr]
            if not self._in_block(indent):
                return
            while (line_end := self.buf.find(b"\n", self.pos)) < 0:
                text.add(self._take(len(self.buf)))
                if not self._more():
                    return
            text.add(self._take(line_end + 1))

    def _in_block(self, indent: int) -> bool:
        """Whether the line at ``pos`` is one of a block indented by ``indent``."""
        self._ahead(indent + 1)
        if self.pos >= len(self.buf):
            return False
        if self.buf.startswith(b" " * indent, self.pos):
            return True
        spaces = _INDENT.match(self.buf, self.pos).end()  # type: ignore[union-attr]
        return spaces == len(self.buf) or self.buf[spaces] == ord("\n")

    def _indent(self, key_column: int) -> int:
        """A block's indentation, as PyYAML's scanner finds it: its first line with
        more than spaces. A blank line before it that is longer, or one no deeper than
        the key, is read whole (PyYAML reads an empty block there)."""
        ahead, widest = 0, 0  # the blank lines before it: bytes from ``pos``
        while True:
            if ahead > _LINE:
                raise Unfollowed  # blank lines held while the indentation is looked for
            self._ahead(ahead + _LINE)
            at = self.pos + ahead
            line_end = self.buf.find(b"\n", at)
            line = self.buf[at : len(self.buf) if line_end < 0 else line_end]
            content = line.lstrip(b" ")
            indent = len(line) - len(content)
            if content or line_end < 0:
                # libyaml refuses a tab where the indentation is being found
                if not content or indent <= key_column or widest > indent or content[:1] == b"\t":
                    raise Unfollowed
                return indent
            widest, ahead = max(widest, indent), line_end + 1 - self.pos

    def _walks(self, walked: bool, text: _Text) -> bool:
        """Whether a scalar read into ``text`` is walked: a body's, huge, and one of the
        first SPANS."""
        return walked and text.huge and len(self.spans) < SPANS

    def _put(self, span: _Span) -> None:
        """A huge span: its placeholder in the skeleton, its text in its spool."""
        span.placeholder = f"{_MARK}{len(self.spans)}".encode()
        assert span.raw is not None
        span.raw.done()
        self.out.append(bytes(self.kept))
        self.kept = bytearray()
        self.out.append(span)
        self.spans.append(span)

    # -- the skeleton --------------------------------------------------------------------

    def document(self, read: Any) -> Any:
        """The skeleton read by PyYAML (``read``), each placeholder checked to stand
        where its scalar did, and read as the :class:`bodies.Walked` of that scalar's
        text."""
        self._pass(len(self.buf))
        while self._more():
            self._pass(len(self.buf))
        skeleton, lines = bytearray(), 0
        for part in self.out:
            if isinstance(part, _Span):
                part.line = lines
                part = part.stands()
            skeleton += part
            lines += part.count(b"\n")
        skeleton += self.kept
        spans = {span.placeholder.decode(): span for span in self.spans}
        loader: Any = type("WalkedLoader", (safe_loader(),), {})
        loader.add_constructor(_WALKED, lambda _, node: _walked(spans[node.value]))
        try:
            document = read(bytes(skeleton), loader, lambda root: _check(root, spans))
        except InputError:
            raise Unfollowed from None  # the whole file says what is wrong, and where
        if not all(span.found for span in spans.values()):
            raise Unfollowed
        for span in self.spans:
            span.raw = None  # its written text is no longer needed
        return document


@lru_cache(maxsize=64)
def _lines_indented(indent: int) -> re.Pattern[bytes]:
    """Whole lines of a block indented by ``indent``: indented so, or only spaces."""
    return re.compile(rb"(?: {%d}[^\n]*+\n| *+\n)*+" % indent)


class _Text:
    """A scalar's text as it is read: held, then in a spool once past SPOOLED; with
    what was written before and after it, for a file read whole after all."""

    def __init__(self, written: bytes) -> None:
        self.written = written
        self.after = b""
        self.held = b""
        self.spool: bodies.Spool | None = None
        self.other_breaks = False

    @property
    def huge(self) -> bool:
        return self.spool is not None

    def add(self, data: bytes) -> None:
        self.other_breaks = self.other_breaks or any(b in data for b in _OTHER_BREAKS)
        if self.spool is None and len(self.held) + len(data) <= SPOOLED:
            self.held += data
            return
        if self.spool is None:
            self.spool = bodies.Spool()
            self.spool.write(self.held)
            self.held = b""
        self.spool.write(data)

    def text(self) -> Iterator[bytes]:
        """All of it as written."""
        if self.spool is not None:
            self.spool.done()
        yield self.written
        yield from self.spool.pieces() if self.spool is not None else (self.held,)
        yield self.after


def _body_key(name: bytes) -> bool:
    """Whether a key as written (a quoted one without its quotes) names a body's text."""
    return name.decode("utf-8", "replace") in _BODY_KEYS


def _closed(buf: bytes, at: int, end: int) -> int:
    """Just after the closing quote of the quoted scalar opening at ``at``, if it closes
    before ``end``; else -1."""
    close, _ = _quote_end(buf, at + 1, buf[at : at + 1], end, True)
    return close + 1 if close >= 0 else -1


def _quote_end(buf: bytes, at: int, style: bytes, end: int, eof: bool) -> tuple[int, int]:
    """Where the quoted text from ``at`` ends (its closing quote) before ``end`` of
    ``buf``; else -1, and how far it is surely text (all of it, when ``eof``)."""
    if style == b'"':
        close = _DOUBLE.match(buf, at, end).end()  # type: ignore[union-attr]
        return (close, close) if close < end and buf[close] == ord('"') else (-1, close)
    while True:
        quote = buf.find(b"'", at, end)
        if quote < 0:
            return -1, end
        if quote + 1 == end and not eof:
            return -1, quote  # a quote, or the first of two
        if quote + 1 == end or buf[quote + 1] != ord("'"):
            return quote, quote
        at = quote + 2


def _check(root: Any, spans: dict[str, _Span]) -> None:
    """Each placeholder read back as a whole plain scalar where it was put, the value
    of a body's key at the key's column, and nowhere else: else the file is read whole."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.id == "mapping":
            for key, value in node.value:
                _check_value(key, value, spans)
                stack += (key, value)
        elif node.id == "sequence":
            stack += node.value
        elif node.tag != _WALKED and _MARK in node.value:
            raise Unfollowed


def _check_value(key: Any, value: Any, spans: dict[str, _Span]) -> None:
    span = spans.get(value.value) if value.id == "scalar" else None
    if span is None:
        return
    if (
        span.found
        or value.style
        or value.tag != "tag:yaml.org,2002:str"
        or (value.start_mark.line, value.start_mark.column) != (span.line, span.column)
        or key.id != "scalar"
        or key.value not in _BODY_KEYS
        or key.start_mark.column != span.key_column
    ):
        raise Unfollowed
    span.found = True
    value.tag = _WALKED


def _walked(span: _Span) -> bodies.Walked:
    """A huge scalar's text decoded into a spool."""
    assert span.raw is not None
    text = bodies.Spool()
    if span.style == b"|":
        pieces = yaml_scalar.literal(span.text(), span.indent, span.chomp)
    else:
        pieces = yaml_scalar.quoted(span.text(), span.style, PIECE, _UNCUT)
    for piece in pieces:
        text.write(piece)
    text.done()
    return bodies.Walked(text, base64=span.binary)

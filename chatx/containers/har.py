"""HAR 1.2 (JSON): ``log.entries[]``, each a request and its response.

The file is read as it comes, never parsed whole: a scanner finds each entry's bytes,
orjson parses that one entry, and its body is decoded only when asked. A 1 GB HAR then
holds one entry at a time, not every body's text.

The scanner does no Python work per byte of a body, nor per escape in it. orjson finds
where an entry ends: it parses a window of the bytes read that ends where the next
entry likely opens (``}, {"``: outside every string, since a quote inside one is
escaped), and either the window is the entry, or orjson says where the entry ends
inside it (content after the document), or the window is widened. When orjson's error
says neither (bad UTF-8 anywhere in the window, an entry that is not JSON), the entry is
found exactly by its brackets, on a *masked* copy of the bytes (see :func:`mask`), and
then parsed alone, so its error names the right entry and line.

An entry longer than :data:`BIG` whose end is not in sight is too big to hold: its
body is one huge string. It is walked (:class:`chatx.containers.json_walk.Walk`): its
other fields are copied as they pass into a skeleton that orjson parses, and the body's
string is cut into pieces at escape and character boundaries, each decoded by orjson as
a JSON string of its own (exactly as the whole would decode), and kept in a temporary
file (``bodies.Spool``), from which the body is read in pieces as often as it is asked
for.

Bodies: ``response.content.text``, plain text (an SSE stream is plain text), or with
``encoding: "base64"`` the base64 of the bytes. Polly.JS stores a JSON array of base64
strings there, one per chunk received, which are decoded and joined. Bytes still
compressed as their ``content-encoding`` header says are decompressed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO, NoReturn

import orjson

from chatx.containers import bodies, json_walk
from chatx.containers.json_walk import CLOSE, OPEN, QUOTE, SKIP, TOKEN, mask
from chatx.errors import InputError

_BLOCK = 1 << 22  # most entries fit in one read: an entry cut by a read is parsed again
_WINDOW = 1 << 12  # the first window; then half the entry before
# Where the next entry likely opens: this entry's last byte is the ``}``.
_NEXT = re.compile(rb'\}\s*,\s*\{\s*"')
_UNSURE = object()  # orjson's error did not say where the entry ends
_HUGE = object()  # the entry is too big to hold: it is walked
_BODY = ("response", "content", "text")  # the string a walked entry decodes in pieces
# Past this many bytes without its end, an entry is walked (see json_walk.BIG); its body
# is decoded in pieces of PIECE bytes.
BIG = json_walk.BIG
PIECE = json_walk.PIECE
# A body's text longer than this, held, is decoded in pieces too: a few hundred KB of
# gzip may say hundreds of MB, which need not be held whole either.
PIECES = 64 << 10


class _Scanner:
    """Finds and parses each element of ``log.entries`` in a JSON stream."""

    def __init__(self, stream: BinaryIO, big: int | None = None, piece: int | None = None) -> None:
        self.big = BIG if big is None else big  # 0: every entry walked (tests)
        self.piece = PIECE if piece is None else piece
        self.read = getattr(stream, "read1", stream.read)
        self.buf = b""  # the bytes held, from a point outside every string's inside
        self.masked: bytes | None = None  # mask(buf), made when needed
        self.ascii = True  # buf is ASCII: orjson's character positions are byte offsets
        self.pos = 0
        self.eof = False
        self.lines = 1  # the line at buf[counted]
        self.counted = 0
        # One frame per open object or array: [is_object, expecting_key, last_key].
        self.stack: list[list[Any]] = []
        # The element of log.entries that comes next, counted as a JSON reader counts
        # them (one that is not an object too, so that #N is its own position), and
        # whether the one under way has shown a value yet ("object": an entry).
        self.index = 0
        self.valued: str | None = None
        self.window = _WINDOW

    def more(self) -> bool:
        """Drop what is before ``pos``, read more (as many again as are held, so a long
        entry is parsed again a bounded number of times); False at the end."""
        if self.eof:
            return False
        keep = self.pos
        if self.counted < keep:
            self.lines += self.buf.count(b"\n", self.counted, keep)
            self.counted = keep
        self.counted -= keep
        self.pos = 0
        self.masked = None
        chunk = json_walk.fill(self.read, max(_BLOCK, len(self.buf) - keep))
        if not chunk:
            self.eof = True
            self.buf = self.buf[keep:]
            return False
        self.buf = self.buf[keep:] + chunk
        self.ascii = self.buf.isascii()
        return True

    def line_at(self, at: int) -> int:
        if self.counted < at:
            self.lines += self.buf.count(b"\n", self.counted, at)
            self.counted = at
        return self.lines

    def entries(self) -> Iterator[tuple[int, Any]]:
        """(line, parsed entry) of each element of log.entries, in order: None for an
        element that is no object, so that the n-th is ``log.entries[n]``. A walked
        entry holds its body's text as a ``bodies.Spool``."""
        while True:
            match = TOKEN.search(self.buf, self.pos)
            if match is None or match.end() - match.start() == 1 and self.buf[match.start()] == 34:
                end = len(self.buf) if match is None else match.start()
                self._between(end)
                self.pos = end
                if not self.more():
                    break
                continue
            self._between(match.start())
            self.pos = match.end()
            found = self._token(match)
            if found is not None:
                yield found
        if self.stack:
            where = "inside log.entries" if self._in_entries() else "before the HAR's end"
            done = self.index + (self.valued is not None)
            raise InputError(
                f"truncated JSON: the input ends {where} (after {done} entries)",
                line=self.line_at(len(self.buf)),
            )

    def _in_entries(self) -> bool:
        return len(self.stack) >= 3 and not self.stack[2][0] and self.stack[2][2] == "entries"

    def _between(self, end: int) -> None:
        """Bytes between tokens directly in log.entries: a number, true, false or null
        is an element there."""
        if self.valued is None and self._at_entries() and self.buf[self.pos : end].strip():
            self.valued = "other"

    def _token(self, match: re.Match[bytes]) -> tuple[int, Any] | None:
        start = match.start()
        char = self.buf[start]
        stack = self.stack
        if self._at_entries():
            return self._element(start, char)
        if char == 34:  # a string: a key when an object expects one
            if stack and stack[-1][0] and stack[-1][1]:
                stack[-1][1] = False
                stack[-1][2] = match.group()[1:-1].decode("utf-8", "replace")
            return None
        if char == 44:  # ,
            if stack and stack[-1][0]:
                stack[-1][1] = True
            return None
        if char == 58:  # :
            return None
        if char in CLOSE:
            if stack:
                stack.pop()
            return None
        # The array that is log.entries remembers it in its frame's key slot.
        key = "entries" if char == 91 and self._names_entries() else None
        stack.append([char == 123, char == 123, key])
        return None

    def _element(self, start: int, char: int) -> tuple[int, Any] | None:
        """A token directly in log.entries: an entry, the end of an element, or of the
        array; an element that is no object is yielded as None when it ends."""
        if char == 123:
            self.valued = "object"
            return self._entry(start)
        if char == 44 or char == 93:  # , ]
            other = self.valued == "other"
            self.index, self.valued = self.index + (char == 44), None
            if char == 93:
                self.stack.pop()
            return (self.line_at(start), None) if other else None
        self.valued = "other"  # a string, or an array
        if char == 91:
            self.stack.append([False, False, None])
        return None

    def _names_entries(self) -> bool:
        stack = self.stack
        return (
            len(stack) == 2
            and stack[0][0]
            and stack[0][2] == "log"
            and stack[1][0]
            and stack[1][2] == "entries"
        )

    def _at_entries(self) -> bool:
        """Directly in the array log.entries (not in an object under a key "entries")."""
        stack = self.stack
        return len(stack) == 3 and not stack[2][0] and stack[2][2] == "entries"

    def _entry(self, start: int) -> tuple[int, Any]:
        """The entry object that opens at ``start``, parsed; ``pos`` then follows it.
        Until then ``pos`` is the entry's start, which every read keeps."""
        line = self.line_at(start)
        self.pos = start
        item = self._parsed(line) if self.big else _HUGE
        if item is _UNSURE:
            item = self._scanned(line)
        if item is _HUGE:
            item = self._walked(line)
            self.window = _WINDOW
        return line, item

    def _walked(self, line: int) -> Any:
        """The entry at ``pos`` walked (too big to hold): its body's text, when it has
        one, a spool."""
        index = self.index

        def ended() -> NoReturn:
            self.truncated(line)

        walk = json_walk.Walk(
            self,
            line,
            frozenset({_BODY}),
            name=f"not valid JSON in log.entries[{index}]",
            piece=self.piece,
            check=self.big,
            ended=ended,
        )
        item, spools = walk.value()
        json_walk.put(item, _BODY, spools, lambda text: text)
        return item

    def _parsed(self, line: int) -> Any:
        """The entry at ``pos`` as orjson finds it in windows of the bytes read."""
        window = self.window
        while True:
            start = self.pos
            found = _NEXT.search(self.buf, start + window - 1)
            end = found.start() + 1 if found is not None else len(self.buf)
            with memoryview(self.buf) as view:
                try:
                    item = orjson.loads(view[start:end])
                except orjson.JSONDecodeError as exc:
                    at = self._offset(view[start:end], exc.pos)
                    item = _UNSURE
                    if at < end - start:  # content after the entry, or an error inside it
                        try:
                            item, end = orjson.loads(view[start : start + at]), start + at
                        except orjson.JSONDecodeError:
                            return _UNSURE
            if item is _UNSURE:  # the window ends inside the entry: wider, or read more
                if end < len(self.buf):
                    window = 2 * (end - start)
                elif len(self.buf) - start >= self.big:
                    return _HUGE
                elif not self.more():
                    self.truncated(line)
                continue
            self.pos = end
            self.window = max(_WINDOW, (end - start) // 2)
            return item

    def _offset(self, window: memoryview, position: int) -> int:
        """The byte offset in ``window`` of orjson's error position (in characters)."""
        if self.ascii:
            return position
        text = str(window, "utf-8", "surrogateescape")
        return len(text[:position].encode("utf-8", "surrogateescape"))

    def _mask(self) -> bytes:
        if self.masked is None:
            self.masked = mask(self.buf)
        return self.masked

    def _scanned(self, line: int) -> Any:
        """The entry at ``pos`` found by its brackets in the mask, then parsed alone."""
        depth, at = 1, self.pos + 1
        while depth:
            masked = self._mask()
            at = SKIP.match(masked, at).end()  # type: ignore[union-attr]  # matches ''
            if at == len(masked) or masked[at] == QUOTE:  # cut by the read
                resume = at - self.pos
                if len(self.buf) - self.pos >= self.big:
                    return _HUGE
                if not self.more():
                    self.truncated(line)
                at = resume
                continue
            depth += 1 if masked[at] in OPEN else -1
            at += 1
        start, self.pos = self.pos, at
        with memoryview(self.buf) as view:
            try:
                return orjson.loads(view[start:at])
            except orjson.JSONDecodeError as exc:
                raise InputError(
                    f"not valid JSON in log.entries[{self.index}]: {exc.msg}",
                    line=line + exc.lineno - 1,
                ) from None

    def truncated(self, line: int) -> NoReturn:
        raise InputError(
            f"truncated JSON: the input ends inside log.entries[{self.index}]"
            f" (opened at line {line})",
            line=self.line_at(len(self.buf)),
        )


def entries(
    stream: BinaryIO, big: int | None = None, piece: int | None = None
) -> Iterator[bodies.Entry]:
    """The entries of a HAR read from ``stream``, one parsed at a time; one longer than
    ``big`` bytes (its end not in sight; :data:`BIG`) walked, its body's string in
    pieces of ``piece`` bytes (:data:`PIECE`); tests make both small."""
    for index, (line, item) in enumerate(_Scanner(stream, big, piece).entries()):
        yield _entry(index, line, item)


def _entry(index: int, line: int, item: Any) -> bodies.Entry:
    request, response = bodies.objects(item, "request", "response")
    (content,) = bodies.objects(response, "content")
    (post,) = bodies.objects(request, "postData")
    said = content.get("text")
    source: bodies.Spool | _Held | None = None
    if isinstance(said, bodies.Spool):  # walked
        source = said
    elif isinstance(said, str) and len(said) > PIECES:
        source = _Held(said)
    pieces = None
    if source is not None:
        kept = source

        def pieces() -> Iterator[bytes]:
            return _pieces(content, kept)

    return bodies.exchange(
        index,
        response.get("headers"),
        lambda: _body(content),
        lambda: bodies.json_object(post.get("text")),
        line=line,
        method=_str(request.get("method")),
        url=_str(request.get("url")),
        status=bodies.status_code(response.get("status")),
        content_type=_str(content.get("mimeType")),
        pieces=pieces,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _body(content: dict[str, Any]) -> bytes:
    text = content.get("text")
    if not isinstance(text, str):
        return b""
    if content.get("encoding") == "base64":
        return b"".join(bodies.b64(part) for part in _chunks(text))
    return bodies.text_bytes(text)


def _chunks(text: str) -> list[str]:
    """Polly.JS's ``["<base64>", …]`` (one per chunk received), or the one base64 text."""
    if text.lstrip().startswith("["):
        try:
            parts = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise bodies.BodyError("bad base64: a JSON array of chunks that is not JSON") from None
        if isinstance(parts, list) and all(isinstance(p, str) for p in parts):
            return parts
        raise bodies.BodyError("bad base64: a JSON array of chunks that are not all strings")
    return [text]


class _Held:
    """A body's text parsed with its entry, read as a spool is (``pieces``, ``ascii``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()

    def pieces(self, size: int | None = None) -> Iterator[bytes]:
        text, size = self.text, size or PIECE
        for at in range(0, len(text), size):
            yield bodies.text_bytes(text[at : at + size])


def _pieces(content: dict[str, Any], text: bodies.Spool | _Held) -> Iterator[bytes]:
    """The bytes of a body whose text is in ``text``, in pieces: as :func:`_body` gives
    them whole."""
    if content.get("encoding") != "base64":
        yield from text.pieces()
        return
    if _polly(text):  # a JSON array of chunks: read whole, as no recorder writes it huge
        whole = b"".join(text.pieces()).decode()
        yield from (bodies.b64(part) for part in _chunks(whole))
        return
    if not text.ascii:
        raise bodies.BodyError("bad base64: a character that is not base64")
    yield from bodies.b64_pieces(text.pieces())


def _polly(text: bodies.Spool | _Held) -> bool:
    """Whether the text starts with ``[`` after blanks (as ``str.lstrip`` says them)."""
    held = ""
    for piece in text.pieces(1 << 16):
        held = (held + piece.decode("utf-8", "ignore")).lstrip()
        if held:
            return held.startswith("[")
    return False

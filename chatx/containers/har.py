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

Bodies: ``response.content.text``, plain text (an SSE stream is plain text), or with
``encoding: "base64"`` the base64 of the bytes. Polly.JS stores a JSON array of base64
strings there, one per chunk received, which are decoded and joined. Bytes still
compressed as their ``content-encoding`` header says are decompressed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

from chatx.containers import bodies
from chatx.errors import InputError

_BLOCK = 1 << 22  # most entries fit in one read: an entry cut by a read is parsed again
_WINDOW = 1 << 12  # the first window; then half the entry before
# Outside entries: a whole string, or a lone quote when it does not end in the bytes read.
_TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|["{}\[\]:,]')
# Where the next entry likely opens: this entry's last byte is the ``}``.
_NEXT = re.compile(rb'\}\s*,\s*\{\s*"')
# In the mask, inside an entry: everything up to the next bracket of a nested value (or
# a lone quote, or the end of the bytes read): strings, plain values and flat objects.
_SKIP = re.compile(rb'(?:[^"{}\[\]]++|"[^"]*+"|\{(?:[^"{}\[\]]++|"[^"]*+")*+\})*+')
_OPEN = {ord("{"), ord("[")}
_CLOSE = {ord("}"), ord("]")}
_QUOTE = ord('"')
_UNSURE = object()  # orjson's error did not say where the entry ends


def mask(data: bytes) -> bytes:
    """``data`` with every escaped backslash and escaped quote made ``__``: the same
    length, and each quote left is a string's start or end. ``data`` starts outside a
    string or at its opening quote (JSON has no backslash elsewhere), so the escapes
    pair up from the left as a JSON reader pairs them."""
    if b"\\\\" in data:
        data = data.replace(b"\\\\", b"__")
    return data.replace(b'\\"', b"__")


class _Scanner:
    """Finds and parses each element of ``log.entries`` in a JSON stream."""

    def __init__(self, stream: BinaryIO) -> None:
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

    def _more(self) -> bool:
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
        chunk = self.read(max(_BLOCK, len(self.buf) - keep))
        if not chunk:
            self.eof = True
            self.buf = self.buf[keep:]
            return False
        self.buf = self.buf[keep:] + chunk
        self.ascii = self.buf.isascii()
        return True

    def _line_at(self, at: int) -> int:
        if self.counted < at:
            self.lines += self.buf.count(b"\n", self.counted, at)
            self.counted = at
        return self.lines

    def entries(self) -> Iterator[tuple[int, Any]]:
        """(line, parsed entry) of each element of log.entries, in order: None for an
        element that is no object, so that the n-th is ``log.entries[n]``."""
        while True:
            match = _TOKEN.search(self.buf, self.pos)
            if match is None or match.end() - match.start() == 1 and self.buf[match.start()] == 34:
                end = len(self.buf) if match is None else match.start()
                self._between(end)
                self.pos = end
                if not self._more():
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
                line=self._line_at(len(self.buf)),
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
        if char in _CLOSE:
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
            return (self._line_at(start), None) if other else None
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
        line = self._line_at(start)
        self.pos = start
        item = self._parsed(line)
        if item is _UNSURE:
            item = self._scanned(line)
        return line, item

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
                elif not self._more():
                    self._truncated(line)
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
            at = _SKIP.match(masked, at).end()  # type: ignore[union-attr]  # matches ''
            if at == len(masked) or masked[at] == _QUOTE:  # cut by the read
                resume = at - self.pos
                if not self._more():
                    self._truncated(line)
                at = resume
                continue
            depth += 1 if masked[at] in _OPEN else -1
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

    def _truncated(self, line: int) -> None:
        raise InputError(
            f"truncated JSON: the input ends inside log.entries[{self.index}]"
            f" (opened at line {line})",
            line=self._line_at(len(self.buf)),
        )


def entries(stream: BinaryIO) -> Iterator[bodies.Entry]:
    """The entries of a HAR read from ``stream``, one parsed at a time."""
    for index, (line, item) in enumerate(_Scanner(stream).entries()):
        yield _entry(index, line, item)


def _entry(index: int, line: int, item: Any) -> bodies.Entry:
    request, response = bodies.objects(item, "request", "response")
    (content,) = bodies.objects(response, "content")
    (post,) = bodies.objects(request, "postData")
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

"""HAR 1.2 (JSON): ``log.entries[]``, each a request and its response.

The file is read as it comes, never parsed whole: a scanner finds each entry's bytes
(strings are skipped by one regular expression, so a long body costs no Python loop),
orjson parses that one entry, and its body is decoded only when asked. A 1 GB HAR
then holds one entry at a time, not every body's text.

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

from chatx.containers.bodies import (
    BodyError,
    Entry,
    b64,
    decoded,
    header,
    json_object,
    status_code,
    text_bytes,
)
from chatx.errors import InputError

_BLOCK = 1 << 22  # most entries fit in one read: a string cut by a read is scanned again
# A whole string, or a lone quote when the string does not end in the bytes read so far.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|["{}\[\]:,]')
_INNER = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|["{}\[\]]')  # inside an entry: depth only
_OPEN = {ord("{"), ord("[")}
_CLOSE = {ord("}"), ord("]")}


class _Scanner:
    """Finds the bytes of each element of ``log.entries`` in a JSON stream."""

    def __init__(self, stream: BinaryIO) -> None:
        self.read = getattr(stream, "read1", stream.read)
        self.buf = b""
        self.pos = 0
        self.eof = False
        self.lines = 1  # the line at buf[counted]
        self.counted = 0
        # One frame per open object or array: [is_object, expecting_key, last_key].
        self.stack: list[list[Any]] = []
        self.index = 0  # entries found

    def _more(self) -> bool:
        """Read more bytes (as many again as are held, so a long token is rescanned a
        bounded number of times); False at the end of the input."""
        if self.eof:
            return False
        keep = self.pos
        if self.counted < keep:
            self.lines += self.buf.count(b"\n", self.counted, keep)
            self.counted = keep
        self.buf = self.buf[keep:]
        self.counted -= keep
        self.pos = 0
        chunk = self.read(max(_BLOCK, len(self.buf)))
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def _line_at(self, at: int) -> int:
        if self.counted < at:
            self.lines += self.buf.count(b"\n", self.counted, at)
            self.counted = at
        return self.lines

    def entries(self) -> Iterator[tuple[int, bytes]]:
        """(line, bytes) of each entry object, in order."""
        while True:
            match = _TOKEN.search(self.buf, self.pos)
            if match is None or match.end() - match.start() == 1 and self.buf[match.start()] == 34:
                if match is not None:
                    self.pos = match.start()
                else:
                    self.pos = len(self.buf)
                if not self._more():
                    break
                continue
            self.pos = match.end()
            found = self._token(match)
            if found is not None:
                yield found
        if self.stack:
            where = "inside log.entries" if self._in_entries() else "before the HAR's end"
            raise InputError(
                f"truncated JSON: the input ends {where} (after {self.index} entries)",
                line=self._line_at(len(self.buf)),
            )

    def _in_entries(self) -> bool:
        return len(self.stack) >= 3 and self.stack[2][2] == "entries"

    def _token(self, match: re.Match[bytes]) -> tuple[int, bytes] | None:
        char = self.buf[match.start()]
        stack = self.stack
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
        if char == 123 and self._at_entries():
            return self._entry(match.start())
        # The array that is log.entries remembers it in its frame's key slot.
        key = "entries" if char == 91 and self._names_entries() else None
        stack.append([char == 123, char == 123, key])
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
        return len(self.stack) == 3 and self.stack[2][2] == "entries"

    def _entry(self, start: int) -> tuple[int, bytes]:
        """The bytes of the entry object that opens at ``start``."""
        line = self._line_at(start)
        depth, at = 1, start + 1
        while depth:
            match = _INNER.search(self.buf, at)
            if match is None or match.end() - match.start() == 1 and self.buf[match.start()] == 34:
                resume = (match.start() if match else len(self.buf)) - start
                self.pos = start
                if not self._more():
                    raise InputError(
                        f"truncated JSON: the input ends inside log.entries[{self.index}]"
                        f" (opened at line {line})",
                        line=self._line_at(len(self.buf)),
                    )
                start, at = 0, resume
                continue
            char = self.buf[match.start()]
            if char in _OPEN:
                depth += 1
            elif char in _CLOSE:
                depth -= 1
            at = match.end()
        self.pos = at
        self.index += 1
        return line, self.buf[start:at]


def entries(stream: BinaryIO) -> Iterator[Entry]:
    """The entries of a HAR read from ``stream``, one parsed at a time."""
    for index, (line, text) in enumerate(_Scanner(stream).entries()):
        try:
            item = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON in log.entries[{index}]: {exc.msg}",
                line=line + text.count(b"\n", 0, exc.pos),
            ) from None
        yield _entry(index, line, item)


def _entry(index: int, line: int, item: Any) -> Entry:
    request = item.get("request") if isinstance(item, dict) else None
    response = item.get("response") if isinstance(item, dict) else None
    request = request if isinstance(request, dict) else {}
    response = response if isinstance(response, dict) else {}
    content = response.get("content")
    content = content if isinstance(content, dict) else {}
    post = request.get("postData")
    body = post.get("text") if isinstance(post, dict) else None
    headers = response.get("headers")
    return Entry(
        index,
        line,
        method=_str(request.get("method")),
        url=_str(request.get("url")),
        status=status_code(response.get("status")),
        content_type=_str(content.get("mimeType")) or header(headers, "content-type"),
        request=json_object(body),
        load=lambda: _body(content, header(headers, "content-encoding")),
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _body(content: dict[str, Any], encoding: str | None) -> bytes:
    text = content.get("text")
    if not isinstance(text, str):
        return b""
    if content.get("encoding") == "base64":
        data = b"".join(b64(part) for part in _chunks(text))
    else:
        data = text_bytes(text)
    return decoded(data, encoding)


def _chunks(text: str) -> list[str]:
    """Polly.JS's ``["<base64>", …]`` (one per chunk received), or the one base64 text."""
    if text.lstrip().startswith("["):
        try:
            parts = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise BodyError("bad base64: a JSON array of chunks that is not JSON") from None
        if isinstance(parts, list) and all(isinstance(p, str) for p in parts):
            return parts
        raise BodyError("bad base64: a JSON array of chunks that are not all strings")
    return [text]

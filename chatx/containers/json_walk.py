"""One JSON value too big to hold, walked as it is read: a HAR entry whose body is one
huge string (:mod:`chatx.containers.har`), or a whole JSON file of exchanges
(:mod:`chatx.containers.json_document`).

The value's tokens are found with a regular expression in the bytes held; every byte but
the strings to walk is copied as it passes into a *skeleton* that orjson parses once the
value ends (and checks as it grows, so that a huge value that is no JSON is said early).
Each string to walk (one at a path the caller names, such as ``response.content.text``)
is cut into pieces at escape and character boundaries (:func:`cut`), each decoded by
orjson as a JSON string of its own, exactly as the whole would decode, and kept in a
temporary file (``bodies.Spool``); the skeleton holds a marker string in its place, and
the parsed value holds the spool (or what the caller makes of it) there instead.

The walk reads its bytes through a :class:`ByteSource` (the HAR scanner, or a file's
stream: :class:`chatx.containers.json_document._Stream`), and imports no reader of a
container.
"""

from __future__ import annotations

import enum
import re
import secrets
from collections.abc import Callable
from typing import Any, NoReturn, Protocol

import orjson

from chatx.containers import bodies, exact
from chatx.errors import InputError
from chatx.limits import MAX_LINE, size

# Past this many bytes, a value is walked: held, it would be parsed (and its strings
# decoded) whole, several copies of a body of hundreds of MB.
BIG = 8 << 20
PIECE = 64 << 10  # the pieces a string is decoded in (larger ones cost page faults)

# A whole string, or a lone quote when it does not end in the bytes read; or a bracket,
# a colon, a comma.
TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|["{}\[\]:,]')
OPEN = {ord("{"), ord("[")}
CLOSE = {ord("}"), ord("]")}
QUOTE = ord('"')
# Between tokens: what JSON has there (blanks, numbers, literals) and more; anything else
# is no JSON, said at once rather than after reading on.
_SCALARS = re.compile(rb"[\s\w.+-]*+")
_SCALAR = re.compile(rb"[\w.+-]*+")  # an array's element that is no string, object or array
_BLANKS = re.compile(rb"[ \t\n\r]*+")
_RUN_BYTES = 1 << 20  # the most bytes of elements parsed at once (each value holds more)
# In a mask, inside a value: everything up to the next bracket of a nested value (or a
# lone quote, or the end): strings, plain values and flat objects.
SKIP = re.compile(rb'(?:[^"{}\[\]]++|"[^"]*+"|\{(?:[^"{}\[\]]++|"[^"]*+")*+\})*+')
# The same, passing over values nested up to four levels deep too (a cassette's request,
# headers of lists): most short values are passed over in one match.
_NESTED = rb'(?:[^"{}\[\]]++|"[^"]*+")*+'
for _ in range(4):
    _NESTED = rb'(?:[^"{}\[\]]++|"[^"]*+"|\{' + _NESTED + rb"\}|\[" + _NESTED + rb"\])*+"
_PASS = re.compile(_NESTED)
# A run of an array's elements each ended by its comma, in a mask: strings, values nested
# up to five levels deep, scalars (then read by orjson in one call).
_RUN = re.compile(
    rb'(?:(?:"[^"]*+"|\{'
    + _NESTED
    + rb"\}|\["
    + _NESTED
    + rb"\]|[\w.+-]++)[ \t\n\r]*+,[ \t\n\r]*+)++"
)
_DEEPEST = 1024  # orjson reads no deeper: the walk need not either
_CHECKED = 1 << 20  # the skeleton is first checked at this size (or larger, when asked)
# A string in the skeleton where a walked one stood: no file holds it (the token is drawn
# anew in each process), so the parsed value says where each walked string was kept.
_MARK = f"chatx walked {secrets.token_hex(8)} "


class _Any(enum.Enum):
    KEY = "any key"


# In a path of ``arrays``: whatever key an object's member has (Llama Stack's recordable
# mock keeps each call's chunks under the call's arguments as text).
ANY = _Any.KEY

# A path to a string to walk: the key each level is under (None: an array's element),
# then the string's key in the innermost object.
Path = tuple[str | None | _Any, ...]


def mask(data: bytes) -> bytes:
    """``data`` with every escaped backslash and escaped quote made ``__``: the same
    length, and each quote left is a string's start or end. ``data`` starts outside a
    string or at its opening quote (JSON has no backslash elsewhere), so the escapes
    pair up from the left as a JSON reader pairs them."""
    if b"\\\\" in data:
        data = data.replace(b"\\\\", b"__")
    return data.replace(b'\\"', b"__")


class ByteSource(Protocol):
    """The bytes a walk reads: those held in ``buf`` from ``pos`` on (``pos`` outside every
    string's inside), more of them, and their lines."""

    buf: bytes
    pos: int

    def more(self) -> bool:
        """Drop the bytes before ``pos`` (then 0) and read more; False at the end."""

    def line_at(self, at: int) -> int:
        """The line of ``buf[at]`` (lines only move forward)."""


class Elements(Protocol):
    """Where the elements of an array walked go, as they are read (see ``arrays``)."""

    def extend(self, values: list[Any]) -> None:
        """The next elements, parsed."""


class Walk:
    """One value walked from its first byte at the source's ``pos``.

    Every string at one of ``paths`` longer than ``keep`` bytes as written (-1: every
    one) is decoded into a spool made by ``spool()``, in pieces of ``piece`` bytes. The
    path is followed only as deep as the deepest of ``paths``; below that, a depth is
    counted. An array at a path of ``arrays`` is read element by element: each element
    (at most MAX_LINE bytes) parsed alone, exactly as the whole would parse it, and
    given to the :class:`Elements` that ``arrays[path]()`` made, which stands where the
    array stood (a marker in the skeleton). Errors say ``name`` (``not valid JSON in log.entries[3]``) and a line from
    ``line`` (that of the source's ``pos``) on.

    ``ended()`` says that the input ends inside the value; without it the value is a
    whole document, and its errors are said as :func:`chatx.containers.exact.document`
    says them: ``exact()`` then tells whether a run of 19 digits was read anywhere, which
    makes the skeleton parsed with integers exact, and lone surrogates read as
    ``JSON.parse`` reads them.
    """

    def __init__(
        self,
        source: ByteSource,
        line: int,
        paths: frozenset[Path],
        *,
        name: str,
        piece: int = PIECE,
        keep: int = -1,
        check: int = 0,
        spool: Callable[[], bodies.Spool] = bodies.Spool,
        ended: Callable[[], NoReturn] | None = None,
        exact: Callable[[], bool] | None = None,
        arrays: dict[Path, Callable[[], Elements]] | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.paths = paths
        self.arrays = arrays or {}
        self.wild = [path for path in self.arrays if ANY in path]
        self.levels = max(len(path) for path in (*paths, *self.arrays))
        self.name = name
        self.piece = max(piece, 16)  # room for the cut to step back (see cut)
        self.keep = keep
        self.spool = spool
        self.ended = ended
        self.exact = exact
        self.skeleton = bytearray()
        self.depth = 0
        # Per level down to the deepest path's: [is_object, expecting_key, last key,
        # key it is under].
        self.frames: list[list[Any]] = []
        self.spools: dict[str, bodies.Spool] = {}  # marker -> the string it stands for
        self.sinks: dict[str, Elements] = {}  # marker -> the array it stands for
        # (skeleton length at an array's marker, lines the array held): lines said from
        # the skeleton move on by those of the arrays before them.
        self.shifts: list[tuple[int, int]] = []
        self.between = b""  # what stood between two elements of an array, and their ends
        self.checked = max(check, _CHECKED)  # the skeleton's size at its next check
        # A lone surrogate orjson refused in a walked string, which JSON.parse reads: an
        # error only if the document is read by orjson (no run of 19 digits in it).
        self.lone: tuple[str, int] | None = None
        self.masked = (b"", b"")  # the bytes held, and their mask (see _short)

    def value(self) -> tuple[Any, dict[str, bodies.Spool]]:
        """The value parsed, a marker where each walked string stood, and the spool of
        each marker."""
        source = self.source
        while True:
            buf = source.buf
            match = TOKEN.search(buf, source.pos)
            end = len(buf) if match is None else match.start()
            self._between(end)
            if match is not None and self._taken(buf, end):
                continue
            if match is None or match.end() - end == 1 and buf[end] == QUOTE:
                if not source.more():  # a string that does not end in the bytes read
                    self._end()
                continue
            self.skeleton += buf[end : match.end()]
            source.pos = match.end()
            if self._token(match.group()):
                if self.lone is not None and not self._exact():
                    self.fail(*self.lone)
                return self._parsed(whole=True), self.spools

    def _taken(self, buf: bytes, at: int) -> bool:
        """Whether the token at ``at`` was taken otherwise than as a token is (a string at
        a path walked, a short value copied whole), or more bytes were read to tell: then
        the next token is searched for again."""
        char = buf[at]
        if char == QUOTE and self._path() in self.paths:
            if self._long():
                self._string()
                return True
        elif char == 0x5B and self.arrays and (made := self._sink()) is not None:
            self._array(made())
            return True
        elif char in OPEN and self.keep >= 0 and self.depth:  # the value itself is walked
            if self._short():
                return True
        else:
            return False
        return self.source.buf is not buf

    def _short(self) -> bool:
        """At a value's opening bracket: when the value ends within ``keep`` bytes, no
        string in it is one to walk, and it is copied whole into the skeleton, its end
        found by its brackets in a masked copy of the bytes (a regular expression passes
        over strings and flat objects): a cassette's many small interactions cost no
        Python work per token."""
        source = self.source
        while True:
            masked = self._mask()
            start = source.pos
            end = min(len(masked), start + self.keep + 1)
            at = closing(masked, start, end)
            if at >= 0:
                self.skeleton += source.buf[start:at]
                source.pos = at
                return True
            if end - start > self.keep or not source.more():
                return False

    def _mask(self) -> bytes:
        """:func:`mask` of the bytes held (from outside a string, or no escape's inside)."""
        if self.masked[0] is not self.source.buf:
            self.masked = (self.source.buf, mask(self.source.buf))
        return self.masked[1]

    def _exact(self) -> bool:
        return self.exact is not None and self.exact()

    def _between(self, end: int) -> None:
        """Copy the bytes before the next token; no JSON has other bytes there."""
        source = self.source
        span = source.buf[source.pos : end]
        self.skeleton += span
        source.pos = end
        if _SCALARS.fullmatch(span) is None:
            self._parsed(whole=True)  # the parser's error names what is wrong
            self.fail("not JSON")

    def _token(self, token: bytes) -> bool:
        """Follow one token; True when it ends the value."""
        char, frames = token[0], self.frames
        if char in OPEN:
            self.depth += 1
            if self.depth <= self.levels:
                under = frames[-1][2] if frames and frames[-1][0] else None
                frames.append([char == 123, char == 123, None, under])
        elif char in CLOSE:
            if self.depth <= self.levels:
                frames.pop()
            self.depth -= 1
            if self.depth <= 0:
                return True
        elif frames and self.depth <= self.levels and frames[-1][0]:
            frame = frames[-1]
            if char == 44:  # ,
                frame[1] = True
            elif char == QUOTE and frame[1]:
                frame[1], frame[2] = False, _key(token)
        if self.depth > _DEEPEST:  # as orjson says it (cut short here, it says otherwise)
            self._too_deep()
        if len(self.skeleton) > self.checked and self.depth <= self.levels:
            # orjson tells a document cut short only while it is shallow (deep, it may
            # say it cannot allocate); checked again at twice the size: linear in all.
            self.checked *= 2
            self._parsed(whole=False)
        return False

    def _too_deep(self) -> NoReturn:
        if self._exact():  # as the standard library says it
            self._close()
            raise InputError(f"{self.name}: nested too deep")
        self.fail("depth limit exceeded", self._moved(self.skeleton.count(b"\n") + 1))

    def _path(self) -> Path | None:
        """The path of the value about to be read, when it is a key's value no deeper
        than the paths followed."""
        frames = self.frames
        if self.depth != len(frames) or not frames:
            return None
        top = frames[-1]
        if not top[0] or top[1]:
            return None
        return (*(frame[3] for frame in frames[1:]), top[2])

    def _sink(self) -> Callable[[], Elements] | None:
        """What makes the sink of the array about to be read, when it is at a path of
        ``arrays`` (or one of :data:`ANY` key)."""
        path = self._path()
        if path is None:
            return None
        made = self.arrays.get(path)
        for wild in self.wild if made is None else ():
            if len(wild) == len(path) and all(
                step == key or step is ANY and type(key) is str
                for step, key in zip(wild, path, strict=True)
            ):
                return self.arrays[wild]
        return made

    def _array(self, sink: Elements) -> None:
        """The array from its opening bracket at ``pos``, its elements given to ``sink``
        one by one as they are read; the skeleton holds a marker in its place. ``pos``
        stays where what follows the last element (or comma, or the "[") starts."""
        source = self.source
        mark = f"{_MARK}{len(self.spools) + len(self.sinks)}"
        self.sinks[mark] = sink
        self.skeleton += orjson.dumps(mark)
        first = source.line_at(source.pos)
        source.pos += 1
        state = b"["  # what was read last: the "[", an element ("[0") or a comma ("[0,")
        while True:
            at = self._blank()
            char = source.buf[at]
            if char == 0x5D and state != b"[0,":
                source.pos = at + 1
                break
            if char == 44 and state == b"[0":
                source.pos, state = at + 1, b"[0,"
                continue
            if char == 44 or char == 0x5D or state == b"[0":
                self._wrong(state, at)
            if self._run(at, sink):
                state = b"[0,"
                continue
            end = self._element_end(at)
            if end == source.pos:  # no value starts here
                self._wrong(state, end)
            self._element(source.pos, end, sink)
            source.pos, state = end, b"[0"
        self.shifts.append((len(self.skeleton), source.line_at(source.pos) - first))

    def _run(self, at: int, sink: Elements) -> bool:
        """The elements from ``at`` that end with their comma in the bytes held, read
        by orjson as one array when it reads them as the whole would (no run of 19
        digits, no error: those are read element by element); then ``pos`` is past
        the last comma.

        Their end is first looked for as the bytes between the first two elements run
        (``},\n  {``, a recorder's indentation): orjson reads the elements up to there
        only if the comma is the array's own (cut inside a string or a nested value,
        something is left open). Else a regular expression finds it in a mask."""
        source = self.source
        buf = source.buf
        limit = min(len(buf), at + _RUN_BYTES)
        last = buf.rfind(self.between, at, limit) + 1 if self.between else 0
        values = self._values(at, last) if last > at else None
        if values is None:
            masked = self._mask()
            run = _RUN.match(masked, at, limit)
            if run is None:
                return False
            last = masked.rindex(b",", at, run.end())
            values = self._values(at, last)
            if values is None:
                return False
            if run.end() < limit:
                self.between = buf[last - 1 : run.end() + 1]
        sink.extend(values)
        source.pos = last + 1
        return True

    def _values(self, at: int, end: int) -> list[Any] | None:
        """The elements from ``at`` to ``end`` as orjson reads them as an array, when it
        reads them as the whole would read them."""
        piece = self.source.buf[at:end]
        if self._exact() and exact.may_hold_big_int(piece):
            return None
        try:
            values: list[Any] = orjson.loads(b"[" + piece + b"]")
        except orjson.JSONDecodeError:
            return None
        return values

    def _blank(self) -> int:
        """Where the next byte that is no blank is, from ``pos`` (read on to it)."""
        source = self.source
        at = source.pos
        while True:
            at = _BLANKS.match(source.buf, at).end()  # type: ignore[union-attr]
            if at < len(source.buf):
                return at
            if at - source.pos > PIECE:  # a long run of blanks is not held
                source.pos = at
            at -= source.pos
            if not source.more():
                self._end()
            at += source.pos

    def _wrong(self, state: bytes, at: int) -> NoReturn:
        """What stands at ``at`` in an array is not what JSON has after ``state`` (see
        :meth:`_array`): said as orjson says it of the whole, from ``pos`` on."""
        source = self.source
        try:
            orjson.loads(state + source.buf[source.pos : at + 64])
        except orjson.JSONDecodeError as exc:
            self.fail(exc.msg, source.line_at(source.pos) + exc.lineno - 1)
        self.fail("unexpected character", source.line_at(at))

    def _element_end(self, start: int) -> int:
        """Where the element from ``start`` ends, read on to it (``pos`` is then its
        start): past a string's closing quote or a value's closing bracket (found in a
        masked copy), or a scalar's last byte; at most MAX_LINE bytes on."""
        source = self.source
        source.pos = start
        while True:
            start, buf = source.pos, source.buf
            char = buf[start]
            if char == QUOTE or char in OPEN:
                masked = self._mask()
                if char == QUOTE:
                    close = masked.find(b'"', start + 1)
                    found = close + 1 if close >= 0 else -1
                else:
                    found = closing(masked, start, len(masked))
            else:
                found = _SCALAR.match(buf, start).end()  # type: ignore[union-attr]
                found = found if found < len(buf) else -1
            if found >= 0:
                return found
            if len(buf) - start > MAX_LINE:
                self.fail(f"an element longer than {size(MAX_LINE)}", source.line_at(start))
            if not source.more():
                self._parsed(whole=False)  # an error before it is said first
                self._element(source.pos, len(source.buf), None)  # said as the whole says it
                self._end()

    def _element(self, start: int, end: int, sink: Elements | None) -> None:
        """One element, parsed alone as the whole document parses it: deep enough to
        be refused, it is parsed at its depth, and a scalar in brackets (what ends it
        tells a bad one); with a run of 19 digits, exactly; with a lone surrogate, as
        JSON.parse reads it if the document may be so read. No ``sink``: the input
        ends in it, and no bracket closes it."""
        source = self.source
        piece = source.buf[start:end]
        levels = self.depth + 1
        if len(piece) <= _DEEPEST - levels - 8:
            levels = 0 if piece[:1] in b'"{[' else 1
        closed = b"]" * levels if sink is not None else b""
        try:
            if self._exact() and exact.may_hold_big_int(piece):
                value = self._exactly(piece)
            else:
                value = orjson.loads(b"[" * levels + piece + closed)
                for _ in range(levels):
                    value = value[0]
        except orjson.JSONDecodeError as exc:
            line = source.line_at(start) + exc.lineno - 1
            if self.exact is None or "surrogate" not in exc.msg:
                self.fail(exc.msg, line)
            value = self._exactly(piece)
            if self.lone is None:
                self.lone = (exc.msg, line)
        if sink is not None:
            sink.extend([value])

    def _exactly(self, piece: bytes) -> Any:
        try:
            return exact.loads(piece)
        except ValueError as exc:
            self._close()
            raise InputError(f"{self.name}: {exc}") from None

    def _long(self) -> bool:
        """Whether the string opening at ``pos`` is longer than ``keep`` bytes (False
        when the input ends first: said where the string is read as any other)."""
        if self.keep < 0:
            return True
        source = self.source
        while True:
            inside = source.buf[source.pos + 1 : source.pos + self.keep + 2]
            if b"\\" in inside:
                inside = mask(inside)
            if b'"' in inside:
                return False
            if len(inside) > self.keep:
                return True
            if not source.more():
                return False

    def _string(self) -> None:
        """The string from its opening quote at ``pos``, decoded into a spool piece by
        piece; the skeleton holds a marker in its place."""
        source = self.source
        self.masked = (b"", b"")  # not kept while a long string is read
        text = self.spool()
        mark = f"{_MARK}{len(self.spools)}"
        self.spools[mark] = text
        self.skeleton += orjson.dumps(mark)
        at = source.pos + 1
        while True:
            buf = source.buf
            limit = min(len(buf), at + self.piece)
            if limit - at == self.piece:  # most pieces of a long string hold no end of it
                end = cut(buf, at, limit)
                decoded = _inside(buf[at:end])
                if decoded is not None:
                    text.write(decoded.encode("utf-8", "surrogatepass"))
                    at = end
                    continue
            chunk = buf[at:limit]  # the string's end, or an error, is in it: found here
            if b"\\" in chunk:  # at is no escape's inside: masked right
                chunk = mask(chunk)
            close = chunk.find(b'"')
            if close >= 0:
                self._decode(at, at + close, text)
                source.pos = at + close + 1
                break
            if limit - at < self.piece:  # the bytes read end first
                source.pos = at
                if not source.more():
                    self._end()
                at = source.pos
                continue
            end = cut(buf, at, limit)
            self._decode(at, end, text)
            at = end
        text.done()

    def _decode(self, start: int, end: int, text: bodies.Spool) -> None:
        """One piece of the string, decoded as orjson decodes the whole."""
        source = self.source
        piece = source.buf[start:end]  # orjson decodes text at GB/s: no fast path is faster
        try:
            decoded = orjson.loads(b'"' + piece + b'"')
        except orjson.JSONDecodeError as exc:
            decoded = self._lone(piece, exc.msg, source.line_at(start) + exc.lineno - 1)
        text.write(decoded.encode("utf-8", "surrogatepass"))

    def _lone(self, piece: bytes, why: str, line: int) -> str:
        """A piece orjson refuses for a lone surrogate, read as JSON.parse reads it, when
        the document may be read so (see :func:`exact.document`); else the error."""
        if self.exact is None or "surrogate" not in why:
            self.fail(why, line)
        try:
            decoded = exact.loads(b'"' + piece + b'"')
        except ValueError:
            self.fail(why, line)
        if self.lone is None:
            self.lone = (why, line)
        return str(decoded)

    def _parsed(self, whole: bool) -> Any:
        """The skeleton parsed; ``whole`` False: only an error before its end (one that
        more bytes would not mend, nor 19 digits read later) is said, and None given."""
        if self._exact():
            if not whole:
                return None
            try:
                return exact.loads(bytes(self.skeleton))
            except ValueError as exc:
                self._close()
                raise InputError(f"{self.name}: {exc}") from None
        try:
            return orjson.loads(self.skeleton)
        except orjson.JSONDecodeError as exc:
            if not whole and (
                exc.msg.startswith("unexpected end of data")
                or self.exact is not None
                and ("surrogate" in exc.msg or "infinity" in exc.msg)
            ):
                return None
            self.fail(exc.msg, self._moved(exc.lineno))

    def _moved(self, lineno: int) -> int:
        """The input's line of the skeleton's line ``lineno``."""
        line = self.line + lineno - 1
        for at, lines in self.shifts:
            if self.skeleton.count(b"\n", 0, at) + 1 <= lineno:
                line += lines
        return line

    def _end(self) -> NoReturn:
        """The input ends inside the value."""
        if self.ended is not None:
            self._close()
            self.ended()
        line = self.source.line_at(len(self.source.buf))
        self._parsed(whole=False)  # an error before the end is said first, as orjson does
        self.fail("unexpected end of data", line)

    def fail(self, why: str, line: int | None = None) -> NoReturn:
        self._close()
        if self.ended is None and why.startswith("str is not valid UTF-8"):
            line = 1  # orjson checks a document's UTF-8 first, and says it at its start
        raise InputError(f"{self.name}: {why}", line=self.line if line is None else line)

    def _close(self) -> None:
        for text in self.spools.values():
            text.close()


def closing(masked: bytes, start: int, end: int) -> int:
    """Where the value whose opening bracket is at ``masked[start]`` ends (just past
    its closing bracket), or -1 when it goes on past ``end``."""
    depth, at = 1, start + 1
    while depth and at < end:
        at = _PASS.match(masked, at, end).end()  # type: ignore[union-attr]  # matches ''
        if at == end or masked[at] == QUOTE:  # a string goes on past the end
            return -1
        depth += 1 if masked[at] in OPEN else -1
        at += 1
    return at if not depth else -1


def _inside(piece: bytes) -> str | None:
    """A piece of a string's inside decoded, when it is all inside: orjson reads it as a
    string of its own only if no quote in it ends the string (the rest would follow the
    string) and it has no error. None otherwise: the end, or the error, is then found
    by a mask. No copy of a piece is masked when it need not be."""
    try:
        decoded: str = orjson.loads(b'"' + piece + b'"')
    except orjson.JSONDecodeError:
        return None
    return decoded


def _key(token: bytes) -> str:
    if b"\\" in token:
        try:
            key = orjson.loads(token)
        except orjson.JSONDecodeError:  # said when the skeleton is parsed
            return ""
        return key if isinstance(key, str) else ""
    return token[1:-1].decode("utf-8", "replace")


def put(value: Any, path: Path, spools: dict[str, Any], make: Callable[[Any], Any]) -> None:
    """Each marker at ``path`` under ``value`` replaced by ``make(spool)`` of its spool
    (or of the :class:`Elements` of an array)."""
    *way, last = path
    nodes = [value]
    for step in way:
        if step is None:
            nodes = [item for node in nodes if isinstance(node, list) for item in node]
        elif step is ANY:
            nodes = [item for node in nodes if isinstance(node, dict) for item in node.values()]
        else:
            nodes = [node[step] for node in nodes if isinstance(node, dict) and step in node]
    for node in nodes:
        if not isinstance(node, dict):
            continue
        for key in list(node) if last is ANY else [last]:
            said = node.get(key)
            if isinstance(said, str) and said in spools:
                node[key] = make(spools[said])


_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")


def cut(buf: bytes, start: int, end: int) -> int:
    """Where to end a piece of a string's inside that runs from ``start`` (no escape's
    inside) to at least ``end``: ``end``, or before it so that no escape, no surrogate
    pair written as two escapes and no UTF-8 character is cut. At most 14 bytes back."""
    at = end
    slash = buf.rfind(b"\\", max(start, at - 5), at)
    wide = 6 if buf[slash + 1 : slash + 2] == b"u" else 2
    if slash >= 0 and slash + wide > at and opens_escape(buf, start, slash):
        at = slash
    if at - start >= 6 and _HIGH_SURROGATE.match(buf, at - 6) and opens_escape(buf, start, at - 6):
        at -= 6  # a pair stays together: apart, each half is an error
    for back in range(1, 4):  # a UTF-8 character's bytes stay together
        if at - back < start:
            break
        byte = buf[at - back]
        if byte < 0x80:
            break
        if byte >= 0xC0:
            if back < (2 if byte < 0xE0 else 3 if byte < 0xF0 else 4):
                at -= back
            break
    return at


def opens_escape(buf: bytes, start: int, at: int) -> bool:
    """Whether the backslash at ``at`` opens an escape: an odd run of them ends there."""
    run = at + 1 - start - len(buf[start : at + 1].rstrip(b"\\"))
    return run % 2 == 1


def fill(read: Callable[[int], bytes], size: int) -> bytes:
    """``size`` bytes read (fewer only at the end). A source that reads on by as many
    bytes again as it holds scans a long value a bounded number of times, linear in
    it, only if each read gives that many: a pipe gives 64 KiB a read, and a 64 MiB
    element read so would be scanned a thousand times."""
    chunk = read(size)
    if len(chunk) >= size or not chunk:
        return chunk
    pieces = [chunk]
    got = len(chunk)
    while got < size and (chunk := read(size - got)):
        pieces.append(chunk)
        got += len(chunk)
    return b"".join(pieces)

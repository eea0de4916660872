"""What the readers of recorded exchanges share: the :class:`Entry` each yields, and
the decoding of bodies as recorders store them (base64, a ``Content-Encoding`` still
applied, headers in each recorder's shape)."""

from __future__ import annotations

import binascii
import io
import os
import re
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, BinaryIO, cast

import orjson

from chatx.containers import compressed, members, payload
from chatx.errors import InputError
from chatx.limits import MAX_LAYERS


class BodyError(Exception):
    """A recorded body that cannot be decoded (bad base64, bad gzip): the entry is
    skipped with a note, the others are read."""


@dataclass(slots=True)
class Entry:
    """One recorded exchange: what ``chatx ls`` lists, and the body to read as a stream."""

    index: int
    line: int | None = None  # where the exchange starts in the file, when known
    method: str | None = None
    url: str | None = None
    status: int | None = None
    content_type: str | None = None
    request: dict[str, Any] | None = None  # the request body, when it is a JSON object
    # () -> the response body's bytes; raises BodyError. Called when the body is needed.
    load: Callable[[], bytes] = field(default=lambda: b"", repr=False)
    # Why the exchange cannot be read whatever its body (its recorded request nests too
    # deep): said as its body's error, so that it is skipped, or refused when named.
    refused: str | None = field(default=None, repr=False)
    # A body too big to hold (see :class:`Spool`): () -> its bytes in pieces, read anew
    # at each call, raising BodyError where they cannot be had. ``load`` then joins them.
    stream: Callable[[], Iterator[bytes]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.request is TOO_DEEP_REQUEST or (
            self.request is not None and payload.deeper_than_max(self.request)
        ):
            self.request = None
            self.refused = f"its recorded request is {payload.TOO_DEEP}"

    def body(self) -> bytes:
        """The response body's bytes; BodyError when they cannot be had, nor a body
        written back from what the recorder parsed (nested past what JSON writes)."""
        if self.refused is not None:
            raise BodyError(self.refused)
        try:
            return self.load()
        except (orjson.JSONEncodeError, RecursionError):
            raise BodyError(f"its recorded body is {payload.TOO_DEEP}") from None

    def pieces(self) -> Iterator[bytes]:
        """The response body's bytes in pieces: a body too big to hold as they are
        decoded, any other whole; BodyError where they cannot be had."""
        if self.stream is None or self.refused is not None:
            yield self.body()
            return
        yield from self.stream()


def exchange(
    index: int,
    headers: Any,
    body: Callable[[], bytes],
    request: Callable[[], dict[str, Any] | None],
    *,
    line: int | None = None,
    method: str | None = None,
    url: str | None = None,
    status: int | None = None,
    content_type: str | None = None,
    pieces: Callable[[], Iterator[bytes]] | None = None,
) -> Entry:
    """The :class:`Entry` of one HTTP exchange as a recorder keeps it: the response's
    ``headers`` (any shape :func:`header` reads) give its content type, unless the
    recorder says it apart (``content_type``), and the ``Content-Encoding`` that
    ``body()``'s bytes may still carry, undone when the body is read. ``request()``
    reads the recorded request body now (see :func:`request_or_refusal`). A body too
    big to hold comes as ``pieces()`` instead of ``body()``, and is decoded in pieces."""
    recorded, refused = request_or_refusal(request)
    encoding = header(headers, "content-encoding")
    if pieces is None:  # held, but decompressed in pieces: a little gzip may say a lot
        held = body

        def given() -> Iterator[bytes]:
            yield _recorded(held)

    else:
        given = pieces
        body = lambda: b"".join(given())  # noqa: E731  # body() of such an entry: all of it

    def stream() -> Iterator[bytes]:
        return decoded_pieces(given(), encoding)

    return Entry(
        index,
        line,
        method=method,
        url=url,
        status=status,
        content_type=content_type or header(headers, "content-type"),
        request=recorded,
        load=lambda: decoded(body(), encoding),
        refused=refused,
        stream=stream,
    )


def _recorded(body: Callable[[], bytes]) -> bytes:
    """``body()``, a parsed body too deep to write back said as :meth:`Entry.body` says it."""
    try:
        return body()
    except (orjson.JSONEncodeError, RecursionError):
        raise BodyError(f"its recorded body is {payload.TOO_DEEP}") from None


def objects(item: Any, *names: str) -> tuple[dict[str, Any], ...]:
    """The objects under ``names`` in a recorded ``item`` (``{}`` for one that is
    missing or no object, or when ``item`` is none): a recorder's file is read as far
    as it holds together."""
    if not isinstance(item, dict):
        return tuple({} for _ in names)
    values = (item.get(name) for name in names)
    return tuple(value if isinstance(value, dict) else {} for value in values)


def verb(method: Any) -> str | None:
    """A recorded request method, upper-cased (recorders write ``get`` as well as ``GET``)."""
    return method.upper() if isinstance(method, str) else None


def request_or_refusal(
    read: Callable[[], dict[str, Any] | None],
) -> tuple[dict[str, Any] | None, str | None]:
    """The recorded request ``read()`` gives, or why the exchange is refused: a request
    with a value JSON cannot hold (a BodyError) is not read at all, since what it asked
    for would be guessed otherwise; the exchange is then one that cannot be read."""
    try:
        return read(), None
    except BodyError as exc:
        return None, str(exc)


def header(headers: Any, name: str) -> str | None:
    """A header's value from the shapes recorders store: a mapping of names to strings
    or lists of strings (VCR), or a list of ``{name, value}`` (HAR); any case."""
    name = name.lower()
    if isinstance(headers, dict):
        for key, value in headers.items():
            if isinstance(key, str) and key.lower() == name:
                if isinstance(value, list):
                    value = ", ".join(str(v) for v in value)
                return None if value is None else str(value)
    elif isinstance(headers, list):
        for item in headers:
            if isinstance(item, dict) and str(item.get("name", "")).lower() == name:
                value = item.get("value")
                return None if value is None else str(value)
    return None


_BLANKS = b" \t\n\r\x0b\x0c"  # what \s matches in a bytes regular expression


def b64(text: str | bytes) -> bytes:
    """Base64 text decoded (line breaks allowed, nothing else); BodyError otherwise."""
    if isinstance(text, str):
        try:
            text = text.encode("ascii")
        except UnicodeEncodeError:
            raise BodyError("bad base64: a character that is not base64") from None
    try:  # whitespace deleted by translate: C speed, where a regex took 40 ms a MB
        return binascii.a2b_base64(text.translate(None, _BLANKS), strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        raise BodyError(f"bad base64: {exc}") from None


def decoded(data: bytes, encoding: str | None, limit: int | None = None) -> bytes:
    """A body with its ``Content-Encoding`` undone, when the bytes still carry it:
    recorders differ in whether they keep the body as sent or as read (a HAR's text is
    decoded already, a cassette may keep the gzip bytes). Compressed bytes are known by
    their magic whatever the header says; deflate and brotli, which have none, by the
    header, unless the bytes read as text already.

    Every layer (``gzip, gzip``; a gzip body of gzip bytes) is undone through
    :func:`chatx.containers.compressed.decompress`, each at most ``limit`` bytes, at most
    :data:`~chatx.limits.MAX_LAYERS` of them; a BodyError names what was exceeded."""
    words = [w.strip().lower() for w in (encoding or "").split(",") if w.strip()]
    for _ in range(MAX_LAYERS):
        kind = _layer(data, words)
        if kind is None:
            return data
        try:
            data = compressed.decompress(data, kind, limit)
        except InputError as exc:
            raise BodyError(exc.message) from None
    if _layer(data, words) is not None:
        raise BodyError(
            f"compressed more than {MAX_LAYERS} times over (chatx undoes at most"
            f" {MAX_LAYERS} layers: MAX_LAYERS)"
        )
    return data


def decoded_pieces(
    pieces: Iterable[bytes], encoding: str | None, limit: int | None = None
) -> Iterator[bytes]:
    """:func:`decoded` of a body that comes in pieces, given out in pieces: each layer
    told from its first bytes as :func:`decoded` tells it from all of them, and undone
    by a streaming decompressor with the same limits."""
    words = [w.strip().lower() for w in (encoding or "").split(",") if w.strip()]
    stream: Iterator[bytes] = iter(pieces)
    for layers in range(MAX_LAYERS + 1):
        head, stream = _head(stream, _TOLD)
        kind = _layer(head, words)
        if kind is None:
            yield from stream
            return
        if layers == MAX_LAYERS:
            raise BodyError(
                f"compressed more than {MAX_LAYERS} times over (chatx undoes at most"
                f" {MAX_LAYERS} layers: MAX_LAYERS)"
            )
        stream = _inflated(stream, kind, limit)


_TOLD = 256  # the first bytes that tell a layer (see _layer and _looks_like_text)
_PIECE = 64 << 10  # the pieces a body too big to hold is read in


def _head(stream: Iterator[bytes], size: int) -> tuple[bytes, Iterator[bytes]]:
    """The first ``size`` bytes of ``stream`` (all, when fewer), and the stream again."""
    taken: list[bytes] = []
    held = 0
    for piece in stream:
        taken.append(piece)
        held += len(piece)
        if held >= size:
            break
    head = b"".join(taken)
    return head[:size], chain((head,), stream)


def _inflated(stream: Iterator[bytes], kind: str, limit: int | None) -> Iterator[bytes]:
    try:
        with compressed.open_stream(kind, io.BufferedReader(_Raw(stream)), limit) as out:
            while piece := out.read(_PIECE):
                yield piece
    except InputError as exc:
        raise BodyError(exc.message) from None


class _Raw(io.RawIOBase):
    """Pieces of bytes as a binary file to read."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._pieces = pieces
        self._held = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._held:
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._held = memoryview(piece)
        size = min(len(buffer), len(self._held))
        buffer[:size] = self._held[:size]
        self._held = self._held[size:]
        return size


def reader(pieces: Iterator[bytes]) -> io.BufferedReader:
    """A body in pieces as a binary file (read, read1), read as it is asked for."""
    return io.BufferedReader(_Raw(pieces), _PIECE)


def again(head: bytes, stream: BinaryIO) -> BinaryIO:
    """``stream`` as it was before ``head`` was read from it."""
    return cast(BinaryIO, _Again(head, stream))


class _Again:
    """A stream's reads (``read``, ``read1``) given ``head`` first: what was read of it
    to tell what it holds. Its bytes are not copied again, as a buffer would copy them."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head = head
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        return self._given(size, self.stream.read)

    def read1(self, size: int = -1) -> bytes:
        return self._given(size, getattr(self.stream, "read1", self.stream.read))

    def _given(self, size: int, read: Callable[[int], bytes]) -> bytes:
        head = self.head
        if not head:
            return read(size)
        if 0 <= size < len(head):
            self.head = head[size:]
            return head[:size]
        self.head = b""
        return head + read(-1) if size < 0 else head


class Spool:
    """A body's text too big to hold, kept in an unnamed temporary file as it is read
    (``TMPDIR``; gone when the spool is), and read again in pieces at each call of
    :meth:`pieces`: a file of exchanges is read once, as it comes, while a body is
    read twice (told, then converted)."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115  # lives as long as the spool
        # Closed with the spool: the entry that holds it may be dropped anywhere.
        self.close = weakref.finalize(self, self.file.close)
        self.size = 0
        self.ascii = True  # every byte written is ASCII

    def write(self, data: bytes) -> None:
        self.file.write(data)
        self.size += len(data)
        self.ascii = self.ascii and data.isascii()

    def done(self) -> None:
        self.file.flush()

    def pieces(self, size: int = _PIECE) -> Iterator[bytes]:
        """The bytes written, in pieces; each call reads them anew (os.pread: calls may
        be read side by side)."""
        fd = self.file.fileno()
        for at in range(0, self.size, size):
            yield os.pread(fd, min(size, self.size - at), at)


@dataclass(frozen=True, slots=True)
class Walked:
    """A body's string too big to hold, walked out of the file that held it (a YAML or
    JSON cassette) into a spool: its text, or with ``base64`` the base64 text of bytes
    (YAML's ``!!binary``, Ruby's ``!binary``). It stands where the string stood in the
    document the rest of the file was read into."""

    text: Spool
    base64: bool = False

    def pieces(self) -> Iterator[bytes]:
        """The bytes it stands for, in pieces: as the whole string would give them
        (:func:`text_bytes`, or :func:`b64` of it)."""
        if not self.base64:
            return self.text.pieces()
        if not self.text.ascii:
            raise BodyError("bad base64: a character that is not base64")
        return b64_pieces(self.text.pieces())


def b64_pieces(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """:func:`b64` of base64 text that comes in pieces (ASCII bytes), given out in
    pieces, with the same bytes or the same error as the whole text decoded at once.

    Decoded a whole number of quads at a time while no padding is seen: binascii's
    strict mode has no state there but the quad before. From the quad where padding starts,
    what decides the end is kept (a run of ``=`` said in at most 8, and the character
    after it, where the whole text's error is found) and decoded last."""
    held, done, padded = b"", 0, False
    for piece in pieces:
        data = held + piece.translate(None, _BLANKS)
        if not padded:
            pad = data.find(b"=")
            # The last whole quad is held too: binascii tells padding that opens a quad
            # from one that opens the text by what comes before it.
            cut = max(0, (len(data) if pad < 0 else pad) // 4 * 4 - 4)
            if cut:
                yield _a2b(data[:cut], done)
                done += cut
            data = data[cut:]
            if pad < 0:
                held = data
                continue
            padded = True
        held = _padding(data)
        if not held.endswith(b"="):
            break  # a character after the padding: the error is there, whatever follows
    yield _a2b(held, done)


def _padding(data: bytes) -> bytes:
    """From the quad where padding starts: its data, the run of ``=`` (at most 8 of
    them: binascii counts no further) and the first character after the run."""
    first = data.find(b"=")
    rest = data[first:]
    after = rest.lstrip(b"=")
    return data[:first] + b"=" * min(len(rest) - len(after), 8) + after[:1]


_COUNT = re.compile(r"number of data characters \((\d+)\)")


def _a2b(data: bytes, before: int) -> bytes:
    """A whole number of quads (or the end) decoded; ``before`` data characters came
    before them, which an error that counts them says."""
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        said = _COUNT.sub(lambda m: f"number of data characters ({int(m[1]) + before})", str(exc))
        raise BodyError(f"bad base64: {said}") from None


def _layer(data: bytes, words: list[str]) -> str | None:
    """The compression to undo next on ``data``: by its magic bytes, else a deflate or
    brotli the header names (each undone once: taken from ``words``)."""
    kind = compressed.detect(data)
    if kind is not None or not data:
        return kind
    for word in ("deflate", "br"):
        if word in words:
            words.remove(word)
            if _looks_like_text(data):
                return None  # already decoded
            if word == "br":
                return "br"
            # RFC 9110's deflate is zlib's format; some servers send it raw, no header.
            zlib_header = (
                data[0] & 0x0F == 8 and len(data) > 1 and (data[0] << 8 | data[1]) % 31 == 0
            )
            return "deflate" if zlib_header else "raw-deflate"
    return None


# Content-Encoding values a recorded body may still carry, and what reads each: the
# standard library, or a package chatx imports only when a body needs it (its extra).
ENCODINGS = (
    ("gzip", "gzip", None),
    ("deflate", "zlib", None),
    ("br", members.BROTLI, "brotli"),
)


def _looks_like_text(data: bytes) -> bool:
    try:
        data[:256].decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= 252  # a character cut at the end of the window
    return True


def text_bytes(value: Any) -> bytes:
    """A body value as bytes: text as UTF-8, bytes as they are."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return b""


# What json_object gives for a request nested past MAX_DEPTH: an Entry made with it is
# refused (see Entry.__post_init__), which no reader of exchanges has to know.
TOO_DEEP_REQUEST: dict[str, Any] = {}


def json_object(value: Any) -> dict[str, Any] | None:
    """A request body as a JSON object, when it is one (text, bytes or parsed); nested
    past MAX_DEPTH, :data:`TOO_DEEP_REQUEST`."""
    if isinstance(value, dict):
        return TOO_DEEP_REQUEST if payload.deeper_than_max(value) else value
    if isinstance(value, bytes | bytearray | str) and value:
        try:
            parsed = payload.request_json(value)
        except payload.TooDeep:
            return TOO_DEEP_REQUEST
        except orjson.JSONDecodeError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def status_code(value: Any) -> int | None:
    if isinstance(value, dict):
        value = value.get("code")
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):  # "200", or go-vcr's "200 OK"
        first = value.strip().split(" ", 1)[0]
        return int(first) if first.isdigit() else None
    return None

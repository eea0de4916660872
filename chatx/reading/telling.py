"""What each exchange of a file of recorded exchanges is, told once for every command:
a stream chatx reads (its format, from its records and the URL it was asked at, and its
records counted), a non-streaming object it reads, or something else, said in a word.
:mod:`chatx.reading.finding` tells each exchange of a file with :func:`classify`, and
``chatx ls`` lists what it says; a bare stream is told by its records as it is read,
and loads nothing of this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from chatx import codecs, containers
from chatx.codecs.base import route_pattern
from chatx.errors import InputError
from chatx.record import Record

if TYPE_CHECKING:
    from chatx.containers.bodies import Entry

_READ = 1 << 16
_FIRST_READ = 1 << 10
UNKNOWN = "unknown"  # a Stream's kind: a stream of events no codec reads


@dataclass(slots=True)
class Exchange:
    """One exchange of a file (or a bare file, as its one stream ``#0``) as ``ls`` lists it.

    ``format`` is set when chatx can read the body: a stream (``kind`` "stream") or a
    non-streaming object (``kind`` "object", ``note`` says which). Otherwise ``kind``
    says what the body is ("unreadable" with ``note`` saying why, "unknown": a stream
    of events no codec reads, ``note`` naming them, "empty", a media type).
    """

    address: str
    index: int
    entry: Entry | None
    data: bytes = b""
    kind: str = "stream"
    format: str | None = None
    container: str | None = None
    records: int = 0
    model: str | None = None
    note: str | None = None
    error: InputError | None = None  # set when reading it failed (see each())
    # A body too big to hold (its entry's ``stream``): () -> its bytes in pieces, read
    # anew at each call; ``data`` is then empty.
    pieces: Callable[[], Iterator[bytes]] | None = None

    @property
    def body(self) -> bytes:
        """The body's bytes, whole (a body too big to hold is joined)."""
        return self.data if self.pieces is None else b"".join(self.pieces())

    @property
    def request(self) -> dict[str, Any] | None:
        return self.entry.request if self.entry is not None else None

    @property
    def readable(self) -> bool:
        return self.format is not None


def classify(entry: Entry, address: str) -> Exchange:
    """What ``entry``'s body is: its records counted, its format told as every command
    tells it; the body is kept (``data``) for a command to read."""
    from chatx.containers.bodies import BodyError

    stream = Exchange(address, entry.index, entry)
    if entry.stream is not None and entry.refused is None:
        _classify_pieces(stream, entry)
        return stream
    try:
        stream.data = entry.body()
    except BodyError as exc:
        stream.kind, stream.note = "unreadable", str(exc)
        return stream
    if not stream.data.strip():
        stream.kind = "empty"
        return stream
    judge(stream, _records_of(stream))
    if stream.format is None and stream.kind != UNKNOWN:
        stream.kind = _what(entry.content_type, stream.data)
        stream.container = None
        stream.model = _request_model(stream.request)
    return stream


def _classify_pieces(stream: Exchange, entry: Entry) -> None:
    """:func:`classify` of a body too big to hold, read in pieces once here (its records
    counted as they come) and again by the command that reads it. An error decoding it
    makes it unreadable wherever it comes, as it does a body decoded whole."""
    from chatx.containers.bodies import BodyError

    failed: list[str] = []

    def pieces() -> Iterator[bytes]:
        try:
            yield from entry.pieces()
        except BodyError as exc:
            failed.append(str(exc))

    read = pieces()
    gathered = containers.Head()
    ended = True
    try:
        for piece in read:
            if gathered.add(piece):
                ended = False
                break
    except InputError:  # past MAX_LINE of blank lines: no container is told from them
        ended = False
    head = gathered.take()
    if not failed and not (ended and not head.strip()):
        judge(stream, _records_in(head, chain((head,), read)))
        for _ in read:  # to its end: an error decoding it comes last
            pass
    if failed:
        stream.kind, stream.note, stream.format = "unreadable", failed[0], None
        stream.container, stream.records = None, 0
        return
    if ended and not head.strip():
        stream.kind = "empty"
        return
    stream.pieces = entry.stream
    if stream.format is None and stream.kind != UNKNOWN:
        stream.kind = _what(entry.content_type, stream.body)
        stream.container = None
        stream.model = _request_model(stream.request)


def judge(stream: Exchange, framed: tuple[str, Iterator[Record]] | None) -> None:
    """Count ``framed`` records and tell their format into ``stream``."""
    if framed is None:
        return
    stream.container, records = framed
    head: list[Record] = []
    try:
        for record in records:
            stream.records += 1
            if len(head) < codecs.PROBE_RECORDS:
                head.append(record)
    except InputError as exc:
        stream.container, stream.note = None, exc.message
        return
    codec = told(head, stream.entry.url if stream.entry is not None else None)
    if codec is None:
        said = codecs.unknown(head)
        if said is not None and (stream.container == "sse" or stream.records > 1):
            # Events of a kind chatx has no codec for (the Assistants API's thread.run.*,
            # a provider's own): a stream all the same, said as what it looks like.
            stream.kind, stream.note = UNKNOWN, said
        return
    stream.format = codec.name
    stream.model = _model(head, codec.model) or _request_model(stream.request)
    if stream.records == 1 and codec.whole is not None and head[0].data is not None:
        described = codec.whole(head[0].data)
        if described:
            stream.kind, stream.note = "object", described


def told(head: list[Record], url: str | None) -> codecs.Codec | None:
    """The format of a recorded exchange's stream, from its first records and the URL it
    was asked at: the API the URL's path names, when one of those records is that
    format's (its probe scores it), unless a record is another format's for certain (a
    gateway's Gemini route that sent chat chunks is chat). Two APIs' error bodies read
    alike (Google's ``{"error": {"code": 400, "message": …}}`` is an OpenAI error to the
    eye), and the URL tells them apart. Else the records alone, as for a bare stream."""
    codec = codecs.looks_like(head)
    api = _api_at(url) if url else None
    if api is None or api is codec:
        return codec
    usable = [r for r in head[: codecs.PROBE_RECORDS] if not r.error and not r.done]
    if any(codecs.certain(record) is not None for record in usable):
        return codec
    return api if any(api.probe([record]) > 0 for record in usable) else codec


def _api_at(url: str) -> codecs.Codec | None:
    """The format whose HTTP API (its descriptor's ``http``) answers ``url``'s path: the
    route without its version segment, at the path's end, so that a base path before it
    (``/openai``, Vertex AI's ``/v1beta1/projects/P/locations/L/publishers/google``) or
    another version (``/v1``, ``/v1beta``) still names it."""
    from urllib.parse import urlsplit

    try:
        path = urlsplit(url).path
    except ValueError:  # a malformed URL (an unclosed IPv6 bracket): no API named
        return None
    for codec in codecs.CODECS:
        http = codec.http
        if http is None:
            continue
        for route in (http.path, http.stream_path):
            if route and _route_end(route).search(path):
                return codec
    return None


def _route_end(route: str) -> re.Pattern[str]:
    """``/v1beta/models/{model}:streamGenerateContent`` as a pattern of the path's end
    (``/models/M:streamGenerateContent``), without the version any base path may say."""
    return route_pattern("/" + route.split("/", 2)[2])


def _records_in(head: bytes, pieces: Iterator[bytes]) -> tuple[str, Iterator[Record]] | None:
    """The container of a body told from ``head`` and the records of its ``pieces`` (read
    ``_READ`` bytes at most at a time). Past the records the format is told from, only
    their count is wanted: a reader that can leave payloads unparsed does (a 5000-record
    stream counts 3 times faster)."""
    try:
        name = containers.detect(head[: containers.sniffed(head)])
    except InputError:
        return None
    reader = containers.get(name).reader()
    unparsed = hasattr(reader, "raw")  # a RawReader (the Protocol's isinstance is slow)

    def records() -> Iterator[Record]:
        count = 0
        for piece in pieces:
            for at in range(0, len(piece), _READ):
                batch = reader.feed(piece[at : at + _READ])
                yield from batch
                count += len(batch)
                if unparsed and count >= codecs.PROBE_RECORDS:
                    reader.raw = True  # type: ignore[attr-defined]
        yield from reader.finish()

    return name, records()


def _records_of(stream: Exchange) -> tuple[str, Iterator[Record]] | None:
    """:func:`_records_in` a body held whole, read in pieces twice as long each time
    from a small first one, so that few records are parsed before the reader leaves
    them unparsed."""
    data = stream.data
    return _records_in(data, _growing(data))


def _growing(data: bytes) -> Iterator[bytes]:
    at, size = 0, _FIRST_READ
    while at < len(data):
        yield data[at : at + size]
        at, size = at + size, min(2 * size, _READ)


def _model(head: list[Record], named: Callable[[Any], str | None] | None) -> str | None:
    """The model the first records name: the codec's ``model`` hook's, else a record's
    ``model``, or that of the object it opens (a Responses ``response``, an Anthropic
    ``message_start``'s ``message``)."""
    for record in head:
        data = record.data
        if not isinstance(data, dict):
            continue
        if named is not None:
            said = named(data)
            if said:
                return said
            continue
        for holder in (data, data.get("response"), data.get("message")):
            if isinstance(holder, dict) and isinstance(holder.get("model"), str):
                return str(holder["model"])
    return None


def _request_model(request: dict[str, Any] | None) -> str | None:
    model = request.get("model") if request else None
    return model if isinstance(model, str) else None


def _what(content_type: str | None, data: bytes) -> str:
    """What a body that is no stream is, in a word: its JSON ``object``, else its type."""
    if data[:1] in (b"{", b"["):
        import orjson

        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("object"), str):
            return str(value["object"])
        if value is not None:
            return "json"
    if content_type:
        return content_type.split(";")[0].strip() or "bytes"
    return "bytes"

"""The streams an opened input holds (:mod:`chatx.reading.opening` opened it): each
exchange of a file of recorded exchanges told apart as a stream chatx reads (its format
and records told as every command tells them), a non-streaming object it reads, or
something else, said in a word. ``chatx ls`` lists these (:func:`streams`); :func:`pick`
is the one stream a command that reads one stream takes, :func:`each` every stream for a
command that reads them all.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from chatx import codecs, containers
from chatx.codecs.base import route_pattern
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.reading.opening import Address, Source, open_source, parse
from chatx.record import Record

if TYPE_CHECKING:  # a bare stream loads nothing of the bodies exchanges hold
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


def _records_of(stream: Exchange) -> tuple[str, Iterator[Record]] | None:
    data = stream.data
    try:
        name = containers.detect(data[: containers.sniffed(data)])
    except InputError:
        return None
    reader = containers.get(name).reader()
    # Past the records the format is told from, only their count is wanted: a reader
    # that can leave payloads unparsed does (a 5000-record stream counts 3 times faster).
    # The first reads are small, so that few records are parsed before it does.
    unparsed = hasattr(reader, "raw")  # a RawReader (the Protocol's isinstance is slow)

    def records() -> Iterator[Record]:
        count, at, size = 0, 0, _FIRST_READ
        while at < len(data):
            batch = reader.feed(data[at : at + size])
            at, size = at + size, min(2 * size, _READ)
            yield from batch
            count += len(batch)
            if unparsed and count >= codecs.PROBE_RECORDS:
                reader.raw = True  # type: ignore[attr-defined]
        yield from reader.finish()

    return name, records()


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


# -- what a file holds --------------------------------------------------------------------


def entries(source: Source) -> Iterator[Entry]:
    """The exchanges of a file of recorded exchanges, one at a time."""
    assert source.kind is not None
    try:
        from chatx.containers import demux

        path = None if source.address.file == "-" else source.address.file
        yield from demux.entries(source.kind, source.stream, path)
    except InputError as exc:
        raise exc.located(source.name) from None


def streams(source: Source, only: int | None = None) -> Iterator[Exchange]:
    """Each exchange of ``source`` (a file of exchanges) told apart; ``only``: just that
    one (an InputError when the file has no exchange of that number)."""
    count = 0
    for entry in entries(source):
        count += 1
        if only is not None and entry.index != only:
            continue
        yield classify(entry, source.address.of(entry.index))
        if only is not None:
            return
    if only is not None:
        raise InputError(
            f"no stream #{only}: the file holds {count} interaction{'' if count == 1 else 's'}"
            f" (#0 to #{count - 1})"
            if count
            else f"no stream #{only}: the file holds no interactions",
            file=source.name,
        )


# -- the streams a command reads ------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Picked:
    """The one stream a command reads: a bare input (``stream`` None: read ``source``)
    or a stream of a file of exchanges, its body in memory. ``skipped`` says each
    exchange whose body could not be decoded on the way."""

    source: Source
    name: str
    stream: Exchange | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (FILE#N, why)

    @property
    def request(self) -> dict[str, Any] | None:
        return self.stream.request if self.stream is not None else None

    @property
    def format(self) -> str | None:
        """The format ``ls`` found for a stream of a file of exchanges (None: a bare
        input, whose records tell it as they are read)."""
        return self.stream.format if self.stream is not None else None

    def say_skipped(self, notes: Notes) -> None:
        """A note for each exchange skipped on the way, naming that exchange (as ls
        says it), not the stream read."""
        for address, why in self.skipped:
            notes.add("skipped", why, where=address)

    def __enter__(self) -> Picked:
        return self

    def __exit__(self, *exc: object) -> None:
        self.source.close()

    @contextmanager
    def reading(self) -> Iterator[BinaryIO]:
        """The stream's bytes as a binary file, closed after."""
        if self.stream is not None:
            yield io.BytesIO(self.stream.data)
            return
        with self.source:
            yield self.source.stream


def pick(spec: str | Address) -> Picked:
    """The stream ``spec`` names: a bare input, ``FILE#N``, or the only stream of a
    file. A file of several streams is an InputError listing their addresses; one of
    none says how many exchanges it holds."""
    address = spec if isinstance(spec, Address) else parse(spec)
    source = open_source(address)
    if source.kind is None:
        if address.index not in (None, 0):
            source.close()
            raise InputError(
                f"no stream #{address.index}: a bare stream is one stream (#0)", file=address.name
            )
        name = address.name if address.index is None else address.of(0)
        return Picked(source, name)
    with source:
        if address.index is not None:
            (stream,) = streams(source, address.index)
            return Picked(source, stream.address, _readable(stream))
        return _only(source)


def _readable(stream: Exchange) -> Exchange:
    if stream.kind == "unreadable":
        raise InputError(f"its body cannot be decoded ({stream.note})", file=stream.address)
    if stream.kind == "unknown":
        raise InputError(
            f"a stream of an unknown format ({stream.note}): no format chatx reads",
            file=stream.address,
        )
    if not stream.readable:
        raise InputError(f"not a stream: {_described(stream)}", file=stream.address)
    return stream


def _described(stream: Exchange) -> str:
    """A non-stream exchange in words: its kind, and why chatx cannot read it."""
    return f"{stream.kind} ({stream.note})" if stream.note else stream.kind


def _only(source: Source) -> Picked:
    found: Exchange | None = None
    addresses: list[str] = []
    skipped: list[tuple[str, str]] = []
    total = unknown = 0
    for stream in streams(source):
        total += 1
        unknown += stream.kind == "unknown"
        if stream.kind == "unreadable":
            skipped.append((stream.address, f"its body cannot be decoded ({stream.note})"))
        elif stream.readable:
            addresses.append(stream.address)
            found = found or stream
    if found is None:
        said = [f"{a} skipped: {why}" for a, why in skipped]
        raise none_streaming(source.name, total, said, unknown)
    if len(addresses) > 1:
        raise InputError(
            f"{len(addresses)} streams, name one: {', '.join(addresses)}", file=source.name
        )
    return Picked(source, found.address, found, skipped)


class NoStreams(InputError):
    """A file of exchanges none of which is a stream chatx reads: an error when it is
    named, passed over with a warning when a directory walk found it."""


def none_streaming(name: str, total: int, skipped: list[str], unknown: int = 0) -> NoStreams:
    """A file of exchanges none of which is a stream chatx reads; ``unknown`` of them are
    streams of a format it has no codec for, said as such (not "none streaming")."""
    plural = "" if total == 1 else "s"
    said = "".join(f"; {message}" for message in skipped)
    if unknown:
        what = "a stream" if unknown == 1 else f"{unknown} streams"
        return NoStreams(f"no stream chatx reads in {name} ({total} interaction{plural}, {what}"
                         f" of an unknown format){said}", file=name)  # fmt: skip
    return NoStreams(f"no streams in {name} ({total} interaction{plural}, none streaming){said}",
                     file=name)  # fmt: skip


def each(spec: str) -> Iterator[tuple[str | Source | Exchange, str]]:
    """Every stream ``spec`` holds, for a command that reads them all (validate): an
    address as given (read by name), a bare input opened (a :class:`Source`), or each
    stream of a file of exchanges, one at a time (not its non-streaming objects).
    Trouble is a :class:`Exchange` with ``error`` set, for the caller to say where it says
    the others'."""
    address = parse(spec)
    if address.index is not None:
        yield spec, spec
        return
    try:
        source = open_source(address)
    except InputError:
        yield spec, address.name  # opened again by the caller, who says why it fails
        return
    if source.kind is None:
        yield source, address.name
        return
    with source:
        yield from _each(source)


def _each(source: Source) -> Iterator[tuple[str | Source | Exchange, str]]:
    total, readable, skipped, unknown = 0, 0, [], 0
    try:
        for stream in streams(source):
            total += 1
            unknown += stream.kind == "unknown"
            if stream.kind == "unreadable":
                stream.error = InputError(
                    f"skipped: its body cannot be decoded ({stream.note})", file=stream.address
                )
                skipped.append(stream.address)
                yield stream, stream.address
            elif stream.kind == "stream":  # a non-streaming object is no stream to check
                readable += 1
                yield stream, stream.address
    except InputError as exc:
        yield Exchange(source.name, -1, None, error=exc), source.name
        return
    if not readable:
        error = none_streaming(source.name, total, [], unknown)
        yield Exchange(source.name, -1, None, error=error), source.name

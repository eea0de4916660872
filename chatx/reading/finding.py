"""What a recorded exchange's body is: a stream chatx reads (its format and records
told as every command tells them), a non-streaming object it reads, or something else,
said in a word. ``chatx ls`` lists these; the other commands read the streams.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chatx import codecs, containers
from chatx.containers.bodies import BodyError, Entry
from chatx.errors import InputError
from chatx.record import Record

_READ = 1 << 16
_FIRST_READ = 1 << 10


@dataclass(slots=True)
class Stream:
    """One exchange of a file (or a bare file, as its one stream ``#0``) as ``ls`` lists it.

    ``format`` is set when chatx can read the body: a stream (``kind`` "stream") or a
    non-streaming object (``kind`` "object", ``note`` says which). Otherwise ``kind``
    says what the body is ("unreadable" with ``note`` saying why, "empty", a media type).
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


def classify(entry: Entry, address: str) -> Stream:
    """What ``entry``'s body is: its records counted, its format told as every command
    tells it; the body is kept (``data``) for a command to read."""
    stream = Stream(address, entry.index, entry)
    try:
        stream.data = entry.body()
    except BodyError as exc:
        stream.kind, stream.note = "unreadable", str(exc)
        return stream
    if not stream.data.strip():
        stream.kind = "empty"
        return stream
    judge(stream, _records_of(stream))
    if stream.format is None:
        stream.kind = _what(entry.content_type, stream.data)
        stream.container = None
        stream.model = _request_model(stream.request)
    return stream


def judge(stream: Stream, framed: tuple[str, Iterator[Record]] | None) -> None:
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
    codec = codecs.looks_like(head)
    if codec is None:
        return
    stream.format = codec.name
    stream.model = _model(head) or _request_model(stream.request)
    if stream.records == 1 and codec.whole is not None and head[0].data is not None:
        described = codec.whole(head[0].data)
        if described:
            stream.kind, stream.note = "object", described


def _records_of(stream: Stream) -> tuple[str, Iterator[Record]] | None:
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


def _model(head: list[Record]) -> str | None:
    for record in head:
        data = record.data
        if not isinstance(data, dict):
            continue
        for holder in (data, data.get("response")):
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

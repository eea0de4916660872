"""Llama Stack's inference recorder: one JSON object per recorded upstream call,
``{test_id, request: {method, url, body, endpoint, model…}, response: {body,
is_streaming}}``.

A streamed response is a list of the SDK objects the client received, each
``{"__type__": "…ChatCompletionChunk", "__data__": {…}}`` (the SDK's ``model_dump()``:
every optional field present, null or not). Their ``__data__`` are written back as JSON
lines, one payload per line as the recorder kept them (there is no ``[DONE]`` to
restore); a non-streamed object as its JSON.

A recording larger than :data:`json_walk.BIG` is read as it comes: its ``response.body``
array element by element (:class:`_Walked`), each written back at once into a
temporary file, the rest of the file parsed as a small one is.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import orjson

from chatx.containers import bodies, exact, json_document, json_walk
from chatx.containers.bodies import BodyError, Entry, json_object
from chatx.containers.payload import TOO_DEEP, lenient_dumps
from chatx.errors import InputError

_BODY: json_walk.Path = ("response", "body")
_KEYS = orjson.OPT_NON_STR_KEYS  # as lenient_dumps writes


def entries(source: bytes | BinaryIO) -> Iterator[Entry]:
    """The one call a recording holds (its bytes, or a stream)."""
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    document = json_document.document(stream, arrays={_BODY: _Walked})
    request = document.get("request") if isinstance(document, dict) else None
    response = document.get("response") if isinstance(document, dict) else None
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise InputError("not a Llama Stack recording: no request and response", line=1)
    method, url = request.get("method"), request.get("url")
    body = response.get("body")
    streaming = response.get("is_streaming") is True
    walked = body.pieces(streaming) if isinstance(body, _Walked) else None
    yield Entry(
        0,
        1,
        method=method if isinstance(method, str) else None,
        url=url if isinstance(url, str) else None,
        request=json_object(request.get("body")),
        load=lambda: b"".join(walked()) if walked else _bytes(body, streaming),
        stream=walked,
    )


def _bytes(body: Any, streaming: bool) -> bytes:
    if streaming and isinstance(body, list) and all(isinstance(line, str) for line in body):
        # The current recorder keeps a stream it did not parse (Anthropic's /v1/messages)
        # as its SSE lines, "event: …", "data: {…}", "" between events.
        return "\n".join(body).encode("utf-8", "surrogatepass") + b"\n"
    if streaming and isinstance(body, list):
        return b"".join(lenient_dumps(_data(item)) + b"\n" for item in body)
    if body is None:
        return b""
    return lenient_dumps(_data(body))


def _data(item: Any) -> Any:
    """An SDK object's fields, as the recorder stored them beside their type's name."""
    if isinstance(item, dict) and "__data__" in item:
        return item["__data__"]
    return item


class _Walked:
    """A ``response.body`` array walked, its elements written as they come into a spool
    one line each, as :func:`_bytes` writes a streamed body's: ``__data__`` as JSON (a
    string too: the body is its SSE lines only if every element is one). Whether the
    response is streamed is said after its body: a body not streamed is the array as
    JSON, each element's JSON the line around which ``wrap`` is (the same for all, as
    the recorder writes them), or, once two differ, a second spool of those."""

    def __init__(self) -> None:
        self.lines = bodies.Spool()
        self.texts = True  # every element is a string
        self.wrap: tuple[bytes, bytes] | None = None
        self.whole: bodies.Spool | None = None
        # An element's __data__ (or string) JSON does not write (see Entry.body), or
        # an element's whole JSON.
        self.refused = self.unwrapped = False
        self.count = 0
        self._type: Any = None  # the __type__ the wrap was made for

    def extend(self, values: list[Any]) -> None:
        if self.wrap is None and values:
            self._add(values[0])
            values = values[1:]
        done = 0
        if values and all(type(value) is str for value in values):
            self._type = None
            done = self._written(values, (b"", b""))
        elif values and self._type is not None and all(map(self._plain, values)):
            done = self._written([value["__data__"] for value in values], self.wrap)  # type: ignore[arg-type]
            self.texts = self.texts and not done
        for value in values[done:]:
            self._add(value)

    def _written(self, datas: list[Any], wrap: tuple[bytes, bytes]) -> int:
        """Each of ``datas`` written as a line, wrapped by ``wrap`` in the spool of whole
        elements, as long as orjson writes them as they are: how many were. (Each line
        is written as it is made: the bytes orjson gives hold room for more, and a list
        of them would hold all that room.)"""
        if wrap != self.wrap:
            self._wrapped(wrap)
        before, after = wrap
        file, dumps, done = self.lines.file, orjson.dumps, 0
        whole = None if self.whole is None else self.whole.file
        lines = _lines(datas)
        if lines is not None:
            file.write(lines)
            if whole is not None:
                whole.write(b"".join(_array(iter((lines,)), wrap, b"\n")))
            datas, done = [], len(datas)
        try:
            for data in datas:
                line = dumps(data, None, _KEYS)
                file.write(line)
                file.write(b"\n")
                if whole is not None:
                    whole.write(before + line + after + b"\n")
                done += 1
        except TypeError:  # written again with what lenient_dumps does
            pass
        self.count += done
        for spool in (self.lines, self.whole):
            if spool is not None:  # as Spool.write counts (no base64 is read from here)
                spool.size = spool.file.tell()
        return done

    def _plain(self, value: Any) -> bool:
        """An element as the recorder writes them, of the type the wrap was made for."""
        return (
            type(value) is dict
            and len(value) == 2
            and value.get("__type__") == self._type
            and "__data__" in value
            and next(iter(value)) == "__type__"
        )

    def _add(self, value: Any) -> None:
        self.count += 1
        data, wrap = value, (b"", b"")
        if not isinstance(value, dict) or "__data__" not in value:
            self._type = None  # the wrap is none: only _wrapping sets it again
        if type(value) is str:
            try:
                line = orjson.dumps(value)
            except orjson.JSONEncodeError:  # a lone surrogate: only the SSE lines have it
                line = json.dumps(value).encode()
                self.refused = self.unwrapped = True
        else:
            self.texts = False
            if isinstance(value, dict) and "__data__" in value:
                data, wrap = value["__data__"], self._wrapping(value)
            try:
                line = lenient_dumps(data)
            except orjson.JSONEncodeError:  # what Entry.body says of the whole
                line, self.refused, self.unwrapped = b"null", True, True
        if wrap != self.wrap:
            self._wrapped(wrap)
        self.lines.write(line + b"\n")
        if self.whole is not None:
            self.whole.write(wrap[0] + line + wrap[1] + b"\n")

    def _wrapping(self, value: dict[str, Any]) -> tuple[bytes, bytes]:
        """What an element's JSON holds around its ``__data__``'s."""
        kind = value.get("__type__")
        plain = len(value) == 2 and type(kind) is str and next(iter(value)) == "__type__"
        if plain and kind == self._type:
            return self.wrap  # type: ignore[return-value]  # set with _type
        self._type = kind if plain else None
        try:
            held = lenient_dumps({**value, "__data__": orjson.Fragment(b"\x00")})
        except orjson.JSONEncodeError:
            self.unwrapped = True
            return (b"", b"")
        before, _, after = held.partition(b"\x00")  # JSON writes no NUL byte of its own
        return before, after

    def _wrapped(self, wrap: tuple[bytes, bytes]) -> None:
        """A wrap other than the elements' before: the first, or the start of a spool of
        each element's JSON, the lines before this one's written there with their wrap."""
        if self.wrap is not None and self.whole is None:
            self.whole = bodies.Spool()
            self.lines.done()
            for lines in _array(self.lines.pieces(), self.wrap, b"\n"):
                self.whole.write(lines)
        self.wrap = wrap

    def pieces(self, streaming: bool) -> Callable[[], Iterator[bytes]]:
        """() -> the body's bytes in pieces, as :func:`_bytes` writes the whole."""
        self.lines.done()
        if self.whole is not None:
            self.whole.done()

        def given() -> Iterator[bytes]:
            if streaming and self.texts:
                return _texts(self.lines.pieces()) if self.count else iter((b"\n",))
            if self.refused if streaming else self.unwrapped:
                raise BodyError(f"its recorded body is {TOO_DEEP}")
            if streaming:
                return self.lines.pieces()
            if self.whole is not None:
                return _json(_array(self.whole.pieces(), (b"", b""), b","))
            return _json(_array(self.lines.pieces(), self.wrap or (b"", b""), b","))

        return given


# Between two elements of a JSON array of strings, or of objects, as orjson writes it.
_SEPARATORS: dict[type, bytes] = {str: b'","', dict: b"},{"}


def _lines(datas: list[Any]) -> bytes | None:
    """The JSON of each of ``datas`` (all strings, or all objects) on a line, written
    by orjson as one array and cut where its elements meet (a string's quote inside a
    string is escaped; when a string holds "},{", the count says it), or None."""
    separator = _SEPARATORS.get(type(datas[0])) if datas else None
    if separator is None or not all(type(data) is type(datas[0]) for data in datas):
        return None
    try:
        text = orjson.dumps(datas, None, _KEYS)
    except TypeError:
        return None
    if text.count(separator) != len(datas) - 1:
        return None
    return text[1:-1].replace(separator, separator[:1] + b"\n" + separator[2:]) + b"\n"


def _whole_lines(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """Pieces of lines cut at their ends: each given ends with a line's end."""
    held = b""
    for piece in pieces:
        end = piece.rfind(b"\n") + 1
        if not end:
            held += piece
            continue
        yield held + piece[:end]
        held = piece[end:]
    if held:
        yield held


def _array(pieces: Iterator[bytes], wrap: tuple[bytes, bytes], sep: bytes) -> Iterator[bytes]:
    """Lines each wrapped, ``sep`` after each (the last's left out when ``sep`` is a
    comma: the elements of a JSON array)."""
    before, after = wrap
    between = after + sep + before
    first = True
    for lines in _whole_lines(pieces):
        if sep == b"," and not first:
            yield b","
        first = False
        text = before + lines[:-1].replace(b"\n", between) + after
        yield text if sep == b"," else text + sep


def _json(elements: Iterator[bytes]) -> Iterator[bytes]:
    yield b"["
    yield from elements
    yield b"]"


def _texts(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """Lines that are JSON strings, as the SSE lines they are: each string's text and a
    line's end, decoded a piece of lines at a time."""
    for lines in _whole_lines(pieces):
        listed = b"[" + lines[:-1].replace(b"\n", b",") + b"]"
        try:
            texts = orjson.loads(listed)
        except orjson.JSONDecodeError:  # a lone surrogate, as the recording held it
            texts = exact.loads(listed)
        yield ("\n".join(texts) + "\n").encode("utf-8", "surrogatepass")

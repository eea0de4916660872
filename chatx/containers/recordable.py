"""Llama Stack's early "recordable mock" files (``tests/integration/fixtures/
recorded_responses/*.json``, March to May 2025): one JSON object whose keys are the
mocked call's arguments and whose values are what it returned, one exchange each.

A key is the arguments as text: Python's repr at first (``('meta-llama/…', [UserMessage(
…)])_[('stream', True), …]``), then JSON (``["meta-llama/…", [{…}]]_{"stream": true, …}``
for ``chat_completion``, ``[[], {…}]`` for ``invoke_tool``). A value is ``{"type":
"generator", "chunks": [...]}`` for a call that streamed, ``{"type": "value", "value":
…}`` for one that did not. Objects are kept as the recorder wrote them, wrapped: a
pydantic model as ``{"__pydantic__": "ChatCompletionResponseStreamChunk", "__module__",
"data": {…}}``, an enum as ``{"__enum__", "__module__", "value"}``, a datetime as
``{"__datetime__": "2025-03-…", "__module__", "__class__"}``. Unwrapped, each chunk is
the ``{"event": {"event_type", "delta", …}}`` Llama Stack's inference API streams, written
back as JSON lines.

A mock larger than :data:`json_walk.BIG` is read as it comes: each call's ``chunks``
array element by element (:class:`_Chunks`), each chunk unwrapped and written back at
once into a temporary file all the calls share, the rest of the file parsed as a small
one is.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import orjson

from chatx.containers import bodies, exact, json_document, json_walk
from chatx.containers.bodies import BodyError, Entry, json_object, request_or_refusal
from chatx.containers.payload import TOO_DEEP, lenient_dumps
from chatx.errors import InputError
from chatx.limits import MAX_DEPTH

# A Python repr key's first argument, the model: ('meta-llama/Llama-3.1-8B-Instruct', [...
_REPR_MODEL = re.compile(r"\('([^'\\]+)',")
_CHUNKS: json_walk.Path = (json_walk.ANY, "chunks")


def entries(source: bytes | BinaryIO) -> Iterator[Entry]:
    """Each call a mock holds (its bytes, or a stream)."""
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    shared = json_document.Shared()
    document = json_document.document(stream, arrays={_CHUNKS: lambda: _Chunks(shared.part())})
    if not isinstance(document, dict):
        raise InputError("not a Llama Stack recordable mock: not a JSON object", line=1)
    for index, (key, value) in enumerate(document.items()):
        yield _entry(index, key, value if isinstance(value, dict) else {})


def _entry(index: int, key: str, value: dict[str, Any]) -> Entry:
    request, refused = request_or_refusal(lambda: json_object(_request(key)))
    chunks = value.get("chunks")
    streamed = value.get("type") != "value" and isinstance(chunks, (list, _Chunks))
    walked = chunks.pieces() if streamed and isinstance(chunks, _Chunks) else None
    return Entry(
        index,
        None,
        request=request,
        content_type="application/x-ndjson" if streamed else "application/json",
        load=lambda: b"".join(walked()) if walked else _body(value, streamed),
        refused=refused,
        stream=walked,
    )


def _body(value: dict[str, Any], streamed: bool) -> bytes:
    if streamed:
        return b"".join(lenient_dumps(unwrapped(chunk)) + b"\n" for chunk in value["chunks"])
    if "value" not in value:
        return b""
    return lenient_dumps(unwrapped(value["value"]))


def _request(key: str) -> dict[str, Any] | None:
    """What a key says of the request: for ``chat_completion``'s ``[model, messages]_
    {kwargs}``, the model, the messages and the other arguments by name; from a Python
    repr, the model alone. The model (the call's ``model_id``) is named ``model``, as in
    every other recorded request chatx reads (``ls``, the Responses envelope, serve)."""
    args, kwargs = _arguments(key)
    if args is None:
        match = _REPR_MODEL.match(key)
        return {"model": match.group(1)} if match else None
    request: dict[str, Any] = {}
    if args and isinstance(args[0], str):
        request["model"] = args[0]
        if len(args) > 1:
            request["messages"] = unwrapped(args[1])
    if isinstance(kwargs, dict):
        request.update(unwrapped(kwargs))
    return request or None


def _arguments(key: str) -> tuple[list[Any] | None, Any]:
    """(positional arguments, keyword arguments) of a JSON key, ``A_K`` or ``[A, K]``;
    (None, None) for a Python repr."""
    if not key.startswith("["):
        return None, None
    try:
        whole = exact.loads(key.encode("utf-8", "surrogatepass"))
    except ValueError:
        whole = None
    if isinstance(whole, list) and len(whole) == 2 and isinstance(whole[0], list):
        return whole[0], whole[1]
    cut = key.rfind("]_{")
    if cut < 0:
        return None, None
    try:
        args = exact.loads(key[: cut + 1].encode("utf-8", "surrogatepass"))
        kwargs = exact.loads(key[cut + 2 :].encode("utf-8", "surrogatepass"))
    except ValueError:
        return None, None
    return (args, kwargs) if isinstance(args, list) else (None, None)


def unwrapped(value: Any, depth: int = 0) -> Any:
    """A recorded value with the recorder's wrappers taken off: a model's fields, an
    enum's value, a datetime's ISO text."""
    if depth > MAX_DEPTH:
        raise BodyError(f"a recorded value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        return [unwrapped(item, depth + 1) for item in value]
    if not isinstance(value, dict):
        return value
    if "__pydantic__" in value and "data" in value:
        return unwrapped(value["data"], depth + 1)
    if "__enum__" in value and "value" in value:
        return unwrapped(value["value"], depth + 1)
    if "__datetime__" in value:
        return value["__datetime__"]
    return {k: unwrapped(v, depth + 1) for k, v in value.items()}


class _Chunks:
    """A call's ``chunks`` walked: each chunk unwrapped and written as its line as it is
    read, as :func:`_body` writes it, into ``lines`` (a part of the file the document's
    calls share). A chunk that does not write stops the lines: its error is the body's."""

    def __init__(self, lines: bodies.Spool) -> None:
        self.lines = lines
        self.failed: str | None = None

    def extend(self, values: list[Any]) -> None:
        if self.failed is not None:
            return
        write = self.lines.write
        try:
            for value in values:
                write(lenient_dumps(unwrapped(value)) + b"\n")
        except BodyError as exc:
            self.failed = str(exc)
        except (orjson.JSONEncodeError, RecursionError):  # as Entry.body says it
            self.failed = f"its recorded body is {TOO_DEEP}"

    def pieces(self) -> Callable[[], Iterator[bytes]]:
        """() -> the lines in pieces (BodyError for a chunk that did not write)."""
        self.lines.done()

        def given() -> Iterator[bytes]:
            if self.failed is not None:
                raise BodyError(self.failed)
            return self.lines.pieces()

        return given

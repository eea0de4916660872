"""A capture as an API sends it: the events of a stream, or the final object.

Through its own API, a capture recorded as SSE is sent as its recorded bytes, unchanged,
cut into events at its blank lines. Any other (another format, JSON lines, a JSON array,
a non-streaming object) goes through the live :class:`~chatx.Transcoder` into the API's
format, fed a line at a time, each event sent as the transcoder gives it. ``"stream":
false`` gets the final object as ``chatx collect`` builds it, or a recorded non-streaming
object as its bytes; into Responses from another format, collected from the stream the
request gets, whose envelope the request fills.

Each step of :func:`stream` is a bounded piece of work (a piece of at most 64 KiB of a
recorded stream read and cut, or one line transcoded), so the server can take the events off its
event loop a batch at a time (:func:`take`) and no capture, however long, holds up
another client.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from chatx import codecs, ir
from chatx.codecs.base import EncodeOptions, HttpApi
from chatx.errors import ChatxError, InputError
from chatx.live.errors import ApiError
from chatx.live.served_captures import Capture
from chatx.notes import Notes
from chatx.pipeline import Transcoder

if TYPE_CHECKING:
    from chatx.collect.assembler import Assembler

# Two line ends in a row end an SSE event (LF, CRLF or CR, as the WHATWG rules read them);
# the CR of a CRLF is never a line end of its own.
_BLANK = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)")
# The one API whose answer carries the request's settings (Responses' envelope).
ENVELOPED = "responses-event"
BATCH = 64 << 10  # bytes of events the server takes off its event loop at a time


class Events:
    """Cuts SSE bytes fed in any pieces into whole events; joined, the events are the
    bytes fed, to the byte."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        self.buffer += data
        out: list[bytes] = []
        start = 0
        for match in _BLANK.finditer(self.buffer):
            end = match.end()
            # A CR last in the buffer may be the first half of a CRLF still to come.
            if end == len(self.buffer) and self.buffer.endswith(b"\r"):
                break
            out.append(self.buffer[start:end])
            start = end
        self.buffer = self.buffer[start:]
        return out

    def finish(self) -> list[bytes]:
        out = []
        if self.buffer:
            last = _BLANK.search(self.buffer)
            while last is not None:
                out.append(self.buffer[: last.end()])
                self.buffer = self.buffer[last.end() :]
                last = _BLANK.search(self.buffer)
            if self.buffer:
                out.append(self.buffer)
        self.buffer = b""
        return out


def enveloped(capture: Capture, endpoint: HttpApi) -> bool:
    """The request fills what the answer says of itself (Responses' envelope): from
    another format, whose stream has no envelope of its own."""
    return capture.format != endpoint.format


def is_verbatim(capture: Capture, endpoint: HttpApi, request: dict[str, Any] | None = None) -> bool:
    """Sent as recorded: the API's own format, framed as the API sends it (SSE), every
    choice it has asked for."""
    return (
        capture.format == endpoint.format
        and capture.container == "sse"
        and not capture.whole
        and _choice(capture, endpoint, request) is None
        and first_choices(capture, endpoint, request) is None
    )


def stream(
    capture: Capture, endpoint: HttpApi, request: dict[str, Any]
) -> Generator[bytes, None, None]:
    """The events the endpoint sends for ``capture``, one SSE event each."""
    for event, _ in timed(capture, endpoint, request):
        yield event


def timed(
    capture: Capture, endpoint: HttpApi, request: dict[str, Any]
) -> Generator[tuple[bytes, int], None, None]:
    """Each event :func:`stream` sends, with how far into the capture (its bytes, as
    recorded) it had been read when the event was made: where the event's last byte is
    in a capture sent as recorded, the end of the line that made it in one transcoded."""
    kept = first_choices(capture, endpoint, request)
    for event, end in _all_asked(capture, endpoint, request):
        out = event if kept is None else only_choices(event, kept)
        if out is not None:
            yield out, end


def _all_asked(
    capture: Capture, endpoint: HttpApi, request: dict[str, Any]
) -> Generator[tuple[bytes, int], None, None]:
    """Every event of the choices asked for when one or all: the recorded bytes as
    they are (the API's own SSE), else transcoded."""
    splitter = Events()
    own = capture.format == endpoint.format and capture.container == "sse"
    if own and not capture.whole and _choice(capture, endpoint, request) is None:
        end = 0
        for chunk in _first_stream(capture):  # read as sent: never held whole
            for event in splitter.feed(chunk):
                end += len(event)
                yield event, end
        for event in splitter.finish():
            end += len(event)
            yield event, end
        return
    yield from _transcoded(capture, endpoint, request, splitter)


def _first_stream(capture: Capture) -> Iterator[bytes]:
    """The capture's bytes up to its second stream (all of them for a capture of one
    stream): one provider answer, not a run's turns one after another."""
    if capture.second_stream is None:
        yield from capture.chunks()
        return
    kept: list[bytes] = []
    rest = b""  # a line not ended yet (a CR may be half a CRLF)
    for chunk in capture.chunks():
        lines = (rest + chunk).splitlines(keepends=True)
        rest = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
        kept.extend(lines)
        if len(kept) >= capture.second_stream - 1:
            break
    else:
        kept.append(rest)
    del kept[capture.second_stream - 1 :]  # the lines before the one it begins on
    if capture.container == "sse":
        # The second stream's first event may open on a line before its data (event:).
        while kept and kept[-1].strip():
            kept.pop()
    yield from kept


def _transcoded(
    capture: Capture, endpoint: HttpApi, request: dict[str, Any], splitter: Events
) -> Generator[tuple[bytes, int], None, None]:
    transcoder = Transcoder(
        endpoint.format,
        src=capture.format,
        container=capture.container,
        out_container="sse",
        # Another format's stream into Responses: the envelope (instructions, tools,
        # settings) comes from the request, as a provider fills it.
        options=EncodeOptions(request=request) if enveloped(capture, endpoint) else None,
        choice=_choice(capture, endpoint, request),
        name=capture.path,
        notes=Notes(),
    )
    read = 0
    for chunk in _first_stream(capture):
        for line in chunk.splitlines(keepends=True):
            read += len(line)
            out = transcoder.feed(line)
            if out:
                for event in splitter.feed(out):
                    yield event, read
    for event in [*splitter.feed(transcoder.finish()), *splitter.finish()]:
        yield event, read


def take(events: Iterator[bytes], budget: int = BATCH) -> tuple[list[bytes], ChatxError | None]:
    """The next events, at least ``budget`` bytes of them unless the stream ends first
    (none: it has ended), and the error that stopped the stream after them, if one did.
    Run off the event loop: this is where a capture is read and transcoded."""
    out: list[bytes] = []
    size = 0
    try:
        for event in events:
            out.append(event)
            size += len(event)
            if size >= budget:
                break
    except ChatxError as exc:
        return out, exc
    return out, None


def not_servable(exc: ChatxError) -> ApiError:
    """A capture that cannot be sent in this format, found before the response started:
    an error body (500), not a stream that stops at once."""
    return ApiError(500, f"chatx serve: {exc}", code="capture_not_servable")


def _choice(
    capture: Capture, endpoint: HttpApi, request: dict[str, Any] | None = None
) -> int | None:
    """The one choice sent of a stream that has several: the first, to a one-choice
    format or a request that asks for one (chat's ``n`` left out or 1); None: all."""
    lanes = capture.lanes
    if len(lanes) < 2:
        return None
    if codecs.get(endpoint.format).single_lane or asked_choices(request, endpoint) == 1:
        return lanes[0]
    return None


# The request field that asks for a number of choices, per API that has one.
CHOICES_FIELD = {"chat": "n"}


def asked_choices(request: dict[str, Any] | None, endpoint: HttpApi) -> int | None:
    """How many choices the request asks for (1 when its API has a field for it and the
    request leaves it out); None: every one the capture has."""
    field = CHOICES_FIELD.get(endpoint.api)
    if request is None or field is None:
        return None
    asked = request.get(field)
    return 1 if asked is None else asked if isinstance(asked, int) else None


def first_choices(
    capture: Capture, endpoint: HttpApi, request: dict[str, Any] | None
) -> frozenset[int] | None:
    """The choices sent when a request asks for some of a capture's, more than one and
    fewer than all (``n=2`` of three): the first ``n`` in order. None: one or every
    one, sent by :func:`_choice`'s rule."""
    asked = asked_choices(request, endpoint)
    lanes = capture.lanes
    if asked is None or isinstance(asked, bool) or not 1 < asked < len(lanes):
        return None
    return frozenset(lanes[:asked])


def only_choices(event: bytes, kept: frozenset[int]) -> bytes | None:
    """A chat event with the choices of ``kept`` alone, each keeping its index; None for
    an event that only held others. An event with no choices (a usage chunk, [DONE], a
    comment) or one of the kept alone is sent as it came, to the byte."""
    lines = event.splitlines(keepends=True)
    for at, line in enumerate(lines):
        if not line.startswith(b"data:"):
            continue
        try:
            chunk = orjson.loads(line[5:])
        except orjson.JSONDecodeError:
            return event  # [DONE], or not JSON: no choice in it to leave out
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not isinstance(choices, list) or not choices:
            return event
        mine = [c for c in choices if not isinstance(c, dict) or c.get("index", 0) in kept]
        if len(mine) == len(choices):
            return event
        if not mine:
            return None
        chunk["choices"] = mine
        ending = line[len(line.rstrip(b"\r\n")) :]
        lines[at] = b"data: " + orjson.dumps(chunk) + ending
        return b"".join(lines)
    return event


def check_choices(capture: Capture, endpoint: HttpApi, request: dict[str, Any]) -> None:
    """A request for more choices than the capture has, or for a number that is no
    count, is a 400 naming what was asked, before anything is sent."""
    field = CHOICES_FIELD.get(endpoint.api)
    if field is None or request.get(field) is None:
        return
    asked = request[field]
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ApiError(
            400, f"Invalid value for '{field}': expected an integer of 1 or more", param=field
        )
    has = len(capture.lanes)
    if asked > has:
        raise ApiError(
            400,
            f"The request asks for {field}={asked} choices; capture {capture.name} has {has}",
            param=field,
            code="too_many_choices",
        )


class Finals:
    """``"stream": false``: the final object per capture and format, built once; one
    whose stream the request shapes (Responses' envelope, from another format) is built
    from that stream, for each request."""

    def __init__(self) -> None:
        self.built: dict[tuple[int, str, int | None], bytes] = {}

    def get(self, capture: Capture, endpoint: HttpApi, request: dict[str, Any]) -> bytes:
        kept = first_choices(capture, endpoint, request)
        body = self._all(capture, endpoint, request)
        return body if kept is None else only_final_choices(body, kept)

    def _all(self, capture: Capture, endpoint: HttpApi, request: dict[str, Any]) -> bytes:
        choice = _choice(capture, endpoint, request)
        if capture.whole and capture.format == endpoint.format and choice is None:
            return capture.data
        if enveloped(capture, endpoint) and endpoint.format == ENVELOPED:
            return final_object(capture, endpoint, request)
        key = (id(capture), endpoint.format, choice)
        body = self.built.get(key)
        if body is None:
            body = self.built[key] = final_object(capture, endpoint, choice=choice)
        return body


def only_final_choices(body: bytes, kept: frozenset[int]) -> bytes:
    """A final chat object with the choices of ``kept`` alone, in the order it has them."""
    final = orjson.loads(body)
    choices = final.get("choices") if isinstance(final, dict) else None
    if not isinstance(choices, list):
        return body
    final["choices"] = [c for c in choices if not isinstance(c, dict) or c.get("index", 0) in kept]
    return orjson.dumps(final)


def final_object(
    capture: Capture,
    endpoint: HttpApi,
    request: dict[str, Any] | None = None,
    *,
    choice: int | None = None,
) -> bytes:
    """What ``chatx collect --as FORMAT`` prints for the capture (its first stream); given
    the request, for the stream :func:`stream` sends it (the final object a client
    collects from that stream: the same envelope, by construction)."""
    from chatx.collect import DEFAULT_TARGET, collect
    from chatx.containers.payload import lenient_dumps

    target = DEFAULT_TARGET.get(endpoint.format)
    if target is None:
        raise ApiError(
            400, f"chatx serve sends {endpoint.api} as a stream only: ask with stream: true"
        )
    try:
        if request is None:
            first, source = capture.streams[0], capture.format
            choice = choice if choice is not None else _choice(capture, endpoint)
        else:
            first, source, choice = _as_sent(capture, endpoint, request), endpoint.format, None
        built = collect(first, target, source=source, choice=choice, notes=Notes())
    except ChatxError as exc:
        raise ApiError(500, f"chatx serve: {capture.path}: {exc}") from None
    if first.errors:
        # A stream that ended in an error is, asked for whole, the error a provider
        # answers a request with: its status and body, not a 200 with nothing in it.
        raise recorded_error(first.errors[0])
    return lenient_dumps(built)


# An error type as providers name it -> the status they answer it with.
_STATUS_OF_KIND = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "requests": 429,
    "tokens": 429,
    "insufficient_quota": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def recorded_error(error: ir.Error) -> ApiError:
    """The error response for a stream's error: its status as the error states it (a
    ``code`` or ``status_code`` from 400 to 599), else as its type or code names it
    (429 for a rate limit), else 500; its message, type and code as recorded."""
    status = _status(error)
    code = error.code if isinstance(error.code, str) else None
    message = error.message or "the stream ended with an error"
    return ApiError(status, message, param=error.param, code=code, kind=error.type)


def _status(error: ir.Error) -> int:
    for said in (error.code, error.extra.get("status_code"), error.extra.get("status")):
        if isinstance(said, int) and not isinstance(said, bool) and 400 <= said <= 599:
            return said
    for name in (error.type, error.code):
        if isinstance(name, str) and name in _STATUS_OF_KIND:
            return _STATUS_OF_KIND[name]
    return 500


def _as_sent(capture: Capture, endpoint: HttpApi, request: dict[str, Any]) -> Assembler:
    """The first stream of what :func:`stream` sends for the request, read back."""
    from chatx.collect.streams import streams_of
    from chatx.reading.framing import load

    sent = b"".join(stream(capture, endpoint, request))
    streams = streams_of(load(sent, capture.path, endpoint.format))
    if not streams:
        raise InputError("no events in the stream sent", file=capture.path)
    return streams[0]

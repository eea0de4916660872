"""One payload between a container and JSON: the limits on what is read, the words for a
payload that is not JSON, and the output pieces writers hand on."""

from __future__ import annotations

from typing import Any

import orjson

from chatx.containers import exact
from chatx.containers.exact import DIGITS, LONG_RUN, may_hold_big_int
from chatx.limits import MAX_DEPTH
from chatx.record import Record

# Deeper records are refused at the reader, so that nothing downstream meets them (see
# chatx/limits.py); so are request bodies and recorded requests (request_json).
_DEEP_BYTES = 2 * MAX_DEPTH  # a payload this short cannot nest deeper: no check at all
# A payload longer than this may be left raw for the decoder, which can parse it around
# the long texts it holds already (Responses done and terminal events repeat them): orjson
# needs about sixteen times a payload's size to parse it.
LONG_PAYLOAD = 1 << 20
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep (chatx reads at most {MAX_DEPTH})"


def too_deep(data: bytes, value: Any) -> bool:
    """True when ``value`` (parsed from ``data``) nests more than :data:`MAX_DEPTH` levels.

    Called only for payloads longer than ``2 * MAX_DEPTH`` bytes; counting the brackets
    first keeps it to two fast scans for all but bracket-heavy payloads.
    """
    return data.count(b"{") + data.count(b"[") > MAX_DEPTH and deeper_than_max(value)


def deeper_than_max(value: Any) -> bool:
    """True when ``value`` (a parsed JSON value, from any reader) nests more than
    :data:`MAX_DEPTH` levels; walked without recursion."""
    if type(value) is not dict and type(value) is not list:
        return False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


class TooDeep(orjson.JSONDecodeError):
    """JSON nested more than :data:`MAX_DEPTH` levels: a JSONDecodeError, so that a
    caller's words for JSON it cannot read hold for it too, said in chatx's words."""

    def __init__(self, doc: str = "") -> None:
        super().__init__(TOO_DEEP, doc, 0)

    def __str__(self) -> str:
        return TOO_DEEP


def request_json(data: bytes | bytearray | memoryview | str) -> Any:
    """A request body (or any JSON document chatx is handed whole) parsed, refused when
    it nests more than :data:`MAX_DEPTH` levels: :class:`TooDeep`, an
    ``orjson.JSONDecodeError`` as any JSON that cannot be read is. Every command that
    takes a request (capture, convert --request, proxy, serve) parses it here, so that
    nothing that walks it after meets more levels than a record may have."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "recursion limit" in exc.msg.lower() or "depth limit" in exc.msg.lower():
            raise TooDeep() from None
        raise
    brackets = data.count("[") + data.count("{") if isinstance(data, str) else (
        bytes(data).count(b"[") + bytes(data).count(b"{"))  # fmt: skip
    if brackets > MAX_DEPTH and deeper_than_max(value):
        raise TooDeep()
    return value


def nests_too_deep(data: Any) -> bool:
    """True when ``data`` (bytes or text) is JSON nested more than :data:`MAX_DEPTH`
    levels (False for anything that is not JSON): what the proxy asks of a body before
    relaying it, and show and diff of a tool call's arguments before parsing them."""
    if not isinstance(data, bytes | bytearray | str):
        return False
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return False
    try:
        request_json(data)
    except TooDeep:
        return True
    except orjson.JSONDecodeError:
        return False
    return False


def payload_error(data: bytes, exc: ValueError, column0: int = 1) -> str:
    """Say in a few words why ``data`` is not one JSON value.

    ``column0`` is the column ``data`` starts at on its first line, for the column said.
    """
    try:
        data.decode()
    except UnicodeDecodeError as bad:
        return f"invalid UTF-8 at byte {bad.start}"
    if not data.strip():
        return "invalid JSON: empty payload"
    pos, msg = getattr(exc, "pos", 0), getattr(exc, "msg", str(exc))
    # orjson counts pos in characters, so a non-ASCII payload needs the message check.
    if msg.startswith("unexpected end") or pos >= len(data.rstrip()):
        return "invalid JSON: unexpected end of data (half-written line?)"
    # orjson's own words for its limits, said in the user's terms.
    if "depth limit" in msg or "recursion limit" in msg:
        return TOO_DEEP
    elif "infinity" in msg:
        msg = "number out of range (larger than a double can hold)"
    line, column = getattr(exc, "lineno", 1), getattr(exc, "colno", pos + 1)
    if line == 1:
        column += column0 - 1
    where = f"column {column}" if line == 1 else f"line {line}, column {column}"
    return f"invalid JSON: {msg} at {where}"


def parse(data: bytes, event: str | None, line: int) -> Record:
    """The record of one payload: its JSON value, the ``[DONE]`` sentinel, or an error.

    Readers inline this on their hot path; a decoder that reads raw records calls it for
    the payloads its byte templates do not match. A payload orjson does not read as
    ``JSON.parse`` does (:mod:`chatx.containers.exact`) keeps its bytes in ``raw``
    beside its value, surrogates as they are: the decoder mends them and says so."""
    try:
        value = orjson.loads(data)
    except ValueError as exc:
        return bad_payload(data, exc, event, line)
    return (
        Record(value, event, line)
        if len(data) <= _DEEP_BYTES and LONG_RUN not in data.translate(DIGITS)
        else checked(data, value, event, line)
    )


def checked(data: bytes, value: Any, event: str | None, line: int) -> Record:
    """The record of ``value`` parsed from ``data``, or its error when it nests too deep.

    A payload that may hold an integer orjson read as a double is read again, exactly
    (see :func:`parse`)."""
    if len(data) > _DEEP_BYTES and too_deep(data, value):
        return Record(None, event, line, False, TOO_DEEP)
    if may_hold_big_int(data):
        try:
            exact_value = exact.loads(data)
        except ValueError:  # what orjson read, the standard library should too
            return Record(value, event, line)
        if exact.big_ints(exact_value):
            return Record(exact_value, event, line, raw=bytes(data))
    return Record(value, event, line)


def bad_payload(data: bytes, exc: ValueError, event: str | None, line: int) -> Record:
    """The record for a payload orjson refused: the ``[DONE]`` sentinel, a payload that
    ``JSON.parse`` reads (a lone surrogate: see :func:`parse`), or an error.

    A reader hands such a payload on through :class:`~chatx.containers.exact.Reading`,
    which mends its surrogates for consumers that do not decode."""
    if data.strip() == b"[DONE]":
        return Record(None, event, line, True)
    try:
        value = exact.loads(data)
    except ValueError:
        return Record(None, event, line, False, payload_error(data, exc))
    if len(data) > _DEEP_BYTES and too_deep(data, value):
        return Record(None, event, line, False, TOO_DEEP)
    return Record(value, event, line, raw=bytes(data))


def off_the_fast_path(
    reading: exact.Reading,
    data: bytes,
    value: Any,
    exc: ValueError | None,
    event: str | None,
    line: int,
) -> Record:
    """What a reader hands on for a payload its hot loop does not take as it is: one
    orjson refused (``exc``), a long one, one with a run of 19 digits, or any while half
    a surrogate pair waits (``reading.carrying``)."""
    if exc is not None:
        record = bad_payload(data, exc, event, line)
    else:
        record = checked(data, value, event, line)
    if record.raw is not None or reading.carrying:
        record = reading.record(record, data)
    return record


LARGE = 1 << 20  # output pieces this long are handed on alone, never joined


def frames(pieces: list[bytes]) -> list[bytes]:
    """``pieces`` as few byte strings to write, joined but for the large ones.

    A long stream ends with events that each repeat its whole text (a Responses
    ``output_text.done``, ``response.completed``): joining them into one string would
    hold that text once more, at the moment memory is at its highest."""
    if sum(map(len, pieces)) <= LARGE:
        return [b"".join(pieces)]
    out: list[bytes] = []
    run: list[bytes] = []
    for piece in pieces:
        if len(piece) > LARGE:
            if run:
                out.append(b"".join(run))
                run = []
            out.append(piece)
        else:
            run.append(piece)
    if run:
        out.append(b"".join(run))
    return out


def lenient_dumps(value: Any, option: int = 0, default: Any = None) -> bytes:
    """``orjson.dumps`` for what it refuses by default, used only when it has: dict keys
    that are not strings (written as strings, as JSON must have them) and integers beyond
    64 bits (written exactly, digit for digit: see :mod:`chatx.containers.exact`).
    """
    option |= orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(value, default, option)
    except TypeError:
        return orjson.dumps(_exact_ints(value), default, option)


def _exact_ints(value: Any) -> Any:
    kind = type(value)
    if kind is int and not exact.INT64[0] <= value < exact.INT64[1]:
        return orjson.Fragment(str(value).encode())
    if kind is dict:
        return {key: _exact_ints(item) for key, item in value.items()}
    if kind is list:
        return [_exact_ints(item) for item in value]
    return value

"""JSON read as JavaScript reads it, where orjson reads it otherwise.

orjson turns an integer beyond 64 bits into a double, silently, and refuses a string
holding a lone UTF-16 surrogate (``"\\ud83d"``), which ``JSON.parse`` reads: servers that
cut text at UTF-16 units send an emoji as ``"…\\ud83d"`` then ``"\\ude00…"``. A payload
like that is read again here with the standard library, which keeps integers exact
and surrogates as they are. Only such payloads pay for it: a run of 19 digits (2**63
has 19, every shorter integer fits) or orjson's refusal sends a payload here.

Python text cannot be written as UTF-8 with a surrogate in it, so a surrogate is
mended: the half of a pair cut at a record's end joins its other half at the start of
the same string in the next record (:class:`Surrogates`), and any other becomes U+FFFD.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import orjson

from chatx.errors import InputError
from chatx.record import Record

# Digits become 0, anything else 1: a run of 19 zeros is a run of 19 digits.
DIGITS = bytes(0 if 0x30 <= byte <= 0x39 else 1 for byte in range(256))
LONG_RUN = bytes(19)
INT64 = (-(1 << 63), 1 << 64)  # what orjson reads as an integer (signed, or unsigned)


def may_hold_big_int(data: bytes) -> bool:
    """Whether ``data`` has a run of 19 digits: the only way to write an integer that
    orjson does not read exactly (one in a string or a fraction sends it here too)."""
    return LONG_RUN in data.translate(DIGITS)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number out of range (larger than a double can hold)")
    return value


def _refuse(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_refuse)


def loads(data: bytes) -> Any:
    """The value of ``data`` as ``JSON.parse`` reads it, integers exact: what orjson
    refuses for other reasons is refused here too (``ValueError``)."""
    try:
        return _DECODER.decode(bytes(data).decode())
    except RecursionError:
        raise ValueError("nested too deep") from None


def document(data: bytes) -> Any:
    """A file of exchanges' JSON (a cassette, a recording, a stub server's file), its
    integers beyond 64 bits exact, as a payload read bare keeps them; an InputError
    saying where it is not JSON."""
    if may_hold_big_int(data):
        try:
            return loads(data)
        except ValueError as exc:
            raise InputError(f"not valid JSON: {exc}") from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None


def big_ints(value: Any) -> list[tuple[str, int]]:
    """(path, integer) for each integer under ``value`` that 64 bits cannot hold."""
    found: list[tuple[str, int]] = []
    low, high = INT64
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, node = stack.pop()
        kind = type(node)
        if kind is int:
            if not low <= node < high:
                found.append((path or "the payload", node))
        elif kind is dict:
            stack.extend((_key_path(path, key), item) for key, item in node.items())
        elif kind is list:
            stack.extend((f"{path}[{n}]", item) for n, item in enumerate(node))
    found.reverse()
    return found


def shown(number: int) -> str:
    """An integer for a message: a very long one is cut in the middle."""
    text = str(number) if abs(number).bit_length() < 200 else None
    if text is None or len(text) > 44:
        digits = len(str(abs(number))) if abs(number).bit_length() < 10000 else None
        sign = "-" if number < 0 else ""
        return f"{sign}an integer of {digits or 'over 3000'} digits"
    return text


def big_int_note(path: str, number: int) -> str:
    """What to say of an integer beyond 64 bits that is carried exactly."""
    try:
        rounded = f" to {float(number)!r}"
    except OverflowError:
        rounded = ""
    return (
        f"integer beyond 64 bits at {path}: {shown(number)} is carried exactly "
        f"(JavaScript and most JSON readers round it{rounded})"
    )


# -- surrogates ---------------------------------------------------------------------------


def _is_high(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


def _is_low(char: str) -> bool:
    return "\udc00" <= char <= "\udfff"


_SURROGATE = re.compile("[\ud800-\udfff]")
_has_surrogate = _SURROGATE.search


def _replaced(text: str) -> tuple[str, int]:
    """``text`` with each surrogate as U+FFFD, and how many there were."""
    return _SURROGATE.subn("\ufffd", text)


def _joined(high: str, low: str) -> str:
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def _key_path(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


# Fields whose value tells apart the strings of two records at the same place: a
# choice's or a tool call's index, an event's type, a Responses item and part.
_IDENTITY = ("type", "event_type", "index", "item_id", "output_index", "content_index",
             "summary_index")  # fmt: skip


class _Walk:
    """Rebuild a value with each string passed through ``fix(text, path, where)``:
    ``path`` names the place for a message, ``where`` tells it apart from other places
    for the next record (the identity fields of each object on the way)."""

    def __init__(
        self, fix: Callable[[str, str, tuple[Any, ...]], str], every: bool = False
    ) -> None:
        self.fix = fix
        self.every = every  # every string goes through fix, not only those with a surrogate

    def value(self, node: Any, path: str = "", where: tuple[Any, ...] = ()) -> Any:
        kind = type(node)
        if kind is str:
            if self.every or _has_surrogate(node):
                return self.fix(node, path or "the payload", where)
            return node
        if kind is dict:
            ident = tuple((key, node[key]) for key in _IDENTITY if key in node)
            out = {}
            for key, item in node.items():
                if _has_surrogate(key):
                    key = self.fix(key, f"a key in {path or 'the payload'}", (*where, None))
                out[key] = self.value(item, _key_path(path, key), (*where, ident, key))
            return out
        if kind is list:
            return [self.value(item, f"{path}[{n}]", (*where, n)) for n, item in enumerate(node)]
        return node


class Surrogates:
    """One stream's lone surrogates, record after record.

    A string that ends with a high surrogate gives it to the next string at the same
    place (the same field, of the same choice, item or part) in a later record: if that
    one starts with the low half, the two join into their character there. Every other
    surrogate becomes U+FFFD, said in a ``repaired`` note. Strings at one place in two
    records are one text cut in two, so either way the text read whole is what
    ``JSON.parse`` and a UTF-8 writer make of it."""

    def __init__(self, say: Callable[[str, int | None], None]) -> None:
        self.say = say  # (message, line) -> None
        # where -> (the high surrogate, the path it ended, its line)
        self.carried: dict[tuple[Any, ...], tuple[str, str, int]] = {}
        self.changed = False  # the last read changed a string
        self._line = 0

    def read(self, value: Any, line: int) -> Any:
        """``value`` (one record's payload) with its surrogates mended."""
        self._line = line
        self.changed = False
        if self.carried:  # every string may be the one a waiting surrogate goes to
            return _Walk(self._fix, every=True).value(value)
        return _Walk(self._fix).value(value) if _any_surrogate(value) else value

    def finish(self) -> None:
        """End of input: no record went on with the strings that ended with half a
        pair. Said, as there is no place left to write U+FFFD for them."""
        for high, path, line in self.carried.values():
            self.say(
                f"lone UTF-16 surrogate {_escape(high)} at the end of {path}, and no "
                "later record goes on with that string: left out",
                line,
            )
        self.carried = {}

    def _fix(self, text: str, path: str, where: tuple[Any, ...]) -> str:
        waiting = self.carried.pop(where, None)
        if waiting is not None:
            self.changed = True
            high, _, line = waiting
            if text and _is_low(text[0]):
                text = _joined(high, text[0]) + text[1:]
            else:
                text = "\ufffd" + text
                self.say(
                    f"lone UTF-16 surrogate {_escape(high)} at the end of {path}: the "
                    f"string there on line {self._line} does not start with its other "
                    "half; written as U+FFFD",
                    line,
                )
        if not _has_surrogate(text):
            return text
        self.changed = True
        if where and where[-1] is not None and _is_high(text[-1]):
            self.carried[where] = (text[-1], path, self._line)
            text = text[:-1]
        text, count = _replaced(text)
        if count:
            plural = "s" if count > 1 else ""
            self.say(f"{count} lone UTF-16 surrogate{plural} in {path}: written as U+FFFD", None)
        return text


def _any_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str:
            if _has_surrogate(node):
                return True
        elif kind is dict:
            stack.extend(node)
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
    return False


def _escape(char: str) -> str:
    return f"\\u{ord(char):04x}"


def _quiet(message: str, line: int | None) -> None:
    """A reader says nothing: the decoder reads the bytes again and says it."""


class Reading:
    """The records a reader hands consumers that do not decode (validate, the library's
    records): one read exactly, or one that half a pair waits for, has its surrogates
    mended as a decoder mends them, and keeps its bytes in ``raw`` when that changed
    anything, so that a decoder reads it again (and says what it mended)."""

    __slots__ = ("_surrogates", "carrying")

    def __init__(self) -> None:
        self._surrogates = Surrogates(_quiet)
        self.carrying = False  # half a pair waits: every record comes here

    def record(self, record: Record, data: bytes) -> Record:
        """``record``, parsed from ``data``, as the reader hands it on."""
        if record.error is not None or record.done:
            return record
        surrogates = self._surrogates
        value = surrogates.read(record.data, record.line)
        self.carrying = bool(surrogates.carried)
        if record.raw is None and not surrogates.changed:
            return record
        return Record(value, record.event, record.line, raw=bytes(data))

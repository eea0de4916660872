"""Long payloads parsed around the texts a decoder holds already.

A Responses stream's done events and its terminal event repeat each part's text: a
payload that repeats a 5 MB text costs orjson about sixteen times that to parse, and
the text would be held twice. A codec's run hook may parse such a
payload around the texts its decoder holds (``RunHook.parse``).
"""

from __future__ import annotations

from typing import Any

import orjson

from chatx.codecs.byte_template import hole
from chatx.containers import exact
from chatx.containers.payload import _DEEP_BYTES, checked
from chatx.record import Record


def parsed_around(record: Record, texts: list[str]) -> Record | None:
    """The parsed record of a raw payload that repeats some of ``texts`` (long texts a
    decoder holds already), parsed without them: each is put back, the very string
    held, in place of a stand-in.

    Why that holds: a stand-in that parses as a whole string value is a string token
    where it stands, so the held text, a string token too, stands for a string there.
    ``None`` when any stand-in is not found as often as it was put in, as a value (not a
    key): then the payload is parsed as it is."""
    raw = record.raw
    assert raw is not None
    if exact.may_hold_big_int(raw):  # read exactly, the long way
        return None
    put: dict[str, tuple[str, int]] = {}
    for text in texts:
        encoded = _json_string(text)
        count = raw.count(encoded)
        if count:
            stand_in = hole(f"known text {len(put)}")
            quoted = orjson.dumps(stand_in)
            if quoted in raw:
                return None
            raw = raw.replace(encoded, quoted)
            put[stand_in] = (text, count)
    if not put:
        return None
    try:
        value = orjson.loads(raw)
    except ValueError:
        return None
    found: dict[str, int] = dict.fromkeys(put, 0)
    if not _put_back(value, put, found) or any(found[k] != put[k][1] for k in put):
        return None
    if len(raw) > _DEEP_BYTES:
        return checked(raw, value, record.event, record.line)
    return Record(value, record.event, record.line)


def _json_string(text: str, step: int = 1 << 16) -> bytearray:
    """``orjson.dumps(text)``, written a slice at a time: for the whole of a long text
    with wide characters in it, orjson reserves about fourteen bytes a character."""
    out = bytearray(b'"')
    for at in range(0, len(text), step):
        out += orjson.dumps(text[at : at + step])[1:-1]
    out += b'"'
    return out


def _put_back(node: Any, put: dict[str, tuple[str, int]], found: dict[str, int]) -> bool:
    """Replace each stand-in value under ``node`` by its text, counting them in ``found``;
    false when a stand-in is a key."""
    stack = [node]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if any(key in put for key in node):
                return False
            entries: Any = list(node.items())
        else:
            entries = enumerate(node)
        for place, value in entries:
            if type(value) is str:
                if value in put:
                    node[place] = put[value][0]
                    found[value] += 1
            elif type(value) is dict or type(value) is list:
                stack.append(value)
    return True

"""Which capture answers a request, first rule that applies:

1. the header ``X-Chatx-Capture: NAME`` (the capture's path under the PATH given, with
   or without its suffix, or its file name when no other capture has it); the answer
   names its capture in the same header, percent-encoded where a header cannot hold the
   name as it is (see :func:`header_value`), and that value names it back as it is;
2. else the first capture whose recorded request equals the request body — compared as
   JSON values, leaving out ``stream`` and ``stream_options`` (``capture`` forces
   streaming on), what differs from run to run at the top (``user``, ``id``,
   ``created``, ``timestamp``...) and the fields a recording leaves out as secrets;
   with ``on_miss="error"``, no other rule: a request no capture's matches is a 400
   naming the closest capture and the first difference;
3. else a capture whose model equals the request's model: the next of those in order,
   each request (from the first again after the last);
4. else the next capture in order, each request.

The answer depends on the captures, the request and the requests before it, never on
the clock: the same requests in the same order get the same captures.
"""

from __future__ import annotations

import threading
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, unquote

import orjson

from chatx.codecs.base import HttpApi
from chatx.live.captures import Capture
from chatx.live.errors import ApiError
from chatx.live.recording import scrub

HEADER = "x-chatx-capture"
# Left out of a request before it is compared: streaming (``capture`` forces it on) and
# what a client sends differently each run.
_VOLATILE = frozenset(
    ("stream", "stream_options", "user", "id", "created", "created_at", "timestamp")
)
ON_MISS = ("next", "error")
# What a header value holds as it is: visible ASCII but the escape character itself.
# Spaces (lost at either end of a value), controls and other characters are percent-
# encoded as UTF-8, so no name can break the header or be read back as another.
_AS_IS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")


def header_value(name: str) -> bytes:
    """The ``X-Chatx-Capture`` value that names a capture in an answer."""
    return quote(name, safe=_AS_IS, errors="surrogateescape").encode("ascii")


def header_names(value: str) -> list[str]:
    """The names a header value may mean, first the one it means as an answer's header
    (percent-decoded), then as typed."""
    decoded = unquote(value, errors="surrogateescape") if "%" in value else value
    return [decoded] if decoded == value else [decoded, value]


def comparable(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in scrub(request).items() if k not in _VOLATILE}


class Chooser:
    def __init__(self, captures: list[Capture], on_miss: str = "next") -> None:
        self.captures = captures
        self.on_miss = on_miss
        self.requests = [
            (comparable(c.request) if c.request is not None else None) for c in captures
        ]
        self.lock = threading.Lock()
        self.turn = 0
        self.turns: dict[str, int] = {}

    def choose(self, header: str | None, body: dict[str, Any], endpoint: HttpApi) -> Capture:
        if header is not None:
            return self.from_header(header)
        wanted = comparable(body)
        for capture, request in zip(self.captures, self.requests, strict=True):
            if request is not None and request == wanted:
                return capture
        if self.on_miss == "error":
            raise self.missed(wanted)
        model = body.get(endpoint.model_key, body.get("model"))
        with self.lock:
            if isinstance(model, str):
                same = [c for c in self.captures if c.model == model]
                if same:
                    turn = self.turns.get(model, 0)
                    self.turns[model] = turn + 1
                    return same[turn % len(same)]
            turn, self.turn = self.turn, self.turn + 1
        return self.captures[turn % len(self.captures)]

    def from_header(self, value: str) -> Capture:
        """The capture an ``X-Chatx-Capture`` value names: the value an answer sent
        names its capture; a name typed as it is (a ``%`` in it) is found too."""
        *first, last = header_names(value)
        for name in first:
            try:
                return self.named(name)
            except ApiError as exc:
                if exc.status != 404:
                    raise
        return self.named(last)

    def named(self, name: str) -> Capture:
        for matches in (
            [c for c in self.captures if name == c.name],
            [c for c in self.captures if name == c.stem],
            [c for c in self.captures if name == PurePosixPath(c.name).name],
            [c for c in self.captures if name == PurePosixPath(c.stem).name],
        ):
            if len(matches) == 1:
                return matches[0]
            if matches:
                names = ", ".join(c.name for c in matches[:5])
                raise ApiError(
                    400,
                    f"{HEADER}: {name!r} names {len(matches)} captures ({names}): give its path",
                    param=HEADER,
                    code="ambiguous_capture",
                )
        raise ApiError(
            404,
            f"{HEADER}: no capture named {name!r} (serving {self._some()})",
            param=HEADER,
            code="capture_not_found",
        )

    def missed(self, wanted: dict[str, Any]) -> ApiError:
        """``--on-miss error``: the 400 that names the capture whose recorded request is
        closest (most top-level fields equal) and the first place the two differ."""
        recorded = [(c, r) for c, r in zip(self.captures, self.requests, strict=True) if r]
        if not recorded:
            return ApiError(
                400,
                "no capture matches the request: no capture has a recorded request "
                f"(serving {self._some()})",
                code="no_matching_capture",
            )
        capture, request = max(recorded, key=lambda pair: _alike(pair[1], wanted))
        where, said = first_difference(request, wanted)
        return ApiError(
            400,
            f"no capture matches the request; the closest, {capture.name}, differs first "
            f"at {where or 'the top'}: {said}",
            param=where or None,
            code="no_matching_capture",
        )

    def _some(self) -> str:
        names = [c.name for c in self.captures[:5]]
        more = len(self.captures) - len(names)
        return ", ".join(names) + (f" and {more} more" if more else "")


def _alike(recorded: dict[str, Any], wanted: dict[str, Any]) -> int:
    return sum(1 for k, v in wanted.items() if k in recorded and recorded[k] == v)


def first_difference(recorded: Any, wanted: Any, where: str = "") -> tuple[str, str]:
    """The path of the first place two JSON values differ (``messages[2].content``) and
    what each holds there, the request's keys in its order first."""
    if isinstance(recorded, dict) and isinstance(wanted, dict):
        for key in [*wanted, *(k for k in recorded if k not in wanted)]:
            here = f"{where}.{key}" if where else str(key)
            if key not in recorded:
                return here, "the capture's request has no such field"
            if key not in wanted:
                return here, "the request has no such field"
            if recorded[key] != wanted[key]:
                return first_difference(recorded[key], wanted[key], here)
    if isinstance(recorded, list) and isinstance(wanted, list):
        for index, (a, b) in enumerate(zip(recorded, wanted, strict=False)):
            if a != b:
                return first_difference(a, b, f"{where}[{index}]")
        if len(recorded) != len(wanted):
            return where, f"{len(wanted)} items, the capture's request {len(recorded)}"
    return where, f"{_short(wanted)}, the capture's request {_short(recorded)}"


def _short(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."

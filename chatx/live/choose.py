"""Which capture answers a request, first rule that applies:

1. the header ``X-Chatx-Capture: NAME`` (the capture's path under the PATH given, with
   or without its suffix, or its file name when no other capture has it); the answer
   names its capture in the same header, percent-encoded where a header cannot hold the
   name as it is (see :func:`header_value`), and that value names it back as it is;
2. else the first capture whose recorded request equals the request body — compared as
   JSON values, leaving out ``stream`` and ``stream_options`` (``capture`` forces
   streaming on), what differs from run to run at the top (``user``, ``id``,
   ``created``, ``timestamp``, ``metadata``, ``prompt_cache_key``...) and the fields a
   recording leaves out as secrets;
3. else, for a request that carries tool results (the next turn of a conversation),
   the capture whose recorded request carries results for the same tool calls, in the
   same order, and names the same model: the calls' ids come from the capture that made
   them, so they tell the turn apart where the results' text differs from the recording
   (the closest of several, most top-level fields alike, the first in order of those
   as close);
   with ``on_miss="error"``, no other rule: a request none of these matches is a 400
   naming the closest capture and the first difference; with ``on_miss="upstream"``,
   a miss (None), which serve forwards to its upstream;
4. else a capture whose model equals the request's model: the next of those in order,
   each request (from the first again after the last); a request without tool results
   takes those recorded without any first (a conversation's first turn);
5. else the next capture in order, each request.

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
from chatx.live.errors import ApiError
from chatx.live.recorded_files import scrub
from chatx.live.served_captures import Capture

HEADER = "x-chatx-capture"
# Left out of a request before it is compared: streaming (``capture`` forces it on) and
# what a client sends differently each run.
_VOLATILE = frozenset(
    (
        "stream",
        "stream_options",
        "user",
        "id",
        "created",
        "created_at",
        "timestamp",
        # What SDKs and agents fill per session or run: a user's or session's id
        # (Anthropic's metadata.user_id, Codex's client_metadata), a cache key.
        "metadata",
        "client_metadata",
        "safety_identifier",
        "prompt_cache_key",
        "request_id",
        "session_id",
        "trace_id",
        "idempotency_key",
    )
)
# The fields of a tool result that name the call it answers, per API: chat's and Llama
# Stack's tool message, Responses' *_call_output item, Anthropic's tool_result block.
_ANSWERS = ("tool_call_id", "tool_use_id", "call_id")
ON_MISS = ("next", "error", "upstream")
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


def tool_results(request: dict[str, Any] | None) -> tuple[str, ...]:
    """The ids of the tool calls a request's conversation answers, in order: what tells
    one turn of an agent's loop from the next."""
    if request is None:
        return ()
    found: list[str] = []
    for key in ("messages", "input"):
        turns = request.get(key)
        if isinstance(turns, list):
            for turn in turns:
                _answers(turn, found)
    return tuple(found)


def _answers(item: Any, found: list[str]) -> None:
    if not isinstance(item, dict):
        return
    kind = item.get("type")
    is_result = item.get("role") == "tool" or (
        isinstance(kind, str) and (kind.endswith("_output") or kind == "tool_result")
    )
    if is_result:
        for field in _ANSWERS:
            said = item.get(field)
            if isinstance(said, str):
                found.append(said)
                return
    content = item.get("content")
    if isinstance(content, list):  # Anthropic's blocks in a user message
        for block in content:
            _answers(block, found)


class Chooser:
    def __init__(self, captures: list[Capture], on_miss: str = "next") -> None:
        self.captures = captures
        self.on_miss = on_miss
        self.requests = [
            (comparable(c.request) if c.request is not None else None) for c in captures
        ]
        self.answers = [tool_results(c.request) for c in captures]
        self.lock = threading.Lock()
        self.turn = 0
        self.turns: dict[str, int] = {}

    def add(self, captures: list[Capture]) -> None:
        """Captures recorded while serving: matched from the next request on."""
        with self.lock:
            for capture in captures:
                self.captures.append(capture)
                request = capture.request
                self.requests.append(comparable(request) if request is not None else None)
                self.answers.append(tool_results(request))

    def choose(self, header: str | None, body: dict[str, Any], endpoint: HttpApi) -> Capture | None:
        """The capture that answers; None: a miss, for the upstream to answer."""
        if header is not None:
            return self.from_header(header)
        wanted = comparable(body)
        for capture, request in zip(self.captures, self.requests, strict=True):
            if request is not None and request == wanted:
                return capture
        model = body.get(endpoint.model_key, body.get("model"))
        answers = tool_results(body)
        answering = self.next_turn(answers, model, wanted)
        if answering is not None:
            return answering
        if self.on_miss == "upstream":
            return None
        if self.on_miss == "error":
            raise self.missed(wanted)
        with self.lock:
            if isinstance(model, str):
                same = [c for c in self.captures if c.model == model]
                if not answers:  # a first turn: the captures recorded as one first
                    same = [c for c in same if not self._answers_of(c)] or same
                if same:
                    turn = self.turns.get(model, 0)
                    self.turns[model] = turn + 1
                    return same[turn % len(same)]
            turn, self.turn = self.turn, self.turn + 1
        return self.captures[turn % len(self.captures)]

    def next_turn(
        self, answers: tuple[str, ...], model: Any, wanted: dict[str, Any]
    ) -> Capture | None:
        """The capture recorded for the turn that answers the same tool calls (rule 3)."""
        if not answers:
            return None
        same = [
            (capture, request)
            for capture, request, said in zip(
                self.captures, self.requests, self.answers, strict=True
            )
            if request is not None
            and said == answers
            and (not isinstance(model, str) or capture.model in (model, None))
        ]
        if not same:
            return None
        return max(same, key=lambda pair: _alike(pair[1], wanted))[0]

    def _answers_of(self, capture: Capture) -> tuple[str, ...]:
        return self.answers[self.captures.index(capture)]

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
        closest (most top-level fields equal, then most turns shared from the first,
        then the nearest number of turns) and the first place the two differ."""
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


def _alike(recorded: dict[str, Any], wanted: dict[str, Any]) -> tuple[int, int, int]:
    """How close a recorded request is: its top-level fields equal to the request's, then
    the turns of the conversation (``messages``, ``input``) the two share from the first,
    then how near its number of turns is."""
    fields = sum(1 for k, v in wanted.items() if k in recorded and recorded[k] == v)
    shared = apart = 0
    for key in ("messages", "input"):
        mine, theirs = recorded.get(key), wanted.get(key)
        if isinstance(mine, list) and isinstance(theirs, list):
            for a, b in zip(mine, theirs, strict=False):
                if a != b:
                    break
                shared += 1
            apart -= abs(len(mine) - len(theirs))
    return fields, shared, apart


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

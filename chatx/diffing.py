"""Compare two streams, as diff(1) compares files: same (0), different (1), trouble (2).

*Wire* mode compares the records event by event, after dropping the fields that
legitimately vary between two runs or two conversions (ids, timestamps,
``sequence_number``, ``obfuscation``, ``system_fingerprint``). An event only one side
has is found by looking a few events ahead, so one inserted event is reported as
itself, not as a shift of everything after it.

*Semantic* mode compares what a client reconstructs (:mod:`chatx.assemble`): per choice
the text, reasoning, refusal, tool calls (arguments as JSON values when both parse),
finish reason, and per stream usage, errors and built-in items — however the deltas
were split. Across formats it also evens out what the formats cannot tell apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from chatx.assemble import Assembler, Lane, Side, load, streams_of
from chatx.record import Record

Mode = Literal["wire", "semantic"]

# Fields that differ between two runs of the same request or two conversions of one
# stream, dropped wherever they occur (``--no-normalize`` keeps them).
NORMALIZED = frozenset((
    "id", "item_id", "response_id", "call_id", "created", "created_at", "completed_at",
    "sequence_number", "obfuscation", "system_fingerprint",
))
# How far ahead to look for the counterpart of an event before calling it changed.
_LOOKAHEAD = 8
_AGREE = 3  # events that must match after a skip for the skip to count
_CONTEXT_AFTER = 2  # rows aligned after the first difference when only it is wanted


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()
"""The value on the side of a difference where the key or event does not exist."""


@dataclass(slots=True)
class Difference:
    """One place where the two streams disagree.

    ``path`` is a JSON path into the event (wire) or into the reconstruction
    (semantic, e.g. ``choices[0].tool_calls[1].arguments.city``); ``a``/``b`` are the
    values, :data:`ABSENT` where one side has nothing. Wire differences also say which
    event (0-based index) and input line on each side.
    """

    path: str
    a: Any
    b: Any
    index_a: int | None = None
    index_b: int | None = None
    line_a: int | None = None
    line_b: int | None = None
    row: int | None = None  # position in the wire alignment, for context

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        for key in ("index_a", "index_b", "line_a", "line_b"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.a is not ABSENT:
            out["a"] = self.a
        if self.b is not ABSENT:
            out["b"] = self.b
        return out


@dataclass(slots=True)
class DiffResult:
    """The outcome: the mode used, both inputs, and the differences found."""

    mode: Mode
    a: Side
    b: Side
    differences: list[Difference]
    # Wire mode: the aligned (index in A, index in B) pairs, None for a missing side.
    rows: list[tuple[int | None, int | None]] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, Any]:
        return {"same": self.same, "mode": self.mode, "a": self.a.describe(),
                "b": self.b.describe(),
                "differences": [d.to_json() for d in self.differences]}


# -- ignoring fields -----------------------------------------------------------------------


class FieldFilter:
    """Which fields to leave out: bare key names anywhere, or dotted paths from the root.

    In a dotted path a segment is a key, ``*`` (any key or index) or a list index; list
    levels the path does not mention are passed through, so ``choices.delta.role``
    matches the role in every choice.
    """

    def __init__(self, names: frozenset[str] | set[str] = frozenset(),
                 ignore: tuple[str, ...] | list[str] = ()) -> None:
        self.names = set(names)
        self.paths: list[tuple[str, ...]] = []
        for spec in ignore:
            if "." in spec:
                self.paths.append(tuple(spec.split(".")))
            else:
                self.names.add(spec)

    def drops(self, path: tuple[Any, ...]) -> bool:
        return path[-1] in self.names or any(_matches(p, path) for p in self.paths)

    def apply(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        """A copy of ``value`` without the dropped fields."""
        if isinstance(value, dict):
            return {k: self.apply(v, (*path, k)) for k, v in value.items()
                    if not self.drops((*path, k))}
        if isinstance(value, list):
            return [self.apply(v, (*path, i)) for i, v in enumerate(value)]
        return value


def _matches(pattern: tuple[str, ...], path: tuple[Any, ...]) -> bool:
    if not pattern:
        return not path
    if not path:
        return False
    head = path[0]
    if isinstance(head, int):
        if pattern[0] == "*" or pattern[0] == str(head):
            return _matches(pattern[1:], path[1:])
        return _matches(pattern, path[1:])  # a list level the pattern leaves out
    return pattern[0] in ("*", head) and _matches(pattern[1:], path[1:])


# -- comparing values ------------------------------------------------------------------------


def compare(a: Any, b: Any, path: str = "", out: list[Difference] | None = None
            ) -> list[Difference]:
    """Every leaf where ``a`` and ``b`` differ, as Differences with JSON paths."""
    out = out if out is not None else []
    if _same(a, b):
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            compare(a.get(key, ABSENT), b.get(key, ABSENT), _join(path, key), out)
    elif isinstance(a, list) and isinstance(b, list):
        for index in range(max(len(a), len(b))):
            compare(a[index] if index < len(a) else ABSENT,
                    b[index] if index < len(b) else ABSENT, f"{path}[{index}]", out)
    else:
        out.append(Difference(path or "$", a, b))
    return out


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 and 1.0 are the same number; true and 1 are not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):  # the view's choices are keyed by index
        return f"{path}[{key}]"
    if key.replace("_", "").isalnum():
        return f"{path}.{key}" if path else key
    return f"{path}[{orjson.dumps(key).decode()}]"


# -- wire mode ---------------------------------------------------------------------------


def wire_value(record: Record) -> Any:
    """What a record says on the wire: its payload, ``[DONE]``, or why it is unreadable."""
    if record.done:
        return "[DONE]"
    if record.error is not None:
        return {"<unreadable>": record.error}
    return record.data


def wire_diff(a: Side, b: Side, *, normalize: bool = True, ignore: tuple[str, ...] = (),
              first_only: bool = False) -> DiffResult:
    """Compare event by event after normalising; ``first_only`` stops at the first."""
    fields = FieldFilter(NORMALIZED if normalize else frozenset(), ignore)
    va = [fields.apply(wire_value(r)) for r in a.records]
    vb = [fields.apply(wire_value(r)) for r in b.records]
    result = DiffResult("wire", a, b, [])
    i = j = 0
    stop = None  # with first_only: the row after which to stop (a little context kept)
    while (i < len(va) or j < len(vb)) and (stop is None or len(result.rows) < stop):
        if i < len(va) and j < len(vb) and _equal(va[i], vb[j]):
            result.rows.append((i, j))
            i, j = i + 1, j + 1
            continue
        keep = stop is None
        skip_a, skip_b = _resync(va, vb, i, j)
        if skip_a:
            for k in range(i, i + skip_a):
                _add_event(result, k, None, va[k], ABSENT, keep)
            i += skip_a
        elif skip_b:
            for k in range(j, j + skip_b):
                _add_event(result, None, k, ABSENT, vb[k], keep)
            j += skip_b
        else:
            _add_event(result, i, j, va[i], vb[j], keep)
            i, j = i + 1, j + 1
        if first_only and stop is None:
            stop = len(result.rows) + _CONTEXT_AFTER
    return result


def _equal(x: Any, y: Any) -> bool:
    return _same(x, y)


def _resync(va: list[Any], vb: list[Any], i: int, j: int) -> tuple[int, int]:
    """(k, 0) when A has k events B lacks here, (0, k) the other way, (0, 0) otherwise."""
    if i >= len(va):
        return 0, len(vb) - j
    if j >= len(vb):
        return len(va) - i, 0
    for k in range(1, _LOOKAHEAD + 1):
        if _agree(va, vb, i + k, j):
            return k, 0
        if _agree(va, vb, i, j + k):
            return 0, k
    return 0, 0


def _agree(va: list[Any], vb: list[Any], i: int, j: int) -> bool:
    if i >= len(va) or j >= len(vb):
        return False
    span = min(_AGREE, len(va) - i, len(vb) - j)
    return all(_equal(va[i + n], vb[j + n]) for n in range(span))


def _add_event(result: DiffResult, i: int | None, j: int | None, x: Any, y: Any,
               keep: bool = True) -> None:
    row = len(result.rows)
    result.rows.append((i, j))
    if not keep:
        return
    line_a = result.a.records[i].line if i is not None else None
    line_b = result.b.records[j].line if j is not None else None
    if i is None or j is None:
        found = [Difference("$", x, y)]  # a whole event only one side has
    else:
        found = compare(x, y)
    for diff in found:
        diff.index_a, diff.index_b, diff.line_a, diff.line_b, diff.row = i, j, line_a, line_b, row
        result.differences.append(diff)


# -- semantic mode ---------------------------------------------------------------------------


def semantic_diff(a: Side, b: Side, *, normalize: bool = True, ignore: tuple[str, ...] = ()
                  ) -> DiffResult:
    """Compare what a client reconstructs from each side."""
    cross = normalize and a.format != b.format
    views_a = [view(s, cross) for s in streams_of(a)]
    views_b = [view(s, cross) for s in streams_of(b)]
    fields = FieldFilter(frozenset(), ignore)
    result = DiffResult("semantic", a, b, [])
    if len(views_a) != len(views_b):
        result.differences.append(Difference("streams", len(views_a), len(views_b)))
    several = max(len(views_a), len(views_b)) > 1
    for number, (x, y) in enumerate(zip(views_a, views_b, strict=False)):
        _parse_arguments(x, y)
        prefix = f"streams[{number}]" if several else ""
        compare(fields.apply(x), fields.apply(y), prefix, result.differences)
    return result


def view(stream: Assembler, cross: bool = False) -> dict[str, Any]:
    """The comparable reconstruction of one stream.

    ``cross`` evens out what two formats cannot tell apart (see :func:`_cross_finish`),
    and counts a format leaves out are written as 0 by the other.
    """
    failed = bool(stream.errors)
    choices = {lane.index: _lane_view(lane, cross, failed) for lane in stream.choices}
    if cross:
        # A failed Responses stream has a lane with nothing in it; a chat error frame none.
        choices = {n: v for n, v in choices.items() if v != _EMPTY_FAILED}
    errors = [{"message": e.message, "code": _code(e.code), "type": e.type}
              for e in stream.errors]
    items = [str((i.data or {}).get("type")) for lane in stream.choices for i in lane.others()]
    return {"choices": choices, "usage": _usage_view(stream, cross), "errors": errors,
            "items": items}


_EMPTY_FAILED = {"text": "", "reasoning": "", "refusal": "", "tool_calls": [],
                 "finish_reason": "error"}


def _lane_view(lane: Lane, cross: bool, failed: bool) -> dict[str, Any]:
    calls = [{"name": c.name or "", "call_id": c.call_id or "", "arguments": c.arguments}
             for c in lane.calls]
    finish = _cross_finish(lane.finish, bool(calls), failed) if cross else lane.finish
    return {"text": lane.text, "reasoning": lane.reasoning, "refusal": lane.refusal,
            "tool_calls": calls, "finish_reason": finish}


def _cross_finish(finish: str | None, calls: bool, failed: bool) -> str | None:
    """Finish reasons as every format can say them.

    A stream with an error ends ``failed`` in Responses whatever the chat choice said
    before (OpenRouter sends ``length`` then an error frame). Responses and Llama Stack
    derive "tool calls" from the items, so ``stop`` after a tool call (older Ollama) is
    ``tool_calls`` there; and a chat stream that ends without a finish reason becomes a
    completed response.
    """
    if failed:
        return "error"
    if finish in (None, "stop", "tool_calls", "function_call"):
        return "tool_calls" if calls else "stop"
    return finish


def _usage_view(stream: Assembler, cross: bool) -> dict[str, Any] | None:
    usage = stream.usage
    if usage is None:
        return None
    counts = {"input": usage.input, "output": usage.output, "total": usage.total}
    if cross:
        counts = {k: v or 0 for k, v in counts.items()}
        if usage.total is None:
            counts["total"] = counts["input"] + counts["output"]
    return counts


def _code(code: Any) -> Any:
    # Responses error codes are strings; chat providers also send numbers (400).
    return str(code) if code is not None and not isinstance(code, str) else code


def _parse_arguments(x: dict[str, Any], y: dict[str, Any]) -> None:
    """Tool arguments that parse on both sides are compared as JSON values."""
    for index, lane in x["choices"].items():
        other = y["choices"].get(index)
        if other is None:
            continue
        for call_a, call_b in zip(lane["tool_calls"], other["tool_calls"], strict=False):
            try:
                parsed = (orjson.loads(call_a["arguments"]), orjson.loads(call_b["arguments"]))
            except orjson.JSONDecodeError:
                continue
            call_a["arguments"], call_b["arguments"] = parsed


# -- the library entry point ---------------------------------------------------------------


def diff(a: bytes, b: bytes, *, mode: Mode | None = None, src_a: str | None = None,
         src_b: str | None = None, normalize: bool = True, ignore: tuple[str, ...] = (),
         first_only: bool = False, name_a: str = "a", name_b: str = "b") -> DiffResult:
    """Compare two streams held in memory.

    ``mode`` defaults to wire for two streams of one format and semantic across formats.

    >>> chatx.diffing.diff(open("a.sse", "rb").read(), open("b.sse", "rb").read()).same
    """
    side_a, side_b = load(a, name_a, src_a), load(b, name_b, src_b)
    mode = mode or ("wire" if side_a.format == side_b.format else "semantic")
    if mode == "wire":
        return wire_diff(side_a, side_b, normalize=normalize, ignore=ignore,
                         first_only=first_only)
    return semantic_diff(side_a, side_b, normalize=normalize, ignore=ignore)

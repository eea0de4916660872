"""The values both diff modes share: differences, field filters, JSON comparison."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

if TYPE_CHECKING:
    from chatx.reading.framing import Side
    from chatx.record import Record

Mode = Literal["wire", "semantic"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Missing()
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
class Row:
    """One step of the wire alignment: the event of each side (index and input line,
    None where that side has none) and the record shown for it (A's when A has one)."""

    number: int
    index_a: int | None
    index_b: int | None
    line_a: int | None
    line_b: int | None
    record: Record


@dataclass(slots=True)
class DiffResult:
    """The outcome: the mode used, both inputs, and the differences found."""

    mode: Mode
    a: Side
    b: Side
    differences: list[Difference]
    # Wire mode: the rows around the first difference (the rest are not kept).
    context: list[Row] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, Any]:
        return {
            "same": self.same,
            "mode": self.mode,
            "a": self.a.describe(),
            "b": self.b.describe(),
            "differences": [d.to_json() for d in self.differences],
        }


# -- ignoring fields -----------------------------------------------------------------------


class FieldFilter:
    """Which fields to leave out: bare key names anywhere, or dotted paths from the root.

    In a dotted path a segment is a key, ``*`` (any key or index) or a list index; list
    levels the path does not mention are passed through, so ``choices.delta.role``
    matches the role in every choice.
    """

    def __init__(
        self,
        names: frozenset[str] | set[str] = frozenset(),
        ignore: tuple[str, ...] | list[str] = (),
    ) -> None:
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
        if not self.paths:
            return _without(value, self.names)  # wire mode runs this on every event
        if isinstance(value, dict):
            return {
                k: self.apply(v, (*path, k)) for k, v in value.items() if not self.drops((*path, k))
            }
        if isinstance(value, list):
            return [self.apply(v, (*path, i)) for i, v in enumerate(value)]
        return value


def _without(value: Any, names: set[str]) -> Any:
    """A copy of ``value`` without the keys in ``names``, at any depth."""
    if isinstance(value, dict):
        return {
            k: _without(v, names) if isinstance(v, dict | list) else v
            for k, v in value.items()
            if k not in names
        }
    if isinstance(value, list):
        return [_without(v, names) if isinstance(v, dict | list) else v for v in value]
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


def compare(
    a: Any, b: Any, path: str = "", out: list[Difference] | None = None
) -> list[Difference]:
    """Every leaf where ``a`` and ``b`` differ, as Differences with JSON paths."""
    out = out if out is not None else []
    # Walked, not written: a semantic view holds whole texts, which orjson would copy.
    if same(a, b, written=False):
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            compare(a.get(key, ABSENT), b.get(key, ABSENT), _join(path, key), out)
    elif isinstance(a, list) and isinstance(b, list):
        for index in range(max(len(a), len(b))):
            compare(
                a[index] if index < len(a) else ABSENT,
                b[index] if index < len(b) else ABSENT,
                f"{path}[{index}]",
                out,
            )
    else:
        out.append(Difference(path or "$", a, b))
    return out


def same(a: Any, b: Any, written: bool = True) -> bool:
    """JSON equality: 1 and 1.0 are the same number; true and 1 are not. ``written``:
    values written alike by orjson are the same, without a walk."""
    if a != b:  # Python's == is looser (True == 1), so a miss is a sure difference
        return False
    if written and isinstance(a, dict | list):
        # Written alike is the same, and most events two runs share are written alike:
        # one orjson call instead of a walk in Python.
        blob = _dumped(a)
        if blob is not None and blob == _dumped(b):
            return True
    if isinstance(a, dict):
        return isinstance(b, dict) and all(same(v, b[k], written) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and all(same(x, y, written) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return isinstance(a, int | float) == isinstance(b, int | float)


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):  # the view's choices are keyed by index
        return f"{path}[{key}]"
    if key.replace("_", "").isalnum():
        return f"{path}.{key}" if path else key
    return f"{path}[{orjson.dumps(key).decode()}]"


def _dumped(value: Any) -> bytes | None:
    try:
        return orjson.dumps(value)
    except TypeError:  # not JSON (a caller's own value): the walk decides
        return None

"""Vertex's streamed function-call arguments (``streamFunctionCallArguments``).

A call so streamed opens with ``{"name": …, "willContinue": true}``; then each chunk's
``partialArgs`` sets one value at a ``jsonPath`` (``$.recipe.steps[1]``): a string in
pieces (``stringValue`` with ``willContinue``, closed by an empty piece), or a whole
number, boolean or null. ``{"willContinue": true}`` alone moves on, and an empty
``functionCall`` (or one without ``willContinue``) ends the call.
"""

from __future__ import annotations

import re
from typing import Any

_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")
_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue", "structValue", "listValue")


def _steps(path: str) -> list[str | int] | None:
    """``$.a.b[0]`` as ``["a", "b", 0]``; None when the path is not one."""
    if not path.startswith("$"):
        return None
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None:
            return None
        name, index, quoted = match.groups()
        steps.append(int(index) if index is not None else (name if name is not None else quoted))
        at = match.end()
    return steps


def _slot(parent: Any, step: str | int, next_step: str | int | None) -> Any:
    """The container at ``step`` of ``parent``, made when missing."""
    fresh: Any = [] if isinstance(next_step, int) else {}
    if isinstance(step, int):
        while len(parent) <= step:
            parent.append(None)
        if parent[step] is None:
            parent[step] = fresh
        return parent[step]
    if parent.get(step) is None:
        parent[step] = fresh
    return parent[step]


def apply(args: dict[str, Any], partial: Any) -> bool:
    """Set one ``partialArgs`` entry in ``args``; False when it cannot be read."""
    if not isinstance(partial, dict):
        return False
    path = partial.get("jsonPath")
    steps = _steps(path) if isinstance(path, str) else None
    if not steps:
        return False
    kind = next((k for k in _VALUES if k in partial), None)
    if kind is None:
        return True  # a piece that says no value (willContinue alone)
    value = None if kind == "nullValue" else partial[kind]
    parent: Any = args
    for step, next_step in zip(steps, steps[1:], strict=False):
        if isinstance(step, int) != isinstance(parent, list):
            return False
        parent = _slot(parent, step, next_step)
    last = steps[-1]
    if isinstance(last, int) != isinstance(parent, list):
        return False
    if isinstance(last, int):
        while len(parent) <= last:
            parent.append(None)
        old = parent[last]
    else:
        old = parent.get(last)
    if kind == "stringValue" and isinstance(old, str) and isinstance(value, str):
        value = old + value  # a string in pieces
    parent[last] = value
    return True

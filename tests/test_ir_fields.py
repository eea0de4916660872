"""Every field of the IR's events and of what they carry (a citation, a web search step)
says what it holds in a docstring under it (issue 24, item 4)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from chatx import ir

SOURCE = Path(ir.__file__).read_text()
CLASSES = {cls.__name__ for cls in get_args(ir.Event)} | {"Citation", "WebSearch"}


def test_every_field_has_a_docstring_under_it() -> None:
    undocumented = []
    for node in ast.parse(SOURCE).body:
        if not isinstance(node, ast.ClassDef) or node.name not in CLASSES:
            continue
        body = node.body
        for at, statement in enumerate(body):
            if not isinstance(statement, ast.AnnAssign):
                continue
            after = body[at + 1] if at + 1 < len(body) else None
            if not (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                and after.value.value.strip()
            ):
                undocumented.append(f"{node.name}.{ast.unparse(statement.target)}")
    assert undocumented == []


def test_every_event_class_is_looked_at() -> None:
    found = {n.name for n in ast.parse(SOURCE).body if isinstance(n, ast.ClassDef)}
    assert found >= CLASSES

"""chatx's own imports: no cycles between its modules, no import guard that hides a
broken module (issue 16).

Every static import counts towards a cycle: at the top of a module, inside a function and
under ``TYPE_CHECKING`` alike. A cycle hidden by a late import is still a cycle in the
design (the two the code had hid that way: ``validation.rules`` imported its catalogues
inside a function, the Responses checker's item tracker imported it for typing only).
An import of a package counts as an import of its ``__init__``; the implicit import of a
module's parent package does not (every package re-exporting its modules would be one).
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path

import pytest

from chatx.cli import main
from chatx.codecs.base import lazy

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "chatx"

# Third-party modules chatx may do without: a guard around their import may turn their
# absence into a clear message. None needs one today (validate --schema asks
# importlib.util.find_spec for the openai SDK), so the list is empty.
OPTIONAL: frozenset[str] = frozenset()


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _target(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if not node.level:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _lazy(node: ast.Call) -> str | None:
    """The module of a codec hook ``lazy("chatx.codecs.x.decode", name)``
    (:class:`chatx.codecs.base.lazy`): an import, made when the hook is first called."""
    func, args = node.func, node.args
    if isinstance(func, ast.Name) and func.id == "lazy" and args:
        first = args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def import_graph() -> dict[str, set[str]]:
    """chatx module → the chatx modules it imports anywhere in its text."""
    modules = _modules()
    hooks = _descriptor_hooks()
    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom):
                target = _target(module, is_package, node)
                if target is None:
                    continue
                for alias in node.names:
                    if f"{target}.{alias.name}" in modules:  # a submodule imported by name
                        edges.add(f"{target}.{alias.name}")
                    elif target in modules:
                        edges.add(target)
            elif isinstance(node, ast.Call):
                hook = _lazy(node)
                if hook is not None and hook in modules:
                    edges.add(hook)
        edges |= hooks.get(module, set())
        edges.discard(module)
        graph[module] = edges
    return graph


def _descriptor_hooks() -> dict[str, set[str]]:
    """Codec package → the modules its descriptor's hooks import when first called, read
    from the descriptors themselves: ``chatx.codecs.base.package_codec`` names most of them
    by the package's layout, not by a string in the package's text."""
    from chatx.codecs import CODECS

    hooks: dict[str, set[str]] = {}
    for codec in CODECS:
        values = [getattr(codec, field.name) for field in fields(codec)]
        for value in values:
            if isinstance(value, tuple):  # Describe, RequestMapping, HttpApi
                values.extend(value)
            stand_in = getattr(value, "__self__", value)  # rules: the bound ``load``
            if isinstance(stand_in, lazy):
                package = stand_in.module.rpartition(".")[0]
                hooks.setdefault(package, set()).add(stand_in.module)
    return hooks


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_finds_a_cycle_through_three_modules() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_function_level_and_type_checking_imports() -> None:
    graph = import_graph()
    # chatx.cli.validate imports chatx.cli inside its command function
    assert "chatx.cli" in graph["chatx.cli.validate"]
    # a codec's catalogue and decoder, imported when the registry asks for them (a lazy
    # hook); the Responses checker and its tracker
    assert "chatx.codecs.chat_chunk.rules" in graph["chatx.codecs.chat_chunk"]
    assert "chatx.codecs.anthropic_event.decode" in graph["chatx.codecs.anthropic_event"]
    assert "chatx.codecs.responses_event.check_items" in graph["chatx.codecs.responses_event.check"]
    assert len(graph) > 80


def test_chatx_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def _imports_by_name(call: ast.Call) -> bool:
    """``__import__(...)``, ``import_module(...)`` or ``importlib.import_module(...)``."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name in ("__import__", "import_module")


def _guarded_imports() -> list[tuple[str, int, list[str]]]:
    """Each ``try`` that catches ImportError around imports: where, and what it imports."""
    guards = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try):
                continue
            caught = set()
            for handler in node.handlers:
                kinds = handler.type
                elts = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
                caught.update(e.id for e in elts if isinstance(e, ast.Name))
            if not caught & {"ImportError", "ModuleNotFoundError"}:
                continue
            names = []
            for inner in (n for stmt in node.body for n in ast.walk(stmt)):
                if isinstance(inner, ast.Import):
                    names += [alias.name for alias in inner.names]
                elif isinstance(inner, ast.ImportFrom):
                    names.append("." * inner.level + (inner.module or ""))
                elif isinstance(inner, ast.Call) and _imports_by_name(inner):
                    names.append("<dynamic>")
            guards.append((str(path.relative_to(ROOT)), node.lineno, names))
    return guards


def test_no_import_guard_hides_a_broken_module() -> None:
    hiding = [
        (path, line, names)
        for path, line, names in _guarded_imports()
        if not names or any(name.split(".")[0] not in OPTIONAL for name in names)
    ]
    assert hiding == []


def test_schema_without_the_openai_sdk_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "openai" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    fixture = ROOT / "fixtures" / "chat-chunk" / "tool-call-parallel.sse"
    assert main(["validate", "--schema", str(fixture)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "chatx: error: --schema needs the openai SDK, which is not installed "
        "(pip install 'chatx[schema]')\n"
    )


def test_every_class_name_is_defined_once() -> None:
    """A class name says which step and which format it is: two modules defining one name
    (``Stream`` five times, ``Citations`` three times, issue 24) make a reader look up
    which one an import means."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}

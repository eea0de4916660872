"""The docs name only code that exists: every ``chatx/...py`` path and every backticked
``chatx.x.y`` module (or a name defined in one) in ``docs/*.md``, so a rename that
forgets the docs fails here instead of leaving them wrong; and README links each page."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PATH = re.compile(r"chatx/[\w/]*\w\.py\b")
DIR = re.compile(r"`(chatx/[\w/]+/)`")
DOTTED = re.compile(r"`(chatx(?:\.\w+)+)`")


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _defines(source: Path, names: list[str]) -> bool:
    """``names[0]`` is defined at the top of ``source`` (imported names count: a package
    re-exports), and ``names[1]``, when given, inside that class."""
    body = ast.parse(source.read_text(encoding="utf-8")).body
    for part in names:
        found = None
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == part:
                found = node
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == part for t in targets):
                    found = node
            elif isinstance(node, ast.ImportFrom) and any(
                (a.asname or a.name) == part for a in node.names
            ):
                found = node
        if found is None:
            return False
        body = found.body if isinstance(found, ast.ClassDef) else []
    return True


def missing_names(text: str) -> list[str]:
    """What ``text`` names that the code does not have."""
    missing = [p for p in PATH.findall(text) if not (ROOT / p).is_file()]
    missing += [d for d in DIR.findall(text) if not (ROOT / d).is_dir()]
    for dotted in DOTTED.findall(text):
        parts = dotted.split(".")
        # The longest prefix that is a module; the rest must be defined in it.
        for cut in range(len(parts), 0, -1):
            source = _module_file(parts[:cut])
            if source is not None:
                rest = parts[cut:]
                if len(rest) > 2 or (rest and not _defines(source, rest)):
                    missing.append(dotted)
                break
        else:
            missing.append(dotted)
    return missing


def test_docs_exist() -> None:
    names = {p.name for p in DOCS}
    assert {"architecture.md", "adding-a-format.md"} <= names


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_every_named_path_and_module_exists(page: Path) -> None:
    assert missing_names(page.read_text(encoding="utf-8")) == []


def test_the_check_finds_what_is_gone() -> None:
    text = (
        "`chatx/codecs/base.py` and chatx/no_such.py; `chatx/codecs/` and `chatx/gone/`; "
        "`chatx.codecs.base.Codec`, `chatx.codecs.base.Codec.probe`, `chatx.codecs.template.DeltaRun.batches`, "
        "`chatx.codecs.nothing`, `chatx.ir.NoEvent`, `chatx.codecs.template.DeltaRun.nothing`"
    )
    assert missing_names(text) == [
        "chatx/no_such.py",
        "chatx/gone/",
        "chatx.codecs.nothing",
        "chatx.ir.NoEvent",
        "chatx.codecs.template.DeltaRun.nothing",
    ]


def test_readme_links_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("docs/architecture.md", "docs/adding-a-format.md"):
        assert f"]({page})" in readme, page

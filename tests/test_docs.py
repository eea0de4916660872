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


README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def test_readme_is_a_front_door() -> None:
    """README says what chatx is and how to start, and links every page of the manual;
    the manual itself lives in docs/."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for page in DOCS:
        assert f"](docs/{page.name})" in text, f"README does not link docs/{page.name}"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but - and _ dropped,
    spaces as -."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(h) for h in HEADING.findall(page.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("page", [README, *DOCS], ids=["README.md", *(p.name for p in DOCS)])
def test_every_link_resolves(page: Path) -> None:
    """Each relative link names a file of the tree, and its #anchor a heading there."""
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not ours to check offline
            continue
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists() or anchor and goal.suffix == ".md" and anchor not in _anchors(goal):
            broken.append(target)
    assert broken == []


def test_the_link_check_finds_what_is_broken(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading, here\n")
    page.write_text(
        "[ok](other.md) [ok](other.md#a-code-heading-here) [gone](missing.md) "
        "[bad anchor](other.md#nowhere) [web](https://example.com/x)\n"
    )
    found = [t for t in LINK.findall(page.read_text()) if not t.startswith("https:")]
    assert found == ["other.md", "other.md#a-code-heading-here", "missing.md", "other.md#nowhere"]
    assert _slug("A `code` heading, here") == "a-code-heading-here"
    assert "a-code-heading-here" in _anchors(tmp_path / "other.md")


def _cli_sections() -> dict[str, str]:
    """docs/cli.md cut at each ``### `chatx NAME` `` heading: NAME → its section."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    pieces = re.split(r"^### `chatx (\w+)`$", text, flags=re.M)
    return dict(zip(pieces[1::2], pieces[2::2], strict=True))


def test_every_command_and_option_is_documented() -> None:
    """docs/cli.md has a section per command, and each option the command takes is named
    in its section: a new option without its line in the manual fails here."""
    from chatx.cli import _command

    command = _command()
    sections = _cli_sections()
    missing = []
    for name, sub in command.commands.items():
        section = sections.get(name)
        if section is None:
            missing.append(name)
            continue
        for param in sub.params:
            if param.param_type_name == "argument":
                continue
            missing += [f"{name} {o}" for o in param.opts if f"`{o}`" not in section]
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing += [o for p in command.params for o in p.opts if f"`{o}`" not in text]
    assert missing == []

"""The type checker passes on the whole package: no baseline (issue 16 emptied it).

``make lint`` runs mypy over the chatx package. A module may not leave it by an
``[[tool.mypy.overrides]]`` entry with ``ignore_errors`` (the baseline it had on the
way). mypy itself runs in ``make lint`` (12 s), not here: this checks the config.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_module_is_left_out_of_the_check() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    overrides = config["tool"]["mypy"].get("overrides", [])
    ignored = [o["module"] for o in overrides if o.get("ignore_errors")]
    assert ignored == []
    # Missing imports may be ignored for third-party packages only, never for chatx.
    for override in overrides:
        modules = override["module"]
        for module in [modules] if isinstance(modules, str) else modules:
            assert not module.startswith("chatx"), module


def test_mypy_checks_the_package_with_the_agreed_strictness() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mypy = config["tool"]["mypy"]
    assert mypy["packages"] == ["chatx"]
    assert mypy["warn_unused_ignores"] is True
    assert mypy["check_untyped_defs"] is True
    assert "$(BIN)/mypy" in (ROOT / "Makefile").read_text(encoding="utf-8")

"""Where the project and the material beside it are, for tests at any depth."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# ../shared: real captures and the spec; tests that read it skip when it is absent.
SHARED = ROOT.parent / "shared"

"""The bench's generated streams (``bench/generate.py``), for tests that want a long
stream of the kinds ``make bench`` times: the module, imported from the bench directory."""

from __future__ import annotations

import sys

from tests.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import generate  # noqa: E402

__all__ = ["generate"]

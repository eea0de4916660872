"""pytest set-up for the whole suite.

The shared helpers live in modules of their own: :mod:`tests.streams` (building inputs,
converting, reading output back), :mod:`tests.meaning` (what a stream says, to compare
across formats), :mod:`tests.captures` (the real captures in ``../shared``) and
:mod:`tests.builders` (hand-made streams, one module per format).
"""

from __future__ import annotations

import os

from hypothesis import settings

# Property and fuzz tests in the suite are repeatable: the same code gets the same
# verdict in CI; `make fuzz` (CHATX_FUZZ_EXAMPLES) is where randomness explores.
if not os.environ.get("CHATX_FUZZ_EXAMPLES"):
    settings.register_profile("repeatable", derandomize=True, database=None)
    settings.load_profile("repeatable")

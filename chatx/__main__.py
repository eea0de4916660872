"""``python -m chatx``."""

from chatx.cli import run

run()

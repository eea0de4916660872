"""A fresh interpreter, for checks on what a process imports: this test process has long
imported everything, so only a new one can tell what a command loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.paths import ROOT


def fresh_python(
    script: str, *, cwd: Path = ROOT, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """``script`` run by ``python -c`` in ``cwd``; it must exit 0 (its stderr says why not).
    Its output is decoded: stdout as UTF-8, stderr with undecodable bytes replaced."""
    done = subprocess.run(
        [sys.executable, "-c", script], input=stdin, capture_output=True, cwd=cwd, timeout=120
    )
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 0, err
    return subprocess.CompletedProcess(done.args, 0, done.stdout.decode(), err)


def last_json_line(script: str, *, stdin: bytes | None = None) -> Any:
    """The value ``script`` prints as the last line of its stdout, as JSON (what the CLI
    wrote before it goes to the lines above)."""
    return json.loads(fresh_python(script, stdin=stdin).stdout.rsplit("\n", 1)[-1])

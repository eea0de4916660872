"""Run ``chatx`` in this process, stdin/stdout/stderr swapped for byte buffers.

Much faster than a subprocess (no interpreter start, no imports), so the bad-input
tables and the fuzzers can run every command on thousands of inputs. The standard
streams are ``TextIOWrapper``s over ``BytesIO`` with a ``.buffer``, as the real ones are.
"""

from __future__ import annotations

import io
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chatx.cli import main

# The codes chatx may end with on any input: done, done-but, trouble.
ALLOWED = {0, 1, 2}


@dataclass
class Result:
    code: int
    stdout: bytes
    stderr: bytes

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def run(args: list[str], stdin: bytes | None = b"") -> Result:
    """``chatx ARGS < stdin``: the exit code and what was written, as bytes.

    ``stdin=None`` leaves ``sys.stdin`` as the caller set it.
    """
    out, err = io.BytesIO(), io.BytesIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        code = main(list(args))
        sys.stdout.flush()
        sys.stderr.flush()
        # Read before the wrappers go: dropping a TextIOWrapper closes its BytesIO.
        return Result(code, out.getvalue(), err.getvalue())
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def assert_clean(result: Result, codes: set[int] = ALLOWED) -> None:
    """An allowed exit code; no traceback; every stderr line is chatx's own."""
    assert result.code in codes, (result.code, result.err)
    assert "Traceback" not in result.err, result.err
    assert "internal error" not in result.err, result.err
    for line in result.err.splitlines():
        assert line.startswith(("chatx: ", "  ", "Usage: ", "Try ")), result.err


_PEAK = """
import sys
from chatx.cli import main
code = main(sys.argv[1:])
with open("/proc/self/status") as status:
    peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
sys.stderr.write(f"\\nPEAK {peak} {code}\\n")
"""


def peak_rss(args: list[str], stdin: Any = None, timeout: float = 300) -> tuple[int, int, str]:
    """Run ``chatx ARGS`` in a new process: its peak RSS in bytes, exit code, stderr.

    The child reads its own VmHWM: ``ru_maxrss`` would count the parent's memory too
    (Linux keeps it across the fork and exec that start the child).
    """
    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux /proc for the peak RSS")
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *args],
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=timeout,
    )
    err = done.stderr.decode("utf-8", "replace")
    said, _, tail = err.rpartition("\nPEAK ")
    assert tail, err
    peak, code = tail.split()
    return int(peak) << 10, int(code), said

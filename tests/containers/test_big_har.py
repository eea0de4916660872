"""A large HAR is read one entry at a time: the peak memory follows one body, not all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.containers.common import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import big_har  # noqa: E402

# As the chatx command runs (chatx.cli.run, whose malloc settings hand large freed
# blocks back), then its peak RSS as the kernel counts it.
_PEAK = """
import sys
from chatx import cli
cli._keep_freed_heap()
code = cli.main(sys.argv[1:])
with open("/proc/self/status") as status:
    peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
sys.stderr.write(f"\\nPEAK {peak} {code}\\n")
"""


def peak_rss(args: list[str]) -> tuple[int, int, str]:
    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux /proc for the peak RSS")
    done = subprocess.run([sys.executable, "-c", _PEAK, *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=300)  # fmt: skip
    err = done.stderr.decode("utf-8", "replace")
    said, _, tail = err.rpartition("\nPEAK ")
    peak, code = tail.split()
    return int(peak) << 10, int(code), said


def test_listing_a_large_har_holds_one_entry_at_a_time(tmp_path: Path) -> None:
    small, large = tmp_path / "small.har", tmp_path / "large.har"
    big_har.write(small, 1, 5000)
    count = big_har.write(large, 64, 5000)  # entries of about 2 MB
    assert count > 30
    base, code, err = peak_rss(["ls", str(small)])
    assert code == 0, err
    peak, code, err = peak_rss(["ls", str(large)])
    assert code == 0, err
    # Holding every body would add the file's 64 MiB (and more, decoded and framed).
    assert peak - base < 32 << 20, (peak >> 20, base >> 20)
    last, code, err = peak_rss(["convert", f"{large}#{count - 1}", "-q", "-o", str(tmp_path / "o")])
    assert code == 0, err
    assert last - base < 48 << 20, (last >> 20, base >> 20)

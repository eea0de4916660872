"""A/B: this tree against an earlier commit, on the bench's streams.

    python bench/ab.py dad3a89                      # whole process, the default cases
    python bench/ab.py 411f614~1 --in-process       # Transcoder fed 64 KiB blocks
    python bench/ab.py HEAD~3 --case tools-100k.llama.sse:chat-chunk --rounds 7
    python bench/ab.py main --floor --case text-100k.gemini.sse:chat-chunk

The commit is exported with ``git archive`` into a temporary directory; both trees run
with this interpreter, each from its own directory with PYTHONPATH at it and its own
bytecode cache, the runs interleaved round by round, so a machine that grows busier
slows both alike. The best (min) of the rounds is kept: on a shared machine the noise
only ever adds time. The streams come from ``bench/out`` (``python bench/generate.py``
writes them; ``make bench`` does too). A ratio below 1 is this tree being faster.
``--floor`` times the floor (``bench/floor.py``, orjson loading and dumping each
payload) on each stream in the same rounds, and gives both trees' time as a multiple
of it.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STREAMS = ROOT / "bench" / "out"
CASES = [
    "text-100k.chat.sse:responses-event",
    "text-100k.responses.sse:chat-chunk",
    "text-100k.llama.sse:chat-chunk",
    "text-100k.anthropic.sse:chat-chunk",
    "tools-100k.responses.sse:chat-chunk",
    "tools-100k.llama.sse:chat-chunk",
    "reasoning-100k.chat.sse:anthropic-event",
]
# One conversion in process, the CLI's way: whole file in 64 KiB blocks, best of five.
IN_PROCESS = r"""
import gc, sys, time
from chatx import Transcoder
data = open(sys.argv[1], "rb").read()
best = float("inf")
for _ in range(5):
    transcoder = Transcoder(sys.argv[2])
    gc.collect()
    start = time.perf_counter()
    for i in range(0, len(data), 65536):
        transcoder.feed(data[i : i + 65536])
    transcoder.finish()
    best = min(best, time.perf_counter() - start)
print(best)
"""


def export(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")


def once(tree: Path, cache: Path, stream: Path, target: str, in_process: bool) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if in_process:
        argv = [sys.executable, "-c", IN_PROCESS, str(stream), target]
        done = subprocess.run(argv, env=env, cwd=tree, capture_output=True, text=True)
        return float(done.stdout) if done.returncode == 0 else float("nan")
    argv = [sys.executable, "-m", "chatx", "convert", str(stream), "--to", target, "-q"]
    start = time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    took = time.perf_counter() - start
    # a tree that cannot do the case (a format it does not have) has no time for it
    return took if done.returncode == 0 else float("nan")


def floor_once(stream: Path) -> float:
    argv = [sys.executable, str(ROOT / "bench" / "floor.py"), str(stream)]
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL)
    took = time.perf_counter() - start
    return took if done.returncode == 0 else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the commit to compare with (any git revision)")
    parser.add_argument("--case", action="append", help="STREAM:FORMAT (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--floor", action="store_true", help="time the floor too")
    args = parser.parse_args()
    cases = [tuple(case.split(":", 1)) for case in args.case or CASES]
    missing = [name for name, _ in cases if not (STREAMS / name).is_file()]
    if missing:
        sys.exit(f"ab: no {', '.join(missing)} in {STREAMS}: run python bench/generate.py")
    with tempfile.TemporaryDirectory(prefix="chatx-ab-") as tmp:
        base = Path(tmp) / "base"
        export(args.rev, base)
        trees = {args.rev: base, "this tree": ROOT}
        best: dict[tuple[str, str, str], float] = {}
        floors: dict[str, float] = {}
        for _ in range(args.rounds):
            for name, target in cases:
                if args.floor:
                    took = floor_once(STREAMS / name)
                    floors[name] = min(floors.get(name, took), took)
                for label, tree in trees.items():
                    cache = Path(tmp) / ("pyc-base" if tree == base else "pyc-this")
                    took = once(tree, cache, STREAMS / name, target, args.in_process)
                    key = (name, target, label)
                    best[key] = took if math.isnan(took) else min(best.get(key, took), took)
    how = "in process" if args.in_process else "whole process"
    print(f"min of {args.rounds} interleaved rounds, {how}, seconds")
    for name, target in cases:
        old, new = best[(name, target, args.rev)], best[(name, target, "this tree")]
        ratio = "fails in one tree" if math.isnan(old + new) else f"ratio {new / old:.2f}"
        line = f"{name:30} -> {target:18} {args.rev} {old:.3f}  this tree {new:.3f}  {ratio}"
        floor = floors.get(name)
        if floor is not None:
            line += f"  floor {floor:.3f} ({old / floor:.2f}x, {new / floor:.2f}x)"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

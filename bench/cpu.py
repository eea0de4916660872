"""CPU time (user + system) and peak RSS of issue 29's cases at 1M, each after the floor
on the same input (the SSE stream, for the text stream given as JSON lines, a JSON array
or gzip: made here from it the first time): on a shared machine CPU time, not wall
time, is what a ratio can rest on. The streams come from ``bench/out`` (``make bench`` or ``python
bench/generate.py --kind text --size 1m --format F`` and ``--kind mixed``). validate and
collect run on every format's text stream; diff --semantic's floor is both streams'.

    python bench/cpu.py                      # every case
    python bench/cpu.py mixed "gemini→chat"  # the cases whose name holds one of these
"""

import os
import subprocess
import sys
import time
from pathlib import Path

d = str(Path(__file__).resolve().parents[1])
out = f"{d}/bench/out"
env = {**os.environ, "PYTHONPYCACHEPREFIX": f"{out}/pycache"}
env.pop("PYTHONDONTWRITEBYTECODE", None)
py = sys.executable


def run(argv: list[str]) -> tuple[float, float, float, int]:
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, time.perf_counter() - t, status


FORMATS = {"chat": "chat-chunk", "responses": "responses-event", "llama": "llama-stack-event",
           "anthropic": "anthropic-event", "gemini": "gemini-event"}  # fmt: skip
cases = (
    [
        (
            "chat→responses mixed SSE",
            "mixed-1m.chat.sse",
            ["convert", "{}", "--to", "responses-event", "-q"],
        ),
        (
            "chat→responses mixed JSONL",
            "mixed-1m.chat.sse",
            ["convert", "{}", "--to", "responses-event", "-q", "--out-container", "jsonl"],
        ),
    ]
    + [
        (f"{src}→{dst}", f"text-1m.{src}.sse", ["convert", "{}", "--to", FORMATS[dst], "-q"])
        for src in FORMATS
        for dst in FORMATS  # every direction, each format into itself too
    ]
    + [
        (f"{command} {src}", f"text-1m.{src}.sse", [command, "{}", *tail])
        for command, tail in (("validate", []), ("collect", ["-q"]))
        for src in ("chat", "responses", "anthropic", "llama", "gemini")
    ]
    + [
        (
            "diff --semantic chat responses",
            "text-1m.chat.sse text-1m.responses.sse",
            ["diff", "--semantic", "{}", "{}"],
        )
    ]
    + [  # the same stream in the other input containers, against its SSE floor
        (f"chat→responses from {suffix}", f"text-1m.chat.{suffix}", ["convert", "{}", "-q"])
        for suffix in ("jsonl", "json", "sse.gz")
    ]
)
# The floor reads SSE: a case whose input is another container of an SSE stream divides
# by that stream's floor.
FLOORS = {"text-1m.chat.jsonl": "text-1m.chat.sse", "text-1m.chat.json": "text-1m.chat.sse",
          "text-1m.chat.sse.gz": "text-1m.chat.sse"}  # fmt: skip


def made(name: str) -> str:
    """The path of input ``name``, made from its SSE stream when it is another container."""
    path = f"{out}/{name}"
    source = f"{out}/{FLOORS.get(name, name)}"
    if name in FLOORS and not os.path.exists(path):
        if name.endswith(".gz"):
            import gzip

            with open(source, "rb") as inp, gzip.open(path, "wb", compresslevel=1) as gz:
                while block := inp.read(1 << 20):
                    gz.write(block)
        else:
            container = name.rsplit(".", 1)[1]
            argv = [py, "-m", "chatx", "convert", source, "--to", "chat-chunk", "-q"]
            subprocess.run([*argv, "--out-container", container, "-o", path], check=True)
    return path


only = sys.argv[1:]
print("| case | chatx CPU s | floor CPU s | × floor | peak RSS MiB | wall s |")
print("|---|---:|---:|---:|---:|---:|")
for name, src, tail in cases:
    if only and not any(o in name for o in only):
        continue
    paths = [made(name) for name in src.split()]
    # a case of two streams (diff) has the floor of each, added
    floors = [f"{out}/{FLOORS.get(name, name)}" for name in src.split()]
    fc = sum(run([py, f"{d}/bench/floor.py", path])[0] for path in floors)
    given = iter(paths)
    cc, crss, cw, st = run([py, "-m", "chatx", *[next(given) if t == "{}" else t for t in tail]])
    print(
        f"| {name} | {cc:.2f} | {fc:.2f} | {cc / fc:.2f} | {crss:.0f} | {cw:.1f} |"
        + ("" if st == 0 else f" status {st}"),
        flush=True,
    )

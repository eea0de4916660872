"""Profile one chatx command on a benchmark stream (cProfile, in process).

    python bench/profile_case.py                         # chat→responses, text, 100k, top 15
    python bench/profile_case.py --from responses --to chat --kind tools --size 10k
    python bench/profile_case.py --sort cumulative --top 30
    python bench/profile_case.py --command validate      # chatx validate on the source

Output goes to /dev/null; the statistics go to stdout.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as gen  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="src", choices=tuple(gen.FORMATS), default="chat")
    parser.add_argument("--to", dest="dst", choices=tuple(gen.FORMATS), default="responses")
    parser.add_argument("--kind", choices=gen.KINDS, default="text")
    parser.add_argument("--size", default="100k")
    parser.add_argument("--command", choices=("convert", "validate"), default="convert")
    parser.add_argument("--sort", default="tottime", help="pstats sort key")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    n = gen.SIZES.get(args.size.lower()) or int(args.size)
    source = gen.ensure(args.kind, n, args.src)
    if args.command == "convert":
        command = [
            "convert",
            str(source.path),
            "--to",
            gen.FORMATS[args.dst],
            "-q",
            "-o",
            os.devnull,
        ]
    else:
        command = ["validate", str(source.path)]

    from chatx.cli import main as chatx_main

    profile = cProfile.Profile()
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - restored below
    start = time.perf_counter()
    try:
        profile.runcall(chatx_main, command)
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    wall = time.perf_counter() - start
    print(
        f"chatx {' '.join(command)}: {wall:.2f} s under cProfile ({source.records:,} input records)"
    )
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats(args.sort).print_stats(args.top)
    text = out.getvalue()
    print(text[text.find("   ncalls") :].rstrip() if "   ncalls" in text else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

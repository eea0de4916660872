"""Where a conversion's CPU time goes, stage by stage: the SSE reader, the run hook's
matching, the decoder outside runs, the encoder's runs and batches, the SSE writer, each
timed around its calls (``time.process_time``), in process as the CLI runs it (gc
frozen, freed heap kept as the CLI keeps it, 64 KiB blocks, output to /dev/null).

The heap matters: without the CLI's trim threshold (``chatx.cli._keep_freed_heap``)
glibc hands the heap back after every block and the page faults of growing it again
land in whichever stage allocates next, mostly the writer's joins (0.86 µs a payload
measured that way, 0.34 µs with the CLI's setting: what the same dumps and framing
cost alone).

    python bench/stages.py bench/out/text-100k.chat.sse responses-event
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections import Counter
from typing import Any

from chatx import codecs
from chatx.cli import _keep_freed_heap
from chatx.codecs.base import lazy
from chatx.codecs.template import RunDecoder
from chatx.containers.sse import SSEReader, SSEWriter
from chatx.pipeline import Transcoder

spent: dict[str, float] = {}
calls: Counter[str] = Counter()


def timed(cls: Any, name: str, label: str) -> None:
    """Count the CPU time of every call of ``cls.name`` under ``label``."""
    method = getattr(cls, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - start
            calls[label] += 1

    setattr(cls, name, wrapper)


def main(path: str, dst: str) -> int:
    hook = codecs.get(dst).encoder
    encoder = hook.load() if isinstance(hook, lazy) else hook  # the class, to time its methods
    timed(SSEReader, "feed", "1 SSE read (raw records)")
    timed(RunDecoder, "run", "2 decoder: runs (template match)")
    timed(RunDecoder, "feed", "3 decoder: records outside runs")
    timed(encoder, "feed_run", "4 encoder: runs")
    timed(encoder, "feed", "5 encoder: batches (replayed runs too)")
    timed(SSEWriter, "frames", "6 SSE write (orjson.dumps, framing)")
    _keep_freed_heap()
    gc.freeze()
    gc.set_threshold(100_000, 50, 1000)
    start = time.process_time()
    transcoder = Transcoder(dst)
    with open(path, "rb") as source, open(os.devnull, "wb") as out:
        while block := source.read(65536):
            out.write(transcoder.feed(block))
        out.write(transcoder.finish())
    total = time.process_time() - start
    print(f"total {total:.3f} s CPU in process (imports aside)")
    for label in sorted(spent):
        print(f"  {label:42} {spent[label]:.3f} s  {calls[label]} calls")
    rest = total - sum(spent.values())
    print(f"  {'7 the rest (pipeline, drive, transcoder)':42} {rest:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

"""The floor: what any Python SSE transcoder must at least spend on a stream.

Reads an SSE file, and for every ``data:`` line orjson-loads the payload and
orjson-dumps it back, writing ``data: …`` blocks to stdout. No framing state, no
meaning: the cost of the JSON and the I/O alone, which ``bench/run.py`` divides
every case by.

    python bench/floor.py FILE > /dev/null
"""

from __future__ import annotations

import sys

import orjson


def main(path: str) -> int:
    loads, dumps = orjson.loads, orjson.dumps
    write = sys.stdout.buffer.write
    out: list[bytes] = []
    append = out.append
    with open(path, "rb") as f:
        for line in f:
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                append(b"data: [DONE]\n\n")
                continue
            append(b"data: " + dumps(loads(payload)) + b"\n\n")
            if len(out) >= 4096:
                write(b"".join(out))
                out.clear()
    write(b"".join(out))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

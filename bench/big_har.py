"""Write a large HAR of many streamed chat completions, to measure what reading one
costs in memory: ``python bench/big_har.py OUT.har --mb 200``.

Each entry holds one generated chat-chunk stream (``bench/generate.py``), every other
one as base64, so the reader decodes bodies of both kinds. The file is written entry by
entry; nothing holds it whole.

    /usr/bin/time -v chatx ls OUT.har > /dev/null           # every body decoded
    /usr/bin/time -v chatx convert OUT.har#N -o /dev/null   # the last stream
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402

REQUEST = {"model": "bench-model", "messages": [{"role": "user", "content": "go"}], "stream": True}


def entry(body: bytes, encoded: bool) -> bytes:
    content = {"mimeType": "text/event-stream", "size": len(body)}
    if encoded:
        content.update(encoding="base64", text=base64.b64encode(body).decode())
    else:
        content["text"] = body.decode()
    return json.dumps({
        "startedDateTime": "2020-01-01T00:00:00.000Z", "time": 1,
        "request": {"method": "POST", "url": "https://api.example.test/v1/chat/completions",
                    "headers": [], "postData": {"mimeType": "application/json",
                                                "text": json.dumps(REQUEST)}},
        "response": {"status": 200, "statusText": "OK", "headers": [], "content": content},
    }).encode()  # fmt: skip


def write(path: Path, megabytes: int, chunks: int) -> int:
    """Write the HAR; return how many entries it holds."""
    target = megabytes << 20
    bodies = [generate.chat_bytes(kind, chunks) for kind in generate.KINDS]
    written, count = 0, 0
    with path.open("wb") as out:
        out.write(b'{"log": {"version": "1.2", "creator": {"name": "bench"}, "entries": [\n')
        while written < target:
            data = entry(bodies[count % len(bodies)], encoded=count % 2 == 1)
            out.write((b",\n" if count else b"") + data)
            written += len(data)
            count += 1
        out.write(b"\n]}}\n")
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=int, default=200, help="about this many MiB")
    parser.add_argument("--chunks", type=int, default=5000, help="chunks per stream")
    args = parser.parse_args()
    count = write(args.out, args.mb, args.chunks)
    print(f"{args.out}: {count} entries, {args.out.stat().st_size >> 20} MiB")


if __name__ == "__main__":
    main()

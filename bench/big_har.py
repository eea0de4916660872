"""Write a large HAR of many streamed chat completions, to measure what reading one
costs in memory: ``python bench/big_har.py OUT.har --mb 200``.

Each entry holds one generated chat-chunk stream (``bench/generate.py``), every other
one as base64, so the reader decodes bodies of both kinds. ``--headers N`` gives each
request and response N headers, as a browser's HAR has (each a small object beside the
next: the shape that makes an entry's end hard to tell from inside); with ``--chunks 20``
the entries are small, many thousand to a file. The file is written entry by entry;
nothing holds it whole.

    /usr/bin/time -v chatx ls OUT.har > /dev/null           # every body decoded
    /usr/bin/time -v chatx convert OUT.har#N -o /dev/null   # the last stream
    python bench/big_har.py OUT.har --mb 200 --chunks 20 --headers 20   # browser-like
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


def headers(count: int, seed: int) -> list[dict[str, str]]:
    return [{"name": f"x-bench-{i}", "value": f"value {seed}-{i}; q=0.{i % 10}"}
            for i in range(count)]  # fmt: skip


def entry(body: bytes, encoded: bool, count: int = 0, header_count: int = 0) -> bytes:
    content = {"mimeType": "text/event-stream", "size": len(body)}
    if encoded:
        content.update(encoding="base64", text=base64.b64encode(body).decode())
    else:
        content["text"] = body.decode()
    return json.dumps({
        "startedDateTime": "2020-01-01T00:00:00.000Z", "time": 1,
        "request": {"method": "POST", "url": "https://api.example.test/v1/chat/completions",
                    "headers": headers(header_count, count),
                    "postData": {"mimeType": "application/json", "text": json.dumps(REQUEST)}},
        "response": {"status": 200, "statusText": "OK", "headers": headers(header_count, -count),
                     "content": content},
    }).encode()  # fmt: skip


def write(path: Path, megabytes: int, chunks: int, header_count: int = 0) -> int:
    """Write the HAR; return how many entries it holds."""
    target = megabytes << 20
    bodies = [generate.chat_bytes(kind, chunks) for kind in generate.KINDS]
    written, count = 0, 0
    with path.open("wb") as out:
        out.write(b'{"log": {"version": "1.2", "creator": {"name": "bench"}, "entries": [\n')
        while written < target:
            data = entry(bodies[count % len(bodies)], count % 2 == 1, count, header_count)
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
    parser.add_argument("--headers", type=int, default=0, help="headers per message")
    args = parser.parse_args()
    count = write(args.out, args.mb, args.chunks, args.headers)
    print(f"{args.out}: {count} entries, {args.out.stat().st_size >> 20} MiB")


if __name__ == "__main__":
    main()

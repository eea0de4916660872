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

``--body FILE`` writes a HAR of one entry whose response is that file (the 1M-chunk
stream of ``python bench/generate.py --kind text --size 1m``: about 300 MB), written in
pieces: what a body too big to hold in memory costs to read. ``--base64`` stores it as
base64, ``--gzip`` gzip'd first (``content-encoding: gzip``), ``--text-first`` puts the
body's text before the entry's other fields.

    python bench/big_har.py /tmp/one.har --body bench/out/text-1m.chat.sse
    /usr/bin/time -v chatx convert /tmp/one.har --to responses-event -o /dev/null
"""

from __future__ import annotations

import argparse
import base64
import codecs
import gzip
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


_PIECE = 3 << 20  # a multiple of 3: base64 of each piece joins to the base64 of the whole


def one_body(path: Path, body: Path, encoded: bool, gzipped: bool, text_first: bool) -> None:
    """Write a HAR of one entry whose response body is the file ``body``, in pieces."""
    if gzipped:  # a temporary file, so that the body is never held whole here either
        packed = path.with_suffix(".body.gz")
        with body.open("rb") as src, gzip.open(packed, "wb") as dst:
            while piece := src.read(_PIECE):
                dst.write(piece)
        body, encoded = packed, True
    fields = {"mimeType": "text/event-stream", "size": body.stat().st_size}
    if encoded:
        fields["encoding"] = "base64"
    headers = [{"name": "content-type", "value": "text/event-stream"}]
    if gzipped:
        headers.append({"name": "content-encoding", "value": "gzip"})
    request = {"method": "POST", "url": "https://api.example.test/v1/chat/completions",
               "headers": [], "postData": {"mimeType": "application/json",
                                           "text": json.dumps(REQUEST)}}  # fmt: skip
    response = json.dumps({"status": 200, "statusText": "OK", "headers": headers})
    content = json.dumps(fields)[1:-1]
    text_of = codecs.getincrementaldecoder("utf-8")()  # a character may straddle two pieces
    with path.open("wb") as out, body.open("rb") as src:
        out.write(b'{"log": {"version": "1.2", "creator": {"name": "bench"}, "entries": [{')
        if not text_first:
            out.write(f'"request": {json.dumps(request)}, "response": '.encode())
            out.write(f'{response[:-1]}, "content": {{{content}, '.encode())
        else:
            out.write(b'"response": {"content": {')
        out.write(b'"text": "')
        while piece := src.read(_PIECE):
            text = base64.b64encode(piece).decode() if encoded else text_of.decode(piece)
            out.write(json.dumps(text)[1:-1].encode())
        out.write(b'"')
        if text_first:
            out.write(f", {content}}}, {response[1:]}, ".encode())
            out.write(f'"request": {json.dumps(request)}'.encode())
        else:
            out.write(b"}}")
        out.write(b"}]}}\n")
    if gzipped:
        body.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=int, default=200, help="about this many MiB")
    parser.add_argument("--chunks", type=int, default=5000, help="chunks per stream")
    parser.add_argument("--headers", type=int, default=0, help="headers per message")
    parser.add_argument("--body", type=Path, help="one entry, whose body is this file")
    parser.add_argument("--base64", action="store_true", help="--body as base64")
    parser.add_argument("--gzip", action="store_true", help="--body gzip'd (then base64)")
    parser.add_argument("--text-first", action="store_true", help="--body before the rest")
    args = parser.parse_args()
    if args.body is not None:
        one_body(args.out, args.body, args.base64, args.gzip, args.text_first)
        print(f"{args.out}: 1 entry, {args.out.stat().st_size >> 20} MiB")
        return
    count = write(args.out, args.mb, args.chunks, args.headers)
    print(f"{args.out}: {count} entries, {args.out.stat().st_size >> 20} MiB")


if __name__ == "__main__":
    main()

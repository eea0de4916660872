"""Write a JSON VCR cassette of one interaction whose response body is a file, to measure
what reading a body too big to hold costs: ``python bench/big_cassette.py OUT.json --body
bench/out/text-1m.chat.sse`` (about 300 MB). The body is written in pieces; nothing
holds it whole.

``--base64`` stores it as Ruby's ``base64_string``, ``--body-first`` puts the body before
the interaction's request and the response's other fields, ``--ruby`` names the list
``http_interactions``.

    python bench/big_cassette.py /tmp/one.json --body bench/out/text-1m.chat.sse
    /usr/bin/time -v chatx convert /tmp/one.json --to responses-event -o /dev/null
"""

from __future__ import annotations

import argparse
import base64
import codecs
import json
from pathlib import Path

REQUEST = {"model": "bench-model", "messages": [{"role": "user", "content": "go"}], "stream": True}
_PIECE = 3 << 20  # a multiple of 3: base64 of each piece joins to the base64 of the whole


def one_body(path: Path, body: Path, encoded: bool, body_first: bool, ruby: bool) -> None:
    """Write a cassette of one interaction whose response body is the file ``body``."""
    request = {"method": "POST", "uri": "https://api.example.test/v1/chat/completions",
               "body": json.dumps(REQUEST),
               "headers": {"Content-Type": ["application/json"]}}  # fmt: skip
    rest = json.dumps({"status": {"code": 200, "message": "OK"},
                       "headers": {"Content-Type": ["text/event-stream"]}})  # fmt: skip
    key = "base64_string" if encoded else "string"
    name = "http_interactions" if ruby else "interactions"
    text_of = codecs.getincrementaldecoder("utf-8")()  # a character may straddle two pieces
    with path.open("wb") as out, body.open("rb") as src:
        out.write(f'{{"{name}": [{{'.encode())
        if not body_first:
            out.write(f'"request": {json.dumps(request)}, "response": {rest[:-1]}, '.encode())
        else:
            out.write(b'"response": {')
        out.write(f'"body": {{"{key}": "'.encode())
        while piece := src.read(_PIECE):
            text = base64.b64encode(piece).decode() if encoded else text_of.decode(piece)
            out.write(json.dumps(text)[1:-1].encode())
        out.write(b'"}')
        if body_first:
            out.write(f", {rest[1:]}, ".encode())
            out.write(f'"request": {json.dumps(request)}'.encode())
        else:
            out.write(b"}")
        out.write(b'}], "version": 1}\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--body", type=Path, required=True, help="the response body's file")
    parser.add_argument("--base64", action="store_true", help="the body as base64_string")
    parser.add_argument("--body-first", action="store_true", help="the body before the rest")
    parser.add_argument("--ruby", action="store_true", help="http_interactions, as Ruby's VCR")
    args = parser.parse_args()
    one_body(args.out, args.body, args.base64, args.body_first, args.ruby)
    print(f"{args.out}: 1 interaction, {args.out.stat().st_size >> 20} MiB")


if __name__ == "__main__":
    main()

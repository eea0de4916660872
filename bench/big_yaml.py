"""Write a YAML cassette whose one response body is a whole stream, in the scalar style a
recorder writes it in, to measure what reading it holds (``/usr/bin/time -v chatx ls``).

    python bench/big_yaml.py OUT.yaml --body bench/out/text-1m.chat.sse --style double

Styles: ``double`` (libyaml's emitter, as VCR.py writes it with libyaml: double-quoted,
wrapped with escaped line breaks), ``single`` (PyYAML's emitter without libyaml:
single-quoted, each line break written as an empty line), ``literal`` (Ruby VCR's ``|+``
block) and ``binary`` (Ruby VCR's ``!binary`` base64 on one line). The file is written
with the body read whole (``literal`` reads it in lines).
"""

from __future__ import annotations

import argparse
import base64
import re
from pathlib import Path
from typing import BinaryIO

HEAD = b"""\
http_interactions:
- request:
    method: post
    uri: https://api.openai.com/v1/chat/completions
    body:
      encoding: UTF-8
      string: '{"model":"gpt-4o","stream":true}'
    headers:
      Content-Type:
      - application/json
  response:
    status:
      code: 200
      message: OK
    headers:
      Content-Type:
      - text/event-stream
    body:
"""
TAIL = b"""\
  recorded_at: Mon, 01 Jan 2026 00:00:00 GMT
recorded_with: VCR 6.4.0
"""
INDENT = b"        "


def write(out: BinaryIO, body: Path, style: str) -> None:
    out.write(HEAD)
    if style == "binary":
        out.write(b"      encoding: ASCII-8BIT\n      string: !binary |-\n" + INDENT)
        out.write(base64.b64encode(body.read_bytes()) + b"\n")
    elif style == "literal":
        out.write(b"      encoding: UTF-8\n      string: |+\n")
        with body.open("rb") as lines:
            for line in lines:
                out.write(INDENT + line if line.strip(b"\n") else line)
    elif style == "single":
        # a run of line breaks is one more: a single one would fold into a space
        text = body.read_bytes().replace(b"'", b"''")
        folded = re.sub(rb"\n+", lambda m: b"\n" * (len(m[0]) + 1) + INDENT, text)
        out.write(b"      encoding: UTF-8\n      string: '" + folded + b"'\n")
    else:
        _double(out, body)
    out.write(TAIL)


def _double(out: BinaryIO, body: Path) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out.write(b"      encoding: UTF-8\n      string: ")
    text = yaml.dump(body.read_bytes().decode(), Dumper=dumper, default_style='"')
    out.write(text.replace("\n", "\n" + INDENT.decode()).rstrip().encode() + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--body", type=Path, required=True, help="the stream to record")
    parser.add_argument("--style", choices=["double", "single", "literal", "binary"],
                        default="double")  # fmt: skip
    args = parser.parse_args()
    with args.out.open("wb") as out:
        write(out, args.body, args.style)


if __name__ == "__main__":
    main()

"""Write a Llama Stack inference recording whose streamed response is a file of chat
chunks, to measure what reading a recording too big to hold costs: ``python
bench/big_recording.py OUT.json --body bench/out/text-1m.chat.sse`` (about 400 MB at
1M chunks). Each chunk is written as the recorder writes one, ``{"__type__": …,
"__data__": {…}}`` indented by two spaces; nothing holds the stream whole.

``--lines`` writes the body's SSE lines as strings instead, as the recorder keeps a
stream it does not parse (Anthropic's /v1/messages).

    python bench/big_recording.py /tmp/rec.json --body bench/out/text-1m.chat.sse
    /usr/bin/time -v chatx convert /tmp/rec.json --to responses-event -o /dev/null
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

REQUEST = {"model": "bench-model", "messages": [{"role": "user", "content": "go"}], "stream": True}
CHUNK = "openai.types.chat.chat_completion_chunk.ChatCompletionChunk"


def _indented(value: object, level: int) -> str:
    """``value`` as the recorder's ``json.dump(indent=2)`` writes it ``level`` deep."""
    return json.dumps(value, indent=2).replace("\n", "\n" + "  " * level)


def recording(path: Path, body: Path, lines: bool) -> None:
    """Write a recording whose response body holds the stream in the file ``body``."""
    request = {"method": "POST", "url": "http://localhost:8321/v1/chat/completions",
               "headers": {}, "body": REQUEST, "endpoint": "/v1/chat/completions",
               "model": "bench-model"}  # fmt: skip
    with path.open("w", encoding="utf-8") as out, body.open(encoding="utf-8") as src:
        out.write('{\n  "test_id": "bench/big_recording.py::test",\n')
        out.write(f'  "request": {_indented(request, 1)},\n  "response": {{\n    "body": [')
        sep = "\n      "
        for line in src:
            line = line.rstrip("\n")
            if lines:
                item: object = line
            elif line.startswith("data: {"):
                item = {"__type__": CHUNK, "__data__": json.loads(line[6:])}
            else:
                continue
            out.write(sep + _indented(item, 3))
            sep = ",\n      "
        out.write('\n    ],\n    "is_streaming": true\n  },\n  "id_normalization_mapping": {}\n}\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--body", type=Path, required=True, help="a chat SSE stream's file")
    parser.add_argument("--lines", action="store_true", help="the body's lines as strings")
    args = parser.parse_args()
    recording(args.out, args.body, args.lines)


if __name__ == "__main__":
    main()

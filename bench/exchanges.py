"""Files of recorded exchanges whose one response body is a whole stream, one in each
layout chatx reads that a recorder may fill with a long stream, for ``make bench``'s
memory rows at 1M (``bench/run.py``): the issue's "peak RSS ≤ 100 MiB in every container".

    python bench/exchanges.py bench/out/text-1m.chat.sse      # writes them all beside it

Each is written from the stream's file and cached beside it (``text-1m.chat.<layout>``),
written again when the stream is newer. The HAR, JSON and YAML cassettes are those of
``bench/big_har.py``, ``bench/big_cassette.py`` and ``bench/big_yaml.py``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import big_cassette
import big_har
import big_yaml

URL = "https://api.example.test/v1/chat/completions"
REQUEST = b'{"model":"gpt-4o","stream":true}'


def _har(path: Path, body: Path) -> None:
    big_har.one_body(path, body, False, False, False)


def _json_cassette(path: Path, body: Path) -> None:
    big_cassette.one_body(path, body, False, False, False)


def _yaml_cassette(path: Path, body: Path) -> None:
    with path.open("wb") as out:
        big_yaml.write(out, body, "double")


def _httprr(path: Path, body: Path) -> None:
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: api.example.test\r\n\r\n" + REQUEST
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
    size = len(head) + body.stat().st_size
    with path.open("wb") as out, body.open("rb") as src:
        out.write(b"httprr trace v1\n%d %d\n" % (len(request), size) + request + head)
        while piece := src.read(1 << 20):
            out.write(piece)


def _tnet(payload: bytes, mark: bytes) -> bytes:
    return b"%d:" % len(payload) + payload + mark


def _mitmproxy(path: Path, body: Path) -> None:
    """One flow, its response's content the stream as sent (a typed tnetstring)."""

    def pairs(*items: tuple[str, bytes]) -> bytes:
        return b"".join(_tnet(k.encode(), b";") + v for k, v in items)

    request = pairs(("host", _tnet(b"api.example.test", b";")), ("port", _tnet(b"443", b"#")),
                    ("method", _tnet(b"POST", b",")), ("scheme", _tnet(b"https", b",")),
                    ("path", _tnet(b"/v1/chat/completions", b",")),
                    ("headers", _tnet(b"", b"]")), ("content", _tnet(REQUEST, b",")))  # fmt: skip
    header = _tnet(_tnet(b"content-type", b",") + _tnet(b"text/event-stream", b","), b"]")
    size = body.stat().st_size
    before = pairs(("status_code", _tnet(b"200", b"#")), ("reason", _tnet(b"OK", b",")),
                   ("headers", _tnet(header, b"]"))) + _tnet(b"content", b";")  # fmt: skip
    response_len = len(before) + len(b"%d:" % size) + size + 1
    flow_head = pairs(("type", _tnet(b"http", b";")), ("request", _tnet(request, b"}")))
    flow_head += _tnet(b"response", b";") + b"%d:" % response_len + before + b"%d:" % size
    flow_len = len(flow_head) + size + 2  # the content's "," and the response's "}"
    with path.open("wb") as out, body.open("rb") as src:
        out.write(b"%d:" % flow_len + flow_head)
        while piece := src.read(1 << 20):
            out.write(piece)
        out.write(b",}}")


def _httpmock(path: Path, body: Path) -> None:
    """One mock, its body a literal block (``|+``), as serde_yaml writes a text."""
    with path.open("wb") as out, body.open("rb") as lines:
        out.write(b"when:\n  path: /v1/chat/completions\n  method: POST\n")
        out.write(b"then:\n  status: 200\n  header:\n  - name: content-type\n")
        out.write(b"    value: text/event-stream\n  body: |+\n")
        for line in lines:
            out.write(b"    " + line if line.strip(b"\n") else line)


def _wiremock(path: Path, body: Path) -> None:
    _json_body(path, body, b'{"request": {"method": "POST", "url": "/v1/chat/completions"}, '
               b'"response": {"status": 200, "headers": {"Content-Type": "text/event-stream"}, '
               b'"body": "', b'"}}\n')  # fmt: skip


def _nock(path: Path, body: Path) -> None:
    _json_body(path, body, b'[{"scope": "https://api.example.test:443", "method": "POST", '
               b'"path": "/v1/chat/completions", "status": 200, "rawHeaders": '
               b'["Content-Type", "text/event-stream"], "response": "', b'"}]\n')  # fmt: skip


def _json_body(path: Path, body: Path, head: bytes, tail: bytes) -> None:
    """A JSON file whose one string, between ``head`` and ``tail``, is the stream."""
    with path.open("wb") as out, body.open("rb") as lines:
        out.write(head)
        for line in lines:
            out.write(json.dumps(line.decode())[1:-1].encode())
        out.write(tail)


def _llama_recording(path: Path, body: Path) -> None:
    """Llama Stack's recorder: the chunks the client received, each as the SDK dumps it."""
    head = (b'{"test_id": "bench", "request": {"method": "POST", "url": "' + URL.encode()
            + b'", "body": ' + REQUEST + b', "endpoint": "/v1/chat/completions", '
            b'"model": "gpt-4o"}, "response": {"body": [')  # fmt: skip
    _chunks(path, body, head, b'{"__type__": "openai.types.chat.chat_completion_chunk.'
            b'ChatCompletionChunk", "__data__": ', b'], "is_streaming": true}}\n')  # fmt: skip


def _recordable(path: Path, body: Path) -> None:
    """Llama Stack's early recordable mock: one call's chunks, each as the recorder wrapped
    a pydantic model (its own inference events: the stream should be Llama Stack's)."""
    key = json.dumps('["meta-llama/Llama-3.1-8B-Instruct", []]_{"stream": true}').encode()
    _chunks(path, body, b"{" + key + b': {"type": "generator", "chunks": [',
            b'{"__pydantic__": "ChatCompletionResponseStreamChunk", "__module__": '
            b'"llama_stack.apis.inference", "data": ', b"]}}\n")  # fmt: skip


def _chunks(path: Path, body: Path, head: bytes, wrap: bytes, tail: bytes) -> None:
    """A JSON file whose one array, between ``head`` and ``tail``, holds the stream's
    payloads, each in ``wrap`` (an object it is the last value of)."""
    with path.open("wb") as out, body.open("rb") as lines:
        out.write(head)
        first = True
        for line in lines:
            if not line.startswith(b"data: {"):
                continue
            out.write((b"" if first else b", ") + wrap + line[6:].rstrip() + b"}")
            first = False
        out.write(tail)


def _snapshot(path: Path, body: Path) -> None:
    """inline-snapshot's external file of one streamed body: the pieces it came in."""
    with path.open("wb") as out, body.open("rb") as lines:
        out.write(b"[")
        first = True
        for line in lines:
            out.write((b"" if first else b",\n") + json.dumps(line.decode()).encode())
            first = False
        out.write(b"]\n")


# layout: (file name's suffix, writer, the format of the stream it holds)
LAYOUTS: dict[str, tuple[str, Callable[[Path, Path], None], int]] = {
    "har": ("har", _har, "chat"),
    "vcr json": ("vcr.json", _json_cassette, "chat"),
    "vcr yaml": ("vcr.yaml", _yaml_cassette, "chat"),
    "httprr": ("httprr", _httprr, "chat"),
    "mitmproxy": ("mitm", _mitmproxy, "chat"),
    "httpmock": ("mock.yaml", _httpmock, "chat"),
    "wiremock": ("wiremock.json", _wiremock, "chat"),
    "nock": ("nock.json", _nock, "chat"),
    "llama-stack recording": ("recording.json", _llama_recording, "chat"),
    "inline-snapshot": ("snapshot.json", _snapshot, "chat"),
    "llama-stack recordable mock": ("recordable.json", _recordable, "llama"),
}


def ensure(layout: str, body: Path) -> Path:
    """The file of ``layout`` holding ``body``, written when missing or older than it."""
    suffix, write, _ = LAYOUTS[layout]
    path = body.with_name(f"{body.name.rsplit('.', 1)[0]}.{suffix}")
    if not path.exists() or path.stat().st_mtime < body.stat().st_mtime:
        part = path.with_name(path.name + ".part")
        write(part, body)
        part.replace(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("body", type=Path, help="the stream (SSE) every file holds")
    args = parser.parse_args()
    for layout in LAYOUTS:
        print(ensure(layout, args.body))


if __name__ == "__main__":
    main()

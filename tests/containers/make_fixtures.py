"""Write ``fixtures/containers/``: files of recorded exchanges built around chatx's own
fixture streams, one per way a recorder stores a body.

``python -m tests.containers.make_fixtures`` writes them; ``--check`` lists the stale
ones (``tests/containers/test_fixtures.py`` runs the check). The output is the same
bytes on every run: no clock, no randomness, gzip with a zero mtime.
"""

from __future__ import annotations

import base64
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2] / "fixtures"
OUT = ROOT / "containers"

CHAT = (ROOT / "chat-chunk" / "text.sse").read_bytes()
CHAT_TOOLS = (ROOT / "chat-chunk" / "tool-call-parallel.sse").read_bytes()
RESPONSES = (ROOT / "responses-event" / "text.sse").read_bytes()
COMPLETION = (ROOT / "chat-chunk" / "nonstream-completion.json").read_bytes()

CHAT_REQUEST = {
    "model": "fixture-model",
    "messages": [{"role": "user", "content": "Say something about containers."}],
    "stream": True,
    "temperature": 0.25,
}
RESPONSES_REQUEST = {
    "model": "fixture-model",
    "input": "Say something about containers.",
    "instructions": "Answer in one line.",
    "stream": True,
}
# Not a stream: the shape of an embeddings answer.
EMBEDDINGS = {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.5]}],
              "model": "fixture-embedder"}  # fmt: skip


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- HAR --------------------------------------------------------------------------------


def har_entry(method: str, url: str, request: Any, status: int, content: dict[str, Any],
              headers: list[dict[str, str]] | None = None) -> dict[str, Any]:  # fmt: skip
    post = (
        None if request is None else {"mimeType": "application/json", "text": json.dumps(request)}
    )
    entry: dict[str, Any] = {
        "startedDateTime": "2020-01-01T00:00:00.000Z",
        "time": 1,
        "request": {"method": method, "url": url, "headers": [], "httpVersion": "HTTP/1.1"},
        "response": {
            "status": status,
            "statusText": "OK",
            "headers": headers or [],
            "content": content,
        },  # fmt: skip
    }
    if post:
        entry["request"]["postData"] = post
    return entry


def har(entries: list[dict[str, Any]]) -> bytes:
    log = {"log": {"version": "1.2", "creator": {"name": "chatx-fixtures", "version": "1"},
                   "pages": [], "entries": entries}}  # fmt: skip
    return json.dumps(log, indent=2).encode() + b"\n"


SSE = "text/event-stream; charset=utf-8"
GZIP = [{"name": "content-encoding", "value": "gzip"}]


def hars() -> dict[str, bytes]:
    chat_url = "https://api.example.test/v1/chat/completions"
    embed = gz(json.dumps(EMBEDDINGS).encode())
    polly = json.dumps([b64(embed[:20]), b64(embed[20:])])  # Polly.JS: one per chunk
    return {
        # One stream beside an answer that is not one (base64 chunks of gzip bytes).
        "one-stream.har": har([
            har_entry("POST", "https://api.example.test/v1/embeddings", {"input": "x"}, 200,
                      {"mimeType": "application/json", "encoding": "base64", "text": polly}, GZIP),
            har_entry("POST", chat_url, CHAT_REQUEST, 200,
                      {"mimeType": SSE, "text": CHAT.decode()}),
        ]),
        # Streams in three encodings, a non-streaming object, and a page.
        "many.har": har([
            har_entry("POST", chat_url, CHAT_REQUEST, 200, {"mimeType": SSE, "text": CHAT.decode()}),
            har_entry("POST", "https://api.example.test/v1/responses", RESPONSES_REQUEST, 200,
                      {"mimeType": SSE, "encoding": "base64", "text": b64(RESPONSES)}),
            har_entry("POST", chat_url, {**CHAT_REQUEST, "stream": False}, 200,
                      {"mimeType": "application/json", "text": COMPLETION.decode()}),
            har_entry("GET", "https://example.test/", None, 200,
                      {"mimeType": "text/html", "text": "<html>not a stream</html>"}),
            har_entry("POST", chat_url, CHAT_REQUEST, 200,
                      {"mimeType": SSE, "encoding": "base64", "text": b64(gz(CHAT_TOOLS))}, GZIP),
        ]),
        "no-streams.har": har([
            har_entry("GET", "https://example.test/", None, 200,
                      {"mimeType": "text/html", "text": "<html>a page</html>"}),
            har_entry("POST", "https://api.example.test/v1/embeddings", {"input": "x"}, 200,
                      {"mimeType": "application/json", "text": json.dumps(EMBEDDINGS)}),
        ]),
        # Entry 0's base64 is damaged, entry 1's gzip is cut short, entry 2 is fine.
        "bad-bodies.har": har([
            har_entry("POST", chat_url, CHAT_REQUEST, 200,
                      {"mimeType": SSE, "encoding": "base64", "text": "ZGF0YTog*not base64*"}),
            har_entry("POST", chat_url, CHAT_REQUEST, 200,
                      {"mimeType": SSE, "encoding": "base64", "text": b64(gz(CHAT)[:40])}, GZIP),
            har_entry("POST", chat_url, CHAT_REQUEST, 200, {"mimeType": SSE, "text": CHAT.decode()}),
        ]),
    }  # fmt: skip


# -- cassettes ----------------------------------------------------------------------------


class Styled(str):
    style: str | None = None


def styled(text: str, style: str | None) -> Styled:
    value = Styled(text)
    value.style = style
    return value


class RubyBinary(str):
    """Ruby VCR's ``!binary`` scalar: base64 of the bytes."""


def _dumper() -> Any:
    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(
        Styled, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", str(v), style=v.style)
    )
    Dumper.add_representer(
        RubyBinary, lambda d, v: d.represent_scalar("!binary", str(v), style="|")
    )
    return Dumper


def dump(document: Any) -> bytes:
    return yaml.dump(document, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                     width=80).encode()  # fmt: skip


def vcrpy(body: Any, *, request: Any = CHAT_REQUEST, headers: dict[str, list[str]] | None = None,
          url: str = "https://api.example.test/v1/chat/completions") -> dict[str, Any]:  # fmt: skip
    return {
        "request": {"body": json.dumps(request), "headers": {"Content-Type": ["application/json"]},
                    "method": "POST", "uri": url},
        "response": {"body": body, "headers": headers or {"Content-Type": [SSE]},
                     "status": {"code": 200, "message": "OK"}},
    }  # fmt: skip


def cassettes() -> dict[str, bytes]:
    chat, responses = CHAT.decode(), RESPONSES.decode()
    url = "https://api.example.test/v1/responses"
    styles = [
        vcrpy({"string": styled(chat, "|")}),
        vcrpy({"string": styled(chat, ">")}),
        vcrpy({"string": styled(responses, "'")}, request=RESPONSES_REQUEST, url=url),
        vcrpy({"string": styled(responses, '"')}, request=RESPONSES_REQUEST, url=url),
        vcrpy(
            {"string": gz(CHAT_TOOLS)},
            headers={"Content-Type": [SSE], "Content-Encoding": ["gzip"]},
        ),
        vcrpy(styled(chat, "|")),  # a plain string body
    ]
    ruby = {
        "http_interactions": [
            {
                "request": {"method": "post", "uri": "https://api.example.test/chat/completions",
                            "body": {"encoding": "UTF-8", "string": json.dumps(CHAT_REQUEST)},
                            "headers": {"Content-Type": ["application/json"]}},
                "response": {"status": {"code": 200, "message": "OK"},
                             "headers": {"Content-Type": [SSE]}, "body": body},
                "recorded_at": "Wed, 01 Jan 2020 00:00:00 GMT",
            }
            for body in (
                {"encoding": "UTF-8", "string": styled(chat, "|")},
                {"encoding": "ASCII-8BIT", "string": RubyBinary(b64(CHAT_TOOLS))},
                {"encoding": "ASCII-8BIT", "base64_string": b64(CHAT)},
            )
        ],
        "recorded_with": "VCR 6.0.0",
    }  # fmt: skip
    events = [{"event": e["type"], "data": e} for e in _payloads(RESPONSES)]
    parsed = {
        "interactions": [
            {"request": {"headers": {"content-type": ["application/json"]}, "method": "POST",
                         "parsed_body": RESPONSES_REQUEST, "uri": url},
             "response": {"headers": {"content-type": ["text/event-stream"]},
                          "parsed_body": events, "status": {"code": 200, "message": "OK"}}},
            {"request": {"headers": {"content-type": ["application/json"]}, "method": "POST",
                         "parsed_body": {**CHAT_REQUEST, "stream": False},
                         "uri": "https://api.example.test/v1/chat/completions"},
             "response": {"headers": {"content-type": ["application/json"]},
                          "parsed_body": json.loads(COMPLETION),
                          "status": {"code": 200, "message": "OK"}}},
        ],
        "version": 1,
    }  # fmt: skip
    return {
        "styles.yaml": dump({"interactions": styles, "version": 1}),
        "ruby.yml": b"---\n" + dump(ruby),
        "parsed-body.yaml": dump(parsed),
        "no-streams.yaml": dump(
            {
                "interactions": [
                    vcrpy(
                        {"string": json.dumps(EMBEDDINGS)},
                        headers={"Content-Type": ["application/json"]},
                    ),
                ],
                "version": 1,
            }
        ),  # fmt: skip
    }


def _payloads(sse: bytes) -> list[Any]:
    return [
        json.loads(line[5:])
        for line in sse.decode().splitlines()
        if line.startswith("data:") and line[5:].strip() != "[DONE]"
    ]


# -- a Llama Stack recording, an httprr trace -------------------------------------------------


def recording() -> bytes:
    chunk_type = "openai.types.chat.chat_completion_chunk.ChatCompletionChunk"
    document = {
        "test_id": "tests/fixture.py::test_containers",
        "request": {"method": "POST", "url": "https://api.example.test/v1/chat/completions",
                    "headers": {}, "body": CHAT_REQUEST, "endpoint": "/v1/chat/completions",
                    "model": "fixture-model"},
        "response": {"body": [{"__type__": chunk_type, "__data__": p} for p in _payloads(CHAT)],
                     "is_streaming": True},
    }  # fmt: skip
    return json.dumps(document, indent=2).encode() + b"\n"


def httprr() -> bytes:
    body = json.dumps(CHAT_REQUEST).encode()
    # The Content-Type line ends in a bare LF, as a hand-edited trace has it.
    request = (b"POST https://api.example.test/v1/chat/completions HTTP/1.1\r\n"
               b"Host: api.example.test\r\nContent-Type: application/json\n"
               b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip
    response = (b"HTTP/2.0 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
                b"Content-Length: " + str(len(CHAT)).encode() + b"\r\n\r\n" + CHAT)  # fmt: skip
    return (b"httprr trace v1\n" + f"{len(request)} {len(response)}\n".encode() + request
            + response)  # fmt: skip


def build() -> dict[str, bytes]:
    return {**hars(), **cassettes(), "recording.json": recording(), "trace.httprr": httprr()}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, data in build().items():
        path = OUT / name
        if path.exists() and path.read_bytes() == data:
            continue
        stale.append(path)
        if not check:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print(f"GEN {path}")
    if check and stale:
        for path in stale:
            print(f"stale {path}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

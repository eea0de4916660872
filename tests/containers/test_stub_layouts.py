"""The recorder and stub-server layouts read beside HAR files and VCR.py cassettes: each
written here in its tool's shape (never copied from a project), with one Anthropic
stream and, where the layout holds several, a second exchange that is no stream.

Each layout must work with every command: ``ls`` lists it with the right address,
method, URL, status and model; ``FILE#N`` converts to what the bare stream converts to;
``validate``, ``collect`` and a ``--out-dir`` walk take it; ``serve`` answers from it.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.containers.common import chatx, same_meaning

MODEL = "claude-x"
URL = "https://api.anthropic.com/v1/messages"
REQUEST = {"model": MODEL, "max_tokens": 10, "stream": True, "messages": []}
EVENTS = [
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": [],
        "stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "Hi"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                       "usage": {"output_tokens": 2}}),
    ("message_stop", {"type": "message_stop"}),
]  # fmt: skip
SSE = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in EVENTS)
NOT_FOUND = '{"error": {"message": "not found"}}'


def llama_sse_lines() -> dict[str, Any]:
    """Llama Stack's recorder, current layout: an Anthropic stream kept as its SSE lines."""
    return {
        "test_id": "tests/integration/test_messages.py::test_stream[claude]",
        "request": {"method": "POST", "url": "http://localhost:8321/v1/messages",
                    "body": REQUEST, "endpoint": "/v1/messages", "model": MODEL},
        "response": {"body": SSE.split("\n")[:-1], "is_streaming": True},
    }  # fmt: skip


def datadog() -> dict[str, Any]:
    """ddapm-test-agent's VCR proxy: one file per request, the status an object."""
    return {
        "request": {"method": "POST", "url": URL, "body": json.dumps(REQUEST),
                    "headers": {"content-type": "application/json", "x-api-key": "redacted"}},
        "response": {"status": {"code": 200, "message": "OK"},
                     "headers": {"content-type": "text/event-stream"}, "body": SSE},
    }  # fmt: skip


def wiremock_one() -> dict[str, Any]:
    """A WireMock stub mapping file, the body as text, the request as a JSON pattern."""
    return {
        "request": {"method": "POST", "urlPath": "/v1/messages",
                    "bodyPatterns": [{"equalToJson": json.dumps(REQUEST)}]},
        "response": {"status": 200, "headers": {"Content-Type": "text/event-stream"},
                     "body": SSE},
    }  # fmt: skip


def wiremock_many() -> dict[str, Any]:
    """WireMock's mappings export: a base64 body, then a JSON body that is no stream."""
    return {
        "mappings": [
            {"request": {"method": "POST", "url": "/v1/messages",
                         "bodyPatterns": [{"equalToJson": REQUEST}]},
             "response": {"status": 200, "base64Body": base64.b64encode(SSE.encode()).decode(),
                          "headers": {"Content-Type": "text/event-stream"}}},
            {"request": {"method": "GET", "url": "/v1/models/x"},
             "response": {"status": 404, "jsonBody": json.loads(NOT_FOUND)}},
        ],
        "meta": {"total": 2},
    }  # fmt: skip


def hoverfly() -> dict[str, Any]:
    """A Hoverfly v5 simulation: matchers for the request, an encoded and a plain body."""

    def exact(value: str) -> list[dict[str, str]]:
        return [{"matcher": "exact", "value": value}]

    return {
        "data": {
            "pairs": [
                {"request": {"path": exact("/v1/models/x"), "method": exact("GET"),
                             "destination": exact("api.anthropic.com")},
                 "response": {"status": 404, "body": NOT_FOUND, "encodedBody": False}},
                {"request": {"path": exact("/v1/messages"), "method": exact("POST"),
                             "destination": exact("api.anthropic.com"), "scheme": exact("https"),
                             "body": [{"matcher": "json", "value": json.dumps(REQUEST)}]},
                 "response": {"status": 200, "encodedBody": True,
                              "body": base64.b64encode(SSE.encode()).decode(),
                              "headers": {"Content-Type": ["text/event-stream"]}}},
            ],
            "globalActions": {"delays": []},
        },
        "meta": {"schemaVersion": "v5.2", "hoverflyVersion": "v1.5.0"},
    }  # fmt: skip


def go_vcr_v2() -> str:
    """go-vcr v2 (envoyproxy/ai-gateway's tests): the body is the string itself."""
    return (
        "---\nversion: 2\ninteractions:\n- id: 0\n  request:\n    proto: HTTP/1.1\n"
        f"    content_length: {len(json.dumps(REQUEST))}\n    body: '{json.dumps(REQUEST)}'\n"
        f"    form: {{}}\n    headers:\n      Content-Type:\n      - application/json\n"
        f"    url: {URL}\n    method: POST\n  response:\n    proto: HTTP/2.0\n"
        f"    content_length: -1\n    body: {json.dumps(SSE)}\n    headers:\n"
        "      Content-Type:\n      - text/event-stream\n    status: 200 OK\n    code: 200\n"
        "    duration: 1.204s\n"
    )


def nock() -> list[dict[str, Any]]:
    """nock.back's fixture: the stream gzipped (kept as hex chunks), then a 404 whose
    JSON body nock parsed."""
    packed = gzip.compress(SSE.encode())
    return [
        {"scope": "https://api.anthropic.com:443", "method": "POST", "path": "/v1/messages",
         "body": REQUEST, "status": 200,
         "response": [packed[:40].hex(), packed[40:].hex()],
         "rawHeaders": ["Content-Type", "text/event-stream", "Content-Encoding", "gzip"],
         "responseIsBinary": True},
        {"scope": "https://api.anthropic.com:443", "method": "GET", "path": "/v1/models/x",
         "body": "", "status": 404, "response": json.loads(NOT_FOUND),
         "rawHeaders": ["Content-Type", "application/json"], "responseIsBinary": False},
    ]  # fmt: skip


def snapshot_sse() -> list[str]:
    """inline-snapshot's external file of a streamed body: its SSE, in pieces."""
    return [SSE[:50], SSE[50:]]


def http_snapshot() -> list[dict[str, Any]]:
    """The anthropic SDK's http_snapshot: a 404 that is no stream, then the stream."""
    return [
        {"request": {"method": "GET", "url": "https://api.anthropic.com/v1/models/x"},
         "response": {"status_code": 404, "headers": {"content-type": "application/json"},
                      "body": NOT_FOUND}},
        {"request": {"method": "POST", "url": URL, "body": json.dumps(REQUEST)},
         "response": {"status_code": 200, "headers": {"content-type": "text/event-stream"},
                      "body": SSE}},
    ]  # fmt: skip


def httpmock() -> str:
    """rig's httpmock cassette: YAML documents {when, then}, a 404 first, the stream as a
    block scalar that keeps its last blank line (``|+``), a header value YAML reads as a
    date unless told otherwise."""
    body = "".join(f"    {line}\n" if line else "\n" for line in SSE.split("\n")[:-1])
    return (
        "when:\n  path: /v1/models/x\n  method: GET\n  query_param: []\n"
        "then:\n  status: 404\n  header:\n  - name: content-type\n"
        f"    value: application/json\n  body: '{NOT_FOUND}'\n"
        "---\nwhen:\n  path: /v1/messages\n  method: POST\n  query_param: []\n  header:\n"
        "  - name: anthropic-version\n    value: 2023-06-01\n"
        f"  body: '{json.dumps(REQUEST)}'\n"
        "then:\n  status: 200\n  header:\n  - name: content-type\n"
        f"    value: text/event-stream; charset=utf-8\n  body: |+\n{body}"
    )


def _tnetstring(value: Any) -> bytes:
    """A typed tnetstring, as mitmproxy writes its flows (written here from the format)."""
    if isinstance(value, bool):
        payload, mark = (b"true" if value else b"false"), b"!"
    elif value is None:
        payload, mark = b"", b"~"
    elif isinstance(value, int):
        payload, mark = str(value).encode(), b"#"
    elif isinstance(value, str):
        payload, mark = value.encode(), b";"
    elif isinstance(value, bytes):
        payload, mark = value, b","
    elif isinstance(value, list):
        payload, mark = b"".join(map(_tnetstring, value)), b"]"
    else:
        payload = b"".join(_tnetstring(k) + _tnetstring(v) for k, v in value.items())
        mark = b"}"
    return str(len(payload)).encode() + b":" + payload + mark


def mitmproxy() -> bytes:
    """mitmdump -w: a 404, then the stream gzipped as it was sent."""

    def flow(method: str, path: str, body: bytes, status: int, headers: list[Any],
             content: bytes) -> dict[str, Any]:  # fmt: skip
        return {
            "version": 21, "type": "http", "id": f"f{status}",
            "request": {"host": "api.anthropic.com", "port": 443, "method": method.encode(),
                        "scheme": b"https", "authority": b"", "path": path.encode(),
                        "http_version": b"HTTP/1.1", "content": body,
                        "headers": [[b"content-type", b"application/json"]]},
            "response": {"http_version": b"HTTP/1.1", "status_code": status, "reason": b"",
                         "headers": headers, "content": content, "trailers": None},
        }  # fmt: skip

    return _tnetstring(
        flow("GET", "/v1/models/x", b"", 404, [[b"content-type", b"application/json"]],
             NOT_FOUND.encode())
    ) + _tnetstring(
        flow("POST", "/v1/messages", json.dumps(REQUEST).encode(), 200,
             [[b"content-type", b"text/event-stream"], [b"content-encoding", b"gzip"]],
             gzip.compress(SSE.encode()))
    )  # fmt: skip


# name, file name, its text, the stream's #N, what ls says of it (method, url, status)
Layout = tuple[str, str, Callable[[], Any], int, tuple[str, str, str]]
LAYOUTS: list[Layout] = [
    ("llama-sse-lines", "rec.json", llama_sse_lines, 0,
     ("POST", "http://localhost:8321/v1/messages", "-")),
    ("datadog", "dd.json", datadog, 0, ("POST", URL, "200")),
    ("wiremock-mapping", "stub.json", wiremock_one, 0, ("POST", "/v1/messages", "200")),
    ("wiremock-mappings", "mappings.json", wiremock_many, 0, ("POST", "/v1/messages", "200")),
    ("hoverfly", "simulation.json", hoverfly, 1, ("POST", URL, "200")),
    ("go-vcr-v2", "cassette.yaml", go_vcr_v2, 0, ("POST", URL, "200")),
    ("nock", "nock.json", nock, 0, ("POST", URL, "200")),
    ("http-snapshot", "snap.json", http_snapshot, 1, ("POST", URL, "200")),
    ("httpmock", "mock.yaml", httpmock, 1, ("POST", "/v1/messages", "200")),
    ("mitmproxy", "flows.mitm", mitmproxy, 1, ("POST", URL, "200")),
]  # fmt: skip
IDS = [layout[0] for layout in LAYOUTS]


def _write(folder: Path, layout: Layout) -> Path:
    _, name, make, _, _ = layout
    content = make()
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    return path


@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_ls_lists_the_stream_at_its_own_position(tmp_path: Path, layout: Layout) -> None:
    path = _write(tmp_path, layout)
    listed = chatx("ls", str(path))
    assert listed.code == 0, listed.err
    line = next(x for x in listed.stdout.decode().splitlines() if "anthropic-event" in x)
    method, url, status = layout[4]
    assert line.split()[:7] == [
        f"{path}#{layout[3]}",
        "anthropic-event",
        "6",
        "records",
        method,
        url,
        status,
    ]


@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_the_stream_means_what_the_bare_stream_means(tmp_path: Path, layout: Layout) -> None:
    path = _write(tmp_path, layout)
    bare = tmp_path / "bare.sse"
    bare.write_text(SSE)
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    same_meaning(f"{path}#{layout[3]}", str(bare), str(request))
    checked = chatx("validate", str(path))
    assert checked.code == 0, (checked.stdout, checked.err)


@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_the_recorded_request_fills_the_envelope(tmp_path: Path, layout: Layout) -> None:
    path = _write(tmp_path, layout)
    collected = chatx("collect", "-q", "--as", "responses", f"{path}#{layout[3]}")
    assert collected.code == 0, collected.err
    assert json.loads(collected.stdout)["max_output_tokens"] == REQUEST["max_tokens"]


def test_a_directory_of_every_layout_is_walked(tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    for layout in LAYOUTS:
        _write(source, layout)
    out = tmp_path / "out"
    done = chatx("convert", str(source), "--to", "chat-chunk", "--out-dir", str(out), "-q")
    assert done.code == 0, done.err
    written = sorted(p.name for p in out.iterdir())
    streams = [f"{Path(name).stem}.{n}.chat-chunk.sse" for _, name, _, n, _ in LAYOUTS]
    # The 404 bodies beside the streams are OpenAI-shaped errors: a stream of one error.
    errors = [
        "mappings.1.chat-chunk.sse",
        "simulation.0.chat-chunk.sse",
        "nock.1.chat-chunk.sse",
        "snap.0.chat-chunk.sse",
        "mock.0.chat-chunk.sse",
        "flows.0.chat-chunk.sse",
    ]
    assert written == sorted(streams + errors)
    for name in errors:
        assert '"message": "not found"' in (out / name).read_text().replace('":"', '": "')


@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_serve_answers_from_it(tmp_path: Path, layout: Layout) -> None:
    pytest.importorskip("httpx2")
    from tests.live.support import post, serving

    path = _write(tmp_path, layout)
    with serving([str(path)]) as (running, _):
        answer = post(f"{running.url}/v1/messages", REQUEST)
    assert answer.status_code == 200
    assert answer.content == SSE.encode()


def test_a_wiremock_body_file_not_there_is_said(tmp_path: Path) -> None:
    stub = wiremock_one()
    del stub["response"]["body"]
    stub["response"]["bodyFileName"] = "messages-stream.txt"
    path = tmp_path / "stub.json"
    path.write_text(json.dumps(stub))
    done = chatx("convert", f"{path}#0", "--to", "chat")
    assert done.code == 2
    assert "'messages-stream.txt' is not there" in done.err
    assert str(tmp_path / "__files") in done.err


def test_a_llama_stack_recording_is_not_taken_for_one_exchange(tmp_path: Path) -> None:
    """Both are {request, response}: the recorder's marks decide, whatever comes first."""
    recording = llama_sse_lines()
    recording["response"]["status"] = 200  # a field the recorder never wrote, in case
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(recording))
    listed = chatx("formats")
    assert "exchange" in listed.stdout.decode() and "hoverfly" in listed.stdout.decode()
    done = chatx("ls", "--output", "json", str(path))
    assert done.code == 0, done.err
    assert json.loads(done.stdout.splitlines()[0])["format"] == "anthropic-event"


def test_a_nock_text_response_is_its_body(tmp_path: Path) -> None:
    """nock keeps a body it could read as text as the string itself."""
    recorded = nock()[:1]
    recorded[0].update(response=SSE, rawHeaders=["content-type", "text/event-stream"])
    recorded[0]["responseIsBinary"] = False
    path = tmp_path / "nock.json"
    path.write_text(json.dumps(recorded))
    bare = tmp_path / "bare.sse"
    bare.write_text(SSE)
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    same_meaning(f"{path}#0", str(bare), str(request))


def test_a_bare_json_array_of_chunks_is_still_a_stream(tmp_path: Path) -> None:
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]},
              {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]  # fmt: skip
    path = tmp_path / "chunks.json"
    path.write_text(json.dumps(chunks))
    done = chatx("collect", "-q", str(path))
    assert done.code == 0, done.err
    assert json.loads(done.stdout)["choices"][0]["message"]["content"] == "Hi"


def test_an_inline_snapshot_of_sse_pieces_is_one_stream(tmp_path: Path) -> None:
    path = tmp_path / "sse.json"
    path.write_text(json.dumps(snapshot_sse(), indent=2))
    listed = chatx("ls", str(path))
    assert listed.code == 0, listed.err
    assert listed.stdout.decode().split()[:3] == [f"{path}#0", "anthropic-event", "6"]
    bare = tmp_path / "bare.sse"
    bare.write_text(SSE)
    same_meaning(f"{path}#0", str(bare))

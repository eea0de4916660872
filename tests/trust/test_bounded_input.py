"""Issue 23, class 4: bounded on hostile input (YAML aliases aside: another file).

Every limit in chatx/limits.py is met here by an input made to pass it: decompression
inside files of exchanges stops where a bare compressed file stops, with an error
naming the exchange and the limit; reading is linear however many blank lines come
before or between records, the work counted, not timed; a line, an array element or a
whole value longer than MAX_LINE is an error, not unbounded memory.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from chatx import containers, limits
from chatx.containers import jsonarray, jsonl
from chatx.pipeline import Transcoder
from tests.inprocess import run

CHUNK = (
    b'{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}'
)
SSE = b"data: " + CHUNK + b"\n\ndata: [DONE]\n\n"
MiB = 1 << 20


def convert(*args: str, stdin: bytes = b"") -> tuple[int, bytes, str]:
    out = run(["convert", *args], stdin)
    return out.code, out.stdout, out.err


# -- decompression inside files of exchanges -----------------------------------------------


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    """MAX_DECOMPRESSED lowered to 1 MiB: the inputs that pass it stay small."""
    monkeypatch.setattr(limits, "MAX_DECOMPRESSED", MiB)
    return MiB


def _bomb(size: int, head: bytes = b"") -> bytes:
    """gzip of ``head`` then ``size`` bytes of blank lines, made without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(head)]
    out += [packer.compress(b"\n" * MiB) for _ in range(size // MiB)]
    return b"".join([*out, packer.compress(b"data: " + CHUNK + b"\n\n"), packer.flush()])


def _har(body: bytes, encoding: str = "gzip") -> str:
    return json.dumps(
        {
            "log": {
                "entries": [
                    {
                        "request": {"method": "POST", "url": "https://x.test/v1/chat/completions"},
                        "response": {
                            "status": 200,
                            "headers": [{"name": "Content-Encoding", "value": encoding}],
                            "content": {
                                "mimeType": "text/event-stream",
                                "encoding": "base64",
                                "text": base64.b64encode(body).decode(),
                            },
                        },
                    }
                ]
            }
        }
    )


LIMIT_WORDS = "decompresses to more than 1 MiB, the most chatx reads of one compressed input"


def test_a_bare_compressed_file_stops_at_the_limit(small_limit: int, tmp_path: Path) -> None:
    path = tmp_path / "big.sse.gz"
    path.write_bytes(_bomb(2 * small_limit))
    code, _, err = convert(str(path), "--to", "chat-chunk")
    assert code == 2
    assert f"{path}: bad gzip data: {LIMIT_WORDS}" in err, err


def test_under_the_limit_reads(small_limit: int, tmp_path: Path) -> None:
    path = tmp_path / "a.har"
    path.write_text(_har(_bomb(small_limit // 2)))
    code, out, err = convert(str(path), "--to", "chat-chunk", "-q")
    assert code == 0, err
    assert b"hi" in out


@pytest.mark.parametrize("encoding", ["gzip", "identity", ""])
def test_a_har_body_stops_at_the_same_limit(
    encoding: str, small_limit: int, tmp_path: Path
) -> None:
    path = tmp_path / "a.har"
    path.write_text(_har(_bomb(2 * small_limit), encoding))
    code, _, err = convert(f"{path}#0", "--to", "chat-chunk")
    assert code == 2
    assert f"{path}#0: its body cannot be decoded (bad gzip data: {LIMIT_WORDS}" in err, err


def test_a_gzip_body_inside_gzip_is_bounded_at_each_layer(small_limit: int, tmp_path: Path) -> None:
    inner = _bomb(2 * small_limit)
    path = tmp_path / "a.har"
    path.write_text(_har(gzip.compress(inner), "gzip, gzip"))
    code, _, err = convert(f"{path}#0", "--to", "chat-chunk")
    assert code == 2 and LIMIT_WORDS in err, err


@pytest.mark.parametrize("encoding", ["deflate", "br"])
def test_magicless_bodies_stop_at_the_limit(
    encoding: str, small_limit: int, tmp_path: Path
) -> None:
    blank = b"\n" * (2 * small_limit)
    if encoding == "br":
        brotli = pytest.importorskip("brotli", reason="br needs the brotli package")
        body = bytes(brotli.compress(blank))
        said = "brotli"
    else:
        body, said = zlib.compress(blank, 9), "deflate"
    path = tmp_path / "a.har"
    path.write_text(_har(body, encoding))
    code, _, err = convert(f"{path}#0", "--to", "chat-chunk")
    assert code == 2
    assert f"(bad {said} data: {LIMIT_WORDS}" in err, err


def test_a_zstd_body_stops_at_the_limit(small_limit: int, tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard", reason="zstd needs the zstandard package")
    body = zstandard.ZstdCompressor().compress(b"\n" * (2 * small_limit))
    path = tmp_path / "a.har"
    path.write_text(_har(body, "zstd"))
    code, _, err = convert(f"{path}#0", "--to", "chat-chunk")
    assert code == 2 and f"(bad zstd data: {LIMIT_WORDS}" in err, err


def test_a_compressed_cassette_stops_at_the_limit(small_limit: int, tmp_path: Path) -> None:
    cassette = b"interactions:\n" + b"# padding\n" * (small_limit // 5)
    path = tmp_path / "a.yaml.gz"
    path.write_bytes(gzip.compress(cassette))
    code, _, err = convert(str(path), "--to", "chat-chunk")
    assert code == 2
    assert f"{path}: bad gzip data: {LIMIT_WORDS}" in err, err


def test_a_compressed_httprr_trace_stops_at_the_limit(small_limit: int, tmp_path: Path) -> None:
    # a trace read as it comes: one exchange whose response runs past the limit
    trace = b"httprr trace v1\n" + b"5 %d\nabcde" % (2 * small_limit) + b"x" * (2 * small_limit)
    path = tmp_path / "a.httprr.gz"
    path.write_bytes(gzip.compress(trace))
    code, _, err = convert(str(path), "--to", "chat-chunk")
    assert code == 2 and f"{path}: bad gzip data: {LIMIT_WORDS}" in err, err


# -- linear reading: the work counted ------------------------------------------------------


class Counting:
    """A compiled pattern whose ``match`` counts the bytes it may scan (from ``pos`` to
    the end): how much work sniffing a head does, whatever the machine's speed."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern
        self.offered = 0

    def match(self, data: Any, pos: int = 0) -> Any:
        self.offered += len(data) - pos
        return self.pattern.match(data, pos)


def _blank_head(size: int, line: bytes) -> bytes:
    return line * (size // len(line)) + SSE


@pytest.mark.parametrize("line", [b"\n", b" \n", b"\r\n", b"\t \r"])
def test_sniffing_looks_at_each_blank_byte_once(
    line: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: each 64 KiB piece scanned the whole head again (48 MiB: 54 s)."""
    counting = Counting(containers._BLANK)
    monkeypatch.setattr(containers, "_BLANK", counting)
    data = _blank_head(4 * MiB, line)
    transcoder = Transcoder("chat-chunk")
    out = [transcoder.feed(data[at : at + (1 << 16)]) for at in range(0, len(data), 1 << 16)]
    out.append(transcoder.finish())
    assert b"hi" in b"".join(out)
    # once as pieces arrive, once more to say where the content starts (sniffed)
    assert counting.offered <= 2 * len(data) + (1 << 16), counting.offered


def test_reading_a_file_looks_at_each_blank_byte_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = Counting(containers._BLANK)
    monkeypatch.setattr(containers, "_BLANK", counting)
    path = tmp_path / "blank.sse"
    path.write_bytes(_blank_head(4 * MiB, b"\n"))
    for command in (["show"], ["collect", "-q"], ["validate"]):
        counting.offered = 0
        out = run([*command, str(path)])
        assert out.code in (0, 1), (command, out.err)  # validate: a finding, no finish
        assert counting.offered <= 2 * path.stat().st_size + (1 << 16), command


def test_an_array_s_blanks_are_looked_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before and between the elements of a JSON array alike."""
    stripped = Counting(jsonarray._STRIPPED)
    space = Counting(re.compile(rb"[ \t\n]*"))
    monkeypatch.setattr(jsonarray, "_STRIPPED", stripped)
    monkeypatch.setattr(jsonarray, "_space", space.match)
    blanks = b" \n" * (2 * MiB)
    data = blanks + b"[" + CHUNK + b"," + blanks + CHUNK + b"]"
    reader = jsonarray.JSONArrayReader()
    records = []
    for at in range(0, len(data), 1 << 16):
        records += reader.feed(data[at : at + (1 << 16)])
    records += reader.finish()
    assert [r.line for r in records] == [2 * MiB + 1, 4 * MiB + 1]
    assert stripped.offered + space.offered <= 2 * len(data), (stripped.offered, space.offered)


def test_blank_json_lines_cost_no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each refused by orjson cost a microsecond of exception: 16 MiB took 20 s."""
    calls = []

    class Orjson:
        def __getattr__(self, name: str) -> Any:
            import orjson

            return getattr(orjson, name)

        @staticmethod
        def loads(data: Any) -> Any:
            import orjson

            calls.append(len(data))
            return orjson.loads(data)

    monkeypatch.setattr(jsonl, "orjson", Orjson())
    reader = jsonl.JSONLReader()
    records = reader.feed(b" \n\t\n \r\n" * 1000 + CHUNK + b"\n") + reader.finish()
    assert len(records) == 1 and records[0].line == 3001
    assert calls == [len(CHUNK)]


def test_lines_that_are_no_sse_field_are_counted_past_a_hundred(tmp_path: Path) -> None:
    """Before: one warning held and printed per line (4 Mi lines: 41 s, 1.3 GB)."""
    path = tmp_path / "stray.sse"
    path.write_bytes(b" \n" * 5000 + SSE)
    code, _, err = convert(str(path), "--to", "chat-chunk")
    assert code == 0
    warnings = [line for line in err.splitlines() if "warning:" in line]
    assert len(warnings) == 101, warnings[-3:]
    assert warnings[-1] == (
        f"chatx: warning: {path}:5000: 4900 more lines ignored after the first 100, the last"
        " here: not SSE fields (lines start with data:, event:, id:, retry: or :)"
    )


def test_blank_lines_past_max_line_before_any_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(containers, "MAX_LINE", MiB)
    path = tmp_path / "blank.sse"
    path.write_bytes(b"\n" * (2 * MiB) + SSE)
    code, _, err = convert(str(path), "--to", "chat-chunk")
    assert code == 2
    assert f"{path}:1: no event in the first 1 MiB, only blank lines: reading stopped" in err


def test_blank_lines_before_a_stream_keep_its_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "blank.sse"
    path.write_bytes(b"\n" * (3 * MiB) + b"data: {oops}\n\n" + SSE)
    code, out, err = convert(str(path), "--to", "chat-chunk")
    assert code == 2
    assert f"chatx: skipped: {path}:{3 * MiB + 1}: record skipped" in err
    assert b"hi" in out


# -- long lines, elements and values --------------------------------------------------------


def _long(head: bytes, size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(head)]
    out += [packer.compress(b"x" * MiB) for _ in range(size // MiB)]
    return b"".join([*out, packer.flush()])


@pytest.mark.parametrize(
    ("name", "head", "said"),
    [
        ("a.sse.gz", b"data: " + CHUNK + b'\n\ndata: {"a":"', "a line longer than 64 MiB"),
        ("a.jsonl.gz", CHUNK + b'\n{"a":"', "a line longer than 64 MiB"),
        ("a.json.gz", b"[" + CHUNK + b',\n{"a":"', "an element longer than 64 MiB"),
        ("b.json.gz", b'{\n"a":\n"', "a JSON value longer than 64 MiB"),
    ],
)
def test_a_line_element_or_value_past_max_line(
    name: str, head: bytes, said: str, tmp_path: Path
) -> None:
    """100 MiB with no end: the records before it are converted, then the error.
    Before, a JSON array's element was held whole (300 MiB: 13.8 s, 1.56 GB)."""
    path = tmp_path / name
    path.write_bytes(_long(head, 100 * MiB))
    code, out, err = convert(str(path), "--to", "chat-chunk")
    assert code == 2
    assert f"{said}" in err and "reading stopped" in err, err
    if not name.startswith("b."):
        assert b"hi" in out


# -- nesting: one depth limit, wherever JSON comes in ---------------------------------------

DEPTH = limits.MAX_DEPTH


def _nested(levels: int) -> str:
    """A JSON object whose ``metadata`` holds ``levels`` more levels (objects and lists)."""
    inner = '{"a":' * (levels // 2) + "[" * (levels - levels // 2) + "1"
    inner += "]" * (levels - levels // 2) + "}" * (levels // 2)
    return '{"model":"m","input":"hi","stream":true,"metadata":' + inner + "}"


OVER = [DEPTH + 1, 300, 900, 1100, 5000]  # past ours, past orjson's writer, past recursion


def test_a_request_at_the_limit_is_read(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(_nested(DEPTH - 1))
    stream = tmp_path / "a.sse"
    stream.write_bytes(SSE)
    code, _, err = convert(str(stream), "--to", "responses-event", "--request", str(request))
    assert code == 0, err


@pytest.mark.parametrize("levels", OVER)
def test_convert_request_too_deep(levels: int, tmp_path: Path) -> None:
    """Before: 300 levels exit 70 (orjson's writer), 900 exit 70 (RecursionError)."""
    request = tmp_path / "request.json"
    request.write_text(_nested(levels))
    stream = tmp_path / "a.sse"
    stream.write_bytes(SSE)
    code, _, err = convert(str(stream), "--to", "responses-event", "--request", str(request))
    assert code == 2
    assert f"{request}: request body is not JSON: nested more than 200 levels deep" in err


@pytest.mark.parametrize("levels", OVER)
def test_capture_request_too_deep(levels: int, tmp_path: Path) -> None:
    out = run(
        ["capture", "--base-url", "http://127.0.0.1:9/v1", "-d", _nested(levels),
         "-o", str(tmp_path / "x.sse")]
    )  # fmt: skip
    assert out.code == 2
    assert "-d: invalid JSON: nested more than 200 levels deep" in out.err, out.err
    assert list(tmp_path.iterdir()) == []


def _har_with_request(request: str) -> str:
    return json.dumps(
        {
            "log": {
                "entries": [
                    {
                        "request": {
                            "method": "POST",
                            "url": "https://x.test/v1/chat/completions",
                            "postData": {"mimeType": "application/json", "text": request},
                        },
                        "response": {
                            "status": 200,
                            "content": {"mimeType": "text/event-stream", "text": SSE.decode()},
                        },
                    }
                ]
            }
        }
    )


@pytest.mark.parametrize("levels", OVER)
def test_a_recorded_request_too_deep_refuses_its_exchange(levels: int, tmp_path: Path) -> None:
    """Before: exit 70 at 300 and 900 levels, and past orjson's 1024 the request was
    dropped without a word (exit 0)."""
    path = tmp_path / "a.har"
    path.write_text(_har_with_request(_nested(levels)))
    code, _, err = convert(f"{path}#0", "--to", "responses-event")
    assert code == 2
    assert f"{path}#0: its body cannot be decoded (its recorded request is nested more than" in err
    listed = run(["ls", str(path)])
    assert listed.code in (0, 2) and "Traceback" not in listed.err


def test_a_recorded_request_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.har"
    path.write_text(_har_with_request(_nested(DEPTH - 1)))
    code, _, err = convert(f"{path}#0", "--to", "responses-event")
    assert code == 0, err


def test_a_recorded_body_too_deep_to_write_back(tmp_path: Path) -> None:
    """A Llama Stack recording's body is written back as JSON: past orjson's writer."""
    body = json.loads(_nested(300))
    path = tmp_path / "recording.json"
    path.write_text(
        json.dumps(
            {
                "test_id": "t",
                "request": {"method": "POST", "url": "http://x/v1/chat/completions", "body": {}},
                "response": {"body": body, "is_streaming": False},
            }
        )
    )
    code, _, err = convert(str(path), "--to", "chat-chunk")
    assert code == 2
    assert "nested more than 200 levels deep" in err, err


@pytest.mark.parametrize("container", ["sse", "jsonl", "json"])
@pytest.mark.parametrize("levels", OVER)
def test_a_record_too_deep_is_skipped(container: str, levels: int) -> None:
    record = json.loads(CHUNK)
    record["x"] = "@"
    text = json.dumps(record).replace('"@"', _nested(levels))
    framed = {
        "sse": f"data: {text}\n\n",
        "jsonl": f"{text}\n",
        "json": f"[{text}]",
    }[container].encode()
    code, _, err = convert("-", "--to", "responses-event", stdin=framed)
    assert code == 2
    assert "nested more than 200 levels deep" in err


@pytest.mark.parametrize("levels", [DEPTH + 1, 5000])
def test_show_and_diff_of_arguments_too_deep(levels: int, tmp_path: Path) -> None:
    """A tool call's arguments are text, nested as deep as a sender likes: show printed
    them through json.loads, which recursed (5000 levels: exit 70)."""
    record = json.loads(CHUNK)
    record["choices"][0]["delta"] = {
        "role": "assistant",
        "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "f", "arguments": "[" * levels + "]" * levels}}
        ],
    }  # fmt: skip
    path = tmp_path / "a.sse"
    path.write_text(f"data: {json.dumps(record)}\n\ndata: [DONE]\n\n")
    shown = run(["show", str(path)])
    assert shown.code in (0, 1, 2) and "internal error" not in shown.err, shown.err
    diffed = run(["diff", str(path), str(path)])
    assert diffed.code == 0, diffed.err


# -- serve and proxy: 400 in the API's error shape, before anything is relayed ----------------


def _asgi(app: Any, path: str, body: bytes) -> tuple[int, bytes]:
    """One POST through an ASGI app, in this thread: its status and body."""
    import asyncio

    scope = {
        "type": "http", "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"",
        "headers": [(b"content-type", b"application/json"), (b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }  # fmt: skip
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


@pytest.fixture(scope="module")
def serve_app() -> Any:
    from chatx.live.app import ServeApp
    from chatx.live.served_captures import load

    root = Path(__file__).resolve().parents[2] / "fixtures" / "chat-chunk"
    return ServeApp(load([str(root / "text.sse")]))


@pytest.mark.parametrize("levels", OVER)
def test_serve_answers_400_in_the_api_s_shape(serve_app: Any, levels: int) -> None:
    status, body = _asgi(serve_app, "/v1/chat/completions", _nested(levels).encode())
    assert status == 400
    error = json.loads(body)["error"]
    assert "nested more than 200 levels deep" in error["message"]
    assert error["type"] == "invalid_request_error"


def test_serve_reads_a_request_at_the_limit(serve_app: Any) -> None:
    status, _ = _asgi(serve_app, "/v1/chat/completions", _nested(DEPTH - 1).encode())
    assert status == 200


class NoUpstream:
    """A client that fails the test if the proxy relays anything."""

    def build_request(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("relayed a request nested too deep")

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("levels", OVER)
def test_proxy_refuses_before_relaying(levels: int, tmp_path: Path) -> None:
    """Before: relayed, the upstream's 200 sent on, then the connection cut when the
    request was scrubbed to be written beside the recording (RecursionError)."""
    from chatx.live.proxy import ProxyApp

    app = ProxyApp("http://127.0.0.1:9", tmp_path)
    app.client = NoUpstream()
    status, body = _asgi(app, "/v1/chat/completions", _nested(levels).encode())
    assert status == 400
    assert "nested more than 200 levels deep" in json.loads(body)["error"]["message"]
    assert list(tmp_path.iterdir()) == []


def test_proxy_relays_a_body_that_is_not_json(tmp_path: Path) -> None:
    """Only JSON nested too deep is refused: brackets in another body are relayed."""
    from chatx.live.proxy import ProxyApp

    app = ProxyApp("http://127.0.0.1:9", tmp_path)
    app.client = NoUpstream()
    with pytest.raises(AssertionError, match="relayed"):
        app.debug = True
        _asgi(app, "/v1/chat/completions", b"not json " + b"[" * 5000)


# -- serve: a capture is read as it comes, never held whole ----------------------------------

# The peak is VmHWM, this process's own: ru_maxrss would keep the pytest worker's peak
# across the fork and exec that started it.
_LOAD = """
import re, sys
from chatx.live.served_captures import load
(capture,) = load([sys.argv[1]])
assert capture.held is None and capture.streams[0].model == "gpt-x", capture
status = open("/proc/self/status").read()
print(int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) // 1024)
"""


def _big_capture(path: Path, size: int) -> int:
    """An .sse.gz of ``size`` bytes of chat chunks (a few hundred KiB on disk)."""
    head = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-x",'
    one = head + b'"choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}\n\n'
    last = head + b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    block = one * (MiB // len(one))
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    path.write_bytes(
        b"".join([*parts, packer.compress(last + b"data: [DONE]\n\n"), packer.flush()])
    )
    return len(block) * len(parts) + len(last) + 14


def test_serve_reads_a_capture_as_it_comes(tmp_path: Path) -> None:
    """Before: the capture was held decompressed, every record kept (a 1 MB .sse.gz of
    256 MiB took 1.97 GB and 16.8 s at start-up; now 27 MB and 8.8 s). Here 64 MiB: the
    peak is held under 160 MB, where holding it would pass 400 MB."""
    import subprocess
    import sys

    if not Path("/proc/self/status").is_file():
        pytest.skip("the peak of a process is read from /proc/self/status (Linux)")
    path = tmp_path / "big.sse.gz"
    size = _big_capture(path, 64 * MiB)
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, str(path)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 160, f"{done.stdout.strip()} MB at start-up for {size >> 20} MiB"


def test_a_capture_is_sent_from_its_file_in_pieces(tmp_path: Path) -> None:
    from chatx.live.served_captures import load

    path = tmp_path / "small.sse.gz"
    size = _big_capture(path, 2 * MiB)
    (capture,) = load([str(path)])
    assert capture.held is None
    pieces = list(capture.chunks())
    assert max(map(len, pieces)) <= 1 << 16 and sum(map(len, pieces)) == size
    assert capture.data == b"".join(pieces) == gzip.decompress(path.read_bytes())

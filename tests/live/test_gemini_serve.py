"""``chatx serve`` and ``chatx capture`` speaking Gemini as Google does:
``:streamGenerateContent`` without ``alt=sse`` is one JSON array of the chunks (with it,
SSE), the key may come as ``?key=`` and is never logged, and ``capture --api gemini``
posts to the model's path with the key in ``x-goog-api-key`` and keeps the stream."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx.codecs.base import HttpApi
from chatx.live.app import ServeApp
from chatx.live.arrays import json_array
from chatx.live.endpoints import by_name, model_path, sse_asked
from chatx.live.served_captures import load
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, Running, post

KEY = "AIza-gemini-serve-SECRET-5678"
STREAM = "/v1beta/models/gemini-test:streamGenerateContent"
CAPTURE = "gemini-event/text.sse"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Running, list[str]]]:
    said: list[str] = []
    app = ServeApp(
        load([str(FIXTURES / "gemini-event"), str(FIXTURES / "chat-chunk")]), log=said.append
    )
    with Running(app) as running:
        yield running, said


def chunks_of_sse(data: bytes) -> list[Any]:
    return [orjson.loads(line[6:]) for line in data.splitlines() if line.startswith(b"data: ")]


@pytest.mark.parametrize("capture", [CAPTURE, "chat-chunk/text.sse"])
def test_without_alt_sse_the_stream_is_one_json_array(
    served: tuple[Running, list[str]], capture: str
) -> None:
    running, _ = served
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    sse = post(f"{running.url}{STREAM}?alt=sse", body, capture)
    array = post(f"{running.url}{STREAM}", body, capture)
    assert sse.status_code == array.status_code == 200
    assert sse.headers["content-type"].startswith("text/event-stream")
    assert array.headers["content-type"].startswith("application/json")
    listed = orjson.loads(array.content)
    assert isinstance(listed, list) and listed
    assert listed == chunks_of_sse(sse.content)  # the same chunks, framed as Google frames them
    assert array.content.startswith(b"[{") and array.content.endswith(b"}]")


def test_the_key_in_the_query_is_taken_and_never_logged(served: tuple[Running, list[str]]) -> None:
    running, said = served
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    got = post(f"{running.url}{STREAM}?alt=sse&key={KEY}", body, CAPTURE)
    assert got.status_code == 200 and chunks_of_sse(got.content)
    final = post(
        f"{running.url}/v1beta/models/gemini-test:generateContent?key={KEY}", body, CAPTURE
    )
    assert final.status_code == 200 and "candidates" in final.json()
    bad = post(f"{running.url}{STREAM}?alt=sse&key={KEY}", b"{not json", CAPTURE)
    assert bad.status_code == 400
    assert bad.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert KEY not in bad.text
    assert said and not any(KEY in line for line in said)


def test_json_array_pieces() -> None:
    events = [b'data: {"a": 1}\n\n', b'data: {"b": 2}\r\n\r\n', b'data: {"c": 3}\n\n']
    pieces = list(json_array(iter(events)))
    assert len(pieces) == 3  # one piece an event: pacing and --cut-after count the same
    assert orjson.loads(b"".join(pieces)) == [{"a": 1}, {"b": 2}, {"c": 3}]
    timed = list(json_array(iter([(e, n) for n, e in enumerate(events)])))
    assert [n for _, n in timed] == [0, 1, 2]
    assert list(json_array(iter([]))) == [b"[]"]


def test_sse_asked_reads_the_query() -> None:
    gemini = by_name("gemini")
    assert sse_asked(gemini, b"alt=sse") and sse_asked(gemini, b"key=k&alt=sse")
    assert not sse_asked(gemini, b"") and not sse_asked(gemini, b"alt=json")
    assert sse_asked(by_name("chat"), b"")  # APIs without a query for it: SSE


@pytest.mark.parametrize(
    ("model", "segment"),
    [
        ("gemini-2.5-flash", "gemini-2.5-flash"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("../../v1/files", "..%2F..%2Fv1%2Ffiles"),
        ("..", "%2E%2E"),
        ("m?key=x#f", "m%3Fkey%3Dx%23f"),
        ("a%2Fb", "a%252Fb"),
        ("http://evil.example/x", "http%3A%2F%2Fevil.example%2Fx"),
    ],
)
def test_a_model_names_one_path_segment(model: str, segment: str) -> None:
    gemini: HttpApi = by_name("gemini")
    path = model_path(gemini, model, stream=True)
    assert path == f"/v1beta/models/{segment}:streamGenerateContent?alt=sse"
    assert model_path(gemini, model, stream=False) == f"/v1beta/models/{segment}:generateContent"


# --- chatx capture --api gemini ------------------------------------------------------


class Seen:
    """Keeps the path, query and headers of each request the upstream gets."""

    def __init__(self, app: ServeApp) -> None:
        self.app = app
        self.requests: list[tuple[str, bytes, dict[bytes, bytes]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests.append((scope["path"], scope["query_string"], dict(scope["headers"])))
        await self.app(scope, receive, send)


def test_capture_api_gemini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "upstream"
    folder.mkdir()
    shutil.copyfile(FIXTURES / CAPTURE, folder / "text.sse")
    seen = Seen(ServeApp(load([str(folder)])))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    out = tmp_path / "got" / "gemini.sse"
    out.parent.mkdir()
    ask = {"model": "gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with Running(seen) as running:
        result = run(
            [
                "capture",
                "--base-url",
                running.url,
                "--api",
                "gemini",
                "--api-key-env",
                "GEMINI_API_KEY",
                "-d",
                orjson.dumps(ask).decode(),
                "-o",
                str(out),
            ]  # fmt: skip
        )
        direct = post(f"{running.url}{STREAM}?alt=sse", {"contents": ask["contents"]})
    assert_clean(result, {0})
    path, query, headers = seen.requests[0]
    assert path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert query == b"alt=sse"  # the key in its header, never in the URL
    assert headers[b"x-goog-api-key"] == KEY.encode()
    assert out.read_bytes() == direct.content == (FIXTURES / CAPTURE).read_bytes()
    recorded = orjson.loads((out.parent / "gemini.sse.request.json").read_bytes())
    assert recorded == ask  # its model kept; no "stream", which Gemini has not
    for written in out.parent.iterdir():
        assert KEY.encode() not in written.read_bytes()
    assert KEY not in result.err and KEY.encode() not in result.stdout


def test_capture_api_gemini_needs_a_model(tmp_path: Path) -> None:
    result = run(
        [
            "capture",
            "--base-url",
            "http://127.0.0.1:9",
            "--api",
            "gemini",
            "-d",
            '{"contents": []}',
            "-o",
            str(tmp_path / "x.sse"),
        ]  # fmt: skip
    )
    assert result.code == 2
    assert 'give it as "model" in the body' in result.err
    assert not list(tmp_path.iterdir())


def test_google_genai_with_its_default_version(served: tuple[Running, list[str]]) -> None:
    """google-genai given a base_url asks /v1/models/…, not /v1beta: served the same."""
    genai = pytest.importorskip("google.genai", reason="the google-genai SDK is not installed")
    from google.genai import types

    running, _ = served
    options = types.HttpOptions(base_url=running.url, headers={"X-Chatx-Capture": CAPTURE})
    with genai.Client(api_key=KEY, http_options=options) as client:
        text = "".join(
            chunk.text or ""
            for chunk in client.models.generate_content_stream(model="gemini-test", contents="hi")
        )
        whole = client.models.generate_content(model="gemini-test", contents="hi")
    assert text == whole.text == "Paper cranes fold from one square sheet."

"""Llama Stack recordings and httprr traces."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from chatx.containers import httprr, llama_stack_recording
from chatx.errors import InputError
from tests.containers import make_fixtures as made
from tests.containers.common import chatx, fixture, same_meaning, write


def test_a_recording_is_its_chunks_as_json_lines() -> None:
    (entry,) = llama_stack_recording.entries(Path(fixture("recording.json")).read_bytes())
    lines = entry.body().splitlines()
    assert [orjson.loads(line) for line in lines] == made._payloads(made.CHAT)
    assert (entry.method, entry.request) == ("POST", made.CHAT_REQUEST)


def test_a_recorded_object_is_its_json() -> None:
    document = {"request": {"body": {}}, "response": {"body": {"__type__": "X", "__data__": {"a": 1}},
                                                      "is_streaming": False}}  # fmt: skip
    (entry,) = llama_stack_recording.entries(orjson.dumps(document))
    assert entry.body() == b'{"a":1}'


def test_recording_means_what_its_stream_means(tmp_path: Path) -> None:
    request = write(tmp_path, "request.json", made.CHAT_REQUEST)
    same_meaning(fixture("recording.json"), write(tmp_path, "chat.sse", made.CHAT), request)


def test_truncated_recording_says_its_line() -> None:
    data = Path(fixture("recording.json")).read_bytes()
    cut = data[:500]
    with pytest.raises(InputError) as caught:
        list(llama_stack_recording.entries(cut))
    assert caught.value.line == cut.count(b"\n") + 1
    assert caught.value.message.startswith("not valid JSON: ")


def test_httprr_is_framed_by_its_byte_counts(tmp_path: Path) -> None:
    (entry,) = httprr.entries(io.BytesIO(Path(fixture("trace.httprr")).read_bytes()))
    assert entry.body() == made.CHAT
    assert (entry.method, entry.url, entry.status) == (
        "POST", "https://api.example.test/v1/chat/completions", 200
    )  # fmt: skip
    assert entry.request == made.CHAT_REQUEST
    request = write(tmp_path, "request.json", made.CHAT_REQUEST)
    same_meaning(fixture("trace.httprr"), write(tmp_path, "chat.sse", made.CHAT), request)


def test_httprr_chunked_body() -> None:
    body = b"5\r\ndata:\r\n3\r\n {}\r\n0\r\n\r\n"
    response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
    data = b"httprr trace v1\n" + f"0 {len(response)}\n".encode() + response
    (entry,) = httprr.entries(io.BytesIO(data))
    assert entry.body() == b"data: {}"


def test_truncated_httprr_says_which_exchange(tmp_path: Path) -> None:
    data = Path(fixture("trace.httprr")).read_bytes()[:-10]
    out = chatx("ls", write(tmp_path, "cut.httprr", data))
    assert out.code == 2
    assert "truncated trace: exchange 0 says" in out.err
    assert ".httprr:2: " in out.err

"""HAR files: each entry's body as the stream it is, whatever its encoding."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from chatx.containers import har
from chatx.errors import InputError
from tests.containers import make_fixtures as made
from tests.containers.common import chatx, fixture, same_meaning, write


def bodies(data: bytes) -> list[bytes]:
    return [entry.body() for entry in har.entries(io.BytesIO(data))]


def test_every_encoding_of_a_body_reads_back_to_its_bytes() -> None:
    got = bodies(Path(fixture("many.har")).read_bytes())
    # plain SSE text; base64; a JSON object; a page; base64 of gzip bytes (content-encoding)
    assert got[0] == made.CHAT
    assert got[1] == made.RESPONSES
    assert json.loads(got[2]) == json.loads(made.COMPLETION)
    assert got[3] == b"<html>not a stream</html>"
    assert got[4] == made.CHAT_TOOLS


def test_polly_chunks_of_base64_are_joined_and_gunzipped() -> None:
    got = bodies(Path(fixture("one-stream.har")).read_bytes())
    assert json.loads(got[0]) == made.EMBEDDINGS
    assert got[1] == made.CHAT


def test_entry_metadata() -> None:
    entries = list(har.entries(io.BytesIO(Path(fixture("many.har")).read_bytes())))
    assert [(e.index, e.method, e.status) for e in entries] == [
        (0, "POST", 200), (1, "POST", 200), (2, "POST", 200), (3, "GET", 200), (4, "POST", 200)
    ]  # fmt: skip
    assert entries[1].url == "https://api.example.test/v1/responses"
    assert entries[1].request == made.RESPONSES_REQUEST
    assert entries[3].request is None
    assert entries[0].content_type == made.SSE


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_entries_found_whatever_the_reads(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Strings, escapes and brackets cut across reads: the scanner reads more and goes on.
    monkeypatch.setattr(har, "_BLOCK", block)
    data = Path(fixture("many.har")).read_bytes()

    class Slow(io.BytesIO):
        def read1(self, size: int = -1) -> bytes:
            return super().read1(min(size, block))

    assert [e.body() for e in har.entries(Slow(data))][:2] == [made.CHAT, made.RESPONSES]


def test_keys_inside_other_parts_do_not_count() -> None:
    # "entries" as a key elsewhere (pages, an entry's own fields) is not log.entries.
    document = {"log": {"pages": [{"entries": [{"x": 1}]}], "creator": {"entries": "no"},
                        "entries": [made.har_entry("GET", "https://e.test/", None, 200,
                                                   {"mimeType": "text/plain", "text": "ok"})]}}  # fmt: skip
    assert bodies(json.dumps(document).encode()) == [b"ok"]


def test_a_stream_in_a_har_means_what_it_means_bare(tmp_path: Path) -> None:
    bare = write(tmp_path, "chat.sse", made.CHAT)
    request = write(tmp_path, "request.json", made.CHAT_REQUEST)
    same_meaning(fixture("many.har") + "#0", bare, request)
    same_meaning(fixture("one-stream.har"), bare, request)  # its only stream
    tools = write(tmp_path, "tools.sse", made.CHAT_TOOLS)
    same_meaning(fixture("many.har") + "#4", tools, request)


def test_the_recorded_request_fills_the_responses_envelope(tmp_path: Path) -> None:
    def created(*args: str) -> dict:
        out = chatx("convert", fixture("many.har") + "#0", "--to", "responses-event", "-q", *args)
        assert out.code == 0, out.err
        return json.loads(out.stdout.split(b"\n")[1][6:])["response"]

    assert created()["temperature"] == 0.25
    bare = chatx("convert", write(tmp_path, "x.sse", made.CHAT), "-q")
    assert json.loads(bare.stdout.split(b"\n")[1][6:])["response"]["temperature"] == 1.0
    # --request given on the command line wins over the recorded one
    other = write(tmp_path, "other.json", {**made.CHAT_REQUEST, "temperature": 0.75})
    assert created("--request", other)["temperature"] == 0.75


def test_a_non_streaming_object_converts_as_its_stream(tmp_path: Path) -> None:
    bare = write(tmp_path, "completion.json", made.COMPLETION)
    request = write(tmp_path, "request.json", {**made.CHAT_REQUEST, "stream": False})
    same_meaning(fixture("many.har") + "#2", bare, request)


def test_truncated_har_says_where() -> None:
    data = Path(fixture("many.har")).read_bytes()
    cut = data[: data.index(b'"entries"') + 400]
    with pytest.raises(InputError) as caught:
        list(har.entries(io.BytesIO(cut)))
    assert caught.value.line == cut.count(b"\n") + 1
    assert caught.value.message == (
        "truncated JSON: the input ends inside log.entries[0] (opened at line 10)"
    )


def test_an_entry_that_is_not_json_says_its_line() -> None:
    data = (
        Path(fixture("one-stream.har")).read_bytes().replace(b'"status": 200', b'"status": 2x0', 1)
    )
    with pytest.raises(InputError) as caught:
        list(har.entries(io.BytesIO(data)))
    assert caught.value.message.startswith("not valid JSON in log.entries[0]: ")
    assert caught.value.line == data[: data.index(b"2x0")].count(b"\n") + 1

"""The pieces of chatx.live on their own: cutting SSE into events, what a recording
leaves out, how recordings are named, the table of APIs."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatx import codecs
from chatx.errors import UsageError
from chatx.live import endpoints
from chatx.live.errors import ApiError, fault
from chatx.live.recorded_files import Namer, Recording, request_bytes, scrub, slug
from chatx.live.replay import Events

# -- events ------------------------------------------------------------------------------

_LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def sse_bytes(draw: st.DrawFn) -> bytes:
    blocks = []
    for _ in range(draw(st.integers(0, 6))):
        lines = draw(
            st.lists(st.sampled_from(["data: {}", "event: x", ": ping", "id: 3"]), max_size=3)
        )
        end = draw(_LINE_ENDS)
        blocks.append("".join(line + end for line in lines) + end)
    tail = draw(st.sampled_from(["", "data: {", "data: [DONE]\n"]))
    return ("".join(blocks) + tail).encode()


@given(sse_bytes(), st.lists(st.integers(1, 9), max_size=40))
def test_events_join_back_to_the_input_however_it_arrives(data: bytes, cuts: list[int]) -> None:
    whole = Events()
    expected = whole.feed(data) + whole.finish()
    splitter = Events()
    got: list[bytes] = []
    position = 0
    for size in cuts:
        got += splitter.feed(data[position : position + size])
        position += size
    got += splitter.feed(data[position:]) + splitter.finish()
    assert b"".join(got) == data
    assert got == expected
    blank = re.compile(rb"(\r\n|\r|\n)(\r\n|\r|\n)$")
    assert all(blank.search(event) for event in got[:-1])


def test_events_of_a_crlf_stream() -> None:
    data = b"data: 1\r\n\r\ndata: 2\r\n\r\n"
    splitter = Events()
    # A CR last may be the first half of a CRLF: the event waits for the next byte.
    assert splitter.feed(data[:-1]) == [b"data: 1\r\n\r\n"]
    assert splitter.feed(data[-1:]) == [b"data: 2\r\n\r\n"]
    assert splitter.finish() == []


# -- recordings ------------------------------------------------------------------------------


def test_scrub_leaves_out_secrets_at_any_depth() -> None:
    request = {
        "model": "m",
        "api_key": "a",
        "Authorization": "b",
        "max_tokens": 5,
        "tools": [
            {"type": "mcp", "headers": {"X-Api-Key": "c", "Accept": "d"}, "authorization": "e"}
        ],
        "metadata": {"client_secret": "f", "note": "token budget"},
    }
    assert scrub(request) == {
        "model": "m",
        "max_tokens": 5,
        "tools": [{"type": "mcp", "headers": {"Accept": "d"}}],
        "metadata": {"note": "token budget"},
    }
    assert orjson.loads(request_bytes(request)) == scrub(request)
    assert request_bytes(request).endswith(b"}\n")


def test_recording_renames_only_a_whole_body(tmp_path: Path) -> None:
    whole = Recording(tmp_path / "a.sse", {"model": "m", "api_key": "k"})
    whole.write(b"data: 1\n\n")
    assert (tmp_path / "a.sse.part").read_bytes() == b"data: 1\n\n"  # flushed as it came
    assert whole.close(whole=True) == tmp_path / "a.sse"
    cut = Recording(tmp_path / "b.sse", None)
    cut.write(b"data: {")
    assert cut.close(whole=False) == tmp_path / "b.sse.part"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.sse",
        "a.sse.request.json",
        "a.sse.timing",
        "b.sse.part",
        "b.sse.part.timing",
    ]
    assert orjson.loads((tmp_path / "a.sse.request.json").read_bytes()) == {"model": "m"}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/v1/chat/completions", "chat-completions"),
        ("/v1/inference/chat-completion", "inference-chat-completion"),
        ("/v1/responses", "responses"),
        ("/", "root"),
        ("/v1/../../etc/passwd", "etc-passwd"),
    ],
)
def test_slug(path: str, expected: str) -> None:
    assert slug(path) == expected


def test_names_are_unique_and_sort_in_order(tmp_path: Path) -> None:
    namer = Namer(tmp_path)
    made = [namer.open("/v1/responses", ".sse", None) for _ in range(5)]
    for recording in made:
        recording.close(whole=True)
    names = [r.path.name for r in made]
    assert sorted(names) == names and len(set(names)) == 5
    assert all(re.fullmatch(r"\d{8}T\d{6}_\d{6}Z-\d{4}-responses\.sse", n) for n in names)


# -- errors and the table of APIs ---------------------------------------------------------


def test_error_bodies_are_shaped_as_openai_s() -> None:
    assert orjson.loads(ApiError(404, "gone").body()) == {
        "error": {
            "message": "gone",
            "type": "invalid_request_error",
            "param": None,
            "code": "not_found",
        }
    }
    assert orjson.loads(fault(418).body())["error"]["message"] == (
        "I'm a Teapot. (chatx serve --status 418)"
    )
    assert orjson.loads(fault(599).body())["error"]["type"] == "server_error"


def test_every_registered_format_with_an_api_is_served() -> None:
    table = endpoints.endpoints()
    assert [e.api for e in table][:3] == ["chat", "responses", "llama-stack"]
    assert {e.format for e in table} <= set(codecs.names())
    # Anthropic's Messages API is there exactly when its codec is.
    assert ("anthropic-event" in codecs.names()) == any(e.path == "/v1/messages" for e in table)
    assert endpoints.by_name("responses-event").path == "/v1/responses"
    assert endpoints.by_name("llama").under_base == "/inference/chat-completion"
    with pytest.raises(UsageError, match="unknown API 'chta'"):
        endpoints.by_name("chta")


def test_a_directory_walk_passes_over_recorded_requests(tmp_path: Path) -> None:
    from tests.inprocess import assert_clean, run
    from tests.live.support import fixture

    recording = Recording(tmp_path / "a.sse", {"model": "m", "stream": True})
    recording.write(fixture("chat-chunk/text.sse"))
    recording.close(whole=True)
    result = run(["validate", str(tmp_path)])
    assert_clean(result, {0})
    assert result.stdout.decode().splitlines() == [
        f"{tmp_path / 'a.sse'}: ok (chat-chunk, sse, 8 records)"
    ]

"""VCR cassettes: every scalar style and body shape reads back to the bytes recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx.containers import cassette
from chatx.containers.bodies import BodyError
from chatx.errors import InputError
from tests.containers import make_fixtures as made
from tests.containers.common import fixture, same_meaning, write


def bodies(name: str) -> list[bytes]:
    return [entry.body() for entry in cassette.entries(Path(fixture(name)).read_bytes())]


def test_each_scalar_style_and_body_shape() -> None:
    # literal |, folded >, single-quoted, double-quoted, !!binary gzip, a plain string
    assert bodies("styles.yaml") == [
        made.CHAT, made.CHAT, made.RESPONSES, made.RESPONSES, made.CHAT_TOOLS, made.CHAT
    ]  # fmt: skip


def test_ruby_vcr_literal_binary_and_base64_string() -> None:
    assert bodies("ruby.yml") == [made.CHAT, made.CHAT_TOOLS, made.CHAT]
    entry = next(cassette.entries(Path(fixture("ruby.yml")).read_bytes()))
    assert (entry.method, entry.status, entry.request) == ("POST", 200, made.CHAT_REQUEST)


def test_parsed_bodies_are_written_back_as_a_server_sends_them(tmp_path: Path) -> None:
    events, completion = bodies("parsed-body.yaml")
    assert events.startswith(b"event: response.created\ndata: {")
    assert json.loads(completion) == json.loads(made.COMPLETION)
    entries = list(cassette.entries(Path(fixture("parsed-body.yaml")).read_bytes()))
    assert entries[0].request == made.RESPONSES_REQUEST
    bare = write(tmp_path, "responses.sse", made.RESPONSES)
    same_meaning(fixture("parsed-body.yaml") + "#0", bare)


def test_parsed_payload_list_is_json_lines() -> None:
    document = {
        "interactions": [{"request": {}, "response": {"parsed_body": [{"a": 1}, {"b": 2}]}}]
    }
    (entry,) = cassette.entries(yaml.safe_dump(document).encode())
    assert entry.body() == b'{"a":1}\n{"b":2}\n'


@pytest.mark.parametrize("index", range(6))
def test_each_cassette_stream_means_what_it_means_bare(index: int, tmp_path: Path) -> None:
    body = bodies("styles.yaml")[index]
    request = made.RESPONSES_REQUEST if index in (2, 3) else made.CHAT_REQUEST
    bare = write(tmp_path, "bare.sse", body)
    same_meaning(fixture("styles.yaml") + f"#{index}", bare, write(tmp_path, "r.json", request))


def test_json_cassette() -> None:
    document = {"interactions": [made.vcrpy({"string": made.CHAT.decode()})], "version": 1}
    (entry,) = cassette.entries(json.dumps(document, indent=4).encode())
    assert entry.body() == made.CHAT


def test_bad_binary_fails_that_body_only() -> None:
    text = "interactions:\n- request: {}\n  response:\n    body: {string: !!binary 'no*base64'}\n"
    text += "- request: {}\n  response:\n    body: {string: ok}\n"
    first, second = cassette.entries(text.encode())
    with pytest.raises(BodyError, match="bad base64"):
        first.body()
    assert second.body() == b"ok"


def test_truncated_yaml_says_its_line() -> None:
    data = Path(fixture("styles.yaml")).read_bytes()
    cut = data[: data.index(b"'event: response.created") + 200]
    with pytest.raises(InputError) as caught:
        list(cassette.entries(cut))
    assert caught.value.line == cut.count(b"\n") + 1
    assert caught.value.message == (
        "not valid YAML: while scanning a quoted scalar, found unexpected end of stream"
    )


def test_no_interactions_is_no_cassette() -> None:
    with pytest.raises(InputError, match="not a VCR cassette: no list of interactions"):
        list(cassette.entries(b"interactions: 3\n"))


# What a recorder writes (text with SSE's blank lines, quotes, backslashes, non-ASCII,
# long lines that a writer wraps) in each scalar style it may pick reads back the same.
_PIECE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff"),
    max_size=30,
) | st.sampled_from(["\n", "\n\n", "'", '"', "\\", " ", "data: ", "\t"])
_TEXT = st.lists(_PIECE, max_size=12).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    text=_TEXT, style=st.sampled_from([None, "|", ">", "'", '"']), width=st.sampled_from([20, 80])
)
def test_yaml_scalar_styles_round_trip(text: str, style: str | None, width: int) -> None:
    document = {
        "interactions": [
            {"request": {}, "response": {"body": {"string": made.styled(text, style)}}}
        ]
    }
    data = yaml.dump(document, Dumper=made._dumper(), width=width, allow_unicode=True).encode()
    (entry,) = cassette.entries(data)
    assert entry.body() == text.encode("utf-8", "surrogatepass")

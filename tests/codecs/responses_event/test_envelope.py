"""``--request`` from a chat request body: the Responses envelope takes the system and
developer messages as ``instructions`` and chat's top-level ``verbosity`` as
``text.verbosity``, as a Responses server echoes the same settings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatx.codecs.base import EncodeOptions
from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.builders.chat_chunk import chat_text
from tests.captures import SPEC
from tests.inprocess import run
from tests.streams import CHAT, RESPONSES, convert, sse

CHAT_REQUEST = {
    "model": "gpt-test",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {
            "role": "developer",
            "content": [
                {"type": "text", "text": "Answer in "},
                {"type": "text", "text": "French."},
            ],
        },
    ],
    "verbosity": "low",
    "stream": True,
}


def _responses(request: dict[str, Any]) -> list[dict[str, Any]]:
    out, _ = convert(
        sse(chat_text("Salut")), RESPONSES, CHAT, options=EncodeOptions(request=request)
    )
    assert [f.rule for f in validate_records(read_records(out)[1]) if f.severity == "E"] == []
    return [r.data["response"] for r in read_records(out)[1] if "response" in r.data]


def test_system_and_developer_messages_are_the_instructions():
    for response in _responses(CHAT_REQUEST):
        assert response["instructions"] == "Be brief.\n\nAnswer in French."


def test_chat_verbosity_is_text_verbosity():
    for response in _responses(CHAT_REQUEST):
        assert response["text"] == {"format": {"type": "text"}, "verbosity": "low"}


def test_verbosity_beside_a_response_format():
    request = {**CHAT_REQUEST, "response_format": {"type": "json_object"}}
    for response in _responses(request):
        assert response["text"] == {"format": {"type": "json_object"}, "verbosity": "low"}


def test_a_responses_request_keeps_its_own_instructions_and_text():
    request = {
        "model": "gpt-test",
        "instructions": "Be kind.",
        "input": [{"role": "developer", "content": "ignored here"}],
        "text": {"format": {"type": "text"}, "verbosity": "high"},
    }
    for response in _responses(request):
        assert response["instructions"] == "Be kind."
        assert response["text"] == {"format": {"type": "text"}, "verbosity": "high"}


@pytest.mark.parametrize(
    "messages",
    [[{"role": "user", "content": "Hi"}], [{"role": "system", "content": ""}], "not a list"],
)
def test_no_system_message_leaves_instructions_null(messages):
    for response in _responses({"messages": messages}):
        assert response["instructions"] is None
        assert "verbosity" not in response["text"]


def test_cli_request_from_a_chat_body(tmp_path):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(CHAT_REQUEST))
    result = run(["convert", "--to", RESPONSES, "--request", str(path)], sse(chat_text("Salut")))
    assert result.code == 0, result.err
    terminal = [r.data for r in read_records(result.stdout)[1]][-1]
    assert terminal["type"] == "response.completed"
    assert terminal["response"]["instructions"] == "Be brief.\n\nAnswer in French."
    assert terminal["response"]["text"]["verbosity"] == "low"


def _output(request: dict[str, Any]) -> bytes:
    out, _ = convert(
        sse(chat_text("Salut")), RESPONSES, CHAT, options=EncodeOptions(request=request)
    )
    return out


def test_the_openai_sdk_types_accept_the_envelope():
    pytest.importorskip("openai", reason="the openai SDK types are the oracle")
    from tests.test_oracle import sdk_problems

    assert sdk_problems(_output(CHAT_REQUEST), RESPONSES) == []


@pytest.mark.skipif(
    not (SPEC / "open-responses-openapi.json").is_file(),
    reason=f"no Open Responses schema in {SPEC}",
)
def test_the_open_responses_schema_accepts_the_envelope():
    pytest.importorskip("openai", reason="the oracle module needs the openai SDK")
    from tests.test_oracle import open_responses_problems

    assert open_responses_problems(_output(CHAT_REQUEST)) == []

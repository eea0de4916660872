"""Issue 23, class 2: no secret reaches disk.

The request written beside a capture (``OUT.request.json``, the proxy's
``NAME.request.json``) leaves out every field named like a credential, whatever its case
or separators, and every string that is a credential by its shape, at any depth, in
lists too; fields that only look alike but are data a replay needs stay. The tables
below go both ways, and the same request goes through ``capture`` to the file it leaves.
``serve`` still matches a request to the capture recorded for it: it compares requests
with the same scrub on both sides.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx.live.choose import Chooser
from chatx.live.endpoints import by_name
from chatx.live.recorded_files import Recording, is_secret, is_secret_value, request_bytes, scrub
from chatx.live.served_captures import load
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, Running
from tests.trust.files_support import Fixed

# -- names ------------------------------------------------------------------------------------

# Fields that hold a credential: dropped, whatever their value.
SECRET_NAMES = [
    "auth_token",
    "api_token",
    "authToken",
    "secret_key",
    "aws_secret_access_key",
    "AWS_SECRET_ACCESS_KEY",
    "aws_access_key_id",
    "private_key",
    "privateKey",
    "token",
    "Token",
    "hf_token",
    "HF_TOKEN",
    "github_token",
    "set-cookie",
    "Set-Cookie",
    "cookie",
    "cookies",
    "x-api-key",
    "X-Api-Key",
    "XApiKey",
    "xapikey",
    "apikey",
    "api_key",
    "apiKey",
    "API_KEY",
    "openai_api_key",
    "x-goog-api-key",
    "password",
    "Password",
    "passwd",
    "passphrase",
    "db.password",
    "access_token",
    "accessToken",
    "accesstoken",
    "refresh_token",
    "session_token",
    "id_token",
    "bearer_token",
    "x-amz-security-token",
    "X_AUTH_TOKEN",
    "authorization",
    "Authorization",
    "proxy-authorization",
    "auth",
    "client_secret",
    "clientSecret",
    "clientsecret",
    "secret",
    "webhook_secret",
    "secretKey",
    "credentials",
    "Ocp-Apim-Subscription-Key",
    "access_keys",
    "api_tokens",
    "jwt",
    "token2",  # numbers are left aside
    "api_key_2",
    "access_token_v2",  # the credential pair anywhere in the name
    "authorization_token",  # an MCP server's, in an Anthropic request
    "pwd",
]

# Fields that only look alike: data a replay, or a match, needs.
DATA_NAMES = [
    "signature",
    "encrypted_content",
    "max_tokens",
    "max_output_tokens",
    "max_completion_tokens",
    "input_tokens",
    "output_tokens",
    "prompt_tokens",
    "cached_tokens",
    "reasoning_tokens",
    "total_tokens",
    "budget_tokens",
    "tokens",
    "token_count",
    "token_ids",
    "stop_token_ids",
    "tokenizer",
    "eos_token",
    "stop_token",
    "prompt_cache_key",
    "cache_key",
    "idempotency_key",
    "key",
    "keys",
    "keyword",
    "monkey",
    "author",
    "authors",
    "authored_by",
    "secretary",
    "session_id",
    "user",
    "safety_identifier",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "metadata",
    "model",
    "store",
    "instructions",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_field_named_like_a_credential_is_dropped(name: str) -> None:
    assert is_secret(name)
    request = {"model": "m", name: "v", "tools": [{"type": "mcp", "headers": {name: "v"}}]}
    assert scrub(request) == {"model": "m", "tools": [{"type": "mcp", "headers": {}}]}


@pytest.mark.parametrize("name", DATA_NAMES)
def test_a_field_that_only_looks_alike_is_kept(name: str) -> None:
    assert not is_secret(name)
    request = {"model": "m", name: 5, "input": [{"x": {name: [1, "two"]}}]}
    assert scrub(request) == request


def test_the_tables_are_large_enough() -> None:
    assert len(SECRET_NAMES) >= 40 and len(DATA_NAMES) >= 40
    assert not set(SECRET_NAMES) & set(DATA_NAMES)


# -- shapes -----------------------------------------------------------------------------------

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"

SECRET_VALUES = [
    "Bearer sk-proj-abcdefghijklmnopqrstuvwx",
    "bearer abc123def456ghi789",
    "Bearer " + JWT,
    "Basic dXNlcjpwYXNzd29yZA==",
    "Token 9f8e7d6c5b4a3f2e1d0c",
    "sk-abcdefghijklmnopqrstuvwxyz012345",
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz-0123456789",
    "sk-or-v1-0123456789abcdef0123456789abcdef",
    "  sk-abcdefghijklmnopqrstuvwxyz012345\n",  # whitespace around is still the key
    "sk_live_51HabcdefghijklmnopQRST",
    "AKIAIOSFODNN7EXAMPLE",
    "ASIAY34FZKBOKMUTVV7A",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2,
    "gho_" + "Z" * 36,
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
    "glpat-abcdefghij0123456789",
    "AIzaSyA-1234567890abcdefghijklmnopqrstu",
    "xoxb-123456789012-123456789012-abcdefghijklmnop",
    "xoxp-1234-5678-abcdefabcdef",
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    JWT,
    PEM,
    "https://user:hunter2@mcp.example.com/sse",
]

DATA_VALUES = [
    "Basic understanding",
    "Token counting",
    "Bearer Responsibilities",
    "Bearer abc",
    "sk-short",
    "task-abcdefghijklmnopqrstuvwxyz012345",  # not sk- at the start
    "my key is sk-abcdefghijklmnopqrstuvwxyz012345, keep it safe",  # prose: the prompt
    "AKIA is how AWS key ids start",
    "akiaiosfodnn7example",
    "hf_short",
    "ghp_short",
    "eyJhbGciOiJIUzI1NiJ9",  # one part: no JWT
    "EqQBCkgIARABGAIiQLkvS3N0cmVhbWVkIHNpZ25hdHVyZSBvZiB0aGlua2luZw==",  # a signature
    "gAAAAABoXyZ1234abcd_encrypted-content-of-reasoning==",  # encrypted_content
    "https://mcp.example.com/sse",
    "https://user@mcp.example.com/sse",  # a user, no password
    "",
    "Bearer",
]


@pytest.mark.parametrize("value", SECRET_VALUES)
def test_a_string_that_is_a_credential_by_its_shape_is_dropped(value: str) -> None:
    assert is_secret_value(value)
    request = {
        "model": "m",
        "note": value,
        "messages": [{"role": "user", "content": "hi"}, value],
        "tools": [{"server_url": "https://x", "headers": {"X-Custom": value}}],
        "deep": [[value, "kept"]],
    }
    assert scrub(request) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"server_url": "https://x", "headers": {}}],
        "deep": [["kept"]],
    }


@pytest.mark.parametrize("value", DATA_VALUES)
def test_a_string_that_only_looks_alike_is_kept(value: str) -> None:
    assert not is_secret_value(value)
    request = {"model": "m", "note": value, "messages": [value, {"content": value}]}
    assert scrub(request) == request


def test_a_key_shaped_as_a_credential_is_dropped() -> None:
    assert scrub({"AKIAIOSFODNN7EXAMPLE": 1, "ok": 2}) == {"ok": 2}


# -- where ``token`` is data ------------------------------------------------------------------


def test_token_is_data_inside_logprobs_and_a_credential_elsewhere() -> None:
    """A Responses output_text given back as input carries its logprobs: each entry's
    ``token`` is the text the model sampled. Anywhere else, ``token`` is a credential."""
    text = {
        "type": "output_text",
        "text": "Hi",
        "logprobs": [
            {
                "token": "Hi",
                "logprob": -0.1,
                "bytes": [72, 105],
                "top_logprobs": [{"token": "Hello"}],
            }
        ],
    }
    request = {
        "model": "m",
        "token": "t0ps3cret",
        "input": [{"type": "message", "role": "assistant", "content": [text]}],
        "tools": [{"type": "mcp", "token": "t0ps3cret"}],
        "chat": {"logprobs": {"content": [{"token": "a", "top_logprobs": [{"token": "b"}]}]}},
    }
    scrubbed = scrub(request)
    assert "token" not in scrubbed and "token" not in scrubbed["tools"][0]
    assert scrubbed["input"] == request["input"] and scrubbed["chat"] == request["chat"]
    # A credential by its shape goes even there.
    leaked = {"logprobs": [{"token": "sk-abcdefghijklmnopqrstuvwxyz012345"}]}
    assert scrub(leaked) == {"logprobs": [{}]}


def test_a_tool_s_parameters_keep_their_names_and_its_calls_lose_their_arguments() -> None:
    """A JSON schema's ``properties`` names what a tool takes: a ``password`` parameter's
    schema is data a replay sends again (a credential in it, by its shape, still goes).
    A call's argument of that name is a value, and goes."""
    schema = {
        "type": "object",
        "properties": {
            "password": {"type": "string", "description": "the vault's"},
            "api_key": {"type": "string", "default": "sk-abcdefghijklmnopqrstuvwxyz"},
            "token": "a string here, not a schema",
            "properties": {"type": "object", "properties": {"secret": {"type": "string"}}},
        },
        "required": ["password", "api_key"],
    }
    call = {"type": "tool_use", "id": "t1", "name": "unlock", "input": {"password": "hunter2"}}
    request = {
        "tools": [{"name": "unlock", "input_schema": schema}],
        "messages": [{"role": "assistant", "content": [call]}],
    }
    scrubbed = scrub(request)
    kept = scrubbed["tools"][0]["input_schema"]
    assert kept["properties"]["password"] == schema["properties"]["password"]
    assert kept["properties"]["api_key"] == {"type": "string"}
    assert "token" not in kept["properties"]
    assert kept["properties"]["properties"] == schema["properties"]["properties"]
    assert kept["required"] == ["password", "api_key"]
    assert scrubbed["messages"][0]["content"][0]["input"] == {}
    # Outside a schema's properties, an object under a credential's name goes whole.
    assert scrub({"credentials": {"user": "u", "type": "basic"}}) == {}


def test_a_thinking_block_given_back_keeps_its_signature() -> None:
    block = {
        "type": "thinking",
        "thinking": "Let me think about the token budget.",
        "signature": "EqQBCkgIARABGAIiQLkvS3N0cmVhbWVkIHNpZ25hdHVyZQ==",
    }
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
    reasoning = {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAABo" + "x" * 60}
    request = {
        "model": "claude",
        "max_tokens": 1024,
        "thinking": {"type": "enabled", "budget_tokens": 512},
        "messages": [{"role": "assistant", "content": [block, redacted]}],
        "input": [reasoning],
        "prompt_cache_key": "conversation-42",
        "include": ["reasoning.encrypted_content"],
    }
    assert scrub(request) == request


# -- on disk ----------------------------------------------------------------------------------

# Every secret below, as it would be written if it got through.
LEAKS = {
    "auth_token": "leak-auth-token-0001",
    "api_token": "leak-api-token-0002",
    "authToken": "leak-authtoken-0003",
    "secret_key": "leak-secret-key-0004",
    "aws_secret_access_key": "leak-aws-secret-0005",
    "private_key": "leak-private-key-0006",
    "token": "leak-token-0007",
    "hf_token": "leak-hf-token-0008",
    "set-cookie": "leak-set-cookie-0009",
    "x-api-key": "leak-x-api-key-0010",
    "password": "leak-password-0011",
}
SHAPED = ["Bearer leak-bearer-0012x", "sk-leak0013abcdefghijklmnop", "AKIALEAK0014EXAMPLE0"]
ASK = {
    "model": "m",
    "max_tokens": 16,
    "messages": [{"role": "user", "content": "hi"}, *SHAPED],
    **LEAKS,
    "tools": [{"type": "mcp", "server_url": "https://x", "headers": dict(LEAKS)}],
    "metadata": {"nested": [{"deeper": dict(LEAKS)}, SHAPED]},
}


def no_leak_in(folder: Path) -> None:
    for path in folder.rglob("*"):
        data = path.read_bytes()
        for secret in [*LEAKS.values(), *SHAPED]:
            assert secret.encode() not in data, (path, secret)


def test_capture_writes_no_secret_of_its_request(tmp_path: Path) -> None:
    stream = (FIXTURES / "chat-chunk/text.sse").read_bytes()
    with Running(Fixed(stream)) as upstream:
        out = tmp_path / "a.sse"
        result = run(
            ["capture", "--base-url", f"{upstream.url}/v1", "-d", orjson.dumps(ASK).decode()]
            + ["-o", str(out), "-q"]
        )
    assert_clean(result, {0})
    assert out.read_bytes() == stream
    written = orjson.loads((tmp_path / "a.sse.request.json").read_bytes())
    assert written == {
        "model": "m",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "mcp", "server_url": "https://x", "headers": {}}],
        "metadata": {"nested": [{"deeper": {}}, []]},
        "stream": True,
    }
    no_leak_in(tmp_path)


def test_an_interrupted_recording_writes_no_secret_either(tmp_path: Path) -> None:
    recording = Recording(tmp_path / "b.sse", ASK)
    recording.write(b"data: {")
    assert recording.close(whole=False) == tmp_path / "b.sse.part"
    assert orjson.loads((tmp_path / "b.sse.part.request.json").read_bytes())["model"] == "m"
    no_leak_in(tmp_path)
    assert orjson.loads(request_bytes(ASK)) == scrub(ASK)


def test_serve_still_matches_a_request_to_the_capture_recorded_for_it(tmp_path: Path) -> None:
    """Rule 2 of serve's matcher: the recorded request (scrubbed when written) equals the
    incoming one (scrubbed when compared), secrets and all; the model alone would pick
    the first capture."""
    asks: list[dict[str, Any]] = [
        {"model": "m", "messages": [{"role": "user", "content": word}], **LEAKS}
        for word in ("first", "second")
    ]
    for name, ask in zip(("a.sse", "b.sse"), asks, strict=True):
        shutil.copyfile(FIXTURES / "chat-chunk/text.sse", tmp_path / name)
        (tmp_path / f"{name}.request.json").write_bytes(request_bytes({**ask, "stream": True}))
    no_leak_in(tmp_path)
    chooser = Chooser(load([str(tmp_path)]))
    endpoint = by_name("chat")
    wanted = {**asks[1], "stream": True, "api_key": "another-key", "authorization": "Bearer x"}
    assert chooser.choose(None, wanted, endpoint).name.endswith("b.sse")
    assert chooser.choose(None, asks[0], endpoint).name.endswith("a.sse")

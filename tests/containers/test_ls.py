"""chatx ls: one line per exchange, the address every command takes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.containers import make_fixtures as made
from tests.containers.common import chatx, fixture, write


def test_ls_lists_every_exchange() -> None:
    out = chatx("ls", fixture("many.har"))
    assert out.code == 0, out.err
    name = fixture("many.har")
    lines = out.stdout.decode().splitlines()
    assert [line[: len(name) + 2] for line in lines] == [f"{name}#{i}" for i in range(5)]
    # The columns after the name (which may hold spaces: the checkout's path).
    rows = [line[len(name) + 2 :].split() for line in lines]
    assert rows[0][:7] == ["chat-chunk", "8", "records", "POST",
                           "https://api.example.test/v1/chat/completions", "200", "gpt-test-2026"]  # fmt: skip
    assert rows[1][:2] == ["responses-event", "11"]
    assert " ".join(rows[2][7:]) == "not streamed: a chat.completion object"
    assert rows[3][0:2] == ["-", "-"] and " ".join(rows[3][-5:]) == "- not a stream: text/html"


def test_ls_json_one_object_per_stream() -> None:
    out = chatx("ls", "--output", "json", fixture("one-stream.har"))
    assert out.code == 0
    first, second = (json.loads(line) for line in out.stdout.splitlines())
    assert first == {
        "address": fixture("one-stream.har") + "#0", "index": 0, "kind": "list", "format": None,
        "container": None, "records": None, "method": "POST",
        "url": "https://api.example.test/v1/embeddings", "status": 200,
        "content_type": "application/json", "model": None, "note": None,
    }  # fmt: skip
    assert (second["kind"], second["format"], second["container"], second["records"]) == (
        "stream", "chat-chunk", "sse", 8
    )  # fmt: skip
    assert second["model"] == "gpt-test-2026"


def test_ls_a_bare_stream_is_its_stream_0(tmp_path: Path) -> None:
    bare = write(tmp_path, "a.sse", made.CHAT)
    out = chatx("ls", bare)
    assert out.code == 0
    assert out.stdout.decode().split() == [f"{bare}#0", "chat-chunk", "8", "records", "-", "-",
                                           "gpt-test-2026"]  # fmt: skip
    assert chatx("ls", "-", stdin=made.CHAT).stdout.decode().split()[0] == "<stdin>#0"


def test_ls_one_address() -> None:
    out = chatx("ls", fixture("many.har") + "#1")
    assert out.code == 0
    name = fixture("many.har") + "#1"
    said = out.stdout.decode()
    assert said.startswith(name + " ") and said[len(name) :].split()[0] == "responses-event"


def test_ls_a_file_with_no_streams_exits_2() -> None:
    out = chatx("ls", fixture("no-streams.har"))
    assert out.code == 2
    assert len(out.stdout.splitlines()) == 2
    name = fixture("no-streams.har")
    assert out.err == (
        f"chatx: error: {name}: no streams in {name} (2 interactions, none streaming)\n"
    )


def test_ls_names_the_model_each_format_says_where_it_says_one() -> None:
    """A model is read where each format puts it: a chat chunk's ``model``, a Responses
    ``response.model``, an Anthropic ``message_start``'s ``message.model`` (ls said ``-``
    for Anthropic streams before), Gemini's ``modelVersion``. Llama Stack's events name
    none, so ls says ``-`` rather than invent one."""
    root = Path(__file__).resolve().parents[2] / "fixtures"
    expected = {
        "chat-chunk/litellm-thinking-blocks.sse": "claude-fixture-think",
        "responses-event/text.sse": "gpt-test-2026",
        "anthropic-event/text.sse": "claude-sonnet-4-5-20250929",
        "gemini-event/text.sse": "gemini-2.5-flash",
        "llama-stack-event/builtin-brave-search.jsonl": None,
    }
    for name, model in expected.items():
        out = chatx("ls", "--output", "json", str(root / name))
        assert out.code == 0, out.err
        assert json.loads(out.stdout.splitlines()[0])["model"] == model, name

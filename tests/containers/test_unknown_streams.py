"""Streams chatx has no codec for (the Assistants API's ``thread.run.*`` events, a
provider's own event stream) are listed as what they look like, never "none streaming",
and never make a file with other readable exchanges exit 2. The Assistants stream ends
with ``[DONE]``, which alone once made it a chat-chunk stream (7 CHK errors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.containers.common import chatx

RUN = {"id": "run_1", "object": "thread.run", "thread_id": "thread_1", "model": "gpt-4o"}
ASSISTANTS = "".join(
    f"event: {name}\ndata: {json.dumps(data)}\n\n"
    for name, data in [
        ("thread.run.created", {**RUN, "status": "queued"}),
        ("thread.message.delta", {"id": "msg_1", "object": "thread.message.delta", "delta": {
            "content": [{"index": 0, "type": "text", "text": {"value": "Hi"}}]}}),
        ("thread.run.completed", {**RUN, "status": "completed"}),
    ]
) + "event: done\ndata: [DONE]\n\n"  # fmt: skip
# A provider's own JSON lines (Cohere's first chat stream).
OWN = "".join(json.dumps(e) + "\n" for e in [
    {"is_finished": False, "event_type": "stream-start", "generation_id": "g1"},
    {"is_finished": False, "event_type": "text-generation", "text": "Hi"},
    {"is_finished": True, "event_type": "stream-end", "finish_reason": "COMPLETE"},
])  # fmt: skip
# Ollama's /api/chat stream: its records name themselves nowhere.
OLLAMA = "".join(json.dumps({"model": "llama3", "created_at": "2025-01-01T00:00:00Z",
                             "message": {"role": "assistant", "content": c}, "done": d}) + "\n"
                 for c, d in (("Hi", False), ("", True)))  # fmt: skip
CHAT = (
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
    '[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
    '[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def _har(path: Path, *bodies: tuple[str, str]) -> Path:
    entries = [
        {"request": {"method": "POST", "url": f"https://api.example.com{url}", "headers": []},
         "response": {"status": 200, "headers": [],
                      "content": {"mimeType": "text/event-stream", "text": body}}}
        for url, body in bodies
    ]  # fmt: skip
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return path


@pytest.mark.parametrize(
    ("body", "said"),
    [(ASSISTANTS, "event thread.run.created, thread.message.delta, thread.run.completed"),
     (OWN, "stream of an unknown format: type"),
     (OLLAMA, "stream of an unknown format: keys model, created_at, message, done")],
)  # fmt: skip
def test_a_bare_stream_is_said_as_what_it_looks_like(tmp_path: Path, body: str, said: str) -> None:
    path = tmp_path / "run.sse"
    path.write_text(body)
    listed = chatx("ls", str(path))
    assert listed.code == 2
    line = listed.stdout.decode()
    assert line.startswith(f"{path}#0  -  ") and "stream of an unknown format: " in line
    assert said in line
    assert "none streaming" not in listed.err and "no format chatx reads" in listed.err
    assert chatx("convert", str(path), "--to", "responses").code == 2


def test_beside_a_readable_stream_it_exits_0(tmp_path: Path) -> None:
    path = _har(tmp_path / "s.har", ("/v1/threads/thread_1/runs", ASSISTANTS),
                ("/v1/chat/completions", CHAT))  # fmt: skip
    listed = chatx("ls", str(path))
    assert listed.code == 0, listed.err
    rows = listed.stdout.decode().splitlines()
    assert "stream of an unknown format: event thread.run.created" in rows[0]
    assert rows[1].split()[:2] == [f"{path}#1", "chat-chunk"]
    checked = chatx("validate", str(path))
    assert (checked.code, checked.stdout.decode()) == (
        0,
        f"{path}#1: ok (chat-chunk, sse, 3 records)\n",
    )
    assert chatx("convert", str(path), "--to", "responses", "-q").code == 0
    assert chatx("collect", "-q", str(path)).code == 0
    out = tmp_path / "out"
    done = chatx("convert", str(path), "--to", "responses", "--out-dir", str(out), "-q")
    assert done.code == 0, done.err
    assert [p.name for p in out.iterdir()] == ["s.1.responses-event.sse"]
    named = chatx("convert", f"{path}#0", "--to", "chat")
    assert named.code == 2
    assert "a stream of an unknown format (event thread.run.created" in named.err


def test_alone_in_a_file_it_is_not_none_streaming(tmp_path: Path) -> None:
    path = _har(tmp_path / "s.har", ("/v1/threads/thread_1/runs", ASSISTANTS))
    for command in (["ls"], ["convert", "--to", "chat"], ["validate"]):
        done = chatx(*command, str(path))
        assert done.code == 2
        assert "(1 interaction, a stream of an unknown format)" in done.err, command
        assert "none streaming" not in done.err

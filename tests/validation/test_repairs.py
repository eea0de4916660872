"""Responses → Responses repairs that validate accepts (issue 15, item 4).

The source of truth is the Responses stream's own contract (the openai SDK types, the
Open Responses spec): every added item is closed before the terminal event, and the
terminal ``response.output`` is the items closed. Sources that break it (OpenAI's open
``mcp_list_tools`` items, OpenRouter's renamed reasoning item, a trimmed fixture) come
back repaired, and chatx says so.
"""

from __future__ import annotations

import json

from chatx.validation import validate_records
from tests.builders.chat_chunk import CHAT_ID, chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.streams import convert, jsonl, payloads, sse

R, CHAT = "responses-event", "chat-chunk"


def errors(data: bytes) -> list[str]:
    return [f.rule for f in validate_records(data, R) if f.severity == "E"]


def chat_errors(data: bytes) -> list[str]:
    return [f.rule for f in validate_records(data, CHAT) if f.severity == "E"]


def repaired(notes) -> list[str]:
    return [n.message for n in notes.items if n.kind == "repaired"]


def mcp_lists(builder: ResponsesBuilder, count: int, closed: set[int]) -> list[dict]:
    """``count`` mcp_list_tools items, added together; only those in ``closed`` get done."""
    items = []
    for n in range(count):
        item = {"id": f"mcpl_{n}", "type": "mcp_list_tools", "server_label": "wiki", "tools": []}
        builder.emit("response.output_item.added", output_index=n, item=item)
        items.append(item)
    for n in sorted(closed):
        builder.emit("response.output_item.done", output_index=n, item=items[n])
    builder.output.extend(items)
    return items


def test_an_item_never_closed_is_closed_before_the_terminal_event() -> None:
    b = ResponsesBuilder()
    mcp_lists(b, 3, closed={2})
    b.end(usage=responses_usage())
    source = sse(b.events, done=False, events=True)
    assert "RSP015" in errors(source)
    out, notes = convert(source, R, R)
    events = payloads(out)
    done = [e["output_index"] for e in events if e["type"] == "response.output_item.done"]
    assert done == [2, 0, 1] and events[-1]["type"] == "response.completed"
    assert errors(out) == []
    assert sum("never closed" in m for m in repaired(notes)) == 2


def test_a_terminal_output_that_differs_from_the_items_is_the_items() -> None:
    b = ResponsesBuilder().reasoning("Think.").message("Hi")
    b.end(usage=responses_usage())
    changed = json.loads(json.dumps(b.events))  # no dict shared between events
    # The message as the terminal object has it, still in progress (an OpenAI-compatible
    # server's); the stream closed it completed.
    changed[-1]["response"]["output"][1]["status"] = "in_progress"
    source = sse(changed, done=False, events=True)
    assert errors(source) == ["RSP026"]
    out, notes = convert(source, R, R)
    assert payloads(out)[-1]["response"]["output"] == b.output
    assert errors(out) == []
    assert any("response.output differs" in m for m in repaired(notes))


def test_a_sealed_field_is_not_a_difference() -> None:
    b = ResponsesBuilder().reasoning("Think.").message("Hi")
    b.end(usage=responses_usage())
    sealed = json.loads(json.dumps(b.events))
    sealed[-1]["response"]["output"][0]["encrypted_content"] = "gAAAA…"
    source = sse(sealed, done=False, events=True)
    out, notes = convert(source, R, R)
    assert payloads(out) == [{k: v for k, v in e.items()} for e in payloads(source)]
    assert repaired(notes) == []


def test_a_passed_through_item_keeps_its_events_and_gets_its_done() -> None:
    # A trimmed fixture: the only item sits at output_index 1, and its input streams in
    # deltas without custom_tool_call_input.done.
    b = ResponsesBuilder()
    item = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "c1", "name": "html", "input": ""}
    b.emit("response.output_item.added", output_index=1, item=item)
    for piece in ("<h1>", "Hi", "</h1>"):
        b.emit(
            "response.custom_tool_call_input.delta", item_id="ctc_1", output_index=1, delta=piece
        )
    final = {**item, "input": "<h1>Hi</h1>", "status": "completed"}
    b.emit("response.output_item.done", output_index=1, item=final)
    b.output.append(final)
    b.end()
    source = sse(b.events, done=False, events=True)
    out, notes = convert(source, R, R)
    events = payloads(out)
    assert {e.get("output_index") for e in events if "output_index" in e} == {0}
    done = [e for e in events if e["type"] == "response.custom_tool_call_input.done"]
    assert done == [
        {
            "type": "response.custom_tool_call_input.done",
            "item_id": "ctc_1",
            "output_index": 0,
            "input": "<h1>Hi</h1>",
            "sequence_number": done[0]["sequence_number"],
        }
    ]
    assert errors(out) == []
    assert any("custom_tool_call_input.done: added" in m for m in repaired(notes))


def test_ids_that_change_within_a_stream_are_written_as_they_came_first() -> None:
    # A proxy that renames every event (GitHub Copilot's): each event its own id.
    b = ResponsesBuilder().reasoning("Think.").message("Hi", " there")
    b.end(usage=responses_usage())
    renamed = json.loads(json.dumps(b.events))
    for number, event in enumerate(renamed):
        if "item_id" in event:
            event["item_id"] = f"id-{number}"
        for key in ("item", "response"):
            if isinstance(event.get(key), dict):
                event[key]["id"] = f"id-{number}"
    source = sse(renamed, done=False, events=True)
    assert {"RSP014", "RSP032"} <= set(errors(source))
    out, notes = convert(source, R, R)
    events = payloads(out)
    assert {e["response"]["id"] for e in events if "response" in e} == {"id-0"}
    added = next(
        e for e in events if e["type"] == "response.output_item.added" and e["output_index"] == 1
    )
    named = {e["item_id"] for e in events if e.get("output_index") == 1 and "item_id" in e}
    assert named == {added["item"]["id"]} and len(named) == 1
    assert errors(out) == []
    assert "ids change within the stream: the first ones are kept" in repaired(notes)


def _cut(done_text: str) -> bytes:
    """A message whose deltas say "Hello" and whose done events say ``done_text`` (a
    fixture whose author cut deltas out)."""
    b = ResponsesBuilder().message("Hel", "lo")
    b.end()
    events = json.loads(json.dumps(b.events))
    for event in events:
        if event["type"] == "response.output_text.done":
            event["text"] = done_text
        elif event["type"] == "response.content_part.done":
            event["part"]["text"] = done_text
        elif event["type"] == "response.output_item.done":
            event["item"]["content"][0]["text"] = done_text
        elif event["type"] == "response.completed":
            event["response"]["output"][0]["content"][0]["text"] = done_text
    return sse(events, done=False, events=True)


def test_a_done_text_that_goes_on_after_its_deltas_is_one_more_delta() -> None:
    source = _cut("Hello, world")
    assert "RSP023" in errors(source)
    out, notes = convert(source, R, R)
    deltas = [e["delta"] for e in payloads(out) if e["type"] == "response.output_text.delta"]
    assert deltas == ["Hel", "lo", ", world"]
    assert errors(out) == []
    assert any("the rest is one more delta" in m for m in repaired(notes))
    chat, _ = convert(source, "chat-chunk", R)
    said = [c["choices"][0]["delta"].get("content") for c in payloads(chat) if c["choices"]]
    assert "".join(s for s in said if s) == "Hello, world"


def test_a_done_text_that_differs_from_its_deltas_gives_way_to_them() -> None:
    source = _cut("Goodbye")
    out, notes = convert(source, R, R)
    texts = {
        e["type"]: e.get("text") or (e.get("part") or {}).get("text")
        for e in payloads(out)
        if e["type"] in ("response.output_text.done", "response.content_part.done")
    }
    assert texts == {"response.output_text.done": "Hello", "response.content_part.done": "Hello"}
    assert payloads(out)[-1]["response"]["output"][0]["content"][0]["text"] == "Hello"
    assert errors(out) == []
    assert any("the deltas are kept" in m for m in repaired(notes))


def test_an_envelope_without_status_and_an_item_never_added_are_mended() -> None:
    # vercel's programmatic-approval fixture: no status anywhere, a program item that is
    # only closed, at output_index 1 with no item 0.
    program = {"id": "cm_1", "type": "program", "call_id": "c0", "code": "text(1)"}
    source = jsonl(
        [
            {"type": "response.created", "response": {"id": "resp_T", "model": "gpt-test"}},
            {"type": "response.output_item.done", "output_index": 1, "item": program},
            {"type": "response.completed", "response": {"id": "resp_T", "model": "gpt-test"}},
        ]
    )
    assert {"RSP002", "RSP009", "RSP011"} <= set(errors(source))
    out, notes = convert(source, R, R)
    events = payloads(out)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e["response"]["status"] for e in events if "response" in e] == [
        "in_progress",
        "completed",
    ]
    assert {e["output_index"] for e in events if "output_index" in e} == {0}
    assert errors(out) == []
    assert any("with response.status None" in m for m in repaired(notes))


# -- chat → chat --------------------------------------------------------------------------


def test_a_chunk_of_another_id_or_object_is_written_as_the_streams() -> None:
    # Groq's compound models change the id; Perplexity names its last chunk .done.
    chunks = chat_text("Hi")
    chunks[1] = {**chunks[1], "id": "chatcmpl-other"}
    chunks[-1] = {**chunks[-1], "object": "chat.completion.done"}
    source = sse(chunks)
    assert {"CHK001", "CHK002"} <= set(chat_errors(source))
    out, notes = convert(source, CHAT, CHAT)
    assert {c["id"] for c in payloads(out)} == {CHAT_ID}
    assert {c["object"] for c in payloads(out)} == {"chat.completion.chunk"}
    assert chat_errors(out) == []
    assert len([m for m in repaired(notes) if "is not the stream's" in m]) == 2


def test_a_chunk_without_an_object_name_is_written_with_the_streams() -> None:
    # A chunk with no "object" and a field of its own made the encoder fail on the
    # missing key: the record was skipped as an internal error, its text lost.
    chunks = chat_text("Hi", "there")
    chunks[2] = {k: v for k, v in chunks[2].items() if k != "object"} | {"foo": 1}
    out, notes = convert(sse(chunks), CHAT, CHAT)
    written = payloads(out)
    assert [c.get("object") for c in written] == ["chat.completion.chunk"] * len(written)
    assert written[2]["foo"] == 1
    assert written[2]["choices"] == chunks[2]["choices"]
    assert chat_errors(out) == []
    assert any("object is not the stream's" in m for m in repaired(notes))


def test_a_later_entry_that_repeats_its_calls_id_and_name_says_them_once() -> None:
    # Novita behind OpenRouter repeats id, type and name on every entry of a call; the
    # openai SDK joins the strings of a call's entries ("0" + "0").
    first = {"index": 0, "id": "0", "type": "function", "function": {"name": "f", "arguments": ""}}
    again = {**first, "function": {"name": "f", "arguments": "{}"}}
    source = sse(
        [
            chunk({"role": "assistant", "tool_calls": [first]}),
            chunk({"tool_calls": [again]}),
            chunk({}, "tool_calls"),
        ]
    )
    assert "CHK007" in chat_errors(source)
    out, notes = convert(source, CHAT, CHAT)
    entry = payloads(out)[1]["choices"][0]["delta"]["tool_calls"][0]
    assert entry == {"index": 0, "type": "function", "function": {"arguments": "{}"}}
    assert chat_errors(out) == []
    assert any("repeats its call's id or name" in m for m in repaired(notes))

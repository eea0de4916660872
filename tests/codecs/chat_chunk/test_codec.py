"""The chat-chunk codec on small hand-made streams: what it reads, what it writes.

Each test builds its input inline (``tests.builders.chat_chunk.chunk`` and friends), converts it with
chatx and checks the output payloads against DESIGN §4.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.errors import UsageError
from tests.builders.chat_chunk import CHAT_ID, CREATED, MODEL, chat_text, chunk, usage_chunk
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.meaning import summarize
from tests.streams import CHAT, RESPONSES, convert, events, payloads, sse


def to_responses(chunks, **kw):
    out, notes = convert(sse(chunks), RESPONSES, CHAT, **kw)
    return payloads(out), notes


def of_type(events_, kind):
    return [e for e in events_ if e["type"] == kind]


def terminal(events_):
    last = events_[-1]
    assert last["type"] in ("response.completed", "response.incomplete", "response.failed")
    return last


def tool_call(index, *, id=None, name=None, arguments=None):
    entry = {"index": index}
    function = {}
    if id is not None:
        entry["id"] = id
        entry["type"] = "function"
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    entry["function"] = function
    return entry


# -- text ------------------------------------------------------------------------------


def test_text_becomes_one_message_with_the_same_deltas():
    out, _ = to_responses(chat_text("Hel", "lo", " wörld 🌍"))
    assert [e["type"] for e in out[:2]] == ["response.created", "response.in_progress"]
    assert [e["delta"] for e in of_type(out, "response.output_text.delta")] == [
        "Hel",
        "lo",
        " wörld 🌍",
    ]
    [done] = of_type(out, "response.output_text.done")
    assert done["text"] == "Hello wörld 🌍"
    [item] = [e["item"] for e in of_type(out, "response.output_item.done")]
    assert item["type"] == "message" and item["role"] == "assistant"
    assert item["content"][0]["text"] == "Hello wörld 🌍"
    assert terminal(out)["type"] == "response.completed"


def test_ids_and_timestamps_derive_from_the_input():
    out, _ = to_responses(chat_text("hi"))
    response = out[0]["response"]
    assert response["id"] == "resp_" + CHAT_ID.removeprefix("chatcmpl-")
    assert response["created_at"] == CREATED
    assert response["model"] == MODEL
    items = [e["item"]["id"] for e in of_type(out, "response.output_item.added")]
    assert items and all(CHAT_ID.removeprefix("chatcmpl-") in i for i in items)


def test_chat_to_chat_gives_back_the_same_json_values():
    chunks = chat_text("a", "b")
    chunks[0]["system_fingerprint"] = "fp_1"
    chunks[1]["choices"][0]["logprobs"] = None
    out, notes = convert(sse(chunks), CHAT, CHAT)
    assert payloads(out) == chunks
    assert out.endswith(b"data: [DONE]\n\n")
    assert not notes.items


def _openai_style(*pieces: str) -> list[dict]:
    """Text chunks as OpenAI writes them: the same envelope fields on every chunk, and a
    different obfuscation on each."""
    chunks = chat_text(*pieces)
    for number, payload in enumerate(chunks):
        payload["service_tier"] = "default"
        payload["system_fingerprint"] = "fp_1"
        payload["choices"] and payload["choices"][0].setdefault("logprobs", None)
        payload["obfuscation"] = "x" * (number + 1)
    return chunks


def test_a_repeated_envelope_is_residue_of_every_chunk_that_has_it():
    """The decoder recognises a repeated envelope without working its residue out again;
    a change in any of its fields, and only there, must still come through."""
    chunks = _openai_style("a", "b", "c", "d", "e", "f")
    chunks[3]["system_fingerprint"] = "fp_2"  # changed on one chunk
    del chunks[4]["service_tier"]  # missing from one chunk
    chunks[5]["model"] = "other-model"  # differs from the stream's model
    chunks[6]["x_meta"] = {"nested": [1]}  # nested residue on one chunk
    chunks[2]["obfuscation"] = None  # not a string: stays the chunk's own field
    out, notes = convert(sse(chunks), CHAT, CHAT)
    assert payloads(out) == chunks
    assert not notes.items
    _, notes = convert(sse(chunks), RESPONSES, CHAT)
    lost = notes.lost_fields
    assert lost["system_fingerprint"] == len(chunks)
    assert lost["service_tier"] == len(chunks) - 1
    assert lost["x_meta.nested"] == 1


def test_obfuscation_rides_on_the_delta_between_chat_and_responses():
    chunks = _openai_style("Hel", "lo")
    out, notes = to_responses(chunks)
    deltas = of_type(out, "response.output_text.delta")
    assert [d["obfuscation"] for d in deltas] == ["xx", "xxx"]
    # Chunks without a delta (role, finish, usage) have nowhere to put theirs.
    assert notes.lost_fields["obfuscation"] == 3
    back, notes = convert(sse(out, events=True), CHAT, RESPONSES)
    text_chunks = [
        c for c in payloads(back) if c["choices"] and c["choices"][0]["delta"].get("content")
    ]
    assert [c["obfuscation"] for c in text_chunks] == ["xx", "xxx"]
    assert "obfuscation" not in notes.lost_fields


def test_obfuscation_beside_one_reasoning_or_tool_delta_travels_too():
    chunks = [
        chunk({"role": "assistant", "reasoning_content": "think"}, obfuscation="r1"),
        chunk(
            {"tool_calls": [tool_call(0, id="call_1", name="f", arguments="{}")]}, obfuscation="t1"
        ),
        chunk({}, "tool_calls"),
    ]
    out, _ = to_responses(chunks)
    [reasoning] = [e for e in out if e["type"].startswith("response.reasoning") and "delta" in e]
    assert reasoning["obfuscation"] == "r1"
    assert of_type(out, "response.function_call_arguments.delta")[0]["obfuscation"] == "t1"
    same, notes = convert(sse(chunks), CHAT, CHAT)
    assert payloads(same) == chunks and not notes.items


def test_obfuscation_has_no_place_in_llama_stack():
    _, notes = convert(sse(_openai_style("a", "b")), "llama-stack-event", CHAT)
    assert notes.lost_fields["obfuscation"] == len(_openai_style("a", "b"))


def test_a_logprobs_field_beside_the_entries_is_kept_or_reported():
    """Text chunks whose logprobs carry a field of their own beside the entries (null or
    not): chat gives it back, other formats say it is lost, and no chunk shares it."""
    chunks = chat_text("a", "b", "c")
    for number, payload in enumerate(chunks[1:4]):
        entry = {
            "token": "abc"[number],
            "logprob": -0.5,
            "bytes": [97 + number],
            "top_logprobs": [],
        }
        payload["choices"][0]["logprobs"] = {"content": [entry], "refusal": None, "x": number}
    same, notes = convert(sse(chunks), CHAT, CHAT)
    assert payloads(same) == chunks and not notes.items
    _, notes = to_responses(chunks)
    assert notes.lost_fields["logprobs.x"] == 3


def test_a_logprobs_object_without_entries_after_plain_chunks_is_kept():
    """A text chunk whose logprobs hold no entries but something else (``"content":
    null``, a field of its own) after chunks with ``"logprobs": null``: the shared
    residue of those null chunks is not its residue."""
    chunks = chat_text("a", "b", "c", "d")
    chunks[3]["choices"][0]["logprobs"] = {"content": None}
    chunks[4]["choices"][0]["logprobs"] = {"content": [], "x": 1}
    same, notes = convert(sse(chunks), CHAT, CHAT)
    assert payloads(same) == chunks and not notes.items
    _, notes = to_responses(chunks)
    assert notes.lost_fields["logprobs.x"] == 1


# -- reasoning -------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_becomes_a_reasoning_item_before_the_message(field):
    chunks = [
        chunk({"role": "assistant", field: ""}),
        chunk({field: "Let me "}),
        chunk({field: "think."}),
        chunk({"content": "42"}),
        chunk({}, "stop"),
    ]
    out, _ = to_responses(chunks)
    added = [e["item"]["type"] for e in of_type(out, "response.output_item.added")]
    assert added == ["reasoning", "message"]
    deltas = of_type(out, "response.reasoning_summary_text.delta")
    assert [d["delta"] for d in deltas] == ["Let me ", "think."]
    assert not of_type(out, "response.reasoning_text.delta")
    reasoning = of_type(out, "response.output_item.done")[0]["item"]
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Let me think."}]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_chat_output_keeps_the_sources_reasoning_field(field):
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk({field: "hmm"}),
        chunk({"content": "ok"}),
        chunk({}, "stop"),
    ]
    out, _ = convert(sse(chunks), CHAT, CHAT)
    deltas = [c["choices"][0]["delta"] for c in payloads(out)]
    assert {"hmm"} == {d[field] for d in deltas if field in d}
    other = {"reasoning", "reasoning_content"} - {field}
    assert not any(other & d.keys() for d in deltas)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_field_option_names_the_chat_field(field):
    source = "reasoning" if field == "reasoning_content" else "reasoning_content"
    chunks = [chunk({"role": "assistant"}), chunk({source: "hmm"}), chunk({}, "stop")]
    out, _ = convert(sse(chunks), CHAT, CHAT, options=EncodeOptions(reasoning_field=field))
    deltas = [c["choices"][0]["delta"] for c in payloads(out)]
    assert [d[field] for d in deltas if field in d] == ["hmm"]
    assert not any(source in d for d in deltas)
    # From Responses, which has no field name of its own, too.
    rs = ResponsesBuilder().reasoning("a", "b").message("x").end()
    out, _ = convert(rs.bytes(), CHAT, RESPONSES, options=EncodeOptions(reasoning_field=field))
    deltas = [c["choices"][0]["delta"] for c in payloads(out) if c["choices"]]
    assert [d[field] for d in deltas if field in d] == ["a", "b"]


def test_reasoning_text_option_writes_the_raw_family():
    chunks = [
        chunk({"role": "assistant"}),
        chunk({"reasoning_content": "raw"}),
        chunk({"content": "x"}),
        chunk({}, "stop"),
    ]
    out, _ = to_responses(chunks, options=EncodeOptions(reasoning="text"))
    assert [d["delta"] for d in of_type(out, "response.reasoning_text.delta")] == ["raw"]
    assert not of_type(out, "response.reasoning_summary_text.delta")
    item = of_type(out, "response.output_item.done")[0]["item"]
    assert item["content"] == [{"type": "reasoning_text", "text": "raw"}]


# -- refusal ---------------------------------------------------------------------------


def test_refusal_becomes_a_refusal_part_and_back():
    chunks = [
        chunk({"role": "assistant", "content": None, "refusal": ""}),
        chunk({"refusal": "I can't "}),
        chunk({"refusal": "help."}),
        chunk({}, "stop"),
    ]
    out, _ = to_responses(chunks)
    assert [d["delta"] for d in of_type(out, "response.refusal.delta")] == ["I can't ", "help."]
    [part] = of_type(out, "response.content_part.added")
    assert part["part"]["type"] == "refusal"
    [done] = of_type(out, "response.refusal.done")
    assert done["refusal"] == "I can't help."
    item = of_type(out, "response.output_item.done")[0]["item"]
    assert item["content"] == [{"type": "refusal", "refusal": "I can't help."}]
    assert not of_type(out, "response.output_text.delta")

    back, _ = convert(sse(out, done=False), CHAT, RESPONSES)
    refusals = [c["choices"][0]["delta"].get("refusal") for c in payloads(back) if c["choices"]]
    assert [r for r in refusals if r] == ["I can't ", "help."]


# -- tool calls ------------------------------------------------------------------------


PARALLEL = [
    chunk({"role": "assistant", "content": None}),
    chunk({"tool_calls": [tool_call(0, id="call_a", name="get_weather", arguments="")]}),
    chunk({"tool_calls": [tool_call(0, arguments='{"city": ')]}),
    chunk({"tool_calls": [tool_call(0, arguments='"Paris"}')]}),
    chunk({"tool_calls": [tool_call(1, id="call_b", name="get_time", arguments="")]}),
    chunk({"tool_calls": [tool_call(1, arguments='{"tz": "CET"}')]}),
    chunk({}, "tool_calls"),
    usage_chunk(),
]


def test_parallel_tool_calls_become_function_call_items():
    out, _ = to_responses(PARALLEL)
    items = [e["item"] for e in of_type(out, "response.output_item.done")]
    assert [(i["type"], i["name"], i["call_id"], json.loads(i["arguments"])) for i in items] == [
        ("function_call", "get_weather", "call_a", {"city": "Paris"}),
        ("function_call", "get_time", "call_b", {"tz": "CET"}),
    ]
    added = [e["item"] for e in of_type(out, "response.output_item.added")]
    assert [(a["name"], a["call_id"], a["arguments"]) for a in added] == [
        ("get_weather", "call_a", ""),
        ("get_time", "call_b", ""),
    ]
    by_item: dict[str, list[str]] = {}
    for delta in of_type(out, "response.function_call_arguments.delta"):
        by_item.setdefault(delta["item_id"], []).append(delta["delta"])
    assert list(by_item.values()) == [['{"city": ', '"Paris"}'], ['{"tz": "CET"}']]
    dones = of_type(out, "response.function_call_arguments.done")
    assert [d["arguments"] for d in dones] == ['{"city": "Paris"}', '{"tz": "CET"}']
    assert terminal(out)["type"] == "response.completed"


def test_tool_calls_back_to_chat_index_by_order_with_id_and_name_first():
    out, _ = to_responses(PARALLEL)
    back, _ = convert(sse(out, done=False), CHAT, RESPONSES)
    entries = [
        tc
        for c in payloads(back)
        if c["choices"]
        for tc in c["choices"][0]["delta"].get("tool_calls") or ()
    ]
    firsts = {}
    for entry in entries:
        firsts.setdefault(entry["index"], entry)
    assert sorted(firsts) == [0, 1]
    assert [(f["id"], f["type"], f["function"]["name"]) for f in firsts.values()] == [
        ("call_a", "function", "get_weather"),
        ("call_b", "function", "get_time"),
    ]
    args = {
        i: "".join(e["function"].get("arguments", "") for e in entries if e["index"] == i)
        for i in (0, 1)
    }
    assert args == {0: '{"city": "Paris"}', 1: '{"tz": "CET"}'}
    later = [e for e in entries if e is not firsts[e["index"]]]
    assert all("id" not in e and "name" not in e.get("function", {}) for e in later)


def test_tool_call_whole_in_one_chunk():
    # Groq and Ollama send a call with its id, name and all its arguments at once.
    chunks = [
        chunk({"role": "assistant"}),
        chunk(
            {"tool_calls": [tool_call(0, id="call_0", name="add", arguments='{"a": 1, "b": 2}')]}
        ),
        chunk({}, "tool_calls"),
    ]
    out, _ = to_responses(chunks)
    [item] = [e["item"] for e in of_type(out, "response.output_item.done")]
    assert (item["name"], item["call_id"], item["arguments"]) == (
        "add",
        "call_0",
        '{"a": 1, "b": 2}',
    )
    deltas = of_type(out, "response.function_call_arguments.delta")
    assert "".join(d["delta"] for d in deltas) == '{"a": 1, "b": 2}'


def test_parallel_calls_whole_in_one_chunk():
    chunks = [
        chunk(
            {
                "role": "assistant",
                "tool_calls": [
                    tool_call(0, id="c0", name="f", arguments="{}"),
                    tool_call(1, id="c1", name="g", arguments='{"x": 1}'),
                ],
            }
        ),
        chunk({}, "tool_calls"),
    ]
    out, _ = to_responses(chunks)
    items = [e["item"] for e in of_type(out, "response.output_item.done")]
    assert [(i["name"], i["call_id"], i["arguments"]) for i in items] == [
        ("f", "c0", "{}"),
        ("g", "c1", '{"x": 1}'),
    ]


# -- logprobs --------------------------------------------------------------------------


def _lp(token, logprob):
    return {
        "token": token,
        "logprob": logprob,
        "bytes": list(token.encode()),
        "top_logprobs": [{"token": token, "logprob": logprob, "bytes": list(token.encode())}],
    }


def test_logprobs_travel_with_their_text():
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hi"}, logprobs=None),
        chunk({"content": " there"}),
    ]
    chunks[1]["choices"][0]["logprobs"] = {"content": [_lp("Hi", -0.1)], "refusal": None}
    chunks[2]["choices"][0]["logprobs"] = {"content": [_lp(" there", -0.2)], "refusal": None}
    chunks.append(chunk({}, "stop"))
    out, _ = to_responses(chunks)
    deltas = of_type(out, "response.output_text.delta")
    assert [
        [(lp["token"], lp["logprob"], lp["bytes"]) for lp in d["logprobs"]] for d in deltas
    ] == [[("Hi", -0.1, [72, 105])], [(" there", -0.2, list(b" there"))]]
    assert deltas[0]["logprobs"][0]["top_logprobs"][0]["token"] == "Hi"
    [done] = of_type(out, "response.output_text.done")
    assert [lp["token"] for lp in done["logprobs"]] == ["Hi", " there"]

    back, _ = convert(sse(out, done=False), CHAT, RESPONSES)
    got = [
        lp["token"]
        for c in payloads(back)
        if c["choices"]
        for lp in ((c["choices"][0].get("logprobs") or {}).get("content") or ())
    ]
    assert got == ["Hi", " there"]


# -- usage -----------------------------------------------------------------------------


def test_usage_with_cached_and_reasoning_tokens():
    chunks = chat_text("x", usage=False) + [usage_chunk(100, 40, 140, cached=64, reasoning=25)]
    out, _ = to_responses(chunks)
    usage = terminal(out)["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (100, 40, 140)
    assert usage["input_tokens_details"]["cached_tokens"] == 64
    assert usage["output_tokens_details"]["reasoning_tokens"] == 25

    back, _ = convert(sse(out, done=False), CHAT, RESPONSES)
    [usage] = [c["usage"] for c in payloads(back) if c.get("usage")]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (
        100,
        40,
        140,
    )
    assert usage["prompt_tokens_details"]["cached_tokens"] == 64
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 25


def test_no_usage_in_no_usage_out():
    out, _ = to_responses(chat_text("x", usage=False))
    assert terminal(out)["response"]["usage"] is None


# -- finish reasons --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "event", "details"),
    [
        ("stop", "response.completed", None),
        ("tool_calls", "response.completed", None),
        ("length", "response.incomplete", {"reason": "max_output_tokens"}),
        ("content_filter", "response.incomplete", {"reason": "content_filter"}),
    ],
)
def test_finish_reason_to_terminal_event(reason, event, details):
    chunks = [chunk({"role": "assistant", "content": "x"})]
    if reason == "tool_calls":
        chunks.append(chunk({"tool_calls": [tool_call(0, id="c", name="f", arguments="{}")]}))
    chunks.append(chunk({}, reason))
    out, _ = to_responses(chunks)
    end = terminal(out)
    assert end["type"] == event
    assert end["response"]["status"] == event.rsplit(".", 1)[1]
    assert end["response"]["incomplete_details"] == details
    assert (
        sum(
            e["type"].startswith("response.")
            and e["type"].rsplit(".", 1)[1] in ("completed", "incomplete", "failed")
            and "response" in e
            for e in out
        )
        == 1
    )


@pytest.mark.parametrize(
    ("status", "reason", "chat_reason"),
    [
        ("completed", None, "stop"),
        ("incomplete", "max_output_tokens", "length"),
        ("incomplete", "content_filter", "content_filter"),
    ],
)
def test_terminal_event_to_finish_reason(status, reason, chat_reason):
    rs = ResponsesBuilder().message("x").end(status, reason=reason)
    out, _ = convert(rs.bytes(), CHAT, RESPONSES)
    reasons = [
        c["choices"][0]["finish_reason"]
        for c in payloads(out)
        if c["choices"] and c["choices"][0].get("finish_reason")
    ]
    assert reasons == [chat_reason]


def test_function_call_finishes_with_tool_calls():
    rs = ResponsesBuilder().call("f", "call_9", "{}").end()
    out, _ = convert(rs.bytes(), CHAT, RESPONSES)
    reasons = [
        c["choices"][0]["finish_reason"]
        for c in payloads(out)
        if c["choices"] and c["choices"][0].get("finish_reason")
    ]
    assert reasons == ["tool_calls"]


@pytest.mark.parametrize("reason", ["stop", "length", "tool_calls", "content_filter"])
def test_finish_reason_round_trip(reason):
    chunks = [chunk({"role": "assistant", "content": "x"})]
    if reason == "tool_calls":
        chunks.append(chunk({"tool_calls": [tool_call(0, id="c", name="f", arguments="{}")]}))
    chunks.append(chunk({}, reason))
    mid, _ = convert(sse(chunks), RESPONSES, CHAT)
    back, _ = convert(mid, CHAT, RESPONSES)
    assert summarize(back, CHAT) == summarize(sse(chunks), CHAT)
    assert summarize(back, CHAT)[0]["lanes"][0]["finish"] == reason


# -- errors ----------------------------------------------------------------------------


def test_error_frame_becomes_error_event_and_failed():
    chunks = [
        chunk({"role": "assistant", "content": "par"}),
        {"error": {"message": "upstream died", "type": "server_error", "code": "boom"}},
    ]
    out, _ = to_responses(chunks)
    [error] = of_type(out, "error")
    assert error["message"] == "upstream died"
    assert error["code"] == "boom"
    end = terminal(out)
    assert end["type"] == "response.failed"
    assert end["response"]["status"] == "failed"
    assert end["response"]["error"]["message"] == "upstream died"
    assert out.index(error) < out.index(end)
    # The text before the error is kept, its item closed.
    assert [e["delta"] for e in of_type(out, "response.output_text.delta")] == ["par"]
    assert end["response"]["output"][0]["content"][0]["text"] == "par"


def test_error_event_and_failed_back_to_an_error_frame():
    rs = ResponsesBuilder().message("par").error("rate limited", "rate_limit_exceeded")
    out, _ = convert(rs.bytes(), CHAT, RESPONSES)
    frames = [p for p in payloads(out) if "error" in p]
    assert len(frames) == 1
    assert frames[0]["error"]["message"] == "rate limited"
    assert frames[0]["error"]["code"] == "rate_limit_exceeded"
    assert summarize(out, CHAT)[0]["lanes"][0]["text"] == "par"


@pytest.mark.parametrize("source", ["responses", "chat"])
def test_error_round_trip_ends_failed(source):
    if source == "responses":
        rs = ResponsesBuilder().message("par").error("boom")
        data, fmt = rs.bytes(), RESPONSES
    else:
        data = sse(
            [
                chunk({"role": "assistant", "content": "par"}),
                {"error": {"message": "boom", "type": "server_error", "code": None}},
            ],
            done=False,
        )
        fmt = CHAT
    other = CHAT if fmt == RESPONSES else RESPONSES
    middle, _ = convert(data, other, fmt)
    back, _ = convert(middle, fmt, other)
    responses = back if fmt == RESPONSES else middle
    out = payloads(responses)
    assert [e["type"] for e in out if e["type"] in ("error", "response.failed")] == [
        "error",
        "response.failed",
    ]
    assert summarize(back, fmt) == summarize(data, fmt)


def test_openrouter_error_inside_a_chunk():
    chunks = [
        chunk({"role": "assistant", "content": "abc"}),
        chunk({}, "length"),
        chunk({"content": ""}, None, error={"code": 400, "message": "Token limit reached"}),
    ]
    out, notes = to_responses(chunks)
    [error] = of_type(out, "error")
    assert error["message"] == "Token limit reached"
    assert terminal(out)["type"] == "response.failed"
    assert terminal(out)["response"]["error"]["message"] == "Token limit reached"


def test_groq_event_error_block():
    body = sse([chunk({"role": "assistant", "content": ""}), chunk({"content": "x"})], done=False)
    body += (
        b'event: error\ndata: {"error":{"message":"Failed to call a function",'
        b'"type":"invalid_request_error","code":"tool_use_failed",'
        b'"failed_generation":"<tool>"}}\n\n'
    )
    out, _ = convert(body, RESPONSES, CHAT)
    out = payloads(out)
    [error] = of_type(out, "error")
    assert error["message"] == "Failed to call a function"
    assert error["code"] == "tool_use_failed"
    assert terminal(out)["type"] == "response.failed"
    kinds = [type(e) for e in events(body, CHAT)]
    assert ir.Error in kinds


# -- Azure, several choices ------------------------------------------------------------


def test_azure_empty_first_chunk_is_not_the_stream_id():
    azure = {
        "id": "",
        "object": "",
        "created": 0,
        "model": "",
        "choices": [],
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
    }
    chunks = [azure] + chat_text("hi")
    out, _ = to_responses(chunks)
    response = out[0]["response"]
    assert response["id"] == "resp_" + CHAT_ID.removeprefix("chatcmpl-")
    assert response["created_at"] == CREATED
    assert response["model"] == MODEL
    assert summarize(sse(chunks), CHAT)[0]["lanes"][0]["text"] == "hi"
    back, _ = convert(sse(chunks), CHAT, CHAT)
    assert payloads(back) == chunks


def _two_choices():
    return [
        chunk(
            choices=[
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ]
        ),
        chunk(
            choices=[
                {"index": 1, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ]
        ),
        chunk({"content": "zero"}, index=0),
        chunk({"content": "one"}, index=1),
        chunk({}, "stop", index=0),
        chunk({}, "length", index=1),
        usage_chunk(),
    ]


def test_several_choices_to_responses_without_choice_is_an_error():
    with pytest.raises(UsageError, match="choice"):
        convert(sse(_two_choices()), RESPONSES, CHAT)


@pytest.mark.parametrize(
    ("choice", "text", "event"),
    [(0, "zero", "response.completed"), (1, "one", "response.incomplete")],
)
def test_choice_keeps_one_choice(choice, text, event):
    out, _ = to_responses(_two_choices(), choice=choice)
    assert "".join(d["delta"] for d in of_type(out, "response.output_text.delta")) == text
    assert terminal(out)["type"] == event
    assert len(of_type(out, "response.output_item.added")) == 1


def test_several_choices_chat_to_chat_keeps_them_all():
    out, _ = convert(sse(_two_choices()), CHAT, CHAT)
    assert payloads(out) == _two_choices()


# -- determinism -----------------------------------------------------------------------


@pytest.mark.parametrize("dst", [RESPONSES, CHAT])
def test_same_input_same_bytes(dst):
    data = sse(PARALLEL)
    first, _ = convert(data, dst, CHAT)
    second, _ = convert(data, dst, CHAT)
    assert first == second


# -- chat output rules (from a Responses source) ---------------------------------------


def _chat_from_responses():
    rs = (
        ResponsesBuilder()
        .reasoning("think")
        .message("Hel", "lo")
        .call("f", "call_1", '{"a"', ": 1}")
        .call("g", "call_2", "{}")
        .end(usage=responses_usage(20, 10, 30, cached=5, reasoning=3))
    )
    out, _ = convert(rs.bytes(), CHAT, RESPONSES)
    return out


def test_chat_output_role_first_and_one_id():
    out = _chat_from_responses()
    chunks = payloads(out)
    assert chunks[0]["choices"][0]["delta"].get("role") == "assistant"
    roles = [c for c in chunks if c["choices"] and "role" in c["choices"][0]["delta"]]
    assert roles == [chunks[0]]
    assert {c["id"] for c in chunks} == {"chatcmpl-T3st"}
    assert {c["created"] for c in chunks} == {CREATED}
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}


def test_chat_output_tool_calls_first_delta_names_the_call():
    chunks = payloads(_chat_from_responses())
    entries = [
        tc
        for c in chunks
        if c["choices"]
        for tc in c["choices"][0]["delta"].get("tool_calls") or ()
    ]
    seen = set()
    for entry in entries:
        if entry["index"] not in seen:
            seen.add(entry["index"])
            assert entry["id"] and entry["type"] == "function" and entry["function"]["name"]
    assert seen == {0, 1}


def test_chat_output_exactly_one_finish_reason():
    chunks = payloads(_chat_from_responses())
    reasons = [c["choices"][0].get("finish_reason") for c in chunks if c["choices"]]
    assert [r for r in reasons if r] == ["tool_calls"]


def test_chat_output_usage_is_a_last_chunk_without_choices():
    chunks = payloads(_chat_from_responses())
    with_usage = [c for c in chunks if c.get("usage")]
    assert with_usage == [chunks[-1]]
    assert chunks[-1]["choices"] == []
    usage = chunks[-1]["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (
        20,
        10,
        30,
    )


def test_chat_output_done_last():
    out = _chat_from_responses()
    assert out.endswith(b"data: [DONE]\n\n")
    assert out.count(b"[DONE]") == 1
    assert all(line.startswith(b"data: ") for line in out.split(b"\n") if line)


# -- delta boundaries --------------------------------------------------------------------


def _pieces(chunks, key):
    out = []
    for c in chunks:
        for choice in c.get("choices") or ():
            delta = choice.get("delta") or {}
            if key == "arguments":
                out += [
                    (tc.get("index"), tc["function"]["arguments"])
                    for tc in delta.get("tool_calls") or ()
                    if (tc.get("function") or {}).get("arguments")
                ]
            elif delta.get(key):
                out.append(delta[key])
    return out


@pytest.mark.parametrize("key", ["content", "reasoning_content", "refusal", "arguments"])
def test_round_trip_keeps_delta_boundaries(key):
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "a"}),
        chunk({"reasoning_content": "bc"}),
        chunk({"content": "Hel"}),
        chunk({"content": "lo, "}),
        chunk({"content": "wörld"}),
        chunk({"refusal": "no"}),
        chunk({"refusal": "pe"}),
        chunk({"tool_calls": [tool_call(0, id="c0", name="f", arguments='{"a"')]}),
        chunk({"tool_calls": [tool_call(0, arguments=": 1")]}),
        chunk({"tool_calls": [tool_call(0, arguments="}")]}),
        chunk({}, "tool_calls"),
    ]
    middle, _ = convert(sse(chunks), RESPONSES, CHAT)
    back, _ = convert(middle, CHAT, RESPONSES)
    assert _pieces(payloads(back), key) == _pieces(chunks, key)


# -- many fragments of a call in one chunk ---------------------------------------------------


def _plain_scan(batch, own):
    """What the chunk's tool_calls are by the rule itself: a fragment joins the first
    entry of its call with no arguments yet, else it is an entry of its own."""
    calls = []
    for event in batch:
        if isinstance(event, ir.ItemStart):
            entry = {"index": event.call, "id": event.call_id, "type": "function"}
            entry["function"] = {"name": event.name or ""}
            if not own:
                entry["function"]["arguments"] = ""
            calls.append(entry)
            continue
        for entry in calls:
            function = entry.get("function")
            if entry["index"] == event.call and not (function or {}).get("arguments"):
                entry.setdefault("function", {})["arguments"] = event.fragment
                break
        else:
            entry = {"index": event.call}
            if event.fragment or not own:
                entry["function"] = {"arguments": event.fragment}
            calls.append(entry)
    return calls


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.booleans(), st.integers(0, 2), st.sampled_from(["", "a", "{}"])),
        min_size=1,
        max_size=40,
    ),
    own=st.booleans(),
)
def test_fragments_in_one_chunk_join_as_a_scan_from_the_start_joins_them(steps, own):
    from chatx.codecs import get
    from chatx.notes import Notes

    batch = [
        ir.ItemStart(0, "tool_call", call=call, call_id=f"c{call}", name="f")
        if start
        else ir.ToolArgsDelta(0, call, fragment)
        for start, call, fragment in steps
    ]
    source = CHAT if own else RESPONSES
    encoder = get(CHAT).encoder(Notes(), EncodeOptions(source_format=source))
    encoder.feed([ir.StreamStart("resp_1", "m", 1), ir.LaneStart(0)])
    for _ in range(2):  # a second chunk starts its own search
        (out,) = encoder.feed(batch)
        assert out["choices"][0]["delta"]["tool_calls"] == _plain_scan(batch, own)

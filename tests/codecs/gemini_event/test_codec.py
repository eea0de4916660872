"""The gemini-event codec, shape by shape: what each quirk decodes to, what other
formats' events encode to, the checker's rules, collect and show."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.gemini_event.decode import GeminiDecoder
from chatx.codecs.gemini_event.encode import GeminiEncoder
from chatx.notes import Notes
from chatx.record import Record
from chatx.validation import validate_records
from tests.meaning import summarize
from tests.paths import ROOT
from tests.streams import convert, records

GEMINI = "gemini-event"
FIXTURES = ROOT / "fixtures" / GEMINI


def sse(*chunks: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


def chunk(parts: list[Any] | None, finish: Any = None, usage: Any = None, **top: Any) -> dict:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if parts is None:
        candidate = {"index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "responseId": "r1", **top}
    if usage is not None:
        out["usageMetadata"] = usage
    return out


def events(*chunks: Any) -> list[ir.Event]:
    decoder = GeminiDecoder(Notes())
    out = [e for n, c in enumerate(chunks, 1) for e in decoder.feed(Record(c, line=n))]
    return out + decoder.finish()


def of(kind: type, evs: list[ir.Event]) -> list[Any]:
    return [e for e in evs if type(e) is kind]


# -- decoding the quirks ------------------------------------------------------------


def test_cumulative_usage_on_every_chunk_is_one_usage_the_last() -> None:
    evs = events(
        chunk([{"text": "a"}], usage={"promptTokenCount": 5, "totalTokenCount": 5}),
        chunk(
            [{"text": "b"}],
            "STOP",
            {
                "promptTokenCount": 4,
                "candidatesTokenCount": 2,
                "thoughtsTokenCount": 3,
                "totalTokenCount": 9,
            },
        ),
    )
    (usage,) = of(ir.Usage, evs)
    assert (usage.input, usage.output, usage.total, usage.reasoning) == (4, 5, 9, 3)


def test_stop_on_every_chunk_is_one_finish_and_a_mid_stream_stop_is_not_the_end() -> None:
    evs = events(chunk([{"text": "a"}], "STOP"), chunk([{"text": "b"}], "STOP"))
    assert [(f.reason, f.raw) for f in of(ir.Finish, evs)] == [("stop", "STOP")]
    evs = events(chunk([{"text": "a"}], "STOP"), chunk([{"text": "b"}]))
    assert of(ir.Finish, evs) == [] and of(ir.StreamEnd, evs) == []


def test_a_tool_turn_ending_in_stop_is_tool_calls_and_ids_are_derived() -> None:
    call = {"functionCall": {"name": "f", "args": {"x": 1}}}
    evs = events(chunk([call, {"functionCall": {"name": "g", "args": {}}}], "STOP"))
    assert [(f.reason, f.raw) for f in of(ir.Finish, evs)] == [("tool_calls", "STOP")]
    starts = [e for e in of(ir.ItemStart, evs) if e.kind == "tool_call"]
    assert [s.call_id for s in starts] == ["call_r1_0_0", "call_r1_0_1"]
    assert [d.fragment for d in of(ir.ToolArgsDelta, evs)] == ['{"x":1}', "{}"]
    again = events(chunk([call, {"functionCall": {"name": "g", "args": {}}}], "STOP"))
    assert [e.call_id for e in of(ir.ItemStart, again)] == [
        e.call_id for e in of(ir.ItemStart, evs)
    ]


def test_a_signature_closes_reasoning_where_it_sits() -> None:
    on_call = events(
        chunk([{"text": "hm", "thought": True}]),
        chunk([{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "U0lH"}], "STOP"),
    )
    ends = [e for e in of(ir.ItemEnd, on_call) if e.kind == "reasoning"]
    assert [e.signature for e in ends] == ["U0lH"]
    alone = events(
        chunk([{"text": "Hi"}]), chunk([{"text": "", "thoughtSignature": "U0lH"}], "STOP")
    )
    assert [e.signature for e in of(ir.ItemEnd, alone) if e.kind == "reasoning"] == ["U0lH"]
    assert "".join(e.text for e in of(ir.TextDelta, alone)) == "Hi"


def test_streamed_arguments_become_one_whole_call() -> None:
    path = FIXTURES / "vertex-streamed-args.jsonl"
    stream = summarize(path.read_bytes(), GEMINI)[0]
    (call,) = stream["lanes"][0]["calls"]
    assert call[0] == "book_table"
    assert json.loads(call[2][1]) == {"place": "Chez Lune", "guests": [4]}


def test_int_enums_json_array_error_body_and_blocked_prompt() -> None:
    array = summarize((FIXTURES / "json-array-enum-int.json").read_bytes(), GEMINI)[0]
    assert array["lanes"][0]["finish"] == "stop" and array["usage"] == (4, 6, 10)
    error = summarize((FIXTURES / "error-body.json").read_bytes(), GEMINI)[0]
    assert error["errors"] == ["models/gemini-none is not found for API version v1beta."]
    blocked = summarize((FIXTURES / "prompt-blocked.sse").read_bytes(), GEMINI)[0]
    assert blocked["lanes"][0]["finish"] == "content_filter"


# -- encoding other formats' events -------------------------------------------------


def encode(batches: list[list[ir.Event]], notes: Notes | None = None) -> list[Any]:
    encoder = GeminiEncoder(
        notes if notes is not None else Notes(), EncodeOptions(source_format="chat-chunk")
    )
    return [p for b in batches for p in encoder.feed(b)] + encoder.finish()


def test_calls_are_written_whole_and_usage_rides_on_the_finishing_chunk() -> None:
    out = encode(
        [
            [ir.StreamStart("c1", "m"), ir.LaneStart(0)],
            [ir.ItemStart(0, "tool_call", call=0, call_id="k", name="f")],
            [ir.ToolArgsDelta(0, 0, '{"a"')],
            [ir.ToolArgsDelta(0, 0, ": [1]}")],
            [ir.ItemEnd(0, "tool_call", call=0), ir.Finish(0, "tool_calls")],
            [ir.Usage(3, 4, 7)],
            [ir.StreamEnd()],
        ]
    )
    assert out == [
        {
            "candidates": [
                {
                    "content": {
                        "parts": [{"functionCall": {"name": "f", "args": {"a": [1]}, "id": "k"}}],
                        "role": "model",
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "modelVersion": "m",
            "responseId": "c1",
            "usageMetadata": {
                "promptTokenCount": 3,
                "candidatesTokenCount": 4,
                "totalTokenCount": 7,
            },
        }
    ]


def test_arguments_that_are_not_an_object_are_said_not_invented() -> None:
    notes = Notes()
    out = encode(
        [
            [ir.StreamStart("c1", "m"), ir.LaneStart(0)],
            [
                ir.ItemStart(0, "tool_call", call=0, call_id="k", name="f"),
                ir.ToolArgsDelta(0, 0, "not json"),
            ],
            [ir.ItemEnd(0, "tool_call", call=0), ir.Finish(0, "tool_calls")],
        ],
        notes,
    )
    assert out[0]["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "f", "id": "k"}}
    ]
    assert any("not a JSON object" in n.message for n in notes.items if n.kind == "lost")


def test_several_choices_are_several_candidates_and_back() -> None:
    data = (ROOT / "fixtures" / "chat-chunk" / "two-choices.sse").read_bytes()
    out, _ = convert(data, GEMINI)
    indexes = {c["index"] for r in records(out) for c in r.data.get("candidates", [])}
    assert indexes == {0, 1}
    back, _ = convert(out, "chat-chunk", GEMINI)
    assert summarize(back, "chat-chunk")[0]["lanes"] == summarize(data, "chat-chunk")[0]["lanes"]


def test_a_finish_word_gemini_lacks_is_lost_and_a_refusal_is_said() -> None:
    notes = Notes()
    encode(
        [
            [ir.StreamStart("c", "m"), ir.LaneStart(0), ir.RefusalDelta(0, "no")],
            [ir.Finish(0, "abort")],
        ],
        notes,
    )
    lost = [n.message for n in notes.items if n.kind == "lost"]
    assert any("abort" in m for m in lost) and any("refusal" in m for m in lost)


# -- validate, collect, show --------------------------------------------------------


def test_the_checker_finds_a_cut_stream_and_an_inconsistent_total() -> None:
    found = validate_records(sse(chunk([{"text": "a"}])), GEMINI)
    assert [f.rule for f in found] == ["GEM006"]
    bad_total = chunk(
        [{"text": "a"}],
        "STOP",
        {"promptTokenCount": 5, "candidatesTokenCount": 5, "totalTokenCount": 6},
    )
    assert [f.rule for f in validate_records(sse(bad_total), GEMINI)] == ["GEM003"]


def test_collect_gives_the_accumulated_response() -> None:
    from tests.inprocess import run

    done = run(["collect", str(FIXTURES / "thinking-gemini3.sse"), "-q"])
    final = json.loads(done.stdout)
    parts = final["candidates"][0]["content"]["parts"]
    assert parts[0]["thought"] is True
    assert parts[1]["text"] == "Fourteen legs in all."
    # The signature on the empty text part that ends a Gemini 3 answer, as it came.
    assert parts[-1] == {"text": "", "thoughtSignature": "Q2hhdHhTaWduYXR1cmVFbXB0eVRleHQAAQI="}
    assert final["candidates"][0]["finishReason"] == "STOP"


def test_show_names_a_chunk_by_its_parts() -> None:
    from chatx.show import record_kinds

    data = chunk(
        [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "U0lH"}], "STOP", {}
    )
    assert record_kinds(Record(data), GEMINI) == [
        "functionCall",
        "thoughtSignature",
        "finish:STOP",
        "usage",
    ]


# -- random streams -----------------------------------------------------------------

_text = st.text(min_size=1, max_size=8)
_args = st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3)


@settings(max_examples=80, deadline=None)
@given(
    texts=st.lists(_text, max_size=4),
    calls=st.lists(st.tuples(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), _args), max_size=3),
    usage=st.none() | st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)),
)
def test_random_ir_survives_gemini(texts: list[str], calls: list[Any], usage: Any) -> None:
    batches: list[list[ir.Event]] = [[ir.StreamStart("s", "m"), ir.LaneStart(0)]]
    if texts:
        batches += [
            [ir.ItemStart(0, "message")],
            *([ir.TextDelta(0, t)] for t in texts),
            [ir.ItemEnd(0, "message")],
        ]
    for number, (name, args) in enumerate(calls):
        batches.append(
            [
                ir.ItemStart(0, "tool_call", call=number, call_id=f"c{number}", name=name),
                ir.ToolArgsDelta(0, number, json.dumps(args)),
                ir.ItemEnd(0, "tool_call", call=number),
            ]
        )
    batches.append([ir.Finish(0, "tool_calls" if calls else "stop")])
    if usage is not None:
        batches.append([ir.Usage(usage[0], usage[1], sum(usage))])
    batches.append([ir.StreamEnd()])
    payloads = encode(batches)
    decoded = events(*payloads)
    assert "".join(e.text for e in of(ir.TextDelta, decoded)) == "".join(texts)
    got = [(e.name, e.call_id) for e in of(ir.ItemStart, decoded) if e.kind == "tool_call"]
    assert got == [(name, f"c{n}") for n, (name, _) in enumerate(calls)]
    assert [json.loads(e.fragment) for e in of(ir.ToolArgsDelta, decoded)] == [a for _, a in calls]
    assert [f.reason for f in of(ir.Finish, decoded)] == ["tool_calls" if calls else "stop"]
    if usage is not None:
        (u,) = of(ir.Usage, decoded)
        assert (u.input, u.output, u.total) == (usage[0], usage[1], sum(usage))


def test_ls_names_the_model_a_gemini_stream_says() -> None:
    """``modelVersion`` (the codec's ``model`` hook): before it, ls said ``-``."""
    from tests.containers.common import chatx

    listed = chatx("ls", "--output", "json", str(ROOT / "fixtures" / "gemini-event" / "text.sse"))
    assert listed.code == 0, listed.err
    row = json.loads(listed.stdout.splitlines()[0])
    assert (row["format"], row["model"]) == ("gemini-event", "gemini-2.5-flash")


def test_an_errors_details_are_said_lost_into_chat_never_dropped() -> None:
    """Google's error carries ``details`` (RetryInfo, ErrorInfo): a chat error frame has
    no place for them and says so; Gemini → Gemini keeps them."""
    body = {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED",
                      "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                   "retryDelay": "7s"}]}}  # fmt: skip
    data = json.dumps(body).encode()
    out, notes = convert(data, "chat-chunk")
    assert b"RetryInfo" not in out
    assert any("details" in path for path in notes.lost_fields), notes.lost_fields
    same, _ = convert(data, "gemini-event", out_container="jsonl")
    assert json.loads(same) == body

"""Oracle tests: the openai SDK and the Open Responses schema accept what chatx writes.

* Every chat payload validates as ``openai.types.chat.ChatCompletionChunk``; every
  Responses event validates as the SDK class its ``type`` names (a ``type → class`` map
  built from the ``ResponseStreamEvent`` union: validating against the whole union is slow).
* Responses output also validates against the Open Responses schema
  (``../shared/spec/open-responses-openapi.json``) for the event types it defines, with a
  small checker (``jsonschema`` is not a dependency): ``$ref``, ``allOf``/``anyOf``/``oneOf``,
  ``type``, ``enum``, ``required``, ``properties``, ``items``, ``additionalProperties``.
* The SDK's own stream accumulators (``ChatCompletionStreamState``, ``ResponseStreamState``)
  rebuild from chatx's output the same text, tool calls and usage as the input says.
"""

from __future__ import annotations

import json
import typing
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.builders.chat_chunk import chat_text, chunk, usage_chunk
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.captures import SPEC, capture_choices, capture_params
from tests.meaning import parse_arguments, summarize
from tests.streams import CHAT, RESPONSES, convert, records, sse

openai = pytest.importorskip("openai", reason="the openai SDK is the oracle")

from openai import omit  # noqa: E402
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.lib.streaming.responses import ResponseStreamState  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402
from openai.types.responses import ResponseStreamEvent  # noqa: E402

OPEN_RESPONSES = SPEC / "open-responses-openapi.json"


# -- the SDK's types --------------------------------------------------------------------


def _event_classes() -> dict[str, type]:
    union = typing.get_args(ResponseStreamEvent)[0]  # Annotated[Union[...], PropertyInfo]
    classes = {}
    for cls in typing.get_args(union):
        (name,) = typing.get_args(cls.model_fields["type"].annotation)
        classes[name] = cls
    return classes


EVENT_CLASSES = _event_classes()


def sdk_chunk(payload: dict[str, Any]) -> ChatCompletionChunk:
    return ChatCompletionChunk.model_validate(payload)


def sdk_event(payload: dict[str, Any]) -> Any:
    cls = EVENT_CLASSES.get(payload.get("type"))
    if cls is None:
        raise AssertionError(f"the openai SDK has no event type {payload.get('type')!r}")
    return cls.model_validate(payload)


def sdk_problems(data: bytes, fmt: str) -> list[str]:
    """Every payload of chatx output the SDK types refuse, as ``index: type: error``."""
    problems = []
    for number, record in enumerate(records(data)):
        if record.done:
            continue
        payload = record.data
        try:
            if fmt == CHAT:
                if "choices" not in payload and "error" in payload:
                    continue  # an error frame is no chunk; the SDK raises it as APIError
                sdk_chunk(payload)
            else:
                sdk_event(payload)
        except Exception as exc:  # pydantic.ValidationError, AssertionError
            kind = payload.get("type", "chunk") if isinstance(payload, dict) else "?"
            problems.append(f"{number}: {kind}: {str(exc).splitlines()[:3]}")
    return problems


# -- the Open Responses schema ----------------------------------------------------------


@cache
def _spec() -> dict[str, Any]:
    return json.loads(OPEN_RESPONSES.read_text())


@cache
def _streaming_schemas() -> dict[str, dict[str, Any]]:
    """``event type → schema`` for every streaming event the spec defines."""
    schemas = _spec()["components"]["schemas"]
    out = {}
    for name, schema in schemas.items():
        if name.endswith("StreamingEvent") and "type" in schema.get("properties", {}):
            for value in schema["properties"]["type"].get("enum", ()):
                out[value] = schema
    return out


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = _spec()["components"]["schemas"][name]
    return schema


_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def schema_errors(schema: dict[str, Any], value: Any, path: str = "$") -> list[str]:
    """What is wrong with ``value`` under ``schema`` (empty when it is valid)."""
    schema = _resolve(schema)
    errors = _combinator_errors(schema, value, path)
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_TYPES[k](value) for k in kinds):
            return errors + [f"{path}: {value!r:.60} is not {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r:.60} not in {schema['enum']}")
    if isinstance(value, dict):
        errors += _object_errors(schema, value, path)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for number, item in enumerate(value):
            errors += schema_errors(schema["items"], item, f"{path}[{number}]")
    return errors


def _combinator_errors(schema: dict[str, Any], value: Any, path: str) -> list[str]:
    errors: list[str] = []
    for sub in schema.get("allOf", ()):
        errors += schema_errors(sub, value, path)
    for key in ("anyOf", "oneOf"):  # oneOf checked as anyOf: the branches differ by type
        if key in schema:
            branches = [schema_errors(sub, value, path) for sub in schema[key]]
            if all(branches):
                best = min(branches, key=len)
                errors.append(f"{path}: matches no {key} branch, e.g. {best[:2]}")
    return errors


def _object_errors(schema: dict[str, Any], value: dict[str, Any], path: str) -> list[str]:
    errors = [
        f"{path}: required field {name!r} missing"
        for name in schema.get("required", ())
        if name not in value
    ]
    properties = schema.get("properties", {})
    for name, item in value.items():
        if name in properties:
            errors += schema_errors(properties[name], item, f"{path}.{name}")
        elif isinstance(schema.get("additionalProperties"), dict):
            errors += schema_errors(schema["additionalProperties"], item, f"{path}.{name}")
    return errors


def open_responses_problems(data: bytes) -> list[str]:
    """Schema errors of each Responses event whose type the Open Responses spec defines."""
    problems = []
    schemas = _streaming_schemas()
    for number, record in enumerate(records(data)):
        payload = record.data
        schema = schemas.get(payload.get("type"))
        if schema is not None:
            problems += [
                f"{number}: {payload['type']}: {e}" for e in schema_errors(schema, payload)
            ]
    return problems


needs_spec = pytest.mark.skipif(
    not OPEN_RESPONSES.is_file(), reason=f"no Open Responses schema at {OPEN_RESPONSES}"
)


# -- reconstruction by the SDK's accumulators -------------------------------------------


def _split(data: bytes, fmt: str) -> list[list[Any]]:
    streams: list[list[Any]] = [[]]
    for record in records(data):
        if record.done:
            streams.append([])
        elif fmt == RESPONSES and record.data.get("type") == "response.created" and streams[-1]:
            streams.append([record.data])
        else:
            streams[-1].append(record.data)
    return [s for s in streams if s]


def sdk_rebuild_chat(data: bytes) -> list[dict[str, Any]]:
    """What ``ChatCompletionStreamState`` makes of each chat stream chatx wrote."""
    out = []
    for stream in _split(data, CHAT):
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        errors = []
        for payload in stream:
            if "choices" not in payload and "error" in payload:
                errors.append(payload["error"].get("message") or "")
                continue
            state.handle_chunk(sdk_chunk(payload))
        # get_final_completion() raises on finish_reason length/content_filter; the
        # snapshot is the same accumulation without the parsing step.
        completion = state.current_completion_snapshot
        message = completion.choices[0].message if completion.choices else None
        usage = completion.usage
        out.append(
            {
                "text": (message.content or "") if message else "",
                "refusal": (message.refusal or "") if message else "",
                "calls": [
                    (c.function.name, c.id, parse_arguments(c.function.arguments))
                    for c in (message.tool_calls or [])
                ]
                if message
                else [],
                "usage": (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)
                if usage
                else None,
                "errors": errors,
            }
        )
    return out


def sdk_rebuild_responses(data: bytes) -> list[dict[str, Any]]:
    """What the SDK's ``ResponseStreamState`` makes of each Responses stream chatx wrote:
    text and arguments from the snapshots it accumulates, calls and usage from the
    terminal response it hands back."""
    out = []
    for stream in _split(data, RESPONSES):
        state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
        texts: dict[tuple[int, int], str] = {}
        args: dict[int, str] = {}
        final = None
        errors = []
        for payload in stream:
            for event in state.handle_event(sdk_event(payload)):
                kind = event.type
                if kind == "response.output_text.delta":
                    texts[(event.output_index, event.content_index)] = event.snapshot
                elif kind == "response.function_call_arguments.delta":
                    args[event.output_index] = event.snapshot
                elif kind in ("response.completed", "response.incomplete", "response.failed"):
                    final = event.response
                elif kind == "error":
                    errors.append(event.message)
        calls, refusal = [], ""
        for index, item in enumerate(final.output if final is not None else ()):
            if item.type == "function_call":
                assert args.get(index, "") == item.arguments, "deltas disagree with the item"
                calls.append((item.name, item.call_id, parse_arguments(item.arguments)))
            elif item.type == "message":
                refusal += "".join(p.refusal for p in item.content if p.type == "refusal")
        usage = final.usage if final is not None else None
        out.append(
            {
                "text": "".join(texts[k] for k in sorted(texts)),
                "refusal": refusal,
                "calls": calls,
                "usage": (usage.input_tokens, usage.output_tokens, usage.total_tokens)
                if usage
                else None,
                "errors": errors,
            }
        )
    return out


def input_says(data: bytes, fmt: str, choice: int | None = None) -> list[dict[str, Any]]:
    """The same fields as the SDK rebuilds, from chatx's decoding of the input."""
    out = []
    for stream in summarize(data, fmt, lane=choice):
        lane = stream["lanes"].get(0, {"text": "", "refusal": "", "calls": []})
        out.append(
            {
                "text": lane["text"],
                "refusal": lane["refusal"],
                "calls": lane["calls"],
                "usage": stream["usage"],
                "errors": stream["errors"],
            }
        )
    return out


def sdk_rebuild(data: bytes, fmt: str) -> list[dict[str, Any]]:
    return sdk_rebuild_chat(data) if fmt == CHAT else sdk_rebuild_responses(data)


# -- hand-made inputs ------------------------------------------------------------------


def _call(index, id=None, name=None, arguments=""):
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id:
        entry.update(id=id, type="function")
        entry["function"]["name"] = name
    return entry


CHAT_SAMPLES = {
    "text": chat_text("Hello", ", ", "wörld ✓"),
    "reasoning": [
        chunk({"role": "assistant", "reasoning_content": ""}),
        chunk({"reasoning_content": "step 1"}),
        chunk({"content": "done"}),
        chunk({}, "stop"),
        usage_chunk(10, 5, 15, cached=2, reasoning=3),
    ],
    "refusal": [
        chunk({"role": "assistant", "content": None, "refusal": ""}),
        chunk({"refusal": "I can't."}),
        chunk({}, "stop"),
    ],
    "tools": [
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [_call(0, "call_a", "f", "")]}),
        chunk({"tool_calls": [_call(0, arguments='{"x":')]}),
        chunk({"tool_calls": [_call(0, arguments=" 1}")]}),
        chunk({"tool_calls": [_call(1, "call_b", "g", "{}")]}),
        chunk({}, "tool_calls"),
        usage_chunk(),
    ],
    "length": chat_text("cut", finish="length"),
    "content_filter": chat_text("no", finish="content_filter", usage=False),
    "error": [
        chunk({"role": "assistant", "content": "par"}),
        {"error": {"message": "overloaded", "type": "server_error", "code": None}},
    ],
    # OpenRouter: a numeric code, no type, no param, inside a chunk, then [DONE].
    "error_in_chunk": [
        chunk({"role": "assistant", "content": "par"}),
        chunk({}, None, error={"code": 400, "message": "Token limit reached"}),
    ],
    "logprobs": [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hi"}),
        chunk({}, "stop"),
    ],
}
CHAT_SAMPLES["logprobs"][1]["choices"][0]["logprobs"] = {
    "content": [
        {
            "token": "Hi",
            "logprob": -0.5,
            "bytes": [72, 105],
            "top_logprobs": [{"token": "Hi", "logprob": -0.5, "bytes": [72, 105]}],
        }
    ],
    "refusal": None,
}

# Azure: a special token has no bytes ("bytes": null is valid in chat logprobs).
CHAT_SAMPLES["logprobs_null_bytes"] = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Hi"}),
    chunk({}, "stop"),
]
CHAT_SAMPLES["logprobs_null_bytes"][1]["choices"][0]["logprobs"] = {
    "content": [
        {
            "token": "Hi",
            "logprob": -0.5,
            "bytes": [72, 105],
            "top_logprobs": [
                {"token": "Hi", "logprob": -0.5, "bytes": [72, 105]},
                {"token": "<|end|>", "logprob": -1.5, "bytes": None},
            ],
        },
        {"token": "<|end|>", "logprob": -0.1, "bytes": None, "top_logprobs": []},
    ],
    "refusal": None,
}

RESPONSES_SAMPLES = {
    "text": ResponsesBuilder().message("Hel", "lo").end(usage=responses_usage()),
    "reasoning": ResponsesBuilder().reasoning("hm").message("ok").end(),
    "reasoning_text": ResponsesBuilder().reasoning("raw", family="text").message("ok").end(),
    "refusal": ResponsesBuilder().message(refusal="No.").end(),
    "tools": ResponsesBuilder()
    .call("f", "call_1", '{"a"', ": 2}")
    .call("g", "call_2", "{}")
    .end(usage=responses_usage(5, 6, 11)),
    "incomplete": ResponsesBuilder().message("cut").end("incomplete", reason="max_output_tokens"),
    "failed": ResponsesBuilder().message("par").error("boom"),
    "two_streams": None,
}
_TWO = (
    ResponsesBuilder("resp_a").message("one").end().bytes()
    + ResponsesBuilder("resp_b").message("two").end().bytes()
)


# Hand-made inputs whose conversion the oracles refuse: bugs, each with what is wrong.
SAMPLE_BUGS: dict[str, str] = {}


# The Open Responses schema has no enum for error codes, so an error-code bug would not
# show there; list schema-only bugs here.
SCHEMA_SAMPLE_BUGS: dict[str, str] = {}


def _samples(names: dict[str, Any], bugs: dict[str, str] = SAMPLE_BUGS) -> list[Any]:
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=bugs[n])) if n in bugs else n
        for n in sorted(names)
    ]


def _responses_input(name: str) -> bytes:
    return _TWO if name == "two_streams" else RESPONSES_SAMPLES[name].bytes()


@pytest.mark.parametrize("name", _samples(CHAT_SAMPLES))
def test_chat_to_responses_validates_against_sdk_types(name):
    out, _ = convert(sse(CHAT_SAMPLES[name]), RESPONSES, CHAT)
    assert sdk_problems(out, RESPONSES) == []


@needs_spec
@pytest.mark.parametrize("name", _samples(CHAT_SAMPLES, SCHEMA_SAMPLE_BUGS))
def test_chat_to_responses_validates_against_open_responses(name):
    out, _ = convert(sse(CHAT_SAMPLES[name]), RESPONSES, CHAT)
    assert open_responses_problems(out) == []


@pytest.mark.parametrize("name", sorted(RESPONSES_SAMPLES))
def test_responses_to_chat_validates_against_sdk_types(name):
    out, _ = convert(_responses_input(name), CHAT, RESPONSES)
    assert sdk_problems(out, CHAT) == []


@pytest.mark.parametrize("name", _samples(CHAT_SAMPLES))
def test_sdk_rebuilds_what_the_chat_input_says(name):
    data = sse(CHAT_SAMPLES[name])
    out, _ = convert(data, RESPONSES, CHAT)
    assert sdk_rebuild(out, RESPONSES) == input_says(data, CHAT)


@pytest.mark.parametrize("name", sorted(RESPONSES_SAMPLES))
def test_sdk_rebuilds_what_the_responses_input_says(name):
    data = _responses_input(name)
    out, _ = convert(data, CHAT, RESPONSES)
    assert sdk_rebuild(out, CHAT) == input_says(data, RESPONSES)


def test_checker_can_fail():
    """The oracles are not vacuous: they refuse broken payloads."""
    out, _ = convert(sse(CHAT_SAMPLES["tools"]), RESPONSES, CHAT)
    events = [r.data for r in records(out)]
    del events[0]["response"]["id"]
    events[-1]["response"]["usage"]["input_tokens"] = "many"
    broken = sse(events, done=False)
    assert any("response.created" in p for p in sdk_problems(broken, RESPONSES))
    if OPEN_RESPONSES.is_file():
        problems = open_responses_problems(broken)
        assert any("'id' missing" in p for p in problems)
        assert any("input_tokens" in p for p in problems)
    chat = sse([{**chunk({"content": "x"}), "object": "chat.completion"}])
    assert sdk_problems(chat, CHAT)


# -- captures (the table of counts is in test_captures_roundtrip.py) --------------------

# Conversions the SDK refuses, with why; a new refusal, or one that went away, fails.
SDK_REFUSES: dict[str, str] = {}


def conversions(fmt: str) -> list[Any]:
    """(capture, choice) per conversion to the other format: one per chat choice."""
    out = []
    for param in capture_params(fmt):
        path = param.values[0]
        if path is None:
            out.append(pytest.param(None, None, marks=param.marks, id=param.id))
            continue
        for choice in capture_choices(path):
            suffix = f"-choice{choice}" if choice is not None else ""
            out.append(pytest.param(path, choice, id=path.name + suffix))
    return out


def convert_capture(path: Path, fmt: str, choice: int | None) -> bytes:
    dst = RESPONSES if fmt == CHAT else CHAT
    return convert(path.read_bytes(), dst, fmt, choice=choice)[0]


def _check_sdk(path, fmt, choice):
    out = convert_capture(path, fmt, choice)
    dst = RESPONSES if fmt == CHAT else CHAT
    problems = sdk_problems(out, dst)
    if path.name in SDK_REFUSES:
        assert problems, f"now accepted: drop it from SDK_REFUSES ({SDK_REFUSES[path.name]})"
    else:
        assert problems == []
    if fmt == CHAT and OPEN_RESPONSES.is_file() and path.name not in SDK_REFUSES:
        assert open_responses_problems(out) == []


@pytest.mark.parametrize(("path", "choice"), conversions(CHAT))
def test_chat_capture_to_responses_is_accepted(path, choice):
    _check_sdk(path, CHAT, choice)


@pytest.mark.parametrize(("path", "choice"), conversions(RESPONSES))
def test_responses_capture_to_chat_is_accepted(path, choice):
    _check_sdk(path, RESPONSES, choice)


# Captures whose conversion the SDK rebuilds differently from what the input says.
REBUILT_DIFFERENTLY: dict[str, str] = {}


def rebuilt_same(path: Path, fmt: str, choice: int | None) -> bool:
    out = convert_capture(path, fmt, choice)
    dst = RESPONSES if fmt == CHAT else CHAT
    return sdk_rebuild(out, dst) == input_says(path.read_bytes(), fmt, choice)


@pytest.mark.parametrize(("path", "choice"), conversions(CHAT) + conversions(RESPONSES))
def test_sdk_rebuilds_what_the_capture_says(path, choice):
    fmt = CHAT if path.parent.name == CHAT else RESPONSES
    if path.name in SDK_REFUSES:
        pytest.skip(f"the SDK refuses this conversion: {SDK_REFUSES[path.name]}")
    out = convert_capture(path, fmt, choice)
    dst = RESPONSES if fmt == CHAT else CHAT
    rebuilt = sdk_rebuild(out, dst)
    said = input_says(path.read_bytes(), fmt, choice)
    if path.name in REBUILT_DIFFERENTLY:
        assert rebuilt != said, "now the same: drop it from REBUILT_DIFFERENTLY"
    else:
        assert rebuilt == said

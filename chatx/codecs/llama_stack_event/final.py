"""What ``collect`` builds from a stream as Llama Stack: a ``ChatCompletionResponse``
(``completion_message`` and ``metrics``)."""

from __future__ import annotations

from typing import Any

import orjson

from chatx.collect.assembler import Assembler
from chatx.collect.items import Lane
from chatx.collect.residue import settle
from chatx.notes import Notes
from chatx.residue import lost_paths

from . import records as r
from .records import NAME
from .special_tokens import PYTHON_TAG, TOKEN_STOP, TokenScanner, parse_tool_call

_STOP = {
    "stop": "end_of_turn",
    "tool_calls": "end_of_message",
    "function_call": "end_of_message",
    "length": "out_of_tokens",
}
_WHAT = "a Llama Stack response"


def to_llama_stack(
    stream: Assembler,
    source: str | None = None,
    choice: int | None = None,
    notes: Notes | None = None,
) -> dict[str, Any]:
    """A Llama Stack ``ChatCompletionResponse`` of the one choice (or of ``choice``):
    ``completion_message`` and ``metrics``. It is the descriptor's ``final``."""
    notes = notes if notes is not None else Notes()
    lane = stream.one_lane(choice, _WHAT)
    if lane.reasoning:
        notes.lost("reasoning has no place in a Llama Stack response: left out")
    if lane.refusal:
        notes.lost("the refusal is written as message content")
    if lane.stop_sequence is not None:
        notes.lost("the stop sequence has no place in a Llama Stack response")
    for item in lane.items:
        for cited in item.citations:  # none has a place: said as convert says each record
            notes.lost_field("citations" if "citations" in cited.extra else "annotations")
    stop = (
        lane.raw_finish
        if source == NAME and lane.raw_finish
        else _STOP.get(lane.finish or "", "end_of_turn" if lane.finish else None)
    )
    if source == NAME:
        text = lane.text
        calls = [_call(call.call_id, call.name, call.arguments) for call in lane.calls]
    else:
        text, calls, token = _chat_text(stream.id or "", lane)
        stop = _foreign_stop(stream, lane, stop, notes)
        if token is not None and stop is not None:
            stop = token  # a token's stop reason wins over the finish reason
    message = {
        "role": "assistant",
        "content": text + lane.refusal,
        "stop_reason": stop,
        "tool_calls": calls,
    }
    response = {
        "completion_message": message,
        # The events' logprobs, one entry a token, as the non-streaming response has them
        # (ChatCompletionResponse.logprobs: list[TokenLogProbs]); a refusal's, which is text.
        "logprobs": r.logprobs_from_ir(lane.logprobs + lane.refusal_logprobs),
        "metrics": _metrics(stream, source == NAME),
    }
    if source == NAME:
        _residue(response, stream, notes)
    return response


def _residue(response: dict[str, Any], stream: Assembler, notes: Notes) -> None:
    """A Llama Stack stream's own fields: a chunk's beside its event at the top of the
    response (as chat's collect keeps a chunk's), the last non-empty value winning; an
    event's own fields, which a response (no events) has no place for, said lost as
    convert says a field. The metrics' own fields are in ``metrics``."""
    kept: dict[str, Any] = {}
    for extra in (stream.start_extra, stream.residue, stream.end_extra):
        patch = extra.get(r.LS, {}).get("patch") if type(extra.get(r.LS)) is dict else None
        if type(patch) is not dict:
            continue
        for key, value in patch.items():
            if key == "event" and type(value) is dict:
                notes.lost_fields.update(lost_paths(value, "event."))
            elif key not in response:
                settle(kept, {key: value})
            else:
                notes.lost_fields.update(lost_paths({key: value}))
    response.update(kept)
    for path, count in stream.delta_residue.items():
        notes.lost_fields[path.removeprefix(f"{r.LS}.patch.")] += count
    if stream.errors:
        notes.lost(
            f"{len(stream.errors)} error(s) in the stream have no place in a Llama Stack response"
        )
    if stream.passthrough:
        said = sum(stream.passthrough.values())
        notes.lost(f"{said} record(s) with no IR meaning have no place in a Llama Stack response")


def _chat_text(sid: str, lane: Lane) -> tuple[str, list[dict[str, Any]], str | None]:
    """Another format's text and calls, read as Llama Stack output reads chat text
    (text.py, as Llama Stack's OpenAI-compat layer does): the text without Llama's
    special tokens, the calls with the built-in ones ``<|python_tag|>`` opens (to the
    end of its message) in their place, and the stop reason a token sets."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    token: str | None = None
    for item in lane.items:
        if item.kind == "tool_call" and item.call is not None:
            call = item.call
            calls.append(
                _call(call.call_id or r.call_id(sid, len(calls)), call.name, call.arguments)
            )
        elif item.kind == "message":
            scanner = TokenScanner()
            python: list[str] | None = None  # the text after <|python_tag|>
            pieces = scanner.feed(item.text.text())
            pieces += [("text", scanner.flush()), ("end", "")]
            for kind, piece in pieces:
                if kind == "text":
                    (texts if python is None else python).append(piece)
                    continue
                if piece == PYTHON_TAG:
                    python = [] if python is None else python
                    continue
                token = TOKEN_STOP.get(piece, token)
                if python is None:
                    continue
                # A token, or the message's end, closes the call.
                raw, python = "".join(python), None
                parsed = parse_tool_call(raw)
                if parsed is None:  # a failed call: its text, as Llama Stack reads it
                    texts.append(raw)
                else:
                    call_id = r.call_id(sid, len(calls))
                    calls.append(_call(call_id, parsed[0], r.dumps(parsed[1])))
    return "".join(texts), calls, token


def _foreign_stop(stream: Assembler, lane: Lane, stop: str | None, notes: Notes) -> str | None:
    """Another format's stop reason, as the encoder's ``complete`` event says it. Its
    server writes nothing after the error frame: a finish or usage after the source's
    error (a Responses response.failed) is not said. A stream the source ended without
    a finish reason (or whose usage came before its error) ends with end_of_turn."""
    if stream.errors and stream.said_after_error():
        notes.lost("the finish reason or usage that came after the error frame")
    if lane.after_error:
        stop = None
    if stop is None and (
        (stream.ended and not stream.errors)
        or (stream.errors and stream.usage_before_error is not None)
    ):
        notes.repaired("the input has no finish reason: complete says end_of_turn")
        stop = "end_of_turn"
    return stop


def _call(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    try:
        parsed: Any = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        parsed = None
    return {
        "call_id": call_id or "",
        "tool_name": name or "",
        "arguments": parsed if isinstance(parsed, dict) else arguments,
        "arguments_json": arguments,
    }


def _metrics(stream: Assembler, own: bool) -> list[dict[str, Any]] | None:
    usage = stream.usage if own else stream.usage_before_error
    if usage is None:
        return None
    total = usage.total
    if usage.input is not None and usage.output is not None and total is None:
        # As the encoder writes it: a total the source left out is prompt + completion,
        # as Llama Stack's router computes it; a stated one is carried.
        total = usage.input + usage.output
    residue = usage.extra.get(r.LS, {}).get("metrics") if own else None
    if residue is not None:
        # The complete event's own entries (a telemetry provider's trace_id, span_id,
        # attributes…): the router sets the same metric events on a non-streaming
        # response, so they stay as they came, values filled in.
        counts_by_field = {"input": usage.input, "output": usage.output, "total": total}
        metrics: list[dict[str, Any]] = r.render_metrics(counts_by_field, residue)
        return metrics
    counts = (
        ("prompt_tokens", usage.input),
        ("completion_tokens", usage.output),
        ("total_tokens", total),
    )
    return [
        {"metric": name, "value": value, "unit": "tokens"}
        for name, value in counts
        if value is not None
    ]


final = to_llama_stack

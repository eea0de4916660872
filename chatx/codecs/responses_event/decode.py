"""Decode Responses API stream events into IR events.

Message, reasoning and function-call items become IR items; every other item type
(web search, MCP, image generation, …) and every lifecycle event after the first comes
through as :class:`~chatx.ir.Passthrough`, which the Responses encoder writes back and
other encoders report. ``*.done`` events are derived data: the decoder compares them
with what it has read and keeps only the difference as residue.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.envelope import DEFAULTS, usage_object
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from chatx.residue import diff
from chatx.residue import set_or_drop as _set_or_drop

NAME = "responses-event"
_DELTA_KEYS = frozenset(
    (
        "type",
        "item_id",
        "output_index",
        "content_index",
        "summary_index",
        "delta",
        "logprobs",
        "sequence_number",
    )
)
_MAPPED_ENVELOPE = frozenset(("id", "object", "created_at", "model", "status", "output", "usage"))
_UNSET = object()
# Key of the Meta residue that carries patches for derived events; private to this codec.
PATCH = "~responses.derived"
OPEN_PART = "~responses.open_part"
_ITEM_KINDS = {"message": "message", "reasoning": "reasoning", "function_call": "tool_call"}
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
_IGNORED = frozenset(
    (
        "response.content_part.added",
        "response.reasoning_summary_part.added",
        "response.output_text.done",
        "response.refusal.done",
        "response.reasoning_text.done",
        "response.reasoning.done",
        "response.reasoning_summary_text.done",
        "response.function_call_arguments.done",
        "response.content_part.done",
        "response.reasoning_summary_part.done",
    )
)


class _Item:
    __slots__ = ("kind", "id", "call", "call_id", "name", "parts", "args", "seen", "done")

    def __init__(self, kind: str, iid: str) -> None:
        self.kind = kind
        self.id = iid
        self.call: int | None = None
        self.call_id: str | None = None
        self.name: str | None = None
        self.parts: dict[tuple[str, int], list[Any]] = {}  # (family, index) → [texts, lps]
        self.args: list[str] = []
        self.seen: set[str] = set()  # derived event types the source sent for this item
        self.done = False


class ResponsesDecoder:
    """Incremental decoder: ``feed(record)`` returns the IR events of one event."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.started = False
        self.ended = False
        self.items: dict[Any, _Item] = {}  # by output_index
        self.calls = 0
        self.output: list[Any] = []
        self.template: dict[str, Any] = {}
        self.usage: ir.Usage | None = None
        self.error: dict[str, Any] | None = None
        self.expected_seq: int | None = None
        self.renumbered = False
        self.noted: set[str] = set()

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one Responses event."""
        if record.done:
            if self.ended:
                self._repaired(
                    "data: [DONE] after the terminal event left out: Responses "
                    "streams end with their terminal event"
                )
            return []
        data = record.data
        if not isinstance(data, dict):
            raise InputError(
                f"a Responses event must be a JSON object, not {type(data).__name__}",
                line=record.line,
                expected='{"type": "response.…", …}',
            )
        kind = data.get("type") or record.event
        if not isinstance(kind, str):
            raise InputError(
                "Responses event without a type",
                line=record.line,
                expected='a "type" such as "response.output_text.delta"',
            )
        self._sequence(data)
        if kind in ("response.created", "response.queued") and (
            not self.started
            or self.ended
            or kind == "response.created"
            and self._is_new_stream(data)
        ):
            return self._start(kind, data)
        if not self.started:
            self.notes.repaired(f"stream began with {kind}, not response.created")
            self._start("response.created", {"response": {}})
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, data)
        if kind in _IGNORED:
            return self._derived(kind, data)
        if kind == "error":
            return [self._error(data)]
        return [ir.Passthrough(NAME, data, record.event, record.line)]

    def finish(self) -> list[ir.Event]:
        """End of input; a stream without a terminal event stays unfinished."""
        return []

    def _repaired(self, message: str) -> None:
        """Say a repair once per stream, not once per event."""
        if message not in self.noted:
            self.noted.add(message)
            self.notes.repaired(message)

    def _is_new_stream(self, data: dict[str, Any]) -> bool:
        # vercel fixtures concatenate several turns: a second response.created starts over.
        return True

    def _sequence(self, data: dict[str, Any]) -> None:
        seq = data.get("sequence_number")
        if (
            self.expected_seq is not None
            and seq != self.expected_seq
            and not self.renumbered
            and data.get("type") != "response.created"
        ):
            self.renumbered = True
            self.notes.repaired(
                f"sequence_number {seq!r} where {self.expected_seq} was due: "
                "events renumbered from 0"
            )
        self.expected_seq = seq + 1 if isinstance(seq, int) else None

    # -- lifecycle ------------------------------------------------------------------

    def _start(self, kind: str, data: dict[str, Any]) -> list[ir.Event]:
        out: list[ir.Event] = []
        if self.started and not self.ended:
            self.notes.warning("a new stream began before the previous one ended")
            out.append(ir.StreamEnd())
        self.__init__(self.notes)  # type: ignore[misc]
        self.expected_seq = 1 if isinstance(data.get("sequence_number"), int) else None
        self.started = True
        response = data.get("response")
        if not isinstance(response, dict):
            response = {}
        self.template = response
        event_extra = {
            k: v for k, v in data.items() if k not in ("type", "response", "sequence_number")
        }
        # Private keys ("~") rebuild the envelope in Responses output; the settings that
        # differ from a server's defaults are what another format would lose.
        settings = {
            k: v
            for k, v in response.items()
            if k not in _MAPPED_ENVELOPE and DEFAULTS.get(k, _UNSET) != v
        }
        out.append(
            ir.StreamStart(
                str(response.get("id") or ""),
                response.get("model"),
                response.get("created_at"),
                {"~response": response, "~type": kind, "~event": event_extra, **settings},
            )
        )
        out.append(ir.LaneStart(0))
        return out

    def _terminal(self, data: dict[str, Any]) -> list[ir.Event]:
        response = data.get("response")
        if not isinstance(response, dict):
            response = {}
        out: list[ir.Event] = []
        if any(not item.done for item in self.items.values()):
            self._repaired("items still open at the terminal event: closed before it")
        usage = response.get("usage")
        if isinstance(usage, dict) and usage:
            self.usage = decode_usage(usage)
            out.append(self.usage)
        status = response.get("status") or data["type"].rsplit(".", 1)[1]
        details = response.get("incomplete_details")
        raw = details.get("reason") if isinstance(details, dict) else None
        if status == "failed":
            reason = "error"
        elif status == "incomplete":
            reason = "content_filter" if raw == "content_filter" else "length"
        else:
            reason = "tool_calls" if self.calls else "stop"
        out.append(ir.Finish(0, reason, raw or (status if status != "completed" else None)))
        tstatus, tdetails = shapes.terminal_status(reason, self.error is not None)
        usage_obj = usage_object(self.usage, True) if self.usage is not None else None
        canonical = shapes.terminal_response(
            self.template, tstatus, tdetails, self.output, self.error, usage_obj
        )
        patch = diff(response, canonical)
        event_extra = {
            k: v for k, v in data.items() if k not in ("type", "response", "sequence_number")
        }
        if event_extra:
            patch["~event"] = event_extra
        if data["type"] != shapes.TERMINAL_EVENT[tstatus]:
            self.notes.repaired(
                f"{data['type']} with status {status!r}: written as "
                f"{shapes.TERMINAL_EVENT[tstatus]}"
            )
        out.append(ir.StreamEnd(patch))
        self.ended = True
        return out

    def _error(self, data: dict[str, Any]) -> ir.Error:
        nested = data.get("error")
        source = nested if isinstance(nested, dict) else data
        code = source.get("code")
        message = source.get("message")
        param = source.get("param")
        etype = source.get("type") if source is nested else None
        canonical = shapes.error_event(code, message, param, etype, None)
        patch = diff({k: v for k, v in data.items() if k != "sequence_number"}, canonical)
        self.error = shapes.response_error(code, message if isinstance(message, str) else None)
        return ir.Error(
            message if isinstance(message, str) else None,
            code,
            etype if isinstance(etype, str) else None,
            param if isinstance(param, str) else None,
            {"event": patch},
        )

    def _passthrough_state(self, data: dict[str, Any]) -> ir.Event:
        return ir.Passthrough(NAME, data, data.get("type"))

    def _lifecycle(self, data: dict[str, Any]) -> list[ir.Event]:
        return [ir.Passthrough(NAME, data, data.get("type"))]

    # -- items ----------------------------------------------------------------------

    def _item_added(self, data: dict[str, Any]) -> list[ir.Event]:
        item = data.get("item")
        if not isinstance(item, dict):
            item = {}
        kind = _ITEM_KINDS.get(item.get("type"))  # type: ignore[arg-type]
        index = data.get("output_index")
        if any(not other.done for other in self.items.values()):
            self._repaired(
                "an item was added before the previous one was done: items "
                "written one after another"
            )
        iid = str(item.get("id") or "")
        if kind is None:
            self.items[index] = _Item("passthrough", iid)
            return [ir.Passthrough(NAME, data, data.get("type"))]
        state = self.items[index] = _Item(kind, iid)
        event_extra = {
            k: v
            for k, v in data.items()
            if k not in ("type", "item", "output_index", "sequence_number")
        }
        if kind == "message":
            canonical = shapes.message_item(iid, "in_progress", [])
            start = ir.ItemStart(0, "message", iid)
        elif kind == "reasoning":
            canonical = shapes.reasoning_item(iid, [], None)
            start = ir.ItemStart(0, "reasoning", iid)
        else:
            state.call = self.calls
            self.calls += 1
            state.call_id = item.get("call_id")
            state.name = item.get("name")
            canonical = shapes.function_item(iid, "in_progress", "", state.call_id, state.name)
            start = ir.ItemStart(0, "tool_call", iid, state.call, state.call_id, state.name)
        patch = diff(item, canonical)
        if patch or event_extra:
            start.extra = {"added": patch, "event": event_extra}
        out: list[ir.Event] = [start]
        if kind == "tool_call" and item.get("arguments"):
            # Some servers put the whole call in the added item and stream nothing.
            # "~silent": the arguments were in the item, not in delta events; Responses
            # output keeps them there.
            state.args.append(item["arguments"])
            out.append(ir.ToolArgsDelta(0, state.call, item["arguments"], {"~silent": True}))
        return out

    def _item_done(self, data: dict[str, Any]) -> list[ir.Event]:
        item = data.get("item")
        if not isinstance(item, dict):
            item = {}
        state = self.items.get(data.get("output_index"))
        if state is None:
            self.notes.repaired("output_item.done for an item never added: kept as it came")
            state = self._adopt(data, item)
        state.done = True
        if state.kind == "passthrough":
            self.output.append(item)
            return [ir.Passthrough(NAME, data, data.get("type"))]
        self._check_derived(state)
        out: list[ir.Event] = []
        if state.kind == "message":
            canonical = shapes.message_item(state.id, "completed", self._parts(state, out, item))
            kind = "message"
        elif state.kind == "reasoning":
            summary, content = self._reasoning_parts(state, out, item)
            canonical = shapes.reasoning_item(state.id, summary, content)
            kind = "reasoning"
        else:
            arguments = item.get("arguments")
            joined = "".join(state.args)
            if isinstance(arguments, str) and arguments != joined:
                if arguments.startswith(joined):
                    out.append(ir.ToolArgsDelta(0, state.call or 0, arguments[len(joined) :]))
                    state.args.append(arguments[len(joined) :])
                else:
                    self.notes.repaired(
                        "function call arguments differ from their deltas: the deltas are kept"
                    )
            canonical = shapes.function_item(
                state.id, "completed", "".join(state.args), state.call_id, state.name
            )
            kind = "tool_call"
        self.output.append(item)
        event_extra = {
            k: v
            for k, v in data.items()
            if k not in ("type", "item", "output_index", "sequence_number")
        }
        patch = diff(item, canonical)
        extra = {}
        if patch:
            extra["item"] = patch
        if event_extra:
            extra["event"] = event_extra
        out.append(ir.ItemEnd(0, kind, state.call, extra))  # type: ignore[arg-type]
        return out

    def _check_derived(self, state: _Item) -> None:
        if state.kind == "tool_call":
            if "response.function_call_arguments.done" not in state.seen:
                self._repaired("function call without function_call_arguments.done: added")
        elif (
            state.parts
            and "response.content_part.done" not in state.seen
            and not (
                state.kind == "reasoning" and "response.reasoning_summary_part.done" in state.seen
            )
        ):
            self._repaired("content parts without their done events: added")

    def _adopt(self, data: dict[str, Any], item: dict[str, Any]) -> _Item:
        state = _Item("passthrough", str(item.get("id") or ""))
        self.items[data.get("output_index")] = state
        return state

    def _parts(self, state: _Item, out: list[ir.Event], item: dict[str, Any]) -> list[Any]:
        parts = []
        for (family, _), (texts, lps) in state.parts.items():
            text = "".join(texts)
            parts.append(
                shapes.refusal_part(text) if family == "refusal" else shapes.text_part(text, lps)
            )
        source = item.get("content")
        if not parts and isinstance(source, list) and source:
            # Text given only in the done item: say it once, as deltas would have.
            for part in source:
                if (
                    isinstance(part, dict)
                    and part.get("type") == "output_text"
                    and part.get("text")
                ):
                    out.append(ir.TextDelta(0, part["text"]))
                    parts.append(shapes.text_part(part["text"], []))
                elif (
                    isinstance(part, dict) and part.get("type") == "refusal" and part.get("refusal")
                ):
                    out.append(ir.RefusalDelta(0, part["refusal"]))
                    parts.append(shapes.refusal_part(part["refusal"]))
        return parts

    def _reasoning_parts(
        self, state: _Item, out: list[ir.Event], item: dict[str, Any]
    ) -> tuple[list[Any], list[Any]]:
        summary = [
            shapes.summary_part("".join(texts))
            for (family, _), (texts, _lps) in state.parts.items()
            if family == "summary_text"
        ]
        content = [
            shapes.reasoning_text_part("".join(texts))
            for (family, _), (texts, _lps) in state.parts.items()
            if family == "reasoning_text"
        ]
        if not summary and not content:
            for number, part in enumerate(item.get("summary") or ()):
                if isinstance(part, dict) and part.get("text"):
                    out.append(ir.ReasoningDelta(0, part["text"], "summary", number))
                    summary.append(shapes.summary_part(part["text"]))
        return summary, content

    def _delta(self, data: dict[str, Any], family: str) -> tuple[_Item | None, dict[str, Any]]:
        state = self.items.get(data.get("output_index"))
        extra = {k: v for k, v in data.items() if k not in _DELTA_KEYS}
        if state is None or state.kind == "passthrough":
            return None, extra
        if data.get("item_id", state.id) != state.id:
            self._repaired("item_id changes within an item: the item's first id is kept")
        index = data.get("summary_index" if family == "summary_text" else "content_index", 0)
        part = state.parts.get((family, index))
        if part is None:
            part = state.parts[(family, index)] = [[], []]
        delta = data.get("delta")
        if isinstance(delta, str):
            part[0].append(delta)
        lps = data.get("logprobs")
        if isinstance(lps, list) and lps:
            part[1].extend(lps)
        return state, extra

    def _text(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "output_text")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        lps = data.get("logprobs")
        if lps is None:
            self._repaired("output_text.delta without logprobs: logprobs [] added")
        return [ir.TextDelta(0, _str(data.get("delta")), lps if lps else None, extra)]

    def _refusal(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "refusal")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [ir.RefusalDelta(0, _str(data.get("delta")), None, extra)]

    def _summary(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "summary_text")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [
            ir.ReasoningDelta(
                0, _str(data.get("delta")), "summary", _int(data.get("summary_index")), extra
            )
        ]

    def _reasoning_text(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "reasoning_text")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [
            ir.ReasoningDelta(
                0, _str(data.get("delta")), "text", _int(data.get("content_index")), extra
            )
        ]

    def _arguments(self, data: dict[str, Any]) -> list[ir.Event]:
        state = self.items.get(data.get("output_index"))
        if state is None or state.kind != "tool_call":
            return [ir.Passthrough(NAME, data, data.get("type"))]
        delta = _str(data.get("delta"))
        state.args.append(delta)
        extra = {k: v for k, v in data.items() if k not in _DELTA_KEYS}
        return [ir.ToolArgsDelta(0, state.call or 0, delta, extra)]

    def _derived(self, kind: str, data: dict[str, Any]) -> list[ir.Event]:
        """A ``*.done`` or part-added event: derived data, kept as a patch when it differs."""
        state = self.items.get(data.get("output_index"))
        if state is None or state.kind == "passthrough":
            return [ir.Passthrough(NAME, data, data.get("type"))]
        state.seen.add(kind)
        out: list[ir.Event] = self._done_only(kind, data, state)
        canonical = self._canonical(kind, data, state)
        source = {k: v for k, v in data.items() if k != "sequence_number"}
        patch = diff(source, canonical) if canonical is not None else {}
        extra: dict[str, Any] = {}
        if patch:
            extra[PATCH] = {shapes.derived_key(data): patch}
        if kind.endswith("part.added") and canonical is not None:
            # Open the part where the source did: a part may never get a delta.
            number = data.get("summary_index" if "summary" in kind else "content_index")
            ptype = canonical["part"]["type"]
            extra[OPEN_PART] = (ptype, number)
        if extra:
            out.append(ir.Meta(None, extra))
        return out

    def _done_only(self, kind: str, data: dict[str, Any], state: _Item) -> list[ir.Event]:
        """Text or arguments given only in a ``.done`` event, with no delta before it
        (LM Studio does this for arguments): said once, as a silent delta the Responses
        encoder does not write as an event of its own."""
        if kind == "response.function_call_arguments.done":
            arguments = data.get("arguments")
            if not state.args and isinstance(arguments, str) and arguments:
                state.args.append(arguments)
                return [ir.ToolArgsDelta(0, state.call or 0, arguments, {"~silent": True})]
        elif kind == "response.output_text.done":
            number = data.get("content_index", 0)
            text = data.get("text")
            if ("output_text", number) not in state.parts and isinstance(text, str) and text:
                state.parts[("output_text", number)] = [[text], []]
                return [ir.TextDelta(0, text, None, {"~silent": True})]
        return []

    def _canonical(self, kind: str, data: dict[str, Any], state: _Item) -> dict[str, Any] | None:
        index = data.get("output_index")
        if kind == "response.function_call_arguments.done":
            return shapes.arguments_done(state.id, index, "".join(state.args), state.name)
        summary = "summary" in kind
        number = data.get("summary_index" if summary else "content_index")
        part = data.get("part") if isinstance(data.get("part"), dict) else {}
        ptype = (
            "summary_text"
            if summary
            else {
                "response.output_text.done": "output_text",
                "response.refusal.done": "refusal",
                "response.reasoning_text.done": "reasoning_text",
                "response.reasoning.done": "reasoning_text",
            }.get(kind, part.get("type"))
        )
        if ptype not in ("summary_text", "output_text", "refusal", "reasoning_text"):
            return None
        if kind.endswith("part.added"):
            return shapes.part_added(state.id, index, number, ptype)
        texts, lps = state.parts.get((ptype, number), ([], []))
        pair = shapes.part_done(state.id, index, number, ptype, "".join(texts), lps)
        return pair[1] if kind.endswith("part.done") else pair[0]


def decode_usage(usage: dict[str, Any]) -> ir.Usage:
    """Responses ``usage`` → IR Usage; the rest of it stays as residue."""
    extra = {
        k: v for k, v in usage.items() if k not in ("input_tokens", "output_tokens", "total_tokens")
    }
    cached = reasoning = None
    details = extra.get("input_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        cached = details["cached_tokens"]
        _set_or_drop(
            extra,
            "input_tokens_details",
            {k: v for k, v in details.items() if k != "cached_tokens"},
        )
    details = extra.get("output_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("reasoning_tokens"), int):
        reasoning = details["reasoning_tokens"]
        _set_or_drop(
            extra,
            "output_tokens_details",
            {k: v for k, v in details.items() if k != "reasoning_tokens"},
        )
    return ir.Usage(
        _opt_int(usage.get("input_tokens")),
        _opt_int(usage.get("output_tokens")),
        _opt_int(usage.get("total_tokens")),
        cached,
        reasoning,
        extra,
    )


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


_HANDLERS = {
    "response.output_text.delta": ResponsesDecoder._text,
    "response.refusal.delta": ResponsesDecoder._refusal,
    "response.reasoning_summary_text.delta": ResponsesDecoder._summary,
    "response.reasoning_text.delta": ResponsesDecoder._reasoning_text,
    "response.reasoning.delta": ResponsesDecoder._reasoning_text,  # Open Responses' name
    "response.function_call_arguments.delta": ResponsesDecoder._arguments,
    "response.output_item.added": ResponsesDecoder._item_added,
    "response.output_item.done": ResponsesDecoder._item_done,
    "response.in_progress": ResponsesDecoder._lifecycle,
    "response.queued": ResponsesDecoder._lifecycle,
    "response.completed": ResponsesDecoder._terminal,
    "response.incomplete": ResponsesDecoder._terminal,
    "response.failed": ResponsesDecoder._terminal,
}

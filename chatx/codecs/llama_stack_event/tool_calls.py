"""Tool calls in the Llama Stack decoder: ``started`` → ``in_progress`` → ``succeeded``
or ``failed``, and the lone ``succeeded`` that follows a call written as text.

Fragments are raw model text (python, ``brave_search.call(...)``, a ``{"name", …}``
wrapper), and the call's id and name arrive only with ``succeeded``: the fragments are
held, and the call is said whole once the stream decides what it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir

from . import records as r

LS = r.LS
_HELD_STATUSES = ("started", "in_progress")


class ToolCallDecoding:
    """Mixed into :class:`~chatx.codecs.llama_stack_event.decode.LlamaStackDecoder`."""

    # What the decoder holds and does that this part uses (set or defined there).
    notes: Any
    id: str
    calls: int
    may_hold: bool
    text_out: bool
    hold: str | None
    held: list[dict[str, Any]]
    held_text: list[str]
    committed: bool
    stop: str | None
    pending: ir.Finish | None
    _open_message: Callable[[list[ir.Event]], None]
    _close_message: Callable[[list[ir.Event]], None]
    _release: Callable[[list[ir.Event]], None]
    _passthrough: Callable[[dict[str, Any], str, list[ir.Event]], None]
    _stop: Callable[..., Any]

    def _release_tool(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        value = data["event"]["delta"].get("tool_call")
        if (
            data["event"]["delta"].get("parse_status") != "in_progress"
            or not value
            or not isinstance(value, str)
        ):
            out.append(self._instruction(data))
            return
        self._open_message(out)
        canonical = r.event("progress", r.tool_delta("in_progress", value))
        out.append(
            ir.TextDelta(0, value, extra={LS: {"~in_progress": None, **r.residue(data, canonical)}})
        )
        self.may_hold = False
        self.text_out = True

    def _instruction(self, data: dict[str, Any]) -> ir.Meta:
        """A held record that becomes no IR content, described for the Llama encoder."""
        delta = data["event"]["delta"]
        if delta.get("type") == "text":
            key, value = "text", delta.get("text")
            text = value if isinstance(value, str) else ""
            canonical = r.event("progress", r.text_delta(text))
        else:
            key, value = delta.get("parse_status"), delta.get("tool_call")
            text = value if isinstance(value, str) else ""
            canonical = r.event("progress", r.tool_delta(key, text))
        return ir.Meta(0, {LS: {f"~{key}": text, **r.residue(data, canonical)}})

    # --- tool calls ---------------------------------------------------------------------

    def _tool_call(
        self,
        data: dict[str, Any],
        event: dict[str, Any],
        delta: dict[str, Any],
        out: list[ir.Event],
    ) -> None:
        status = delta.get("parse_status")
        if status in _HELD_STATUSES:
            if status == "started" or self.hold != "tool":
                self._release(out)
                self.hold = "tool"
            self.held.append(data)
        elif status == "succeeded" and isinstance(delta.get("tool_call"), dict):
            self._succeeded(data, event, delta["tool_call"], out)
        elif status == "failed":
            self._failed(data, event, delta.get("tool_call"), out)
        else:
            self._passthrough(data, f"tool_call delta with parse_status {status!r}", out)

    def _succeeded(
        self, data: dict[str, Any], event: dict[str, Any], call: dict[str, Any], out: list[ir.Event]
    ) -> None:
        held, hold = self.held, self.hold
        self.held, self.hold, self.held_text, self.committed = [], None, [], False
        arguments, as_string = r.arguments_text(call)
        streamed = _argument_fragments(held, arguments) if hold == "tool" else None
        # The started record (and, unless they are the arguments, the fragments) say no
        # more than the call: only the Llama encoder writes them back.
        out.extend(self._instruction(d) for d in (held[:1] if streamed else held))
        if hold is None and self.text_out and not self.calls:
            self.notes.warning(
                "text before this tool call may have been the call itself "
                "(it did not look like one): it stays message text"
            )
        self._close_message(out)
        number = self.calls
        self.calls += 1
        self.may_hold = False
        name = r.tool_name(call.get("tool_name"))
        cid = call.get("call_id")
        cid = cid if isinstance(cid, str) else r.call_id(self.id, number)
        out.append(ir.ItemStart(0, "tool_call", call=number, call_id=cid, name=name))
        if streamed:
            for held_data, fragment in streamed:
                canonical = r.event("progress", r.tool_delta("in_progress", fragment))
                ls = {"~in_progress": None, **r.residue(held_data, canonical)}
                out.append(ir.ToolArgsDelta(0, number, fragment, {LS: ls}))
        else:
            out.append(ir.ToolArgsDelta(0, number, arguments))
        end = ir.ItemEnd(0, "tool_call", call=number)
        out.append(end)
        ls = self._terminal_stop(event, out)
        payload = r.tool_call(cid, name, arguments, as_string)
        stop = self.stop
        ls.update(
            r.residue(data, r.event("progress", r.tool_delta("succeeded", payload), None, stop))
        )
        if as_string:
            ls["args_string"] = None
        if ls:
            end.extra = {LS: ls}

    def _failed(
        self, data: dict[str, Any], event: dict[str, Any], value: Any, out: list[ir.Event]
    ) -> None:
        """A call Llama Stack could not parse: its raw text is message text."""
        if self.hold == "text":
            self._release(out)
        held = self.held
        self.held, self.hold = [], None
        fragments = [
            d["event"]["delta"].get("tool_call")
            for d in held
            if d["event"]["delta"].get("parse_status") == "in_progress"
        ]
        joined = "".join(f for f in fragments if isinstance(f, str))
        if isinstance(value, str) and value and value != joined:
            # The failed text is not the fragments: it is the text, they are residue.
            out.extend(self._instruction(d) for d in held)
            self._open_message(out)
            text = ir.TextDelta(0, value, extra={LS: {"~failed": None}})
            out.append(text)
            meta_extra = text.extra[LS]
            shown = value
            self.may_hold, self.text_out = False, True
        else:
            for d in held:
                self._release_tool(d, out)
            mark = None if isinstance(value, str) and value else ""
            meta = ir.Meta(0, {LS: {"~failed": mark}})
            out.append(meta)
            meta_extra = meta.extra[LS]
            shown = value if mark is None else ""
        meta_extra.update(self._terminal_stop(event, out))
        canonical = r.event("progress", r.tool_delta("failed", shown), None, self.stop)
        meta_extra.update(r.residue(data, canonical))

    def _terminal_stop(self, event: dict[str, Any], out: list[ir.Event]) -> dict[str, Any]:
        """Read a tool record's stop reason; the residue that tells the Llama encoder the
        stop reason it writes on this record when its ``Finish`` is pending (later)."""
        pending = self.pending
        self._stop(event, out, terminal=True)
        return {"~stop": self.stop} if self.pending is not pending else {}

    # --- helpers ------------------------------------------------------------------------


def _argument_fragments(held: list[dict[str, Any]], arguments: str) -> list[tuple] | None:
    """The ``in_progress`` fragments with their records, when they are the call's JSON
    arguments (as chatx and Llama Stack's OpenAI-compat layer write them); ``None`` when
    they are the model's raw text (python, ``tool.call(…)``, a ``{"name", "parameters"}``
    envelope), which a JSON-arguments stream cannot carry."""
    if len(held) < 2 or held[0]["event"]["delta"].get("parse_status") != "started":
        return None
    out = []
    for data in held[1:]:
        value = data["event"]["delta"].get("tool_call")
        if not isinstance(value, str) or not value:
            return None
        out.append((data, value))
    return out if "".join(value for _, value in out) == arguments else None

"""Responses delta events in the decoder: text, refusal, reasoning (summary and text) and
function-call arguments, each kept on its item's part (the ``*.done`` events are checked
against them) and said as the IR delta; a delta of an item the IR has no words for stays
a passthrough record."""

from __future__ import annotations

from typing import Any, Literal

from chatx import ir
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.read_response import NAME, ItemState, PartState, ReadResponse

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


class DeltaReader:
    """The Responses decoder's part that reads delta events into the item they add to
    (:class:`~chatx.codecs.responses_event.read_response.ReadResponse`'s ``items``)."""

    __slots__ = ("read",)

    def __init__(self, read: ReadResponse) -> None:
        self.read = read

    def _delta(self, data: dict[str, Any], family: str) -> tuple[ItemState | None, dict[str, Any]]:
        state = self.read.items.get(data.get("output_index"))
        extra = {k: v for k, v in data.items() if k not in _DELTA_KEYS}
        if state is None or state.kind == "passthrough":
            return None, extra
        if data.get("item_id", state.id) != state.id:
            self.read.repaired("item_id changes within an item: the item's first id is kept")
        index = data.get("summary_index" if family == "summary_text" else "content_index", 0)
        part = state.parts.get((family, index))
        if part is None:
            part = state.parts[(family, index)] = PartState()
        delta = data.get("delta")
        if isinstance(delta, str):
            part.texts.append(delta)
        lps = data.get("logprobs")
        if isinstance(lps, list) and lps:
            part.logprobs.extend(lps)
        return state, extra

    def text(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "output_text")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        lps = data.get("logprobs")
        if lps is None:
            self.read.repaired("output_text.delta without logprobs: logprobs [] added")
        return [
            ir.TextDelta(
                0, shapes.as_str(data.get("delta")), lps if lps else None, extra, _padding(extra)
            )
        ]

    def refusal(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "refusal")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [ir.RefusalDelta(0, shapes.as_str(data.get("delta")), None, extra)]

    def summary(self, data: dict[str, Any]) -> list[ir.Event]:
        return self._reasoning(data, "summary_text", "summary", "summary_index")

    def reasoning_text(self, data: dict[str, Any]) -> list[ir.Event]:
        return self._reasoning(data, "reasoning_text", "text", "content_index")

    def _reasoning(
        self, data: dict[str, Any], family: str, kind: Literal["summary", "text"], index: str
    ) -> list[ir.Event]:
        state, extra = self._delta(data, family)
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [
            ir.ReasoningDelta(
                0,
                shapes.as_str(data.get("delta")),
                kind,
                shapes.as_int(data.get(index)),
                extra,
                obfuscation=_padding(extra),
            )
        ]

    def arguments(self, data: dict[str, Any]) -> list[ir.Event]:
        state = self.read.items.get(data.get("output_index"))
        if state is None or state.kind != "tool_call":
            return [ir.Passthrough(NAME, data, data.get("type"))]
        delta = shapes.as_str(data.get("delta"))
        state.args.append(delta)
        extra = {k: v for k, v in data.items() if k not in _DELTA_KEYS}
        return [ir.ToolArgsDelta(0, state.call or 0, delta, extra, _padding(extra))]


def _padding(extra: dict[str, Any]) -> str | None:
    """A delta event's obfuscation, taken out of its residue (see ``ir.OBFUSCATION``)."""
    value = extra.get("obfuscation")
    if type(value) is str:
        del extra["obfuscation"]
        return value
    return None

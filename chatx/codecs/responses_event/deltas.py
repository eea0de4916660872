"""Responses delta events in the decoder: text, refusal, reasoning (summary and text) and
function-call arguments, each kept on its item's part (the ``*.done`` events are checked
against them) and said as the IR delta; a delta of an item the IR has no words for stays
a passthrough record."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.items import NAME, ItemState, PartState

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


class DeltaDecoding:
    """The delta half of :class:`~chatx.codecs.responses_event.decode.ResponsesDecoder`."""

    items: dict[Any, ItemState]

    def _repaired(self, message: str) -> None:  # pragma: no cover - the decoder's
        raise NotImplementedError

    def _delta(self, data: dict[str, Any], family: str) -> tuple[ItemState | None, dict[str, Any]]:
        state = self.items.get(data.get("output_index"))
        extra = {k: v for k, v in data.items() if k not in _DELTA_KEYS}
        if state is None or state.kind == "passthrough":
            return None, extra
        if data.get("item_id", state.id) != state.id:
            self._repaired("item_id changes within an item: the item's first id is kept")
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

    def _text(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "output_text")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        lps = data.get("logprobs")
        if lps is None:
            self._repaired("output_text.delta without logprobs: logprobs [] added")
        return [
            ir.TextDelta(
                0, shapes.as_str(data.get("delta")), lps if lps else None, extra, _padding(extra)
            )
        ]

    def _refusal(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "refusal")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [ir.RefusalDelta(0, shapes.as_str(data.get("delta")), None, extra)]

    def _summary(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "summary_text")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [
            ir.ReasoningDelta(
                0,
                shapes.as_str(data.get("delta")),
                "summary",
                shapes.as_int(data.get("summary_index")),
                extra,
                obfuscation=_padding(extra),
            )
        ]

    def _reasoning_text(self, data: dict[str, Any]) -> list[ir.Event]:
        state, extra = self._delta(data, "reasoning_text")
        if state is None:
            return [ir.Passthrough(NAME, data, data.get("type"))]
        return [
            ir.ReasoningDelta(
                0,
                shapes.as_str(data.get("delta")),
                "text",
                shapes.as_int(data.get("content_index")),
                extra,
                obfuscation=_padding(extra),
            )
        ]

    def _arguments(self, data: dict[str, Any]) -> list[ir.Event]:
        state = self.items.get(data.get("output_index"))
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

"""The deltas the Responses encoder writes into the open item's parts: text, refusal,
reasoning (as a summary or as reasoning text) and a tool call's arguments, one event
each; a run's (:class:`~chatx.codecs.template.DeltaRun`) in one loop. A delta with no
item of its kind open opens one (:mod:`.encode_items`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from chatx import ir
from chatx.codecs.byte_template import Kept
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes

from .encode_items import Items
from .shapes import SILENT
from .written import OpenItem, OpenPart, ResponseState


@dataclass(slots=True, eq=False)
class Deltas:
    """Writes the deltas. ``items`` opens an item or a part a delta needs; ``reasoning``
    is how another format's reasoning is written (``summary`` or ``text``)."""

    state: ResponseState
    items: Items
    notes: Notes
    reasoning_mode: Literal["summary", "text"]  # another format's reasoning written as
    # The byte template of the last run's events, kept for the runs of the same part.
    kept: Kept = field(default_factory=Kept)

    def _text_part(self, lane: int, out: list[dict[str, Any]]) -> tuple[OpenItem, OpenPart]:
        """The open message and its open output_text part, opened if need be."""
        item = self.state.item
        if item is None or item.kind != "message":
            item = self.items.open("message", lane, out)
        part = item.part
        if part is None or part.kind != "output_text":
            part = self.items.part(item, "output_text", out)
        return item, part

    def text(self, event: ir.TextDelta, out: list[dict[str, Any]]) -> None:
        item, part = self._text_part(event.lane, out)
        part.texts.append(event.text)
        if event.own is SILENT:
            return  # the source gave this text only in output_text.done
        if event.logprobs:
            logprobs = event.logprobs if self.state.own else written_logprobs(event.logprobs)
        else:
            logprobs = []
        if logprobs:
            part.logprobs.extend(logprobs)
        payload = {
            "type": "response.output_text.delta",
            "item_id": item.id,
            "output_index": item.index,
            "content_index": part.number,
            "delta": event.text,
            "logprobs": logprobs,
        }
        if event.obfuscation is not None:
            payload["obfuscation"] = event.obfuscation
        if event.extra:
            self.state.emit(out, payload, event.extra)
        else:  # emit's work for a delta without residue (deltas are never patched)
            state = self.state
            payload["sequence_number"] = state.seq
            state.seq += 1
            out.append(payload)

    def text_run(self, run: DeltaRun, out: list[dict[str, Any]]) -> None:
        """``text`` for each text of a run (plain text: no logprobs, no residue)."""
        item, part = self._text_part(run.lane, out)
        part.texts.extend(run.texts)
        head = {
            "type": "response.output_text.delta",
            "item_id": item.id,
            "output_index": item.index,
            "content_index": part.number,
        }
        self._deltas(head, _NO_LOGPROBS, run, out)

    def refusal(self, event: ir.RefusalDelta, out: list[dict[str, Any]]) -> None:
        item = self.state.item
        if item is None or item.kind != "message":
            item = self.items.open("message", event.lane, out)
        part = self.items.part(item, "refusal", out)
        part.texts.append(event.text)
        if event.logprobs and not self.state.own:
            self.notes.lost_field("refusal logprobs")
        self.state.emit(
            out,
            {
                "type": "response.refusal.delta",
                "item_id": item.id,
                "output_index": item.index,
                "content_index": part.number,
                "delta": event.text,
            },
            event.extra,
        )

    def reasoning(self, event: ir.ReasoningDelta, out: list[dict[str, Any]]) -> None:
        item = self.state.item
        if item is None or item.kind != "reasoning":
            item = self.items.open("reasoning", event.lane, out)
        mode = event.kind if self.state.own else self.reasoning_mode
        part, head = self._reasoning_part(item, mode, event.part, out)
        part.texts.append(event.text)
        payload = {**head, "delta": event.text}
        if event.obfuscation is not None:
            payload["obfuscation"] = event.obfuscation
        self.state.emit(out, payload, event.extra)

    def reasoning_run(
        self, run: DeltaRun, out: list[dict[str, Any]], mode: str | None = None
    ) -> None:
        """``reasoning`` for each text of a run (no residue), written in ``mode`` (a
        Responses source's own kind), else the encoder's reasoning mode."""
        proto: ir.ReasoningDelta = run.proto  # type: ignore[assignment]
        self.notes.line = run.lines[0]  # what opening an item says is the first record's
        item = self.state.item
        if item is None or item.kind != "reasoning":
            item = self.items.open("reasoning", run.lane, out)
        mode = mode or self.reasoning_mode
        part, head = self._reasoning_part(item, mode, proto.part, out)
        part.texts.extend(run.texts)
        self._deltas(head, {}, run, out)

    def _reasoning_part(
        self, item: OpenItem, mode: str, number: int, out: list[dict[str, Any]]
    ) -> tuple[OpenPart, dict[str, Any]]:
        """The reasoning item's part its deltas go to (a summary part, the ``number``-th
        of the source, in ``summary`` mode; else its reasoning text), and what each
        delta event says before its text."""
        if mode == "summary":
            part = self.items.part(item, "summary_text", out, number)
            kind, index = "response.reasoning_summary_text.delta", "summary_index"
        else:
            part = self.items.part(item, "reasoning_text", out)
            kind, index = "response.reasoning_text.delta", "content_index"
        head = {"type": kind, "item_id": item.id, "output_index": item.index, index: part.number}
        return part, head

    def args(self, event: ir.ToolArgsDelta, out: list[dict[str, Any]]) -> None:
        item = self.state.item
        if item is None or item.kind != "tool_call" or item.call != event.call:
            if event.call in self.state.calls:
                self.notes.warning(
                    f"arguments for tool call {event.call} arrived after the "
                    "call was closed: left out of the Responses stream"
                )
                return
            item = self.items.open(
                "tool_call", event.lane, out, ir.ItemStart(event.lane, "tool_call", call=event.call)
            )
        if not event.fragment and not event.extra and event.obfuscation is None:
            return
        item.args.append(event.fragment)
        if event.own is SILENT:
            return  # the source had these arguments in the item, not in a delta event
        payload = {**_args_head(item), "delta": event.fragment}
        if event.obfuscation is not None:
            payload["obfuscation"] = event.obfuscation
        self.state.emit(out, payload, event.extra)

    def args_run(self, run: DeltaRun, out: list[dict[str, Any]]) -> None:
        """``args`` for each fragment of a run, the call's item already open."""
        item = self.state.item
        assert item is not None  # the encoder sends no run of a call that is not open
        item.args.extend(run.texts)
        self._deltas(_args_head(item), {}, run, out)

    def _deltas(
        self,
        head: dict[str, Any],
        tail: dict[str, Any],
        run: DeltaRun,
        out: list[Any],
    ) -> None:
        """One delta event per text of ``run``: ``head``, the text, ``tail``, its
        obfuscation and sequence number, as ``emit`` writes a delta without residue. A
        long run's events are written from a byte template of them (:class:`Delta`)."""
        state = self.state
        seq = state.seq
        texts = run.texts
        state.seq = seq + len(texts)
        key = (*head.items(), *tail.items())
        out += self.kept.records(
            key, Delta(head, tail), texts, run.obfuscations, seq, numbered=True, name=head["type"]
        )


class Delta:
    """The delta event of a text, its obfuscation and its sequence number: ``head``, the
    text, ``tail``, then those two (a run's events: each its own dict, as the writers
    and a template need)."""

    __slots__ = ("head", "tail")

    def __init__(self, head: dict[str, Any], tail: dict[str, Any]) -> None:
        self.head = head
        self.tail = tail

    def __call__(self, text: str, obfuscation: str | None, number: Any) -> dict[str, Any]:
        payload = {**self.head, "delta": text, **self.tail}
        if obfuscation is not None:
            payload["obfuscation"] = obfuscation
        payload["sequence_number"] = number
        return payload


def _args_head(item: OpenItem) -> dict[str, Any]:
    """What an arguments delta event of the call's item says before its fragment."""
    return {
        "type": "response.function_call_arguments.delta",
        "item_id": item.id,
        "output_index": item.index,
    }


# What a delta written from a run has after its text: logprobs, of which it has none.
# One list for all of them: payloads are written, never changed.
_NO_LOGPROBS: dict[str, Any] = {"logprobs": []}


def _logprob(entry: dict[str, Any]) -> dict[str, Any]:
    # Responses logprobs need ``bytes`` as a list of ints; chat sends null for special
    # tokens, which have no bytes: the empty list says that.
    data = entry.get("bytes")
    return {
        "token": entry.get("token", ""),
        "logprob": entry.get("logprob", 0.0),
        "bytes": data if isinstance(data, list) else [],
    }


def written_logprobs(entries: list[Any]) -> list[Any]:
    """Chat logprob entries → Responses ones: the same fields, ``top_logprobs`` kept."""
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        converted = _logprob(entry)
        tops = entry.get("top_logprobs")
        converted["top_logprobs"] = (
            [_logprob(top) for top in tops if isinstance(top, dict)]
            if isinstance(tops, list)
            else []
        )
        out.append(converted)
    return out

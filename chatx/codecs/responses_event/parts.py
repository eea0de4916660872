"""Responses parts and deltas in the encoder: content parts opened on demand, deltas,
and each part's ``*.done`` pair, with the text joined once when the part closes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from chatx import ir
from chatx.codecs.responses_event import shapes
from chatx.codecs.template import DeltaRun
from chatx.pieces import Pieces


class Annotates(Protocol):
    """What a closing part needs of the encoder's citations (:class:`.citations.Citations`,
    which imports this module): its annotation events written, its annotations set."""

    def annotate(self, item: OpenItem, part: OpenPart, out: list[dict[str, Any]]) -> None: ...


class Emit(Protocol):
    """The encoder's output stage: ``payload`` (``extra``, its residue, merged or
    reported) numbered and appended to ``out``."""

    def __call__(
        self,
        out: list[dict[str, Any]],
        payload: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> None: ...


@dataclass(slots=True)
class OpenPart:
    """A part of the open item: its type (``output_text``, ``refusal``, ``summary_text``
    or ``reasoning_text``), its text so far, its index among the item's content (or
    summary) parts, and the logprobs its deltas carried; another format's citations
    (``cites``: each with where in the text it came), said as ``annotations`` when the
    part closes (:mod:`.citations`)."""

    kind: str
    texts: Pieces
    number: int
    logprobs: list[Any] = field(default_factory=list)
    cites: list[tuple[ir.Citation, int]] = field(default_factory=list)
    annotations: list[dict[str, Any]] = field(default_factory=list)


class OpenItem:
    """An open output item and the text it has streamed so far (joined once, at done)."""

    __slots__ = (
        "kind",
        "id",
        "index",
        "call",
        "call_id",
        "name",
        "extra",
        "parts",
        "part",
        "args",
        "summary_mode",
        "search",
    )

    def __init__(self, kind: str, iid: str, index: int) -> None:
        self.kind = kind
        self.id = iid
        self.index = index
        self.call: int | None = None
        self.call_id: str | None = None
        self.name: str | None = None
        self.extra: dict[str, Any] = {}
        self.parts: list[OpenPart] = []
        self.part: OpenPart | None = None
        self.args = Pieces()
        self.summary_mode = True
        self.search: Any = None  # a web search item's SearchState (.searches)

    def done(self) -> dict[str, Any]:
        """The item its ``output_item.done`` says, a message or a reasoning item, its
        parts' texts joined."""
        parts = self.parts
        if self.kind == "message":
            return shapes.message_item(self.id, "completed", [message_part(p) for p in parts])
        summary = [shapes.summary_part(p.texts.text()) for p in parts if p.kind == "summary_text"]
        content = [
            shapes.reasoning_text_part(p.texts.text()) for p in parts if p.kind == "reasoning_text"
        ]
        return shapes.reasoning_item(self.id, summary, content)


class PartEncoding:
    """The part half of :class:`~chatx.codecs.responses_event.encode.ResponsesEncoder`."""

    item: OpenItem | None
    own: bool
    calls: set[int]
    seq: int
    notes: Any
    options: Any
    citations: Annotates

    def _emit(
        self,
        out: list[dict[str, Any]],
        payload: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> None:  # pragma: no cover
        raise NotImplementedError

    def _open(
        self, kind: str, lane: int, out: list[dict[str, Any]], start: ir.ItemStart | None = None
    ) -> OpenItem:  # pragma: no cover
        raise NotImplementedError

    def _part(
        self, item: OpenItem, ptype: str, out: list[dict[str, Any]], number: int = 0
    ) -> OpenPart:
        """The open part of ``ptype`` (summary parts also by number), opened if need be."""
        part = item.part
        if (
            part is not None
            and part.kind == ptype
            and (ptype != "summary_text" or part.number == number)
        ):
            return part
        self._close_part(item, out)
        part = OpenPart(ptype, Pieces(), number if ptype == "summary_text" else len(item.parts))
        item.parts.append(part)
        item.part = part
        self._emit(out, shapes.part_added(item.id, item.index, part.number, ptype))
        return part

    def _close_part(self, item: OpenItem, out: list[dict[str, Any]]) -> None:
        part = item.part
        if part is None:
            return
        item.part = None
        if part.cites:
            self.citations.annotate(item, part, out)
        payloads = shapes.part_done(
            item.id, item.index, part.number, part.kind, part.texts.text(), part.logprobs
        )
        if part.annotations:
            payloads[-1]["part"]["annotations"] = list(part.annotations)
        for payload in payloads:
            self._emit(out, payload)

    def _text_part(self, lane: int, out: list[dict[str, Any]]) -> tuple[OpenItem, OpenPart]:
        """The open message and its open output_text part, opened if need be."""
        item = self.item
        if item is None or item.kind != "message":
            item = self._open("message", lane, out)
        part = item.part
        if part is None or part.kind != "output_text":
            part = self._part(item, "output_text", out)
        return item, part

    def _text(self, event: ir.TextDelta, out: list[dict[str, Any]]) -> None:
        item, part = self._text_part(event.lane, out)
        part.texts.append(event.text)
        if self.own and event.extra and event.extra.get("~silent"):
            return  # the source gave this text only in output_text.done
        if event.logprobs:
            logprobs = event.logprobs if self.own else _logprobs(event.logprobs)
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
            self._emit(out, payload, event.extra)
        else:  # _emit's work for a delta without residue (deltas are never patched)
            payload["sequence_number"] = self.seq
            self.seq += 1
            out.append(payload)

    def _text_run(self, run: DeltaRun, out: list[dict[str, Any]]) -> None:
        """``_text`` for each text of a run (plain text: no logprobs, no residue)."""
        item, part = self._text_part(run.lane, out)
        part.texts.extend(run.texts)
        head = {
            "type": "response.output_text.delta",
            "item_id": item.id,
            "output_index": item.index,
            "content_index": part.number,
        }
        self._deltas(head, _NO_LOGPROBS, run, out)

    def _refusal(self, event: ir.RefusalDelta, out: list[dict[str, Any]]) -> None:
        item = self.item
        if item is None or item.kind != "message":
            item = self._open("message", event.lane, out)
        part = self._part(item, "refusal", out)
        part.texts.append(event.text)
        if event.logprobs and not self.own:
            self.notes.lost_field("refusal logprobs")
        self._emit(
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

    def _reasoning(self, event: ir.ReasoningDelta, out: list[dict[str, Any]]) -> None:
        item = self.item
        if item is None or item.kind != "reasoning":
            item = self._open("reasoning", event.lane, out)
        mode = event.kind if self.own else self.options.reasoning
        if mode == "summary":
            part = self._part(item, "summary_text", out, event.part)
            part.texts.append(event.text)
            payload = {
                "type": "response.reasoning_summary_text.delta",
                "item_id": item.id,
                "output_index": item.index,
                "summary_index": part.number,
                "delta": event.text,
            }
        else:
            part = self._part(item, "reasoning_text", out)
            part.texts.append(event.text)
            payload = {
                "type": "response.reasoning_text.delta",
                "item_id": item.id,
                "output_index": item.index,
                "content_index": part.number,
                "delta": event.text,
            }
        if event.obfuscation is not None:
            payload["obfuscation"] = event.obfuscation
        self._emit(out, payload, event.extra)

    def _args(self, event: ir.ToolArgsDelta, out: list[dict[str, Any]]) -> None:
        item = self.item
        if item is None or item.kind != "tool_call" or item.call != event.call:
            if event.call in self.calls:
                self.notes.warning(
                    f"arguments for tool call {event.call} arrived after the "
                    "call was closed: left out of the Responses stream"
                )
                return
            item = self._open(
                "tool_call", event.lane, out, ir.ItemStart(event.lane, "tool_call", call=event.call)
            )
        if not event.fragment and not event.extra and event.obfuscation is None:
            return
        item.args.append(event.fragment)
        if self.own and event.extra.get("~silent"):
            return  # the source had these arguments in the item, not in a delta event
        payload = {
            "type": "response.function_call_arguments.delta",
            "item_id": item.id,
            "output_index": item.index,
            "delta": event.fragment,
        }
        if event.obfuscation is not None:
            payload["obfuscation"] = event.obfuscation
        self._emit(out, payload, event.extra)

    def _args_run(self, run: DeltaRun, out: list[dict[str, Any]]) -> None:
        """``_args`` for each fragment of a run, the call's item already open."""
        item = self.item
        assert item is not None  # feed_run sends no run of a call that is not open
        item.args.extend(run.texts)
        head = {
            "type": "response.function_call_arguments.delta",
            "item_id": item.id,
            "output_index": item.index,
        }
        self._deltas(head, {}, run, out)

    def _deltas(
        self,
        head: dict[str, Any],
        tail: dict[str, Any],
        run: DeltaRun,
        out: list[dict[str, Any]],
    ) -> None:
        """One delta event per text of ``run``: ``head``, the text, ``tail``, its
        obfuscation and sequence number, as ``_emit`` writes a delta without residue."""
        seq = self.seq
        for text, obfuscation in zip(run.texts, run.obfuscations, strict=True):
            payload = {**head, "delta": text, **tail}
            if obfuscation is not None:
                payload["obfuscation"] = obfuscation
            payload["sequence_number"] = seq
            seq += 1
            out.append(payload)
        self.seq = seq


# What a delta written from a run has after its text: logprobs, of which it has none.
# One list for all of them: payloads are written, never changed.
_NO_LOGPROBS: dict[str, Any] = {"logprobs": []}


def message_part(part: OpenPart) -> dict[str, Any]:
    text = part.texts.text()
    if part.kind == "refusal":
        return shapes.refusal_part(text)
    said = shapes.text_part(text, part.logprobs)
    if part.annotations:
        said["annotations"] = list(part.annotations)
    return said


def _logprob(entry: dict[str, Any]) -> dict[str, Any]:
    # Responses logprobs need ``bytes`` as a list of ints; chat sends null for special
    # tokens, which have no bytes: the empty list says that.
    data = entry.get("bytes")
    return {
        "token": entry.get("token", ""),
        "logprob": entry.get("logprob", 0.0),
        "bytes": data if isinstance(data, list) else [],
    }


def _logprobs(entries: list[Any]) -> list[Any]:
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

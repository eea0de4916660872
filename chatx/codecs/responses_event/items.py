"""Responses items in the decoder: added and done, and the derived events between.

``*.done`` events and part-added events repeat what the deltas said: the decoder
compares them with canonical shapes (:mod:`shapes`) and keeps only the difference, as a
patch the Responses encoder applies, so Responses → Responses gives back the source.
"""

from __future__ import annotations

from typing import Any, Literal

from chatx import ir
from chatx.codecs.responses_event import searches, shapes
from chatx.codecs.responses_event.read_response import NAME, ItemState, PartState, ReadResponse
from chatx.codecs.responses_event.shapes import SILENT, ResponsesOwn
from chatx.pieces import Pieces
from chatx.residue import Carried, diff

_ITEM_KINDS = {"message": "message", "reasoning": "reasoning", "function_call": "tool_call"}
# An item's kind (ItemState.kind, not a passthrough) as the IR says it.
_ITEM_KINDS_IR: dict[str, ir.ItemKind] = {
    "message": "message",
    "reasoning": "reasoning",
    "tool_call": "tool_call",
}
# A text done event → the part family its deltas are kept under, and its text field.
_TEXT_DONE = {
    "response.output_text.done": ("output_text", "text"),
    "response.refusal.done": ("refusal", "refusal"),
    "response.reasoning_text.done": ("reasoning_text", "text"),
    "response.reasoning.done": ("reasoning_text", "text"),
    "response.reasoning_summary_text.done": ("summary_text", "text"),
}


def _beside_item(data: dict[str, Any]) -> dict[str, Any]:
    """What an output_item event says beside its item: the event's own residue."""
    return {
        k: v
        for k, v in data.items()
        if k not in ("type", "item", "output_index", "sequence_number")
    }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class ItemReader:
    """The Responses decoder's part that reads items: added and done, and the derived
    events between. It shares the
    :class:`~chatx.codecs.responses_event.read_response.ReadResponse` with the decoder."""

    __slots__ = ("read",)

    def __init__(self, read: ReadResponse) -> None:
        self.read = read

    def added(self, data: dict[str, Any]) -> list[ir.Event]:
        item = data.get("item")
        if not isinstance(item, dict):
            item = {}
        itype = item.get("type")
        kind = _ITEM_KINDS.get(itype) if isinstance(itype, str) else None
        index = data.get("output_index")
        if self.read.unfinished:
            self.read.repaired(
                "an item was added before the previous one was done: items "
                "written one after another"
            )
        iid = str(item.get("id") or "")
        self.read.unfinished.add(index)
        if kind is None:
            self.read.items[index] = ItemState("passthrough", iid)
            return [ir.Passthrough(NAME, data, data.get("type"), meaning=searches.begin(item))]
        state = self.read.items[index] = ItemState(kind, iid)
        event_extra = _beside_item(data)
        canonical, start = self._opened(state, item)
        patch = diff(item, canonical)
        if patch or event_extra:
            start.extra = {"added": patch, "event": event_extra}
        out: list[ir.Event] = [start]
        if kind == "tool_call" and isinstance(item.get("arguments"), str) and item["arguments"]:
            # Some servers put the whole call in the added item and stream nothing.
            # Silent: the arguments were in the item, not in delta events; Responses
            # output keeps them there.
            state.args.append(item["arguments"])
            out.append(ir.ToolArgsDelta(0, state.call or 0, item["arguments"], {}, None, SILENT))
        return out

    def _opened(self, state: ItemState, item: dict[str, Any]) -> tuple[Any, ir.ItemStart]:
        """The canonical added item of ``state``'s kind, and the IR item it starts."""
        iid = state.id
        if state.kind == "message":
            return shapes.message_item(iid, "in_progress", []), ir.ItemStart(0, "message", iid)
        if state.kind == "reasoning":
            return shapes.reasoning_item(iid, [], None), ir.ItemStart(0, "reasoning", iid)
        state.call = self.read.calls
        self.read.calls += 1
        # Ids and names of another JSON type are not ones: the patch keeps them.
        call_id, name = item.get("call_id"), item.get("name")
        state.call_id = call_id if isinstance(call_id, str) else None
        state.name = name if isinstance(name, str) else None
        canonical = shapes.function_item(iid, "in_progress", "", state.call_id, state.name)
        return canonical, ir.ItemStart(0, "tool_call", iid, state.call, state.call_id, state.name)

    def done(self, data: dict[str, Any]) -> list[ir.Event]:
        item = data.get("item")
        if not isinstance(item, dict):
            item = {}
        state = self.read.items.get(data.get("output_index"))
        if state is None:
            self.read.notes.repaired("output_item.done for an item never added: read as added then")
            state = self._adopt(data, item)
        state.done = True
        self.read.unfinished.discard(data.get("output_index"))
        if state.kind == "passthrough":
            self.read.output.append(item)
            return [ir.Passthrough(NAME, data, data.get("type"), meaning=searches.end(item))]
        self._check_derived(state)
        out: list[ir.Event] = []
        canonical, shown = self._closed(state, out, item)
        kind: ir.ItemKind = _ITEM_KINDS_IR[state.kind]
        event_extra = _beside_item(data)
        patch = diff(item, canonical)
        if state.kept:
            # The parts as the deltas said them (see _catch_up), the done item's aside.
            patch.pop("content", None)
            patch.pop("summary", None)
        # The same item, but built on the text the deltas gave: the record's own copy of
        # a long text is not kept until the terminal event.
        self.read.output.append(canonical if not patch else item)
        extra = {}
        if patch:
            extra["item"] = patch
        if event_extra:
            extra["event"] = event_extra
        end = ir.ItemEnd(0, kind, state.call, extra)
        if kind == "reasoning":
            _seal(end, item, shown)
        out.append(end)
        return out

    def _closed(
        self, state: ItemState, out: list[ir.Event], item: dict[str, Any]
    ) -> tuple[Any, bool]:
        """The canonical done item of ``state``, and whether it showed any reasoning text
        (by which a reasoning item's encrypted_content is read); the text the done item
        says beyond the deltas goes to ``out`` as more deltas."""
        if state.kind == "message":
            return shapes.message_item(state.id, "completed", self._parts(state, out, item)), False
        if state.kind == "reasoning":
            summary, content = self._reasoning_parts(state, out, item)
            # A part shown, even empty (Anthropic's empty thinking with its signature),
            # makes encrypted_content a signature; none, the reasoning withheld.
            return shapes.reasoning_item(state.id, summary, content), bool(summary or content)
        arguments = item.get("arguments")
        joined = state.args.text()
        if isinstance(arguments, str) and arguments != joined:
            if arguments.startswith(joined):
                out.append(ir.ToolArgsDelta(0, state.call or 0, arguments[len(joined) :]))
                state.args.append(arguments[len(joined) :])
            else:
                self.read.notes.repaired(
                    "function call arguments differ from their deltas: the deltas are kept"
                )
        canonical = shapes.function_item(
            state.id, "completed", state.args.text(), state.call_id, state.name
        )
        return canonical, False

    def _check_derived(self, state: ItemState) -> None:
        if state.kind == "tool_call":
            if "response.function_call_arguments.done" not in state.seen:
                self.read.repaired("function call without function_call_arguments.done: added")
        elif (
            state.parts
            and "response.content_part.done" not in state.seen
            and not (
                state.kind == "reasoning" and "response.reasoning_summary_part.done" in state.seen
            )
        ):
            self.read.repaired("content parts without their done events: added")

    def _adopt(self, data: dict[str, Any], item: dict[str, Any]) -> ItemState:
        state = ItemState("passthrough", str(item.get("id") or ""))
        self.read.items[data.get("output_index")] = state
        return state

    def _parts(self, state: ItemState, out: list[ir.Event], item: dict[str, Any]) -> list[Any]:
        parts = []
        for (family, _), kept in state.parts.items():
            text = kept.texts.text()
            parts.append(
                shapes.refusal_part(text)
                if family == "refusal"
                else shapes.text_part(text, kept.logprobs)
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
        self, state: ItemState, out: list[ir.Event], item: dict[str, Any]
    ) -> tuple[list[Any], list[Any]]:
        summary = [
            shapes.summary_part(kept.texts.text())
            for (family, _), kept in state.parts.items()
            if family == "summary_text"
        ]
        content = [
            shapes.reasoning_text_part(kept.texts.text())
            for (family, _), kept in state.parts.items()
            if family == "reasoning_text"
        ]
        if not summary and not content:
            for number, part in enumerate(item.get("summary") or ()):
                if isinstance(part, dict) and type(part.get("text")) is str:
                    if part["text"]:
                        out.append(ir.ReasoningDelta(0, part["text"], "summary", number))
                    # An empty one too: it says a summary was shown (see _seal).
                    summary.append(shapes.summary_part(part["text"]))
        return summary, content

    def derived(self, kind: str, data: dict[str, Any]) -> list[ir.Event]:
        """A ``*.done`` or part-added event: derived data, kept as a patch when it differs."""
        state = self.read.items.get(data.get("output_index"))
        if state is None or state.kind == "passthrough":
            return [ir.Passthrough(NAME, data, data.get("type"))]
        state.seen.add(kind)
        out: list[ir.Event] = self._done_only(kind, data, state)
        kept = self._catch_up(kind, data, state, out)
        canonical = self._canonical(kind, data, state)
        patch = _derived_patch(kind, data, canonical, kept)
        derived = {shapes.derived_key(data): patch} if patch else None
        open_part = None
        if kind.endswith("part.added") and canonical is not None:
            # Open the part where the source did: a part may never get a delta.
            number = data.get("summary_index" if "summary" in kind else "content_index")
            open_part = (canonical["part"]["type"], number)
        if derived is not None or open_part is not None:
            own = ResponsesOwn(derived=derived, open_part=open_part)
            out.append(ir.Meta(None, {}, None, None, own))
        return out

    def _catch_up(
        self, kind: str, data: dict[str, Any], state: ItemState, out: list[ir.Event]
    ) -> str | None:
        """A done event whose text is not its deltas joined (a fixture whose author cut
        deltas out): when it goes on from them, the rest is said as one more delta; else
        the deltas are kept, and the name of the field to leave out of the patch is
        returned. Either way every done event of the part then says the streamed text."""
        summary = "summary" in kind
        if kind.endswith("part.done"):
            part = _dict(data.get("part"))
            family = part.get("type")
            field = "refusal" if family == "refusal" else "text"
            final = part.get(field)
        else:
            family, field = _TEXT_DONE.get(kind, (None, "text"))
            final = data.get(field)
        number = data.get("summary_index" if summary else "content_index")
        kept = state.parts.get((family, number)) if isinstance(family, str) else None
        if kept is None or not isinstance(final, str):
            return None
        joined = kept.texts.text()
        if final == joined:
            return None
        if not final.startswith(joined):
            self.read.repaired("a done event's text differs from its deltas: the deltas are kept")
            state.kept = True
            return field
        rest = final[len(joined) :]
        kept.texts.append(rest)
        self.read.repaired(
            "a done event's text goes on after its deltas: the rest is one more delta"
        )
        if family == "output_text":
            out.append(ir.TextDelta(0, rest))
        elif family == "refusal":
            out.append(ir.RefusalDelta(0, rest))
        else:
            kind_: Literal["summary", "text"] = "summary" if family == "summary_text" else "text"
            out.append(ir.ReasoningDelta(0, rest, kind_, _number(number)))
        return None

    def _done_only(self, kind: str, data: dict[str, Any], state: ItemState) -> list[ir.Event]:
        """Text or arguments given only in a ``.done`` event, with no delta before it
        (LM Studio does this for arguments): said once, as a silent delta the Responses
        encoder does not write as an event of its own."""
        if kind == "response.function_call_arguments.done":
            arguments = data.get("arguments")
            if not state.args and isinstance(arguments, str) and arguments:
                state.args.append(arguments)
                return [ir.ToolArgsDelta(0, state.call or 0, arguments, {}, None, SILENT)]
        elif kind == "response.output_text.done":
            number = data.get("content_index", 0)
            text = data.get("text")
            if ("output_text", number) not in state.parts and isinstance(text, str) and text:
                state.parts[("output_text", number)] = PartState(Pieces.of(text))
                return [ir.TextDelta(0, text, None, {}, None, SILENT)]
        return []

    def _canonical(
        self, kind: str, data: dict[str, Any], state: ItemState
    ) -> dict[str, Any] | None:
        index: Any = data.get("output_index")  # a JSON value, written back as it is
        if kind == "response.function_call_arguments.done":
            return shapes.arguments_done(state.id, index, state.args.text(), state.name)
        summary = "summary" in kind
        number: Any = data.get("summary_index" if summary else "content_index")
        part = _dict(data.get("part"))
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
        kept = state.parts.get((ptype, number)) or PartState()
        pair = shapes.part_done(state.id, index, number, ptype, kept.texts.text(), kept.logprobs)
        return pair[1] if kind.endswith("part.done") else pair[0]


def _derived_patch(
    kind: str, data: dict[str, Any], canonical: dict[str, Any] | None, kept: str | None
) -> dict[str, Any]:
    """What a derived event says that its ``canonical`` form does not; the text field
    ``kept`` left out (the deltas are kept: the done event says their text, as the
    stream did)."""
    source = {k: v for k, v in data.items() if k != "sequence_number"}
    patch = diff(source, canonical) if canonical is not None else {}
    if kept is not None:
        part = patch.get("part") if kind.endswith("part.done") else None
        (part if isinstance(part, dict) else patch).pop(kept, None)
        if part == {}:
            del patch["part"]
    return patch


def _seal(end: ir.ItemEnd, item: dict[str, Any], shown: bool) -> None:
    """A reasoning item's ``encrypted_content`` closes it: a signature of the text it
    showed (a summary or reasoning text), else the reasoning withheld, as the Responses
    encoder writes each. It stays the done item's patch, so Responses output gives it back
    as it came; another format reports the rest of the patch (:class:`Carried`)."""
    token = item.get("encrypted_content")
    patch = end.extra.get("item")
    if type(token) is not str or not token or type(patch) is not dict:
        return
    if shown:
        end.signature = token
    else:
        end.encrypted = token
    extra = end.extra = Carried(end.extra)
    extra.rest["item"] = {**patch, "encrypted_content": None}

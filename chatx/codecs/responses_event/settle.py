"""Responses → Responses: the items of a stream agree with its terminal event.

A Responses stream's terminal ``response.output`` is the list of the items closed, in
``output_index`` order, and every added item is closed before it (DESIGN §5, rules 4 and
7). The Responses encoder writes its own items so; a source's items it passes through as
they came (built-in tools, MCP) and a source's terminal object it gives back from the
decoder's patch. Where the source breaks those rules, this is the repair:

* an item added and never closed (OpenAI leaves ``mcp_list_tools`` items open; clients
  such as pydantic-ai backfill them from the terminal object) gets its
  ``output_item.done`` just before the terminal event, with its entry in the terminal
  ``response.output`` (the added item, completed, when there is none);
* a passed-through item whose value streamed in ``.delta`` events without its ``.done``
  event (a trimmed fixture) gets that ``.done``, with the deltas joined, before the item
  is closed;
* a lifecycle event whose status is not its type's says its type's, and an item closed
  without being added is added first;
* ids that change within a stream (:class:`Ids`) are written as they came first;
* a terminal ``response.output`` that differs from the items closed (OpenRouter renames a
  reasoning item, xAI's action grows after its done event) is replaced by them: the
  events a streaming client read are what the stream says.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import zip_longest
from typing import Any

from chatx.notes import Notes
from chatx.pieces import Pieces

# Fields a server may seal again for the terminal object, so that they differ from the
# item's done event (reasoning encrypted_content, a program item's fingerprint): the same
# item all the same, as validate reads it.
OPAQUE = frozenset({"encrypted_content", "fingerprint"})
# The value fields of the ``.done`` events of items chatx passes through as they came.
DONE_FIELD = {
    "response.custom_tool_call_input": "input",
    "response.mcp_call_arguments": "arguments",
    "response.code_interpreter_call_code": "code",
    "response.apply_patch_call_operation_diff": "diff",
}


class Values:
    """The ``.delta`` values of passed-through items, to close one whose ``.done`` is
    missing: (output_index, family) → the deltas joined so far, or None once done."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: dict[tuple[Any, str], Pieces | None] = {}

    def see(self, data: dict[str, Any], index: Any) -> None:
        family, _, action = str(data.get("type")).rpartition(".")
        if family not in DONE_FIELD:
            return
        if action == "done":
            self.open[(index, family)] = None
        elif action == "delta" and isinstance(data.get("delta"), str):
            pieces = self.open.setdefault((index, family), Pieces())
            if pieces is not None:
                pieces.append(data["delta"])

    def missing(self, index: Any, item_id: Any, notes: Notes) -> list[dict[str, Any]]:
        """The ``.done`` events item ``index`` lacks, to write before it is closed."""
        out = []
        for (at, family), pieces in list(self.open.items()):
            if at != index:
                continue
            del self.open[(at, family)]
            if pieces is not None:
                notes.repaired(f"{family}.delta without {family}.done: added")
                done = {"type": f"{family}.done", "item_id": item_id, "output_index": index}
                out.append({**done, DONE_FIELD[family]: pieces.text()})
        return out


class Ids:
    """The ids a stream gave first: its response's, and each item's (by output_index).

    Events that a Responses source gives back through its residue keep the ids they came
    with; a proxy that renames every event (GitHub Copilot's) would so write an item
    under several ids. They are written with the first ones, as the decoder reads the
    deltas, and chatx says so once."""

    __slots__ = ("items", "response", "said")

    def __init__(self) -> None:
        self.items: dict[Any, Any] = {}
        self.response: Any = None
        self.said = False

    def keep(self, payload: dict[str, Any], notes: Notes) -> None:
        changed = False
        want = self.items.get(payload.get("output_index"))
        if want is not None:
            if payload.get("item_id", want) != want:
                payload["item_id"] = want
                changed = True
            item = payload.get("item")
            if isinstance(item, dict) and item.get("id", want) != want:
                payload["item"] = {**item, "id": want}
                changed = True
        response = payload.get("response")
        if isinstance(response, dict) and response.get("id", self.response) != self.response:
            response["id"] = self.response
            changed = True
        if changed and not self.said:
            self.said = True
            notes.repaired("ids change within the stream: the first ones are kept")


# The status each lifecycle event's response has (DESIGN §5, Responses rules 1 and 3).
STATUS = {
    "response.created": ("in_progress", "queued"),
    "response.queued": ("queued",),
    "response.in_progress": ("in_progress",),
    "response.completed": ("completed",),
    "response.incomplete": ("incomplete",),
    "response.failed": ("failed",),
}


def lifecycle_status(payload: dict[str, Any], notes: Notes) -> None:
    """A lifecycle or terminal event whose response has no status, or another type's
    (a trimmed fixture's), says the one its type means."""
    allowed = STATUS.get(payload.get("type"))  # type: ignore[arg-type]
    response = payload.get("response")
    if allowed is None or not isinstance(response, dict) or response.get("status") in allowed:
        return
    notes.repaired(
        f"{payload['type']} with response.status {response.get('status')!r}: {allowed[0]!r} written"
    )
    response["status"] = allowed[0]


ADDED, DONE = "response.output_item.added", "response.output_item.done"


class Passing:
    """The items a Responses source's own events carry through as they came (built-in
    tools, MCP…): their output_index in the output (items are numbered 0, 1, 2… as they
    are added), those still open, and the values they stream."""

    __slots__ = ("open", "renumbered", "values")

    def __init__(self) -> None:
        self.renumbered: dict[Any, int] = {}  # the source's output_index → the output's
        self.open: dict[int, dict[str, Any]] = {}  # output_index → the item as added
        self.values = Values()

    def opens(self, data: dict[str, Any]) -> bool:
        """Whether ``data`` adds an item: an added event, or the done event of an item
        never added (a trimmed fixture's), which is added first."""
        kind = data.get("type")
        if kind == ADDED:
            return True
        index = data.get("output_index")
        known = isinstance(index, int | str) and index in self.renumbered
        return kind == DONE and isinstance(data.get("item"), dict) and not known

    def route(
        self,
        data: dict[str, Any],
        next_index: int,
        emit: Callable[[dict[str, Any]], None],
        ids: Ids,
        notes: Notes,
    ) -> bool:
        """Give ``data`` the output's output_index, writing through ``emit`` what must
        come before it; true when it took ``next_index``."""
        kind, index = data.get("type"), data.get("output_index")
        took = self.opens(data)
        if took:
            item = data["item"] if isinstance(data.get("item"), dict) else None
            if isinstance(index, int | str):
                self.renumbered[index] = next_index
            if item is not None:
                ids.items[next_index] = item.get("id")
                if kind == DONE:
                    added = {**item, "status": "in_progress"} if "status" in item else item
                    emit({"type": ADDED, "output_index": next_index, "item": added})
                else:
                    self.open[next_index] = item
            data["output_index"] = index = next_index
        elif isinstance(index, int | str) and index in self.renumbered:
            data["output_index"] = index = self.renumbered[index]
        if index in self.open:
            if kind == DONE:
                for done in self.values.missing(index, self.open.pop(index).get("id"), notes):
                    emit(done)
            else:
                self.values.see(data, index)
        return took


def settle(
    response: dict[str, Any],
    open_items: dict[int, dict[str, Any]],
    closed: dict[int, Any],
    emit: Callable[[dict[str, Any]], None],
    notes: Notes,
) -> None:
    """Close ``open_items`` (output_index → added item) through ``emit`` and make
    ``response["output"]`` the ``closed`` items (output_index → done item), in order."""
    output = response.get("output")
    final = {
        entry.get("id"): entry
        for entry in (output if isinstance(output, list) else ())
        if isinstance(entry, dict)
    }
    for index in sorted(open_items):
        added = open_items[index]
        item = final.get(added.get("id")) or {**added, "status": "completed"}
        notes.repaired(
            f"item {index} ({added.get('type')}) never closed: output_item.done "
            "written before the terminal event"
        )
        emit({"type": "response.output_item.done", "output_index": index, "item": item})
        closed[index] = item
    open_items.clear()
    streamed = [closed[index] for index in sorted(closed)]
    if not isinstance(output, list) or output == streamed:
        return
    if len(output) == len(streamed) and all(map(_agree, output, streamed)):
        return
    notes.repaired(
        "the terminal response.output differs from the items the stream closed: those items written"
    )
    response["output"] = [
        final if _agree(final, item) else item for final, item in zip_longest(output, streamed)
    ][: len(streamed)]


def _agree(final: Any, item: Any) -> bool:
    """The same item, but for what a server may seal again at the end (OPAQUE)."""
    if not isinstance(final, dict) or not isinstance(item, dict):
        return final == item
    return all(final.get(k) == item.get(k) for k in final.keys() | item.keys() if k not in OPAQUE)

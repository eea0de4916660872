"""Item, part and text tracking for the Responses checker (DESIGN.md §5, rules 4–8).

Per *open* item it keeps the deltas of each open text or arguments value (a list,
joined once when its ``.done`` arrives). A closed item drops that state; what is kept is
the item as ``output_item.done`` sent it, which the terminal event's ``response.output``
must equal. Memory grows with the text a stream carries, not with its number of events.
"""

from __future__ import annotations

from typing import Any

from chatx.codecs.responses_event.check_shapes import (
    FAMILIES,
    PART_CONTAINER,
    PART_TEXT_FIELD,
    CheckedItem,
    CheckedPart,
    CheckedText,
    Digest,
    differing_field,
    nth,
    short,
    slim,
)
from chatx.pieces import Pieces
from chatx.validation.base import Checker, is_int


class ItemTracker:
    """Checks the item rules of one stream and remembers the items it closed.

    It reports through the checker it is given and reads its current line; typed as the
    base :class:`Checker`, so this module does not import the Responses checker that
    holds it."""

    def __init__(self, checker: Checker) -> None:
        self.c = checker
        self.items: dict[int, CheckedItem] = {}
        self.ids: dict[str, int] = {}
        self.next_index = 0
        self.closed: list[tuple[int, Any]] = []
        self.incomplete_at: int | None = None  # output_index of an item closed incomplete

    # -- lookups ---------------------------------------------------------------------

    def item_for(
        self, data: dict[str, Any], etype: str, *, required: bool = True
    ) -> CheckedItem | None:
        """The open item an event names, reporting a missing, unknown or closed one."""
        index = data.get("output_index")
        if index is None and not required:
            item_id = data.get("item_id")
            if isinstance(item_id, str) and item_id not in self.ids:
                self.c.report("RSP011", f"{etype} names item_id {item_id!r}, never added")
            return None
        if not is_int(index):
            self.c.report("RSP030", f"{etype} has no integer output_index")
            return None
        item = self.items.get(index)
        if item is None:
            self.c.report("RSP011", f"{etype} names output_index {index}, never added")
            return None
        item_id = data.get("item_id")
        if (
            item_id is not None
            and item.id is not None
            and item_id != item.id
            and not item.id_mismatch
        ):
            item.id_mismatch = True  # once per item: a rotating id would repeat it per event
            self.c.report(
                "RSP014",
                f"{etype} has item_id {item_id!r}; item {index} was "
                f"added as {item.id!r} (reported once per item)",
            )
        if item.done:
            self.c.report("RSP016", f"{etype} for item {index} after its output_item.done")
            return None
        return item

    # -- items -----------------------------------------------------------------------

    def added(self, data: dict[str, Any]) -> None:
        index, item = data.get("output_index"), data.get("item")
        if not is_int(index) or not isinstance(item, dict):
            self.c.report(
                "RSP030",
                "response.output_item.added needs an integer output_index and an item object",
            )
            return
        if self.incomplete_at is not None:
            self.c.report(
                "RSP027", f"item {index} added after item {self.incomplete_at} ended incomplete"
            )
        if index in self.items:
            self.c.report("RSP013", f"output_index {index} is already used by another item")
            return
        if index != self.next_index:
            self.c.report(
                "RSP012", f"new item takes output_index {index}, expected {self.next_index}"
            )
        item_id = item.get("id")
        if isinstance(item_id, str) and item_id in self.ids:
            self.c.report(
                "RSP013", f"item id {item_id!r} is already used by item {self.ids[item_id]}"
            )
        if item.get("type") == "function_call":
            missing = [k for k in ("name", "call_id") if not item.get(k)]
            if missing:
                self.c.report(
                    "RSP020", f"function_call item {index} added without {' and '.join(missing)}"
                )
        if isinstance(item_id, str):
            self.ids.setdefault(item_id, index)
        self.items[index] = CheckedItem(
            index, item_id if isinstance(item_id, str) else None, item.get("type"), self.c.line
        )
        self.next_index = max(self.next_index, index + 1)

    def item_done(self, data: dict[str, Any]) -> None:
        final = data.get("item")
        if not isinstance(final, dict):
            self.c.report("RSP030", "response.output_item.done has no item object")
            return
        item = self.item_for(data, "response.output_item.done")
        if item is None:
            return
        if final.get("id") != item.id and item.id is not None:
            self.c.report(
                "RSP014",
                f"output_item.done for item {item.output_index} has id "
                f"{final.get('id')!r}; it was added as {item.id!r}",
            )
        self._check_closing(item, final)
        item.done, item.parts, item.values = True, {}, {}
        self.closed.append((item.output_index, slim(final)))
        if final.get("status") == "incomplete":
            self.incomplete_at = item.output_index

    def _check_closing(self, item: CheckedItem, final: dict[str, Any]) -> None:
        """Every part is done, arguments are done, and the item repeats what streamed."""
        for part in item.parts.values():
            if not part.closed:
                self.c.report(
                    "RSP019",
                    f"item {item.output_index} closed while its "
                    f"{part.kind} part {part.index} is still open",
                )
            elif part.text is not None:
                family = FAMILIES[part.text.family]
                entry = nth(final.get(PART_CONTAINER[part.kind]), part.index)
                got = entry.get(family.item_field) if isinstance(entry, dict) else None
                self._agree(
                    got, part.text.value(), f"output_item.done {part.kind}[{part.index}]", item
                )
        for (name, _sub), text in item.values.items():
            family = FAMILIES[name]
            if text.final is None:
                self.c.report("RSP021", f"item {item.output_index} closed before {name}.done")
            if family.item_field is not None and family.item_field in final:
                self._agree(
                    final[family.item_field],
                    text.value(),
                    f"output_item.done {family.item_field}",
                    item,
                )
        if item.type == "function_call" and not item.values:
            self.c.report(
                "RSP021",
                f"function_call item {item.output_index} closed "
                "before function_call_arguments.done",
            )

    def _agree(self, got: Any, want: str | Digest, where: str, item: CheckedItem) -> None:
        if got != want:
            self.c.report(
                "RSP025",
                f"{where} of item {item.output_index} is "
                f"{short(got)}; the stream built {short(want)}",
            )

    # -- parts and streamed values ---------------------------------------------------

    def part_added(self, data: dict[str, Any], etype: str, kind: str) -> None:
        item = self.item_for(data, etype)
        if item is None:
            return
        index_field = "content_index" if kind == "content" else "summary_index"
        index, part = data.get(index_field), data.get("part")
        if not is_int(index) or not isinstance(part, dict):
            self.c.report("RSP030", f"{etype} needs an integer {index_field} and a part object")
            return
        allowed = ("message", "reasoning") if kind == "content" else ("reasoning",)
        if item.type not in allowed:
            self.c.report("RSP022", f"{etype} in a {item.type} item")
        if index != item.next_part[kind] or (kind, index) in item.parts:
            self.c.report(
                "RSP017",
                f"{etype} has {index_field} {index}; the next part of "
                f"item {item.output_index} is {item.next_part[kind]}",
            )
        item.parts[(kind, index)] = CheckedPart(kind, index, part.get("type"))
        item.next_part[kind] = max(item.next_part[kind], index + 1)

    def part_done(self, data: dict[str, Any], etype: str, kind: str) -> None:
        part = self._open_part(data, etype, kind)
        if part is None:
            return
        if part.text is None or part.text.final is None:
            self.c.report("RSP019", f"{etype} before the part's text done event")
        final = data.get("part")
        if part.text is not None and isinstance(final, dict):
            got = final.get(PART_TEXT_FIELD.get(str(part.type), "text"))
            if got != part.text.value():
                self.c.report(
                    "RSP025",
                    f"{etype} part text is {short(got)}; the stream "
                    f"built {short(part.text.value())}",
                )
        part.closed = True

    def _open_part(self, data: dict[str, Any], etype: str, kind: str) -> CheckedPart | None:
        item = self.item_for(data, etype)
        if item is None:
            return None
        index_field = "content_index" if kind == "content" else "summary_index"
        index = data.get(index_field)
        if not is_int(index):
            self.c.report("RSP030", f"{etype} has no integer {index_field}")
            return None
        part = item.parts.get((kind, index))
        if part is None:
            self.c.report(
                "RSP018",
                f"{etype} for {kind} part {index} of item "
                f"{item.output_index}, which was never added",
            )
        elif part.closed:
            self.c.report(
                "RSP018",
                f"{etype} for {kind} part {index} of item "
                f"{item.output_index} after its part done event",
            )
            return None
        return part

    def value_event(self, data: dict[str, Any], etype: str, name: str, delta: bool) -> None:
        """A ``.delta`` or ``.done`` of a streamed text, summary or arguments value."""
        family = FAMILIES[name]
        item: CheckedItem | None
        if family.part is not None:
            part = self._open_part(data, etype, family.part)
            if part is None:
                return
            item = self.items[data["output_index"]]  # _open_part found it
            if part.type is not None and part.type != family.part_type:
                self.c.report("RSP022", f"{etype} in a {part.type} part")
            text, order_rule = part.text or CheckedText(name), "RSP019"
            part.text = text
        else:
            item = self.item_for(data, etype)
            if item is None:
                return
            sub = data.get(family.index_field) if family.index_field else None
            text = item.values.setdefault((name, sub), CheckedText(name))
            order_rule = "RSP021"
        if item.type is not None and item.type != family.item_type:
            self.c.report("RSP022", f"{etype} in a {item.type} item")
        if delta:
            self._delta(text, data, etype, order_rule)
        else:
            self._done(text, data, etype, family.done_field, order_rule)

    def text_of(self, data: dict[str, Any], name: str) -> CheckedText | None:
        """The value a delta event of family ``name`` that was just checked without a
        finding adds to (what :meth:`value_event` found for it)."""
        family = FAMILIES[name]
        item = self.items.get(data["output_index"])
        if item is None:
            return None
        if family.part is not None:
            index: Any = data.get(family.index_field or "")
            part = item.parts.get((family.part, index))
            return part.text if part is not None else None
        sub = data.get(family.index_field) if family.index_field else None
        return item.values.get((name, sub))

    def _delta(self, text: CheckedText, data: dict[str, Any], etype: str, order_rule: str) -> None:
        piece = data.get("delta")
        if not isinstance(piece, str):
            self.c.report("RSP030", f"{etype} has no string delta")
        elif text.final is not None:
            self.c.report(order_rule, f"{etype} after the value's done event")
        else:
            text.deltas.append(piece)

    def _done(
        self, text: CheckedText, data: dict[str, Any], etype: str, done_field: str, order_rule: str
    ) -> None:
        value = data.get(done_field)
        if not isinstance(value, str):
            self.c.report("RSP030", f"{etype} has no string {done_field}")
            return
        if text.final is not None:
            self.c.report(order_rule, f"second {etype} for the same value")
            return
        if text.deltas and not text.deltas.equals(value):
            joined = text.deltas.text()
            self.c.report(
                "RSP023",
                f"{etype} {done_field} is {short(value)}; its deltas join to {short(joined)}",
            )
        elif not text.deltas and value:
            self.c.report(
                "RSP024", f"{etype} carries {len(value)} characters that no delta streamed"
            )
        # Later agreement checks compare with the done copy, so one bad value is
        # reported once, not again at content_part.done and output_item.done.
        text.final, text.deltas = slim(value), Pieces()

    # -- end of stream ------------------------------------------------------------------

    def terminal(self, etype: str, response: dict[str, Any]) -> None:
        """Check what the terminal event says against the items of the stream."""
        for item in self.items.values():
            if not item.done:
                self.c.report(
                    "RSP015",
                    f"item {item.output_index} (added at line "
                    f"{item.line}) has no output_item.done before {etype}",
                )
        if self.incomplete_at is not None and etype != "response.incomplete":
            self.c.report(
                "RSP027",
                f"item {self.incomplete_at} ended incomplete but the stream ends with {etype}",
            )
        output = response.get("output")
        # The openai SDK rebuilds output from the closed items when a server omits it.
        if isinstance(output, list):
            self._compare_output(output)

    def _compare_output(self, output: list[Any]) -> None:
        # Expected: every added item in output_index order; an item never closed is
        # already reported (RSP015), so its position is not compared.
        closed = dict(self.closed)
        expected = [closed.get(index) for index in sorted(self.items)]
        if len(output) != len(expected):
            self.c.report(
                "RSP026",
                f"response.output has {len(output)} items; the stream added {len(expected)}",
            )
            return
        for position, (got, want) in enumerate(zip(output, expected, strict=True)):
            key = differing_field(got, want) if want is not None else None
            if key is not None:
                self.c.report(
                    "RSP026",
                    f"response.output[{position}] differs from the "
                    f"item output_item.done sent ({key})",
                )
                return

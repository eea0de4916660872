"""What ``collect`` builds from a stream as Anthropic: the ``Message`` object, as the
anthropic SDK's stream accumulator builds it.

It reads an :class:`~chatx.collect.assembler.Assembler`: each item is one content block (a
message's text a ``text`` block, reasoning a ``thinking`` block with its signature, or a
``redacted_thinking`` block when the reasoning was withheld, a tool call a ``tool_use``
block with its input parsed), and the blocks the IR has no words for come back from the
passthrough records that carried them. From an Anthropic stream, the residue of its
``message_start`` (usage details, fields of the message) is merged back. What a message
has no place for is said in ``notes``.
"""

from __future__ import annotations

from typing import Any

import orjson

from chatx import ir
from chatx.collect.assembler import Assembler
from chatx.collect.items import Item, Lane, OtherItem
from chatx.notes import Notes
from chatx.residue import copied, lost_paths, merge, report

from . import records as r
from .citations import web_citation
from .encode import message_id
from .searches import CALL, RESULT, _page, tool_id

NAME = r.NAME
_WHAT = "an Anthropic message"


def other_item(data: Any) -> OtherItem | None:
    """A content block the IR has no words for (a server tool's call or result), as its
    ``content_block_start`` carries it: kept in output order by ``collect`` and ``show``;
    the ``input_json_delta`` records of a server tool's call stream its input."""
    if type(data) is not dict:
        return None
    kind = data.get("type")
    if kind == "content_block_delta":
        delta = data.get("delta")
        if type(delta) is dict and delta.get("type") == "input_json_delta":
            fragment = delta.get("partial_json")
            if type(fragment) is str:
                return OtherItem(("block", data.get("index")), {}, False, fragment)
        return None
    if kind != "content_block_start":
        return None
    block = data.get("content_block")
    if type(block) is not dict:
        return None
    return OtherItem(("block", data.get("index")), block, False)


def final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    """The descriptor's ``final``: the message of the one choice (or of ``choice``)."""
    lane = stream.one_lane(choice, _WHAT)
    own = source == NAME
    content = _content(stream, lane, own, notes)
    message: dict[str, Any] = {
        # A stream that never started (an error before its first record) has no
        # message_start in anthropic output either: no id.
        "id": (stream.id or "") if own or not stream.started else message_id(stream.id or ""),
        "type": "message",
        "role": "assistant",
        "model": stream.model or "",
        "content": content,
        "stop_reason": _stop_reason(stream, lane, own, notes),
        "stop_sequence": lane.stop_sequence,
        "usage": _usage(stream, own),
    }
    if own:
        _own_fields(message, stream, lane, notes)
    if stream.errors:
        notes.lost(f"{len(stream.errors)} error(s) in the stream have no place in a message")
        if not own and stream.said_after_error():
            notes.lost("what came after the error event has no place")
    return message


def _content(stream: Assembler, lane: Lane, own: bool, notes: Notes) -> list[dict[str, Any]]:
    """The message's content blocks, one or more per item, in the order they opened;
    another format's web search as its two blocks, after the item it came after."""
    content: list[dict[str, Any]] = []
    calls = 0
    noted: set[str] = set()
    searches = [] if own else _searches(lane.items)
    for number, item in enumerate(lane.items, 1):
        if not own and item.kind == "message":
            content += _text_blocks(item, notes, noted)
        elif own or item.kind != "other" or item.search is None:
            block = _block(item, own, notes, stream.id or "", calls)
            calls += item.kind == "tool_call"
            if block is not None:
                content.append(block)
        while searches and searches[0][0] == number:
            content += _search_blocks(searches.pop(0)[1], notes, noted)
    return content


def _stop_reason(stream: Assembler, lane: Lane, own: bool, notes: Notes) -> str | None:
    """The message's stop reason; from another format, the one anthropic output writes
    in its ``message_delta``."""
    if own:
        return r.stop_word(lane.finish, lane.raw_finish) if lane.finish is not None else None
    if lane.finish is not None and not lane.after_error:
        word = r.stop_word(lane.finish, lane.raw_finish)
        if word is None:
            notes.lost(f"finish reason {lane.finish!r} has no Anthropic stop reason: end_turn")
            word = "end_turn"
        return word
    # A finish after the error (a Responses response.failed) is not said: the API writes
    # nothing after its error event, and its SDK stops there. A message the source ended
    # without a finish reason (or whose usage came before its error) ends with one.
    if (stream.ended and not stream.errors) or (
        stream.errors and stream.usage_before_error is not None
    ):
        word = "tool_use" if lane.calls else "end_turn"
        notes.repaired(f"the input has no finish reason: stop_reason {word} written")
        return word
    return None


# message_start fields a finished message says otherwise.
_SAID = frozenset(("content", "stop_reason", "stop_sequence"))


def _own_fields(message: dict[str, Any], stream: Assembler, lane: Lane, notes: Notes) -> None:
    """An Anthropic stream's own fields where the SDK's accumulator keeps them; what a
    message has no place for said lost."""
    patch = stream.start_extra.get("message")
    if type(patch) is dict:
        # The message's own fields (a container, stop details) and usage details.
        rest = {k: v for k, v in patch.items() if k not in _SAID}
        merge(message, copied(rest))
    _finish_fields(message, lane, notes)
    for item in lane.items:
        # A content_block_start's or _stop's own fields beside its block.
        if not r.own_of(item).prefill:
            report({k: v for k, v in item.opened.items() if k != "content_block"}, notes)
        report(item.closed, notes)
    # A content_block_delta's own fields, and message_stop's (Bedrock's invocation
    # metrics, which its non-streaming response says in headers).
    notes.lost_fields.update(stream.delta_residue)
    report(stream.end_extra, notes)


def _finish_fields(message: dict[str, Any], lane: Lane, notes: Notes) -> None:
    """A message_delta's own fields on the message, as the SDK's accumulator sets them
    (its delta's container and stop_details, at the top; the last one said wins over
    message_start's); what the message has no place for (a field beside the delta and
    the usage) is said lost, as convert says a field."""
    for key, value in lane.finish_extra.items():
        if key == "delta" and type(value) is dict:
            for field, said in value.items():
                if field not in _SAID:
                    message[field] = copied(said) if type(said) is dict else said
        elif key != "usage":
            notes.lost_fields.update(lost_paths({key: value}))


def _usage(stream: Assembler, own: bool) -> dict[str, Any]:
    usage = stream.usage if own else stream.usage_before_error
    if usage is None:
        counts = _start_own(stream).usage if own else None
        # A stream cut before its message_delta: message_start's counts, as the SDK's
        # accumulator holds them.
        return dict(counts) if counts else {r.INPUT: 0, r.OUTPUT: 0}
    if own:
        return r.usage_record(usage)
    return r.usage_object(usage, False)


def _block(
    item: Item, own: bool, notes: Notes, stream_id: str, calls: int
) -> dict[str, Any] | None:
    if item.kind == "message":  # an Anthropic text block
        return _text_block(item)
    if item.kind == "reasoning":
        return _opened(item, _thinking(item, own, notes), own, ("thinking",))
    if item.kind == "tool_call" and item.call is not None:
        call = item.call
        call_id = call.call_id
        if call_id is None:
            base = message_id(stream_id)[4:]
            call_id = f"toolu_{base}_{calls}"
        block = {
            "type": "tool_use",
            "id": call_id,
            "name": call.name or "",
            "input": _input(call.arguments, notes),
        }
        return _opened(item, block, own, ("input",))
    if item.format == NAME and type(item.data) is dict:
        block = dict(item.data)
        if item.input is not None and "input" in block:
            # A server tool's call: its input is what its input_json_delta records said,
            # as the SDK's accumulator joins and parses them.
            block["input"] = _input(item.input.text(), notes)
        return block
    kind = item.data.get("type") if type(item.data) is dict else item.kind
    notes.lost(f"{kind} item has no place in an Anthropic message")
    return None


def _opened(
    item: Item, block: dict[str, Any] | None, own: bool, built: tuple[str, ...]
) -> dict[str, Any] | None:
    """The block with the fields its ``content_block_start`` gave it (a tool call's
    ``caller``; a thinking block that started without a signature has none until a
    signature_delta), as the SDK's accumulator keeps the block it was given; the
    fields the stream built (``built``) stay as built."""
    began = _began(item) if own else None
    if block is None or type(began) is not dict or block.get("type") == "redacted_thinking":
        return block
    kept = {k: block[k] for k in built}
    merge(block, copied(began))
    block.update(kept)
    if item.signature is not None:
        block["signature"] = item.signature
    return block


def _began(item: Item) -> Any:
    """The block's own fields as it began: its content_block_start's (a patch of the
    canonical block), or those message_start gave a block it holds whole."""
    if r.own_of(item).prefill:
        return item.opened
    return item.opened.get("content_block")


def _start_own(stream: Assembler) -> r.AnthropicOwn:
    own = stream.start_own
    return own if type(own) is r.AnthropicOwn else r.NONE


def _text_block(item: Item) -> dict[str, Any]:
    """An Anthropic stream's text block as the SDK's accumulator builds it: the block its
    ``content_block_start`` gave (a block that will cite starts with ``"citations": []``,
    kept when none comes), its text, each ``citations_delta``'s citation appended."""
    block: dict[str, Any] = {"type": "text", "text": ""}
    began = _began(item)
    if type(began) is dict:
        merge(block, copied(began))
    block["text"] = item.text.text()
    cited = [c for cited in item.citations for c in cited.extra.get("citations") or ()]
    if cited:
        first = block.get("citations")
        block["citations"] = [*(first if type(first) is list else ()), *cited]
    return block


def _thinking(item: Item, own: bool, notes: Notes) -> dict[str, Any] | None:
    """A thinking block with its signature, or the reasoning withheld (redacted); from
    another format, none when it says nothing, as the encoder opens none."""
    thinking = item.reasoning_text()
    if item.encrypted is not None and not thinking:
        if item.signature is not None and not own:
            notes.lost_field("reasoning.signature")
        return {"type": "redacted_thinking", "data": item.encrypted}
    if not own:
        if item.encrypted is not None:
            notes.lost_field("reasoning.encrypted_content")
        if not thinking and item.signature is None:
            return None
    return {"type": "thinking", "thinking": thinking, "signature": item.signature or ""}


def _input(arguments: str, notes: Notes) -> Any:
    """A call's arguments as the input object the accumulator parses them into."""
    if not arguments.strip():
        return {}
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        notes.lost("tool call arguments that are not JSON: input {} written")
        return {}
    if type(value) is not dict:
        notes.lost("tool call arguments that are not a JSON object: input {} written")
        return {}
    return value


def _text_blocks(item: Item, notes: Notes, noted: set[str]) -> list[dict[str, Any]]:
    """Another format's message item as the text blocks the encoder writes of it: its
    web page citations in the block whose text they cite, a block ending where a
    citation came after its text (the API splits a message around its citations)."""
    text = item.text.text()
    blocks: list[dict[str, Any]] = []
    block: dict[str, Any] = {"type": "text", "text": ""}
    start = said = 0  # where the open block's text starts in the item's, what is written
    cited = False  # a citation came after the open block's text: the next text is new
    for one in item.citations:
        cite = one.citation
        if cite is None or cite.kind != "url":
            notes.lost_field("citations" if one.extra.get("citations") else "annotations")
            continue
        if one.at > said:
            if cited:
                blocks.append(block)
                block, start, cited = {"type": "text", "text": ""}, said, False
            block["text"] += text[said : one.at]
            said = one.at
        if said > start:
            cited = True
        block.setdefault("citations", []).append(web_citation(cite))
        if cite.start is not None and (cite.start != start or cite.end != said):
            _note_once(noted, "span", notes, _SPAN)
        if cite.extra:
            report(cite.extra, notes, "annotation.")
    if said < len(text):
        if cited:
            blocks.append(block)
            block = {"type": "text", "text": ""}
        block["text"] += text[said:]
    refusal = item.refusal.text()
    if refusal:
        notes.lost("a refusal is written as text: an Anthropic message has no refusal")
        block["text"] += refusal
    return [*blocks, block]


_SPAN = (
    "citation spans (start_index, end_index) are lost: an Anthropic citation covers its "
    "text block, which ends where the citation came"
)


def _searches(items: list[Item]) -> list[tuple[int, ir.WebSearch]]:
    """Another format's web searches that ended, in the order they ended, each with how
    many items had opened then: the encoder writes a search's blocks when it ends, after
    the blocks of the items opened before (concurrent searches end in any order)."""
    ended = [item for item in items if item.search is not None and item.ended is not None]
    ended.sort(key=lambda item: item.ended or (0, 0))
    return [(item.ended[0], item.search) for item in ended if item.ended and item.search]


def _search_blocks(search: ir.WebSearch, notes: Notes, noted: set[str]) -> list[dict[str, Any]]:
    """Another format's web search (a Responses ``web_search_call`` item) as the
    ``server_tool_use`` and ``web_search_tool_result`` blocks the encoder writes once it
    is done, the call's id derived from the item's."""
    if search.step != "end":
        return []  # never done: the encoder writes nothing of it
    if search.action != "search":
        what = search.action or "no action"
        notes.lost(f"web_search_call item ({what}) has no place in Anthropic messages")
        return []
    tool = tool_id(search.id)
    call = {"type": CALL, "id": tool, "name": "web_search", "input": {}}
    if search.query is not None:
        call["input"] = {"query": search.query}
    content: Any
    if search.failed:
        content = {"type": "web_search_tool_result_error", "error_code": "unavailable"}
        notes.lost("a failed web search says no error code: unavailable written")
    else:
        content = [_page(source) for source in search.sources]
        if content:
            _note_once(noted, "pages", notes, _PAGES, warning=True)
    if search.extra:
        report(search.extra, notes, "web_search.")
    return [call, {"type": RESULT, "tool_use_id": tool, "content": content}]


_PAGES = (
    "web search results have no encrypted_content (nor titles) outside Anthropic: written empty"
)


def _note_once(
    noted: set[str], key: str, notes: Notes, message: str, warning: bool = False
) -> None:
    if key not in noted:
        noted.add(key)
        if warning:
            notes.warning(message)
        else:
            notes.lost(message)

"""What ``collect`` builds from a stream as Responses: the ``response`` object, the
terminal event's or the in-progress snapshot of a stream that stopped without one.

It reads an :class:`~chatx.collect.assembler.Assembler`. When the stream is a Responses stream,
its residue (usage details, item and envelope fields the IR has no name for) is merged
back, so collecting a Responses stream gives back its terminal ``response`` object. What
a response has no place for is said in ``notes``.
"""

from __future__ import annotations

import copy
from typing import Any

from chatx import ir
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.citations import annotation
from chatx.codecs.responses_event.encode_deltas import written_logprobs
from chatx.codecs.responses_event.envelope import envelope, item_id, responses_id, usage_object
from chatx.codecs.responses_event.searches import SearchState
from chatx.codecs.responses_event.searches import item_id as item_id_of
from chatx.collect.assembler import Assembler
from chatx.collect.items import Item, Lane, OtherItem, joined
from chatx.notes import Notes
from chatx.residue import copied, merge, report

NAME = "responses-event"
_WHAT = "a response"

_ADDED = "response.output_item.added"
_DONE = "response.output_item.done"


def other_item(data: Any) -> OtherItem | None:
    """An ``output_item.added`` / ``.done`` the decoder passed through (a web search, an
    MCP call…): the item, kept whole in output order by ``collect`` and ``show``."""
    if not isinstance(data, dict):
        return None
    item = data.get("item")
    if not isinstance(item, dict):
        return None
    kind = data.get("type")
    if kind in (_ADDED, _DONE):
        return OtherItem(data.get("output_index"), item, kind == _DONE)
    return None


def to_response(
    stream: Assembler,
    source: str | None = None,
    choice: int | None = None,
    notes: Notes | None = None,
) -> dict[str, Any]:
    """A Responses ``response`` object of the one choice (or of ``choice``):
    the terminal event's, or the in-progress snapshot of a stream that stopped without
    one. It is the descriptor's ``final``."""
    notes = notes if notes is not None else Notes()
    lane = stream.one_lane(choice, _WHAT)
    own = source == NAME
    if own:
        opened = copy.deepcopy(_source_envelope(stream))
        rid = str(opened.get("id") or stream.id or "")
    else:
        rid = responses_id(stream.id or "")
        opened = envelope(rid, stream.created, stream.model, stream.request)
    output = _output(stream, lane, rid, own, notes)
    error = _response_error(stream, own, notes)
    usage = usage_object(stream.usage, own) if stream.usage is not None else None
    if error is None and (lane.finish is None if own else not stream.ended):
        # No terminal event: what a client holds is the snapshot, still in progress.
        # Responses output ends another format's stream that ended (a chat stream with no
        # finish reason but its [DONE]) with response.completed, and leaves one cut short
        # (an Anthropic message without message_stop) open.
        opened["output"] = output
        if usage is not None:
            opened["usage"] = usage
        return opened
    return _terminal(stream, lane, opened, output, error, usage, own, notes)


def _terminal(
    stream: Assembler,
    lane: Lane,
    opened: dict[str, Any],
    output: list[dict[str, Any]],
    error: dict[str, Any] | None,
    usage: dict[str, Any] | None,
    own: bool,
    notes: Notes,
) -> dict[str, Any]:
    """The terminal event's response: its status, output, error and usage; a Responses
    stream's own fields of it merged back."""
    status, details = shapes.terminal_status(lane.finish, error is not None)
    if lane.stop_sequence is not None:
        notes.lost("the stop sequence has no place in a Responses response")
    response = shapes.terminal_response(opened, status, details, output, error, usage)
    if own and (stream.end_extra or stream.end_own is not None):
        merge(response, copied(stream.end_extra))
        if response.get("output") is None:
            # A terminal response without its output (null or left out): the items the
            # stream built, as the SDK's stream state recovers them for its final response.
            response["output"] = output
    return response


def _output(
    stream: Assembler, lane: Lane, rid: str, own: bool, notes: Notes
) -> list[dict[str, Any]]:
    """The response's output items, in the order the stream opened them."""
    output: list[dict[str, Any]] = []
    # No terminal event: the items the stream never said done are as it left them.
    cut = own and not stream.errors and lane.finish is None
    derived = _derived(stream) if cut else None
    for item in lane.items:
        if _ours(item, notes):
            output.append(_output_item(item, rid, len(output), own, notes))
            if cut and not item.done and item.kind != "other":
                _unfinished(output[-1], item, len(output) - 1, derived)
        if own:
            # The added and done events' own fields beside their item: a response has
            # no place for them.
            report(item.opened.get("event") or {}, notes, "event.")
            report(item.closed.get("event") or {}, notes, "event.")
    return output


def _source_envelope(stream: Assembler) -> dict[str, Any]:
    """The ``response`` of the source's ``response.created``, kept by the Responses
    decoder in its StreamStart's own note."""
    own = stream.start_own
    if type(own) is shapes.ResponsesOwn and isinstance(own.response, dict):
        return own.response
    response = stream.start_extra.get("response")
    return response if isinstance(response, dict) else {}


def _derived(stream: Assembler) -> dict[Any, Any]:
    """The derived events' patches the decoder said beside the stream, by
    :func:`shapes.derived_key`."""
    derived: dict[Any, Any] = {}
    for own in stream.owns:
        if type(own) is shapes.ResponsesOwn and own.derived:
            derived.update(own.derived)
    return derived


def _response_error(stream: Assembler, own: bool, notes: Notes) -> dict[str, Any] | None:
    """The terminal response's ``error``, as the encoder writes it: a code that is no
    ResponseError code (Groq's tool_use_failed, OpenRouter's 400) is ``server_error``,
    and the ``error`` event keeps it. A Responses stream's own terminal error (OpenAI's
    insufficient_quota) comes back with its residue."""
    if not stream.errors:
        return None
    # The last error is the one that ended the stream (the Responses decoder agrees).
    last = stream.errors[-1]
    error = shapes.response_error(last.code, last.message)
    if not own and last.code is not None and error["code"] != str(last.code):
        notes.lost(
            f"error code {str(last.code)!r} is not a Responses error code: written as server_error"
        )
    return error


def _ours(item: Item, notes: Notes) -> bool:
    """False for another format's item the IR has no words for (an Anthropic server
    tool's block), said lost: it is no Responses output item. A web search is one (its
    call's item; the item of its results is part of it), when its call opened in the
    stream."""
    if item.kind != "other" or item.format in (None, NAME):
        return True
    if item.search is not None and item.began:
        return True
    if item.result_of is not None and item.result_of.search is not None:
        return False
    kind = item.data.get("type") if isinstance(item.data, dict) else None
    notes.lost(f"{kind or 'an'} item has no place in a Responses response")
    return False


def _output_item(item: Item, rid: str, index: int, own: bool, notes: Notes) -> dict[str, Any]:
    """The output item ``index`` (its place in ``output``, as the encoder numbers it)."""
    if item.kind == "other":
        if item.search is not None and item.format != NAME:
            return _web_search(item.search, notes)
        return copy.deepcopy(item.data) if item.data is not None else {}
    prefix, build = _BUILDERS[item.kind]
    built = build(item, item.id or item_id(rid, prefix, index), own, notes)
    if own and item.patch:
        merge(built, copied(item.patch))
    elif item.kind == "reasoning" and not own:
        sealed = item.encrypted if item.encrypted is not None else item.signature
        if sealed is not None:
            # Anthropic's signature or redacted thinking: what Responses keeps as
            # encrypted_content, as the encoder writes it.
            merge(built, {"encrypted_content": sealed})
    return built


def _message(item: Item, iid: str, own: bool, notes: Notes) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    text, refusal = joined(item.text), joined(item.refusal)
    if text or not refusal:
        # Another format's as Responses output writes them (bytes a list, never null).
        logprobs = item.logprobs if own else written_logprobs(item.logprobs)
        parts.append(shapes.text_part(text, logprobs))
        if item.citations and not own:
            parts[-1]["annotations"] = _annotations(item, len(text), notes)
    if refusal:
        parts.append(shapes.refusal_part(refusal))
    return shapes.message_item(iid, "completed", parts)


def _reasoning(item: Item, iid: str, own: bool, notes: Notes) -> dict[str, Any]:
    """Another format's reasoning as summary parts, as Responses output writes it by
    default; a Responses stream's own summary and text parts as they came."""
    summary = [
        shapes.summary_part(joined(p))
        for (kind, _), p in item.reasoning.items()
        if kind == "summary" or not own
    ]
    content = [
        shapes.reasoning_text_part(joined(p))
        for (kind, _), p in item.reasoning.items()
        if kind == "text" and own
    ]
    if not summary and not content and item.signature is not None and item.encrypted is None:
        # Anthropic's empty thinking with its signature (or a Responses item whose only
        # summary part was empty, read so): an empty summary part tells it from reasoning
        # withheld (none), as the encoder writes it.
        summary = [shapes.summary_part("")]
    return shapes.reasoning_item(iid, summary, content)


def _function_call(item: Item, iid: str, own: bool, notes: Notes) -> dict[str, Any]:
    call = item.call
    assert call is not None
    return shapes.function_item(iid, "completed", call.arguments, call.call_id, call.name)


# Each item kind the IR names: the prefix of an id derived from the response's, and how
# its output item is built.
_BUILDERS = {
    "message": ("msg", _message),
    "reasoning": ("rs", _reasoning),
    "tool_call": ("fc", _function_call),
}


def _unfinished(
    built: dict[str, Any], item: Item, index: int, derived: dict[Any, Any] | None
) -> None:
    """An item the stream never said done (a stream cut short): as the SDK's snapshot
    holds it, the item its output_item.added gave (status in_progress, its own fields)
    with what its deltas said, each part as its content_part.added gave it."""
    if "status" in built:
        built["status"] = "in_progress"
    added = item.opened.get("added")
    if type(added) is dict:
        merge(built, {k: v for k, v in copied(added).items() if k not in _STREAMED})
    for field, event in _PARTS:
        parts = built.get(field)
        for number, part in enumerate(parts if type(parts) is list else ()):
            patch = (derived or {}).get((event, index, number))
            if type(patch) is dict and type(patch.get("part")) is dict and type(part) is dict:
                merge(part, {k: v for k, v in copied(patch["part"]).items() if k != "text"})


# The events that add an item's parts, by the item's field that holds them.
_PARTS = (
    ("content", "response.content_part.added"),
    ("summary", "response.reasoning_summary_part.added"),
)


# An item's fields its deltas say, which stay as the stream built them.
_STREAMED = frozenset(("content", "summary", "arguments"))


def _annotations(item: Item, size: int, notes: Notes) -> list[dict[str, Any]]:
    """Another format's citations of a message item: its part's annotations, a span the
    source does not say being the whole part (an Anthropic citation covers its block)."""
    said = []
    for cited in item.citations:
        cite = cited.citation
        if cite is None:
            notes.lost_field("citations")
            continue
        start = 0 if cite.start is None else cite.start
        said.append(annotation(cite, start, size if cite.end is None else cite.end))
        if cite.extra:
            report(cite.extra, notes, "citation.")
    return said


def _web_search(search: ir.WebSearch, notes: Notes) -> dict[str, Any]:
    """Another format's web search (Anthropic's call and its results) as the
    ``web_search_call`` item the encoder writes of it, its id the call's."""
    state = SearchState()
    state.query = search.query
    if search.step == "end":
        state.sources, state.failed, state.ended = search.sources, search.failed, True
        if any(len(source) > 1 for source in search.sources):
            notes.lost_field("web_search.sources.title")
        if search.extra:
            report(search.extra, notes, "web_search.")
    return state.done_item(item_id_of(search.id))


final = to_response

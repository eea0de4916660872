"""The intermediate representation: the small vocabulary every format can say.

A decoder turns one source record into a *batch* (a list) of these events; an encoder
takes one batch at a time, so it can keep the source's record boundaries (one chat
chunk in, one Responses delta event out, and back).

Lanes: a *lane* is a chat choice index. Responses and Llama Stack streams have one lane, 0.

Items: within a lane, content arrives in items, one open at a time: a ``message``
(text and refusal), a ``reasoning`` block, or a ``tool_call``. Decoders of formats without
explicit items (chat chunks) open and close them where the kind of content changes.

Nothing is dropped on the way through: every event has ``extra``, the fields of the
source record that the IR has no name for. Encoders of the same format merge ``extra``
back (see :func:`chatx.residue.merge`), which is how ``A -> A`` reproduces a stream's JSON
values; encoders of another format report non-empty ``extra`` as not representable.
Empty values (``None``, ``""``, ``[]``, ``{}``) never become events: they carry no
content, so they travel in ``extra`` and are never reported.

``extra`` holds source fields only. What a decoder tells its own codec's encoder beyond
them (an Anthropic record kept whole, an event made for other formats only, the
Responses envelope as it came) rides in ``own``: an :class:`Own` of the source codec's
class (``ChatOwn``, ``ResponsesOwn``, ``AnthropicOwn``, ``LlamaStackOwn``, each in its
codec's ``own.py``), read by that codec's encoder and final-object builder only, never
reported as lost, never a field of any output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ItemKind = Literal["message", "reasoning", "tool_call"]
ReasoningKind = Literal["summary", "text"]

# OBFUSCATION: the random padding OpenAI adds so that payload sizes do not give the
# tokens away. A chat chunk carries it beside its one delta, a Responses delta event
# carries it itself: the same value for the same piece of content, so it rides on the
# delta events and both formats keep it (Llama Stack has no place for it).

# Events are dataclasses built positionally, not keyword-only: a decoder makes one or
# more per record, and a keyword call costs about twice a positional one
# (TextDelta(lane=0, text=…, logprobs=…, extra=…, obfuscation=…) against
# TextDelta(0, …): +0.5 to +0.8 us an event at load 20, 40-60% of the Llama Stack
# decoder's own time per record). Each field's docstring says what it holds.


class Own:
    """A codec's own note on an event, beside its source fields: what the decoder of
    format A tells A's encoder (and A's final-object builder) so that ``A -> A`` writes
    the stream as it came. Each codec subclasses it once as a slotted dataclass of typed
    fields with defaults, leaving equality and repr to this class (its ``eq=False,
    repr=False``); the encoder of another format never reads it, and residue reports,
    collect's residue and diffs never see it: it is no source field."""

    __slots__ = ()

    def _said(self) -> tuple[str, ...]:
        names: tuple[str, ...] = type(self).__slots__
        return names

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self._said()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        said = (f"{name}={getattr(self, name)!r}" for name in self._said())
        return f"{type(self).__name__}({', '.join(said)})"


# Finish reasons use the chat vocabulary; encoders map them to their format's words.
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call", "error")


@dataclass(slots=True)
class StreamStart:
    """A stream begins. ``created`` is a Unix time from the input, never from the clock.

    ``extra`` holds the envelope fields of the source format (Responses: the ``response``
    object's settings such as ``instructions`` or ``tools``; chat: nothing).
    """

    id: str
    """The source's stream id (a chat ``id``, a Responses ``resp_…``, an Anthropic
    ``msg_…``); ``""`` when it has none."""
    model: str | None = None
    """The model the source names, if it does."""
    created: int | None = None
    """A Unix time from the input, never from the clock."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's envelope fields the IR has no name for (Responses: the ``response``
    object's settings)."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class Citation:
    """What a message's text cites, in the words two formats share: a web page (``url``,
    ``title``: Anthropic's web search result location, a Responses or chat
    ``url_citation``) or a file (``file_id``, ``filename``: a document citation of
    Anthropic's with its file id, a Responses ``file_citation``). ``start`` and ``end``
    are the cited span of the message item's text, in characters, where the source says
    it (Responses, chat); ``None``: the item's whole text (an Anthropic citation covers
    its text block, one message item). ``extra`` holds the source's other fields
    (Anthropic's ``cited_text``…), lost elsewhere."""

    kind: Literal["url", "file"]
    """``url`` (a web page) or ``file``."""
    url: str | None = None
    """The page's address (``kind`` ``url``)."""
    title: str | None = None
    """The page's title, where the source gives one."""
    file_id: str | None = None
    """The cited file's id (``kind`` ``file``)."""
    filename: str | None = None
    """The cited file's name, where the source gives one."""
    start: int | None = None
    """Where the cited span of the message item's text begins, in characters; ``None``: the
    item's whole text."""
    end: int | None = None
    """Where that span ends, in characters."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's other fields (Anthropic's ``cited_text``…), lost elsewhere."""


@dataclass(slots=True)
class WebSearch:
    """One step of a web search the provider ran for the model: Anthropic's
    ``web_search`` server tool (its ``server_tool_use`` block, then its
    ``web_search_tool_result``), a Responses ``web_search_call`` item. ``step`` is
    ``begin`` (the call opens), ``query`` (its query is known) or ``end`` (its results
    are in: ``sources``, each ``{"url", "title"}``, or ``failed``). ``action`` is what the
    call did (Responses also opens pages and finds in them: ``open_page``…), ``extra`` the
    source's other fields (result titles' encrypted content…), lost elsewhere."""

    id: str
    """The search call's id, which ties its steps together."""
    step: Literal["begin", "query", "end"]
    """``begin`` (the call opens), ``query`` (its query is known) or ``end`` (its results
    are in)."""
    query: str | None = None
    """What was searched for, once known."""
    sources: list[dict[str, Any]] = field(default_factory=list)
    """The results at ``end``, each ``{"url", "title"}``."""
    failed: bool = False
    """At ``end``: the search failed."""
    action: str = "search"
    """What the call did (``search``; Responses also ``open_page``, ``find``…)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's other fields (result titles' encrypted content…), lost elsewhere."""


@dataclass(slots=True)
class Meta:
    """Fields of one source record that the IR has no name for.

    ``lane`` is ``None`` for record-level fields (a chat chunk's ``system_fingerprint`` or
    ``obfuscation``), a lane number for choice-level ones (``logprobs: null``,
    ``content_filter_results``); ``delta`` holds that choice's delta-level leftovers.
    ``meaning`` is what the record says in words a target with a place for it writes
    (an Anthropic ``citations_delta``'s citation, a chat annotation's); a target without
    reports ``extra``.
    """

    lane: int | None
    """``None`` for record-level fields, a lane number for choice-level ones."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The record's fields the IR has no name for."""
    delta: dict[str, Any] | None = None
    """That choice's delta-level leftovers (chat)."""
    meaning: Citation | None = None
    """What the record says in words a target with a place for it writes (a citation); a
    target without reports ``extra``."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class LaneStart:
    """A lane (chat choice) begins; ``role`` is the speaker, normally ``assistant``."""

    lane: int
    """The chat choice index."""
    role: str = "assistant"
    """The speaker, normally ``assistant``."""


@dataclass(slots=True)
class ItemStart:
    """An item opens in ``lane``.

    ``id`` is the source's item id when it has one (Responses ``msg_…``, ``fc_…``);
    ``call`` numbers tool calls within the lane from 0 (the chat ``tool_calls[].index``),
    ``call_id`` and ``name`` identify a tool call.
    """

    lane: int
    """The lane the item opens in."""
    kind: ItemKind
    """``message``, ``reasoning`` or ``tool_call``."""
    id: str | None = None
    """The source's item id when it has one (Responses ``msg_…``, ``fc_…``)."""
    call: int | None = None
    """A tool call's number within the lane, from 0 (the chat ``tool_calls[].index``)."""
    call_id: str | None = None
    """A tool call's id, which its result names."""
    name: str | None = None
    """A tool call's function name."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the opening record the IR has no name for."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class TextDelta:
    """A piece of message text; ``logprobs`` is a list of per-token entries or ``None``."""

    lane: int
    """The lane the text is said in."""
    text: str
    """The piece of message text."""
    logprobs: list[Any] | None = None
    """Per-token entries for the piece, or ``None``."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the record the IR has no name for."""
    obfuscation: str | None = None
    """The padding the source put beside the piece (see OBFUSCATION)."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class RefusalDelta:
    """A piece of a refusal (the model declining, as structured outputs report it)."""

    lane: int
    """The lane the refusal is said in."""
    text: str
    """The piece of refusal text."""
    logprobs: list[Any] | None = None
    """Per-token entries for the piece, or ``None``."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the record the IR has no name for."""


@dataclass(slots=True)
class ReasoningDelta:
    """A piece of reasoning. ``kind`` is ``summary`` (Responses reasoning summaries) or
    ``text`` (raw reasoning: chat ``reasoning_content``/``reasoning``, Responses
    ``reasoning_text``); ``part`` numbers the summary parts / content parts from 0."""

    lane: int
    """The lane the reasoning is said in."""
    text: str
    """The piece of reasoning."""
    kind: ReasoningKind = "text"
    """``summary`` or ``text`` (raw reasoning)."""
    part: int = 0
    """The summary part or content part it belongs to, from 0."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the record the IR has no name for."""
    source_field: str | None = None
    """The source's own field name (chat: ``reasoning_content`` or ``reasoning``), so a
    chat encoder can keep it."""
    obfuscation: str | None = None
    """The padding the source put beside the piece (see OBFUSCATION)."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class ToolArgsDelta:
    """A fragment of tool call ``call``'s JSON arguments, as the source split them."""

    lane: int
    """The lane of the call."""
    call: int
    """The call's number within the lane (``ItemStart.call``)."""
    fragment: str
    """A piece of the call's JSON arguments, as the source split them."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the record the IR has no name for."""
    obfuscation: str | None = None
    """The padding the source put beside the piece (see OBFUSCATION)."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class ItemEnd:
    """The open item of ``kind`` in ``lane`` is complete. ``extra`` holds the source's
    fields of the finished item that the encoder cannot derive (e.g. ``encrypted_content``).

    A reasoning item may close with an opaque token a client hands back on the next turn:
    ``signature`` vouches for the reasoning text shown (Anthropic's ``signature_delta``),
    ``encrypted`` is the reasoning itself, withheld (Anthropic's ``redacted_thinking``
    data). Responses holds either as a reasoning item's ``encrypted_content``."""

    lane: int
    """The lane of the item."""
    kind: ItemKind
    """The kind of the item that closes."""
    call: int | None = None
    """A tool call's number within the lane."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the finished item that the encoder cannot derive."""
    signature: str | None = None
    """A token vouching for the reasoning text shown (Anthropic's ``signature_delta``)."""
    encrypted: str | None = None
    """The reasoning itself, withheld (Anthropic's ``redacted_thinking`` data)."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class Usage:
    """Token counts. ``cached`` are cached input tokens, ``reasoning`` the output tokens
    spent reasoning; ``extra`` keeps the source's other usage fields (cost, audio tokens…)."""

    input: int | None = None
    """Input (prompt) tokens."""
    output: int | None = None
    """Output (completion) tokens."""
    total: int | None = None
    """Total tokens, as the source says it."""
    cached: int | None = None
    """Input tokens read from the prompt cache, counted in ``input``."""
    reasoning: int | None = None
    """Output tokens spent reasoning, counted in ``output``."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's other usage fields (cost, audio tokens…)."""
    cache_write: int | None = None
    """Input tokens written to the prompt cache (Anthropic's cache_creation_input_tokens),
    counted in ``input`` as ``cached`` is."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class Finish:
    """Lane ``lane`` is finished for ``reason`` (chat vocabulary, see ``FINISH_REASONS``).
    ``raw`` is the source's own word when it differs (``max_output_tokens``, ``out_of_tokens``)."""

    lane: int
    """The lane that is finished."""
    reason: str
    """Why, in the chat vocabulary (``FINISH_REASONS``)."""
    raw: str | None = None
    """The source's own word when it differs (``max_output_tokens``, ``out_of_tokens``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the record the IR has no name for."""
    stop_sequence: str | None = None
    """The stop sequence that ended the text (Anthropic's ``stop_sequence``): the string
    matched, which the text leaves out."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


@dataclass(slots=True)
class Error:
    """An error reported inside the stream (a chat ``{"error": …}`` frame, a Responses
    ``error`` event). ``code`` may be a string or a number, as providers send both."""

    message: str | None = None
    """What went wrong, in the source's words."""
    code: Any = None
    """The source's code: a string or a number, as providers send both."""
    type: str | None = None
    """The source's error type (``server_error``, ``invalid_request_error``…)."""
    param: str | None = None
    """The request parameter the error names."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The source's fields of the error record the IR has no name for."""


@dataclass(slots=True)
class Passthrough:
    """A source record the IR has no meaning for (a Responses web search item, an
    ``mcp_call``…). The encoder of ``format`` writes it back; any other reports it."""

    format: str
    """The codec whose encoder writes the record back; any other reports it."""
    data: Any
    """The record's payload, as the source gave it."""
    event: str | None = None
    """The record's SSE event name, if any."""
    line: int = 0
    """The record's input line, for notes."""
    item: str | None = None
    """For a record of an output item the IR has no words for (an Anthropic server tool
    block): the item's type on the record that opens it, ``""`` on its later records, so
    a target without a place for it reports the item once. ``None``: a record on its
    own."""
    meaning: Citation | WebSearch | None = None
    """What the record says in words a target with a place for it writes (a web search's
    step, a Responses annotation's citation); a target without reports the record as it
    would without them."""


@dataclass(slots=True)
class StreamEnd:
    """The stream is over. ``extra`` holds the source's closing fields the encoder cannot
    derive (Responses: terminal ``response`` fields that differ from the start)."""

    extra: dict[str, Any] = field(default_factory=dict)
    """The source's closing fields the encoder cannot derive (Responses: terminal
    ``response`` fields that differ from the start)."""
    own: Own | None = None
    """The source codec's own note (see :class:`Own`): read by the same codec only, never
    reported as lost."""


Event = (
    StreamStart
    | Meta
    | LaneStart
    | ItemStart
    | TextDelta
    | RefusalDelta
    | ReasoningDelta
    | ToolArgsDelta
    | ItemEnd
    | Usage
    | Finish
    | Error
    | Passthrough
    | StreamEnd
)


# Its items are list[Event]; typed list[Any] because a decoder's feed is typed to
# return list[Event] and returns this in its place.
class Batches(list[Any]):
    """What a decoder's ``feed`` returns for one record that stands for a whole stream:
    a non-streaming object (a ``chat.completion``, a Responses ``response``, a Llama
    Stack completion) decodes as the records of the stream it is the end of, each
    record's events a batch of its own, so that an encoder writes the records a server
    would have streamed. Callers of a decoder hand on each batch in turn."""

    __slots__ = ()

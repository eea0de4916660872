"""The codec contract, after FFmpeg's send/receive API.

A *decoder* is fed one :class:`~chatx.record.Record` at a time and returns the IR
events it means (zero or more, as one batch); ``finish()`` drains it at end of input.
A decoder sees parsed records only. A codec that finds *runs* (records it knows by
their bytes, :mod:`chatx.codecs.template`) names its hook (``Codec.run_hook``): the
pipeline wraps hook and decoder (:func:`open_decoder`), and the
records a reader left unparsed go to that wrapper.
An *encoder* is fed one such batch at a time and returns output payloads (JSON values,
or :data:`~chatx.record.DONE`); ``finish()`` drains it. Neither does I/O, reads the
clock or draws random numbers: ids and timestamps come from the input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from chatx.codecs.template import DeltaRun, RunDecoder, RunHook
from chatx.errors import InputError
from chatx.ir import Event
from chatx.notes import Notes
from chatx.record import Record

if TYPE_CHECKING:  # the commands' types: none of them is imported by `convert`
    from chatx.collect.assembler import Assembler
    from chatx.collect.items import OtherItem
    from chatx.request import Mapped, Request
    from chatx.usage import UsageNames
    from chatx.validation.base import Checker
    from chatx.validation.rule import Rule


@dataclass(frozen=True, slots=True)
class EncodeOptions:
    """Choices an encoder offers; defaults give the most widely understood output."""

    # Responses: write reasoning as reasoning_summary_* (every client rebuilds those)
    # or as raw reasoning_text.*.
    reasoning: Literal["summary", "text"] = "summary"
    # Chat: the delta field reasoning goes in; None keeps the source's own name.
    reasoning_field: str | None = None
    # Responses: the original request body, to fill the response envelope.
    request: dict[str, Any] | None = None
    # Write an ending (terminal event / finish) when the input has none.
    finish: bool = False
    # The codec that decoded the events. An encoder merges ``extra`` back only when it
    # is its own format's residue; from any other format it reports it as lost.
    source_format: str | None = None


class Decoder(Protocol):
    """Feed records, get IR event batches."""

    def feed(self, record: Record) -> list[Event]:
        """Decode one record; return the events it means (possibly none)."""

    def finish(self) -> list[Event]:
        """End of input: return what is still pending (drain)."""


class Encoder(Protocol):
    """Feed IR event batches, get output payloads."""

    def feed(self, events: list[Event]) -> list[Any]:
        """Encode the events of one source record; return payloads to write."""

    def feed_run(self, run: DeltaRun) -> list[Any]:
        """Encode the records of a run, what ``feed`` makes of their batches
        (``run.replay(self.feed, notes)`` when the encoder has no loop of its own); a
        long run's records may come as one :class:`~chatx.record.Dumped`, their bytes."""

    def finish(self) -> list[Any]:
        """End of input: return the closing payloads (drain)."""


class Describe(NamedTuple):
    """What ``chatx show`` says of one record of a format.

    ``kinds`` and ``preview`` take a record's JSON object and return ``None`` when it is
    not of the format's shape. ``show`` asks the formats in descending ``rank`` (ties in
    registry order) and the first answer counts: a format whose shape test overlaps
    another's (any string ``type``) ranks below the narrower one. ``item`` words an
    output item the IR has no words for (a Responses web search), as the format gave it.

    A NamedTuple, not a dataclass: every codec package makes one at import, and a
    dataclass costs `convert`'s start-up most of a millisecond to define.
    """

    kinds: Callable[[dict[str, Any]], list[str] | None]
    preview: Callable[[dict[str, Any]], str | None]
    rank: int = 0
    item: Callable[[dict[str, Any]], str] | None = None


class HttpApi(NamedTuple):
    """What a format's HTTP API looks like. The live commands know an API only through
    this: ``serve`` answers its path with streams in the format, ``capture --api`` posts
    to it, ``proxy`` names its recordings after it. A NamedTuple, as :class:`Describe` is,
    for the start-up every codec package pays at import."""

    api: str
    """The name ``capture --api`` takes and messages use (``chat``, ``anthropic``)."""
    path: str
    """The route, ``/v1`` included: a base URL ends in ``/v1``, as ``OPENAI_BASE_URL`` does.
    ``{model}`` stands for the model where the route names it (Gemini's
    ``/v1beta/models/{model}:generateContent``)."""
    model_key: str = "model"
    """The request body's field naming the model (Llama Stack's ``model_id``)."""
    key_header: str = "authorization"
    """The header the API key goes in: ``authorization`` takes ``Bearer KEY``, any other
    header the key itself (Anthropic's ``x-api-key``)."""
    headers: tuple[tuple[str, str], ...] = ()
    """Headers a client of the API sends with every request (``anthropic-version``)."""
    stream_path: str = ""
    """A route of its own for streams (Gemini's ``:streamGenerateContent`` beside
    ``:generateContent``, whose answer is then the final object); "": the request body's
    ``stream`` says."""
    also: tuple[str, ...] = ()
    """Other first segments the route is answered under too (Gemini's ``/v1`` beside
    ``/v1beta``: google-genai with a ``base_url`` asks ``/v1`` unless told)."""
    sse_query: str = ""
    """With a ``stream_path``: the query that asks for the stream as SSE (Gemini's
    ``alt=sse``); without it the stream comes as one JSON array of the chunks."""
    format: str = ""
    """The codec whose streams the API sends: filled in from the descriptor that holds it
    (``chatx.live.endpoints``), never written by hand."""

    @property
    def under_base(self) -> str:
        """The path after a base URL that ends in ``/v1``."""
        return self.path.removeprefix("/v1")


@cache
def route_pattern(route: str) -> re.Pattern[str]:
    """A route of an :class:`HttpApi` as a regular expression of the end of a path:
    ``{model}`` is one path segment, the group ``model``. Serving matches a whole path
    with it; telling what a recorded URL's exchange is, the route's end after its
    version (``/models/{model}:streamGenerateContent``)."""
    return re.compile(re.escape(route).replace(r"\{model\}", "(?P<model>[^/]+?)") + "$")


class RequestMapping(NamedTuple):
    """How a format's API request body maps to the neutral :class:`~chatx.request.Request`
    and back: the gateway (``proxy --upstream-api``) reads a client's body with the client
    API's ``read`` and writes the upstream's with the upstream API's ``write``. Each says
    what had no place (:attr:`~chatx.request.Mapped.lost`); a body read and written by one
    API keeps its JSON values."""

    read: Callable[[dict[str, Any]], Mapped]
    """The API's request body → ``Mapped(body=Request, lost=…)``; a body that is not one
    raises :class:`~chatx.errors.InputError`."""
    write: Callable[[Request], Mapped]
    """A :class:`~chatx.request.Request` → ``Mapped(body=<the API's body>, lost=…)``."""


class lazy:  # lower case: used as a function, as functools.partial is
    """A stand-in for ``module``'s ``name`` (a class or a function) that imports
    ``module`` when first called, then calls it; :meth:`load` gives the object itself (a
    rule catalogue). A descriptor's code is so loaded by the command that uses it:
    ``convert`` loads the decoder of the format it reads and the encoder of the one it
    writes, and no other format's, nor any checker, catalogue, final-object builder or
    description."""

    __slots__ = ("module", "name", "_target")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        self._target: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        target = self._target
        if target is None:
            target = self._target = self.load()
        return target(*args, **kwargs)

    def load(self) -> Any:
        """The object, its module imported if need be."""
        return getattr(import_module(self.module), self.name)

    def __repr__(self) -> str:
        return f"lazy({self.module!r}, {self.name!r})"


def no_rules() -> tuple[Rule, ...]:
    """The rule catalogue of a format that has none."""
    return ()


# eq=False: a codec is equal to itself only (its fields are functions), and the equality
# dataclass would write costs start-up half a millisecond.
@dataclass(frozen=True, slots=True, eq=False)
class Codec:
    """One format: its name, how to recognise it, how to read and write it, and what the
    other commands need of it. A format is registered here and nowhere else.

    The fields after ``whole`` serve ``validate``, ``collect``, ``show`` and ``diff``.
    Those that load code, the decoder and the encoder too, are :class:`lazy` stand-ins
    that import their module when first called, so that ``convert`` loads one decoder
    and one encoder, and never a checker, a rule catalogue or a final-object builder.
    """

    name: str
    description: str
    decoder: Callable[[Notes], Decoder]
    encoder: Callable[[Notes, EncodeOptions], Encoder]
    # 0..100: how sure we are that a stream whose first records are these is ours.
    probe: Callable[[list[Record]], int]
    container: str = "sse"  # default output container
    sse_event_names: bool = False  # write "event: <type>" lines on SSE output
    single_lane: bool = True  # holds one choice only
    aliases: tuple[str, ...] = field(default=())
    # The codec's run hook, made with its decoder (chatx.codecs.template.RunHook): it
    # knows most of the format's payloads by their bytes, so the reader leaves them
    # unparsed (``Record.raw``) and runs of them reach the encoder at once. None: every
    # record is parsed by the reader.
    run_hook: Callable[[Any], RunHook] | None = None
    # Names the format's non-streaming object (``"a chat.completion object"``) when a
    # record's value is one, else None: the decoder reads it as the stream it stands for.
    whole: Callable[[Any], str | None] | None = None
    # validate: a fresh streaming checker for one input, given the file name (for its
    # findings) and the container the records came in; None: the format is not checked.
    # It reads records, never the decoder: it is the decoder's and encoder's test oracle.
    checker: Callable[[str, str | None], Checker] | None = None
    # validate and rules: the format's rule catalogue (ids with a prefix of its own).
    rules: Callable[[], tuple[Rule, ...]] = no_rules
    # validate --schema: for one payload, the SDK type to check it with and the value to
    # check (``(TypeAdapter, value)``), or None when the SDK has no type for it. It
    # imports the SDK when called; ``schema_rule`` is the rule its findings go under.
    schema: Callable[[Any], tuple[Any, Any] | None] | None = None
    schema_rule: str | None = None
    # The package that hook imports and the chatx extra that installs it, for the usage
    # error --schema gives when it is missing; None: the openai SDK, extra `schema`.
    schema_sdk: tuple[str, str] | None = None
    # collect: the format's final object built from one assembled stream, given the
    # source format, the --choice (or None) and the notes; ``collect_as`` is the name
    # `collect --as` took for it before it took format names.
    final: Callable[[Assembler, str | None, int | None, Notes], dict[str, Any]] | None = None
    collect_as: str = ""
    # show: what one record of the format is.
    describe: Describe | None = None
    # collect and show: the output item a passthrough payload of this format adds
    # (``done`` False) or finishes (``done`` True), for items the IR has no words for.
    other_item: Callable[[Any], OtherItem | None] | None = None
    # The format's usage names, when its usage reads with chatx.usage.decode_usage.
    usage: UsageNames | None = None
    # ls: the model a record names, where it is not the record's (or its response's)
    # ``model`` (Gemini's ``modelVersion``); None: that ``model``.
    model: Callable[[Any], str | None] | None = None
    # diff: fields whose values differ between two runs of one request (ids, times,
    # sequence numbers), dropped unless --no-normalize.
    volatile: frozenset[str] = frozenset()
    # serve, capture and proxy: the format's HTTP API (its path, where the model and the
    # key are); None: the format has no API chatx speaks.
    http: HttpApi | None = None
    # the gateway: the format's API request body ⇄ the neutral request (chatx.request);
    # None: its requests are forwarded only to an upstream of the same API.
    requests: RequestMapping | None = None


class ClassNames(NamedTuple):
    """The names of a codec package's classes, each in the module every package of
    ``chatx.codecs`` keeps it in: the decoder in ``decode``, the encoder in ``encode``, the
    checker in ``check``, the rule catalogue in ``rules``, the run hook in ``run_hook``."""

    decoder: str
    encoder: str
    checker: str
    rules: str
    run_hook: str = "run_hook"


def package_codec(
    package: str,
    parts: ClassNames,
    *,
    rank: int,
    whole: bool = True,
    schema: bool = True,
    items: bool = False,
    probe: Callable[[list[Record]], int] | None = None,
    **fields: Any,
) -> Codec:
    """The :class:`Codec` of a package laid out as ``chatx.codecs``' are: besides ``parts``,
    ``final.final``, ``describe.kinds`` and ``.preview`` (asked at ``rank``),
    ``request.read`` and ``.write``, ``probe.probe`` unless ``probe`` is given;
    ``whole.describe`` and ``schema.schema`` where the
    format has them; with ``items``, ``describe.item`` and ``final.other_item``, for
    output items the IR has no words for. Each a :class:`lazy` stand-in; ``fields`` are
    the descriptor's other fields."""

    def at(module: str, name: str) -> lazy:
        return lazy(f"{package}.{module}", name)

    return Codec(
        probe=probe if probe is not None else at("probe", "probe"),
        decoder=at("decode", parts.decoder),
        encoder=at("encode", parts.encoder),
        run_hook=at("run_hook", parts.run_hook),
        checker=at("check", parts.checker),
        rules=at("rules", parts.rules).load,
        whole=at("whole", "describe") if whole else None,
        schema=at("schema", "schema") if schema else None,
        final=at("final", "final"),
        describe=Describe(
            at("describe", "kinds"),
            at("describe", "preview"),
            rank=rank,
            item=at("describe", "item") if items else None,
        ),
        other_item=at("final", "other_item") if items else None,
        requests=RequestMapping(at("request", "read"), at("request", "write")),
        **fields,
    )


def object_payload(
    record: Record, notes: Notes, done: str, must: str, expected: str
) -> dict[str, Any] | None:
    """The JSON object a record of a format of objects holds; None for ``[DONE]``, said
    (``done``: the warning) and left out. A record the reader could not parse, or a value
    that is no object (``must`` says what it must be, ``expected`` its shape), is an
    :class:`~chatx.errors.InputError`."""
    if record.done:
        notes.warning(done)
        return None
    if record.error:
        raise InputError(record.error, line=record.line, expected="a JSON object")
    if type(record.data) is not dict:
        raise InputError(must, line=record.line, expected=expected)
    return record.data


class OneLane(Protocol):
    """What an encoder of a format that holds one choice writes in: the lane it took,
    and the losses it said (once each over every stream of the input)."""

    lane: int | None
    noted: set[str]
    notes: Notes

    def lane_ok(self, lane: int) -> bool: ...


def refusal_as_text(written: OneLane, lane: int, why: str) -> bool:
    """Whether a refusal said in ``lane`` is written, as message text: the format has no
    refusal (``why`` says so, once)."""
    if not written.lane_ok(lane):
        return False
    lost_once(written, "refusal", f"a refusal is written as message text: {why}")
    return True


def lost_once(written: OneLane, key: str, message: str) -> None:
    """Say ``message`` lost unless ``key``'s loss was said already."""
    if key not in written.noted:
        written.noted.add(key)
        written.notes.lost(message)


def first_lane(written: OneLane, lane: int, holds: str) -> bool:
    """For a lane that is not the one ``written`` took: True when none was taken yet, and
    ``lane`` is taken; else False, and the lane is said left out, once (``holds``: what the
    format holds). The caller tests the taken lane first, the one test a delta costs."""
    if written.lane is None:
        written.lane = lane
        return True
    lost_once(written, f"lane {lane}", f"choice {lane} left out: {holds}")
    return False


# Finish reasons: which words each encoder can say exactly.
#
# The IR's ``Finish.reason`` is a chat word (``ir.FINISH_REASONS``) or, for a word no
# decoder knows (vLLM's ``abort``, Gemini's ``recitation``), the source's own word as it
# came. An encoder writes an exact equivalent when its format has one and says nothing;
# otherwise it writes what its format can carry and reports the reason ``lost``, so that
# ``--strict`` stops there. A word is never read as another without a note.

# Chat finish reasons as the openai SDK types name them. The IR adds "error", a generation
# that failed (OpenRouter's finish reason; Responses' "failed").
CHAT_WORDS = frozenset(("stop", "length", "tool_calls", "content_filter", "function_call"))

# Words servers put in a chat finish_reason for exactly what chat calls "stop" (a
# natural stop point or a provided stop sequence, in OpenAI's words): Hugging Face TGI's
# eos_token and stop_sequence, and the eos that Llama Stack's OpenAI-compat layer reads
# as end_of_turn together with eos_token (process_chat_completion_stream_response).
SAME_AS = {"eos": "stop", "eos_token": "stop", "stop_sequence": "stop"}


def exact_reason(reason: str | None) -> str | None:
    """The chat word (or ``error``) that ``reason`` says exactly, or None for a word
    no format but chat has."""
    if reason in CHAT_WORDS or reason == "error":
        return reason
    return SAME_AS.get(reason or "")


def open_decoder(codec: Codec, notes: Notes) -> Decoder:
    """The decoder of ``codec`` as the pipeline feeds it: with the codec's run hook in a
    :class:`~chatx.codecs.template.RunDecoder` when it names one (``Codec.run_hook``)."""
    decoder = codec.decoder(notes)
    if codec.run_hook is None:
        return decoder
    return RunDecoder(codec.run_hook(decoder), decoder.finish, notes)

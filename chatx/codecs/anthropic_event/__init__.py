"""``anthropic-event``: Anthropic Messages API stream events.

SSE blocks ``event: content_block_delta`` / ``data: {"type": "content_block_delta", …}``::

    message_start                      {"message": {"id", "model", "content": [], "usage"}}
    content_block_start  (index n)     {"content_block": {"type": "text" | "thinking" | …}}
    content_block_delta* (index n)     {"delta": {"type": "text_delta" | "thinking_delta"
                                         | "input_json_delta" | "signature_delta"
                                         | "citations_delta", …}}
    content_block_stop   (index n)
    message_delta                      {"delta": {"stop_reason", "stop_sequence"}, "usage"}
    message_stop

with ``ping`` anywhere and an ``error`` event that ends the stream. The same events come
from AWS Bedrock (JSON lines here, once the event-stream frames are decoded) and Google
Vertex. See ``docs/anthropic.md`` for the mapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatx.codecs.base import Codec, Describe
from chatx.record import Record

from . import whole
from .decode import AnthropicDecoder
from .encode import AnthropicEncoder
from .records import EVENTS, NAME

if TYPE_CHECKING:
    from chatx.assembler import Assembler, OtherItem
    from chatx.notes import Notes
    from chatx.validation.base import Checker
    from chatx.validation.rule import Rule


def probe(records: list[Record]) -> int:
    """100 for an event typed with one of the stream's own names (``message_start``,
    ``content_block_delta``, ``ping``…) or a whole ``message``; 60 for a lone
    ``{"type": "error", "error": {…}}`` (Responses has an ``error`` event too, flat)."""
    score = 0
    for record in records:
        data = record.data
        if record.done or record.error or type(data) is not dict:
            continue
        kind = data.get("type")
        if type(kind) is str and kind in EVENTS:
            return 100
        if whole.is_message(data):
            return 100
        if kind == "error" and type(data.get("error")) is dict and "sequence_number" not in data:
            score = 60
    return score


# What the other commands need: each imports its module when called (`convert` never does).


def _checker(file: str, container: str | None) -> Checker:
    from chatx.codecs.anthropic_event.check import AnthropicChecker

    return AnthropicChecker(file, container)


def _rules() -> tuple[Rule, ...]:
    from chatx.codecs.anthropic_event.rules import ANTHROPIC_RULES

    return ANTHROPIC_RULES


def _schema(data: Any) -> tuple[Any, Any] | None:
    from chatx.codecs.anthropic_event.schema import schema

    return schema(data)


def _final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    from chatx.codecs.anthropic_event.final import final

    return final(stream, source, choice, notes)


def _other_item(data: Any) -> OtherItem | None:
    from chatx.codecs.anthropic_event.final import other_item

    return other_item(data)


def _kinds(data: dict[str, Any]) -> list[str] | None:
    from chatx.codecs.anthropic_event.describe import kinds

    return kinds(data)


def _preview(data: dict[str, Any]) -> str | None:
    from chatx.codecs.anthropic_event.describe import preview

    return preview(data)


def _item(data: dict[str, Any]) -> str:
    from chatx.codecs.anthropic_event.describe import item

    return item(data)


CODEC = Codec(
    name=NAME,
    description="Anthropic Messages API stream events (message_start / content_block_* / "
    "message_delta / message_stop)",
    aliases=("anthropic",),
    decoder=AnthropicDecoder,
    encoder=AnthropicEncoder,
    probe=probe,
    container="sse",
    sse_event_names=True,
    single_lane=True,
    whole=whole.describe,
    checker=_checker,
    rules=_rules,
    schema=_schema,
    schema_rule="ANT100",
    schema_sdk=("anthropic", "anthropic"),
    final=_final,
    collect_as="anthropic",
    describe=Describe(_kinds, _preview, rank=3, item=_item),
    other_item=_other_item,
    # A message's and a tool call's ids, and a thinking block's signature, differ from
    # one run of a request to the next.
    volatile=frozenset(("id", "tool_use_id", "signature")),
)

__all__ = ["CODEC", "AnthropicDecoder", "AnthropicEncoder", "probe"]

"""``responses-event``: OpenAI Responses API stream events, as Open Responses specifies.

SSE blocks ``event: response.output_text.delta`` / ``data: {"type": …, "sequence_number": N}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatx.codecs.base import Codec, Describe
from chatx.codecs.responses_event import whole
from chatx.codecs.responses_event.decode import ResponsesDecoder
from chatx.codecs.responses_event.encode import ResponsesEncoder
from chatx.codecs.responses_event.envelope import USAGE
from chatx.record import Record

if TYPE_CHECKING:
    from chatx.assembler import Assembler, OtherItem
    from chatx.notes import Notes
    from chatx.validation.base import Checker
    from chatx.validation.rule import Rule


def probe(records: list[Record]) -> int:
    """Events typed ``response.*`` (or a bare ``error`` event with a sequence number), or
    a whole ``response`` object."""
    score = 0
    for record in records:
        data = record.data
        if not isinstance(data, dict):
            continue
        kind = data.get("type") or record.event
        if isinstance(kind, str) and kind.startswith("response."):
            return 100
        if kind is None and whole.is_response(data):
            return 100  # a whole response object: read as the events it stands for
        if kind == "error" and "sequence_number" in data:
            score = 70
    return score


# What the other commands need: each imports its module when called (`convert` never does).


def _checker(file: str, container: str | None) -> Checker:
    from chatx.codecs.responses_event.check import ResponsesChecker

    return ResponsesChecker(file, container)


def _rules() -> tuple[Rule, ...]:
    from chatx.codecs.responses_event.rules import RESPONSES_RULES

    return RESPONSES_RULES


def _schema(data: Any) -> tuple[Any, Any] | None:
    from chatx.codecs.responses_event.schema import schema

    return schema(data)


def _final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    from chatx.codecs.responses_event.final import final

    return final(stream, source, choice, notes)


def _kinds(data: dict[str, Any]) -> list[str] | None:
    from chatx.codecs.responses_event.describe import kinds

    return kinds(data)


def _preview(data: dict[str, Any]) -> str | None:
    from chatx.codecs.responses_event.describe import preview

    return preview(data)


def _item(data: dict[str, Any]) -> str:
    from chatx.codecs.responses_event.describe import item

    return item(data)


def _other_item(data: Any) -> OtherItem | None:
    from chatx.codecs.responses_event.final import other_item

    return other_item(data)


CODEC = Codec(
    name="responses-event",
    description="OpenAI Responses API stream events (event: response.* / data: {type, sequence_number})",
    decoder=ResponsesDecoder,
    encoder=ResponsesEncoder,
    probe=probe,
    container="sse",
    sse_event_names=True,
    single_lane=True,
    aliases=("responses",),
    reads_raw=True,
    whole=whole.describe,
    checker=_checker,
    rules=_rules,
    schema=_schema,
    schema_rule="RSP100",
    final=_final,
    collect_as="responses",
    # any object with a string type: asked before Llama Stack's and chat's looser shapes
    describe=Describe(_kinds, _preview, rank=2, item=_item),
    usage=USAGE,
    volatile=frozenset(
        (
            "id",
            "item_id",
            "response_id",
            "call_id",
            "created_at",
            "completed_at",
            "sequence_number",
            "obfuscation",
        )
    ),
    other_item=_other_item,
)

"""``llama-stack-event``: Llama Stack's legacy inference stream.

SSE ``data:`` lines (no ``event:`` line, no ``[DONE]``), each a
``ChatCompletionResponseStreamChunk``::

    {"event": {"event_type": "start" | "progress" | "complete",
               "delta": {"type": "text", "text": …}
                      | {"type": "tool_call", "tool_call": <text or ToolCall>,
                         "parse_status": "started" | "in_progress" | "succeeded" | "failed"},
               "logprobs": [{"logprobs_by_token": {token: logprob}}] | null,
               "stop_reason": "end_of_turn" | "end_of_message" | "out_of_tokens" | null},
     "metrics": [{"metric": "prompt_tokens", "value": 85, "unit": …}, …] | null}

and ``{"error": {…}}`` when generation fails. See ``docs/llama-stack.md`` for the mapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatx.codecs.base import Codec, Describe
from chatx.record import Record

from . import whole
from .decode import LlamaStackDecoder
from .encode import LlamaStackEncoder
from .records import NAME

if TYPE_CHECKING:
    from chatx.assembler import Assembler
    from chatx.notes import Notes
    from chatx.validation.base import Checker
    from chatx.validation.rule import Rule


def probe(records: list[Record]) -> int:
    """100 when the first record is ``{"event": {"event_type": …}}`` or a whole completion
    (``{"completion_message": …}``), else 0."""
    for record in records:
        if record.done or record.error:
            continue
        data = record.data
        event = data.get("event") if isinstance(data, dict) else None
        if event is None and isinstance(data, dict) and whole.is_completion(data):
            return 100  # a whole completion: read as the events it stands for
        return 100 if isinstance(event, dict) and "event_type" in event else 0
    return 0


# What the other commands need: each imports its module when called (`convert` never does).


def _checker(file: str, container: str | None) -> Checker:
    from .check import LlamaStackChecker

    return LlamaStackChecker(file, container)


def _rules() -> tuple[Rule, ...]:
    from .rules import LLAMA_STACK_RULES

    return LLAMA_STACK_RULES


def _final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    from .final import final

    return final(stream, source, choice, notes)


def _kinds(data: dict[str, Any]) -> list[str] | None:
    from .describe import kinds

    return kinds(data)


def _preview(data: dict[str, Any]) -> str | None:
    from .describe import preview

    return preview(data)


CODEC = Codec(
    name=NAME,
    description="Llama Stack legacy inference stream (start / progress / complete events)",
    aliases=("llama-stack", "llama"),
    decoder=LlamaStackDecoder,
    encoder=LlamaStackEncoder,
    probe=probe,
    container="sse",
    sse_event_names=False,
    single_lane=True,
    reads_raw=True,
    whole=whole.describe,
    checker=_checker,
    rules=_rules,
    final=_final,
    collect_as="llama-stack",
    # an event object: asked before chat's
    describe=Describe(_kinds, _preview, rank=1),
    volatile=frozenset(("call_id",)),
)

__all__ = ["CODEC", "LlamaStackDecoder", "LlamaStackEncoder", "probe"]

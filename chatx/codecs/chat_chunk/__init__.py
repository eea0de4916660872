"""``chat-chunk``: OpenAI Chat Completions ``chat.completion.chunk`` streams.

As OpenAI, Azure, vLLM, Ollama, llama.cpp, Groq, OpenRouter, DeepSeek, Mistral and
Together emit them: ``data: {...}`` SSE lines ending with ``data: [DONE]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatx.codecs.base import Codec, Describe
from chatx.codecs.chat_chunk import whole
from chatx.codecs.chat_chunk.decode import ChatChunkDecoder
from chatx.codecs.chat_chunk.encode import ChatChunkEncoder
from chatx.codecs.chat_chunk.fields import USAGE
from chatx.record import Record

if TYPE_CHECKING:
    from chatx.assembler import Assembler
    from chatx.notes import Notes
    from chatx.validation.base import Checker
    from chatx.validation.rule import Rule


def probe(records: list[Record]) -> int:
    """Chunk objects, error frames or ``[DONE]``: sure on the object name, likely on shape."""
    score = 0
    for record in records:
        data = record.data
        if record.done:
            score = max(score, 30)
        if not isinstance(data, dict):
            continue
        obj = data.get("object")
        if isinstance(obj, str) and obj.startswith("chat.completion"):
            return 100
        if isinstance(data.get("choices"), list):
            score = max(score, 80)
        elif "error" in data and len(data) == 1:
            score = max(score, 40)
        elif "prompt_filter_results" in data:
            score = max(score, 60)  # Azure's empty first chunk
    return score


# What the other commands need: each imports its module when called (`convert` never does).


def _checker(file: str, container: str | None) -> Checker:
    from chatx.codecs.chat_chunk.check import ChatChecker

    return ChatChecker(file, container)


def _rules() -> tuple[Rule, ...]:
    from chatx.codecs.chat_chunk.rules import CHAT_RULES

    return CHAT_RULES


def _schema(data: Any) -> tuple[Any, Any] | None:
    from chatx.codecs.chat_chunk.schema import schema

    return schema(data)


def _final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    from chatx.codecs.chat_chunk.final import final

    return final(stream, source, choice, notes)


def _kinds(data: dict[str, Any]) -> list[str] | None:
    from chatx.codecs.chat_chunk.describe import kinds

    return kinds(data)


def _preview(data: dict[str, Any]) -> str | None:
    from chatx.codecs.chat_chunk.describe import preview

    return preview(data)


CODEC = Codec(
    name="chat-chunk",
    description="OpenAI Chat Completions chat.completion.chunk stream (data: … data: [DONE])",
    decoder=ChatChunkDecoder,
    encoder=ChatChunkEncoder,
    probe=probe,
    container="sse",
    sse_event_names=False,
    single_lane=False,
    aliases=("chat", "chat-completions"),
    reads_raw=True,
    whole=whole.describe,
    checker=_checker,
    rules=_rules,
    schema=_schema,
    schema_rule="CHK100",
    final=_final,
    collect_as="chat",
    # a chat chunk has no tag of its own: any object no other format claims
    describe=Describe(_kinds, _preview, rank=0),
    usage=USAGE,
    volatile=frozenset(("id", "created", "system_fingerprint", "obfuscation")),
)

"""``chat-chunk``: OpenAI Chat Completions ``chat.completion.chunk`` streams.

As OpenAI, Azure, vLLM, Ollama, llama.cpp, Groq, OpenRouter, DeepSeek, Mistral and
Together emit them: ``data: {...}`` SSE lines ending with ``data: [DONE]``.
"""

from __future__ import annotations

from chatx.codecs.base import ClassNames, HttpApi, package_codec
from chatx.codecs.chat_chunk.fields import USAGE
from chatx.record import Record


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


# Each hook imports its module when first called (`convert` loads one decoder and one
# encoder, no other command's code); the probe loads with the registry, for sniffing.
CODEC = package_codec(
    __name__,
    ClassNames("ChatChunkDecoder", "ChatChunkEncoder", "ChatChecker", "CHAT_RULES", "ChatRunHook"),
    # a chat chunk has no tag of its own: any object no other format claims
    rank=0,
    name="chat-chunk",
    description="OpenAI Chat Completions chat.completion.chunk stream (data: … data: [DONE])",
    probe=probe,
    single_lane=False,
    aliases=("chat", "chat-completions"),
    schema_rule="CHK100",
    collect_as="chat",
    usage=USAGE,
    volatile=frozenset(("id", "created", "system_fingerprint", "obfuscation")),
    http=HttpApi("chat", "/v1/chat/completions"),
)

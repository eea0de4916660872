"""``chat-chunk``: OpenAI Chat Completions ``chat.completion.chunk`` streams.

As OpenAI, Azure, vLLM, Ollama, llama.cpp, Groq, OpenRouter, DeepSeek, Mistral and
Together emit them: ``data: {...}`` SSE lines ending with ``data: [DONE]``.
"""

from __future__ import annotations

from chatx.codecs.base import Codec, Describe, HttpApi, RequestMapping, lazy
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
CODEC = Codec(
    name="chat-chunk",
    description="OpenAI Chat Completions chat.completion.chunk stream (data: … data: [DONE])",
    decoder=lazy("chatx.codecs.chat_chunk.decode", "ChatChunkDecoder"),
    encoder=lazy("chatx.codecs.chat_chunk.encode", "ChatChunkEncoder"),
    probe=probe,
    container="sse",
    sse_event_names=False,
    single_lane=False,
    aliases=("chat", "chat-completions"),
    run_hook=lazy("chatx.codecs.chat_chunk.run_hook", "ChatRunHook"),
    whole=lazy("chatx.codecs.chat_chunk.whole", "describe"),
    checker=lazy("chatx.codecs.chat_chunk.check", "ChatChecker"),
    rules=lazy("chatx.codecs.chat_chunk.rules", "CHAT_RULES").load,
    schema=lazy("chatx.codecs.chat_chunk.schema", "schema"),
    schema_rule="CHK100",
    final=lazy("chatx.codecs.chat_chunk.final", "final"),
    collect_as="chat",
    # a chat chunk has no tag of its own: any object no other format claims
    describe=Describe(
        lazy("chatx.codecs.chat_chunk.describe", "kinds"),
        lazy("chatx.codecs.chat_chunk.describe", "preview"),
        rank=0,
    ),
    usage=USAGE,
    volatile=frozenset(("id", "created", "system_fingerprint", "obfuscation")),
    http=HttpApi("chat", "/v1/chat/completions"),
    requests=RequestMapping(
        lazy("chatx.codecs.chat_chunk.request", "read"),
        lazy("chatx.codecs.chat_chunk.request", "write"),
    ),
)

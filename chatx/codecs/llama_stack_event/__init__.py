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

from chatx.codecs.base import Codec, Describe, HttpApi, RequestMapping, lazy

# Each hook imports its module when first called (`convert` loads one decoder and one
# encoder, no other command's code), the probe when sniffing asks this format.
CODEC = Codec(
    name="llama-stack-event",
    description="Llama Stack legacy inference stream (start / progress / complete events)",
    aliases=("llama-stack", "llama"),
    decoder=lazy("chatx.codecs.llama_stack_event.decode", "LlamaStackDecoder"),
    encoder=lazy("chatx.codecs.llama_stack_event.encode", "LlamaStackEncoder"),
    probe=lazy("chatx.codecs.llama_stack_event.probe", "probe"),
    container="sse",
    sse_event_names=False,
    single_lane=True,
    run_hook=lazy("chatx.codecs.llama_stack_event.run_hook", "run_hook"),
    whole=lazy("chatx.codecs.llama_stack_event.whole", "describe"),
    checker=lazy("chatx.codecs.llama_stack_event.check", "LlamaStackChecker"),
    rules=lazy("chatx.codecs.llama_stack_event.rules", "LLAMA_STACK_RULES").load,
    final=lazy("chatx.codecs.llama_stack_event.final", "final"),
    collect_as="llama-stack",
    # an event object: asked before chat's
    describe=Describe(
        lazy("chatx.codecs.llama_stack_event.describe", "kinds"),
        lazy("chatx.codecs.llama_stack_event.describe", "preview"),
        rank=1,
    ),
    volatile=frozenset(("call_id",)),
    http=HttpApi("llama-stack", "/v1/inference/chat-completion", model_key="model_id"),
    requests=RequestMapping(
        lazy("chatx.codecs.llama_stack_event.request", "read"),
        lazy("chatx.codecs.llama_stack_event.request", "write"),
    ),
)

__all__ = ["CODEC"]

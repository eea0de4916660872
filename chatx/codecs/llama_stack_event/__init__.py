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

from chatx.codecs.base import ClassNames, HttpApi, package_codec

# Each hook imports its module when first called (`convert` loads one decoder and one
# encoder, no other command's code), the probe when sniffing asks this format.
CODEC = package_codec(
    __name__,
    ClassNames("LlamaStackDecoder", "LlamaStackEncoder", "LlamaStackChecker", "LLAMA_STACK_RULES"),
    # an event object: asked before chat's
    rank=1,
    schema=False,
    name="llama-stack-event",
    description="Llama Stack legacy inference stream (start / progress / complete events)",
    aliases=("llama-stack", "llama"),
    collect_as="llama-stack",
    volatile=frozenset(("call_id",)),
    http=HttpApi("llama-stack", "/v1/inference/chat-completion", model_key="model_id"),
)

__all__ = ["CODEC"]

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

from chatx.codecs.base import ClassNames, HttpApi, package_codec

# Each hook imports its module when first called (`convert` loads one decoder and one
# encoder, no other command's code), the probe when sniffing asks this format.
CODEC = package_codec(
    __name__,
    ClassNames("AnthropicDecoder", "AnthropicEncoder", "AnthropicChecker", "ANTHROPIC_RULES"),
    rank=3,
    items=True,
    name="anthropic-event",
    description="Anthropic Messages API stream events (message_start / content_block_* / "
    "message_delta / message_stop)",
    aliases=("anthropic",),
    sse_event_names=True,
    schema_rule="ANT100",
    schema_sdk=("anthropic", "anthropic"),
    collect_as="anthropic",
    # A message's and a tool call's ids, and a thinking block's signature, differ from
    # one run of a request to the next.
    volatile=frozenset(("id", "tool_use_id", "signature")),
    http=HttpApi(
        "anthropic",
        "/v1/messages",
        key_header="x-api-key",
        headers=(("anthropic-version", "2023-06-01"),),
    ),
)

__all__ = ["CODEC"]

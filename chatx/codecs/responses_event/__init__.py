"""``responses-event``: OpenAI Responses API stream events, as Open Responses specifies.

SSE blocks ``event: response.output_text.delta`` / ``data: {"type": …, "sequence_number": N}``.
"""

from __future__ import annotations

from chatx.codecs.base import ClassNames, HttpApi, package_codec
from chatx.codecs.responses_event.envelope import USAGE

# Each hook imports its module when first called (`convert` loads one decoder and one
# encoder, no other command's code), the probe when sniffing asks this format.
CODEC = package_codec(
    __name__,
    ClassNames(
        "ResponsesDecoder",
        "ResponsesEncoder",
        "ResponsesChecker",
        "RESPONSES_RULES",
        "ResponsesRunHook",
    ),
    # any object with a string type: asked before Llama Stack's and chat's looser shapes
    rank=2,
    items=True,
    name="responses-event",
    description="OpenAI Responses API stream events (event: response.* / data: {type, sequence_number})",
    sse_event_names=True,
    aliases=("responses",),
    schema_rule="RSP100",
    collect_as="responses",
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
    http=HttpApi("responses", "/v1/responses"),
)

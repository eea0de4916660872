"""``responses-event``: OpenAI Responses API stream events, as Open Responses specifies.

SSE blocks ``event: response.output_text.delta`` / ``data: {"type": …, "sequence_number": N}``.
"""

from __future__ import annotations

from chatx.codecs.base import Codec, Describe, HttpApi, RequestMapping, lazy
from chatx.codecs.responses_event.envelope import USAGE

# Each hook imports its module when first called (`convert` loads one decoder and one
# encoder, no other command's code), the probe when sniffing asks this format.
CODEC = Codec(
    name="responses-event",
    description="OpenAI Responses API stream events (event: response.* / data: {type, sequence_number})",
    decoder=lazy("chatx.codecs.responses_event.decode", "ResponsesDecoder"),
    encoder=lazy("chatx.codecs.responses_event.encode", "ResponsesEncoder"),
    probe=lazy("chatx.codecs.responses_event.probe", "probe"),
    container="sse",
    sse_event_names=True,
    single_lane=True,
    aliases=("responses",),
    run_hook=lazy("chatx.codecs.responses_event.run_hook", "ResponsesRunHook"),
    whole=lazy("chatx.codecs.responses_event.whole", "describe"),
    checker=lazy("chatx.codecs.responses_event.check", "ResponsesChecker"),
    rules=lazy("chatx.codecs.responses_event.rules", "RESPONSES_RULES").load,
    schema=lazy("chatx.codecs.responses_event.schema", "schema"),
    schema_rule="RSP100",
    final=lazy("chatx.codecs.responses_event.final", "final"),
    collect_as="responses",
    # any object with a string type: asked before Llama Stack's and chat's looser shapes
    describe=Describe(
        lazy("chatx.codecs.responses_event.describe", "kinds"),
        lazy("chatx.codecs.responses_event.describe", "preview"),
        rank=2,
        item=lazy("chatx.codecs.responses_event.describe", "item"),
    ),
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
    other_item=lazy("chatx.codecs.responses_event.final", "other_item"),
    http=HttpApi("responses", "/v1/responses"),
    requests=RequestMapping(
        lazy("chatx.codecs.responses_event.request", "read"),
        lazy("chatx.codecs.responses_event.request", "write"),
    ),
)

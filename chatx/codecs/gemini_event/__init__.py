"""``gemini-event``: Google Gemini ``streamGenerateContent`` streams.

Each chunk a whole ``GenerateContentResponse`` (``candidates``, ``usageMetadata``,
``modelVersion``, ``responseId``), as the Developer API and Vertex AI send them: SSE
``data:`` lines with ``alt=sse``, one JSON array without it, and a failed request's
``{"error": …}`` body.
"""

from __future__ import annotations

from chatx.codecs.base import Codec, Describe, HttpApi, RequestMapping, lazy

CODEC = Codec(
    name="gemini-event",
    description="Google Gemini streamGenerateContent chunks (GenerateContentResponse)",
    decoder=lazy("chatx.codecs.gemini_event.decode", "GeminiDecoder"),
    run_hook=lazy("chatx.codecs.gemini_event.run_hook", "run_hook"),
    encoder=lazy("chatx.codecs.gemini_event.encode", "GeminiEncoder"),
    probe=lazy("chatx.codecs.gemini_event.probe", "probe"),
    container="sse",
    single_lane=False,
    aliases=("gemini", "google"),
    checker=lazy("chatx.codecs.gemini_event.check", "GeminiChecker"),
    rules=lazy("chatx.codecs.gemini_event.rules", "GEMINI_RULES").load,
    schema=lazy("chatx.codecs.gemini_event.schema", "schema"),
    schema_rule="GEM100",
    schema_sdk=("google.genai", "gemini"),  # the module find_spec looks up
    final=lazy("chatx.codecs.gemini_event.final", "final"),
    collect_as="gemini",
    other_item=lazy("chatx.codecs.gemini_event.final", "other_item"),
    # its records have no string ``type``: asked before chat, which claims any object
    describe=Describe(
        lazy("chatx.codecs.gemini_event.describe", "kinds"),
        lazy("chatx.codecs.gemini_event.describe", "preview"),
        rank=1,
        item=lazy("chatx.codecs.gemini_event.describe", "item"),
    ),
    volatile=frozenset(("responseId", "createTime")),
    model=lazy("chatx.codecs.gemini_event.probe", "model"),
    # The model is in the path; :streamGenerateContent streams (SSE with alt=sse),
    # :generateContent answers the final response. The key: x-goog-api-key (or ?key=).
    http=HttpApi(
        "gemini",
        "/v1beta/models/{model}:generateContent",
        key_header="x-goog-api-key",
        stream_path="/v1beta/models/{model}:streamGenerateContent",
        sse_query="alt=sse",
        also=("/v1",),
    ),
    requests=RequestMapping(
        lazy("chatx.codecs.gemini_event.request", "read"),
        lazy("chatx.codecs.gemini_event.request", "write"),
    ),
)

"""``gemini-event``: Google Gemini ``streamGenerateContent`` streams.

Each chunk a whole ``GenerateContentResponse`` (``candidates``, ``usageMetadata``,
``modelVersion``, ``responseId``), as the Developer API and Vertex AI send them: SSE
``data:`` lines with ``alt=sse``, one JSON array without it, and a failed request's
``{"error": …}`` body.
"""

from __future__ import annotations

from chatx.codecs.base import ClassNames, HttpApi, lazy, package_codec

CODEC = package_codec(
    __name__,
    ClassNames("GeminiDecoder", "GeminiEncoder", "GeminiChecker", "GEMINI_RULES"),
    # its records have no string ``type``: asked before chat, which claims any object
    rank=1,
    whole=False,
    items=True,
    name="gemini-event",
    description="Google Gemini streamGenerateContent chunks (GenerateContentResponse)",
    single_lane=False,
    aliases=("gemini", "google"),
    schema_rule="GEM100",
    schema_sdk=("google.genai", "gemini"),  # the module find_spec looks up
    collect_as="gemini",
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
)

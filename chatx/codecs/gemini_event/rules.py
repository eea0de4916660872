"""Rules for Gemini ``streamGenerateContent`` streams (``gemini-event``).

Facts come from the ``GenerateContentResponse`` shape (google-genai's types) and the
130 recorded streams described in ``../shared/captures/NOTES.md``: what every one of them
does is an error to break, what some of them do (STOP repeated, usage on one chunk) is
at most a warning.
"""

from __future__ import annotations

from chatx.validation.rule import Rule

F = "gemini-event"

GEMINI_RULES = (
    Rule(
        "GEM001",
        "E",
        F,
        "chunk is malformed (not a GenerateContentResponse)",
        "Each chunk is a JSON object: `candidates` a list of objects, each candidate's "
        "`content.parts` a list of objects, `usageMetadata` an object; or, for a failed "
        'request, one `{"error": {"code", "message", "status"}}` object.',
        '{"candidates": {"content": "Hi"}}',
    ),
    Rule(
        "GEM002",
        "W",
        F,
        "finishReason on a chunk that is not the candidate's last",
        "A candidate's `finishReason` comes on its last chunk. Some streams repeat `STOP` "
        "on every chunk (2024 Vertex) or send it before code execution goes on (2.5-pro): "
        "a client that stops at the first one loses what follows, so chatx takes the "
        "last one.",
        'data: {"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]}\n'
        'data: {"candidates": [{"content": {"parts": [{"text": " there"}]}}]}',
    ),
    Rule(
        "GEM003",
        "E",
        F,
        "usageMetadata total is less than its parts",
        "`totalTokenCount` counts the prompt, the answer (`candidatesTokenCount`), the "
        "thoughts (`thoughtsTokenCount`) and a built-in tool's input "
        "(`toolUsePromptTokenCount`): it is never less than their sum. Counts are "
        "non-negative integers.",
        '"usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 12}',
    ),
    Rule(
        "GEM004",
        "E",
        F,
        "a thought part with no text and no thoughtSignature",
        'A part with `"thought": true` carries the thought\'s `text`; one without text '
        "carries a `thoughtSignature` (the signature alone) and nothing else says nothing.",
        '{"thought": true}',
    ),
    Rule(
        "GEM005",
        "E",
        F,
        "a record after an error object",
        'A failed request answers one `{"error": …}` object (an HTTP 4xx body, even '
        "with `alt=sse`) and nothing else: the error ends the stream.",
        '{"error": {"code": 400, "message": "…", "status": "INVALID_ARGUMENT"}}\n'
        '{"candidates": […]}',
    ),
    Rule(
        "GEM006",
        "E",
        F,
        "stream ends with a candidate that has no finishReason",
        "Every candidate gets a `finishReason` (its last chunk's); a stream that ends "
        "without one was cut short. A blocked prompt (`promptFeedback.blockReason`, no "
        "candidates) and an error object end a stream without one.",
        'data: {"candidates": [{"content": {"parts": [{"text": "The answer is"}]}}]}\n'
        "(end of stream)",
    ),
    Rule(
        "GEM007",
        "E",
        F,
        "functionCall without a name",
        "A `functionCall` part names the function (`name`) and gives `args` as an "
        "object. Vertex's streamed arguments are the exception: after a call that opens "
        "with `willContinue`, parts with `partialArgs`, `willContinue` alone and an empty "
        "`functionCall` that ends it carry no name.",
        '{"functionCall": {"args": {"city": "Paris"}}}',
    ),
    Rule(
        "GEM008",
        "W",
        F,
        "the request failed (an error object)",
        "An error object is a valid answer, but no content came: the request failed "
        "(`status` says why: INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED…).",
        '{"error": {"code": 404, "message": "models/x is not found", "status": "NOT_FOUND"}}',
    ),
    Rule(
        "GEM100",
        "E",
        F,
        "chunk does not match the google-genai SDK's GenerateContentResponse",
        "Checked with `--schema` (the `gemini` extra installs google-genai): each chunk "
        "validates as the SDK's `GenerateContentResponse`, which forbids fields it does "
        "not know.",
        '{"candidates": [{"content": {"parts": [{"txt": "Hi"}]}}]}',
        schema=True,
    ),
)

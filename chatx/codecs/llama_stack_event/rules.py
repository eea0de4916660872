"""Rules for Llama Stack's legacy inference stream (``llama-stack-event``).

Facts come from Llama Stack's ``ChatCompletionResponseStreamChunk``, its server's
``sse_generator`` (the error frame), its OpenAI-compat layer's
``convert_openai_chat_completion_stream`` (incremental tool calls), and the recorded
fireworks streams described in ``../shared/captures/NOTES.md``.
"""

from __future__ import annotations

from chatx.validation.rule import Rule

F = "llama-stack-event"

LLAMA_STACK_RULES = (
    Rule(
        "LLS001",
        "E",
        F,
        "stream does not start with exactly one start event",
        'The first event has `event_type: "start"` and no other event is a start; clients '
        "open the message on it.",
        '{"event":{"event_type":"progress","delta":{"type":"text","text":"Hi"}}}',
    ),
    Rule(
        "LLS002",
        "E",
        F,
        "stream does not end with a complete event or an error frame",
        'The last event has `event_type: "complete"`; without it a client has no stop '
        'reason and no metrics. A failure ends the stream instead with one `{"error": '
        '{"message": …}}` record (LLS009), as Llama Stack\'s server writes it; nothing '
        "follows either, but the start of the next stream in a file that holds several.",
        '{"event":{"event_type":"progress",...}}\n(end of stream)',
    ),
    Rule(
        "LLS003",
        "E",
        F,
        "event is malformed (no event object, unknown type or delta)",
        'Each chunk is `{"event": {"event_type": start|progress|complete, "delta": '
        '{"type": text|tool_call|image, …}}}`.',
        '{"event":{"event_type":"middle","delta":{"type":"text","text":"Hi"}}}',
    ),
    Rule(
        "LLS004",
        "E",
        F,
        "tool call events out of order",
        "A streamed tool call goes `started` → `in_progress`* → exactly one of "
        "`succeeded` or `failed`, before another call starts and before `complete`. Two "
        "other shapes are valid: a lone `succeeded` after text deltas (the model wrote the "
        "call as text and the server parsed it), and Llama Stack's OpenAI-compat layer's "
        "`in_progress` fragments with no `started` (`name(`, the arguments, `)`), each "
        "call then ending in `succeeded` or `failed`.",
        '{"event":{"event_type":"progress","delta":{"type":"tool_call",\n'
        '  "parse_status":"started","tool_call":""}}}\n'
        '{"event":{"event_type":"complete",...}}   (no succeeded or failed)',
    ),
    Rule(
        "LLS005",
        "E",
        F,
        "succeeded tool call without a parsed ToolCall",
        "A `succeeded` delta carries the parsed call: an object with `call_id`, "
        "`tool_name` and `arguments`; a call that could not be parsed is `failed` with "
        "the raw text instead.",
        '{"event":{"event_type":"progress","delta":{"type":"tool_call",\n'
        '  "parse_status":"succeeded","tool_call":"get_weather(city=Paris)"}}}',
    ),
    Rule(
        "LLS006",
        "E",
        F,
        "complete event without a stop_reason",
        "The complete event says why generation stopped (end_of_turn, end_of_message, "
        "out_of_tokens).",
        '{"event":{"event_type":"complete","delta":{"type":"text","text":""},\n'
        '  "stop_reason":null}}',
    ),
    Rule(
        "LLS007",
        "E",
        F,
        "metrics on an event other than complete",
        "Token metrics describe the whole generation and come once, on the complete event.",
        '{"event":{"event_type":"progress",...},"metrics":[{"metric":"prompt_tokens",\n'
        '  "value":3}]}',
    ),
    Rule(
        "LLS008",
        "E",
        F,
        "metrics are negative, not numbers, or do not add up",
        "Metric values are non-negative numbers and total_tokens is at least prompt_tokens + "
        "completion_tokens (a provider's total may count more, such as reasoning tokens).",
        '"metrics":[{"metric":"prompt_tokens","value":3},\n'
        '  {"metric":"completion_tokens","value":2},{"metric":"total_tokens","value":4}]',
    ),
    Rule(
        "LLS009",
        "W",
        F,
        "error frame in the stream",
        'Llama Stack\'s server reports a failure with one `{"error": {"message": …}}` record '
        "and stops; its client raises an APIError there with that message. The stream is "
        "valid, but the generation failed. Without a message string the frame is LLS003.",
        '{"error":{"message":"upstream provider timed out"}}',
    ),
)

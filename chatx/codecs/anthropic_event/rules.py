"""Rules for Anthropic Messages streams (``anthropic-event``).

Facts come from Anthropic's Messages streaming documentation (the event flow, pings,
error events, new event types, cumulative usage), the anthropic-python SDK (its SSE
reader and ``accumulate_event``), and the captures described in
``../shared/captures/NOTES.md``.
"""

from __future__ import annotations

from chatx.validation.rule import Rule

F = "anthropic-event"

ANTHROPIC_RULES = (
    Rule(
        "ANT001",
        "E",
        F,
        "stream does not start with message_start",
        "A message opens with `message_start`, which carries the `Message` every later event "
        "updates; the anthropic SDK raises 'Unexpected event order, got … before "
        '"message_start"\'. Only a `ping` or an `error` may come before it. A '
        "`message_start` after a `message_stop` (or an `error`) begins the next message of a "
        "file that holds several.",
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,\n'
        '  "content_block":{"type":"text","text":""}}',
    ),
    Rule(
        "ANT002",
        "E",
        F,
        "event after message_stop or an error event",
        "`message_stop` is the last event of a message, and an `error` event ends the stream "
        "in its place: clients stop reading there, so whatever follows is lost. Only a `ping` "
        "(sent at any time to keep the connection open) or the `message_start` of the next "
        "message may follow.",
        'event: message_stop\ndata: {"type":"message_stop"}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,...}',
    ),
    Rule(
        "ANT003",
        "E",
        F,
        "message does not end with message_stop (stream cut short)",
        "Every message ends with one `message_stop` (or an `error` event). Without it the "
        "stream was cut short: the client cannot tell a finished message from a dropped "
        "connection, and a block still open, a stop reason or the final usage may be "
        "missing. A `message_start` while a message is open ends that message the same way.",
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n'
        '  "delta":{"type":"text_delta","text":"Hel"}}\n(end of stream)',
    ),
    Rule(
        "ANT004",
        "E",
        F,
        "event is malformed (not an object, no type, or a required field missing)",
        "Each event is a JSON object with a string `type` and the fields its type needs: "
        "`message` on message_start; an integer `index` on the content block events; a "
        "`content_block` object with a `type` on content_block_start; a `delta` object with "
        "a `type` (and the string its type carries: `text`, `partial_json`, `thinking`, "
        "`signature`) on content_block_delta; a `delta` object on message_delta; an `error` "
        "object with `type` and `message` on error.",
        'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}',
    ),
    Rule(
        "ANT005",
        "W",
        F,
        "unknown event, content block or delta type",
        "Anthropic's versioning policy lets the API add event types, and new content block "
        "and delta types arrive with new features (server tools, compaction); clients are "
        "told to handle unknown types gracefully, so they are warnings. The ordering rules "
        "do not apply to an unknown event.",
        'event: message_progress\ndata: {"type":"message_progress","percent":50}',
    ),
    Rule(
        "ANT006",
        "E",
        F,
        "SSE event name missing or not the data's type",
        "On SSE every block names its event (`event: content_block_delta`) and the name "
        "equals the data's `type`. The anthropic SDKs dispatch on the name: they skip a "
        "block without one and raise on `event: error`, so a data-only block is lost and a "
        "mislabelled one is read as another event. JSON-lines input carries no names.",
        'event: content_block_stop\ndata: {"type":"content_block_delta","index":0,...}',
    ),
    Rule(
        "ANT007",
        "E",
        F,
        "content block index is not the next one",
        "Content blocks are numbered by their place in the message's `content` list: the "
        "first `content_block_start` has index 0 (or the length of a `content` list that "
        "message_start already holds) and each next one the index after. Clients append "
        "each block and then address it by index, so a gap or a reused index puts deltas "
        "into the wrong block.",
        'data: {"type":"content_block_start","index":0,...}\n'
        'data: {"type":"content_block_stop","index":0}\n'
        'data: {"type":"content_block_start","index":2,...}',
    ),
    Rule(
        "ANT008",
        "E",
        F,
        "delta or stop for a block that is not open",
        "A block is started (`content_block_start`) before its deltas and stopped "
        "(`content_block_stop`) once, after them. A delta for an index that was never "
        "started has nowhere to go (the SDK raises an IndexError), and one after the stop "
        "changes a block the client has already finished.",
        'data: {"type":"content_block_start","index":0,...}\n'
        'data: {"type":"content_block_stop","index":0}\n'
        'data: {"type":"content_block_stop","index":0}',
    ),
    Rule(
        "ANT009",
        "E",
        F,
        "delta type does not fit its block",
        "Each delta type belongs to a block type: `text_delta` and `citations_delta` to "
        "`text`; `thinking_delta` and `signature_delta` to `thinking`; `input_json_delta` to "
        "`tool_use`, `server_tool_use` and `mcp_tool_use`; `compaction_delta` to "
        "`compaction`. Redacted thinking and the server tools' result blocks arrive whole "
        "and take no delta. Clients drop a delta of the wrong kind.",
        'data: {"type":"content_block_start","index":0,"content_block":{"type":"text",\n'
        '  "text":""}}\ndata: {"type":"content_block_delta","index":0,\n'
        '  "delta":{"type":"input_json_delta","partial_json":"{}"}}',
    ),
    Rule(
        "ANT010",
        "E",
        F,
        "content block open at message_delta or message_stop, or started after message_delta",
        "The content blocks come between message_start and the first message_delta, each "
        "stopped before the message-level events: message_delta says why the message "
        "stopped and how many tokens it took, which is final only once every block is "
        "done. A block left open is never finished for the client (its tool input is never "
        "parsed).",
        'data: {"type":"content_block_start","index":0,...}\n'
        'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},...}',
    ),
    Rule(
        "ANT011",
        "E",
        F,
        "message_stop without a stop_reason (no message_delta)",
        "Before message_stop, a message_delta gives the message's `stop_reason` "
        "(`end_turn`, `max_tokens`, `stop_sequence`, `tool_use`, `pause_turn`, `refusal`) "
        "and its final usage. A message whose message_start already carries a stop_reason "
        "(the finished turns of programmatic tool calling) needs none.",
        'data: {"type":"content_block_stop","index":0}\ndata: {"type":"message_stop"}',
    ),
    Rule(
        "ANT012",
        "E",
        F,
        "tool input is not a JSON object at block stop",
        "The `partial_json` strings of a `tool_use` (or server or MCP tool use) block, "
        "joined, are the tool's input: a JSON object by the time the block stops. No "
        "fragment at all, or only empty ones, means the input content_block_start gave "
        "(`{}`). Anything else cannot be executed (the SDK raises on malformed JSON). One "
        "exception: the last block of a message that stops on `max_tokens` (or "
        "`model_context_window_exceeded`) may end mid-input, as the docs say; the client "
        "retries with a higher limit.",
        'data: {"type":"content_block_delta","index":1,\n'
        '  "delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Par"}}\n'
        'data: {"type":"content_block_stop","index":1}',
    ),
    Rule(
        "ANT013",
        "E",
        F,
        "usage is inconsistent",
        "Token counts (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`, "
        "`cache_read_input_tokens`) are non-negative integers; `message_start` carries a "
        "usage object and every message_delta a usage with `output_tokens`. Counts in "
        "message_delta are cumulative (the docs and the SDK, which overwrites rather than "
        "adds): none is below the same count in message_start or an earlier message_delta.",
        'data: {"type":"message_start","message":{...,"usage":{"input_tokens":9,\n'
        '  "output_tokens":5}}}\n'
        'data: {"type":"message_delta",...,"usage":{"output_tokens":3}}',
    ),
    Rule(
        "ANT014",
        "W",
        F,
        "error event in the stream",
        "The API reports a failure after the response began (`overloaded_error`, "
        '`api_error`…) with `event: error` and `{"type":"error","error":{"type",'
        '"message"}}`, and sends nothing more; the SDK raises an APIStatusError there. The '
        "stream is valid, but the generation failed.",
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",\n'
        '  "message":"Overloaded"}}',
    ),
    Rule(
        "ANT100",
        "E",
        F,
        "event does not match the anthropic SDK type (--schema)",
        "Under --schema each event is validated against the anthropic SDK's pydantic model "
        "for its type (the beta `RawMessageStreamEvent` members, which hold every content "
        "block the API streams; the `ErrorResponse` for error events; extra fields "
        "allowed). Each distinct problem is reported once per input.",
        'data: {"type":"content_block_stop","index":"0"}',
        schema=True,
    ),
)

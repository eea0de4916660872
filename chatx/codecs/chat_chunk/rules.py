"""Rules for OpenAI Chat Completions streaming chunks (``chat-chunk``).

Facts come from the openai-python ``ChatCompletionStreamState`` accumulator
(``accumulate_delta``) and the provider quirks recorded in ``../shared/captures/NOTES.md``.
"""

from __future__ import annotations

from chatx.validation.rule import Rule

F = "chat-chunk"

CHAT_RULES = (
    Rule(
        "CHK001",
        "E",
        F,
        "chunk object is not chat.completion.chunk",
        'Every chunk says `object: "chat.completion.chunk"`; the openai SDK types reject '
        "anything else. Azure's first chunk (empty id and object, `choices: []`, "
        "`prompt_filter_results`) is a known preamble and exempt.",
        '{"id":"c1","object":"chat.completion.done","created":1,"choices":[...]}',
    ),
    Rule(
        "CHK002",
        "E",
        F,
        "chunk id differs from the first chunk's",
        "All chunks of one completion carry the same `id`; clients key the completion on "
        "it, and a changed id means two streams were mixed (Groq's compound models send a "
        "new id on every chunk). Reported once per stream.",
        '{"id":"c1",...}\n{"id":"c2",...}',
    ),
    Rule(
        "CHK003",
        "W",
        F,
        "chunk created differs from the first chunk's",
        "`created` is the completion's creation time, fixed for the whole stream (OpenAI). "
        "Groq, Ollama, xAI, Perplexity and Azure-hosted DeepSeek stamp each chunk with the "
        "second it was sent instead; clients take `created` from the first chunk, so this "
        "is a warning, reported once per stream.",
        '{"id":"c1","created":100,...}\n{"id":"c1","created":101,...}',
    ),
    Rule(
        "CHK004",
        "W",
        F,
        "first delta of a choice has no role",
        'The first delta of each choice carries `role: "assistant"`; clients that build '
        "the message from deltas otherwise have no role.",
        '{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],...}',
    ),
    Rule(
        "CHK005",
        "E",
        F,
        "tool_calls entry without an integer index",
        "Each `tool_calls` entry carries an integer `index` that says which call it "
        "continues; the openai SDK raises 'Expected list delta entry to have an index key'.",
        '{"delta":{"tool_calls":[{"id":"call_1","type":"function",\n'
        '  "function":{"name":"f","arguments":"{}"}}]},...}',
    ),
    Rule(
        "CHK006",
        "E",
        F,
        "first entry of a tool call lacks id, type or function.name",
        "The first `tool_calls` entry for an index introduces the call: `id`, "
        '`type: "function"` and `function.name`. Without them the call cannot be '
        "executed or answered.",
        '{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},...}',
    ),
    Rule(
        "CHK007",
        "E",
        F,
        "later entry of a tool call repeats its id or name",
        "After the first entry, a call's entries carry argument fragments only. Clients "
        "concatenate every string they receive, so a repeated id or name becomes "
        "`call_1call_1` or `get_weatherget_weather` (empty strings are harmless).",
        '{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f"}}]}}\n'
        '{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"arguments":"{}"}}]}}',
    ),
    Rule(
        "CHK008",
        "W",
        F,
        "tool call arguments do not join to valid JSON",
        "The argument fragments of a call, joined, are a JSON object the tool is called "
        "with. Models do produce broken JSON, so this is a warning about the content, not "
        "the stream.",
        '{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":"}}]}}',
    ),
    Rule(
        "CHK009",
        "E",
        F,
        "choice ends without a finish_reason",
        "Each choice gets exactly one chunk with a non-null `finish_reason`; without it a "
        "client cannot tell a complete answer from a cut-off stream.",
        '{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\ndata: [DONE]',
    ),
    Rule(
        "CHK010",
        "E",
        F,
        "choice has a second finish_reason",
        "finish_reason is non-null on exactly one chunk per choice; a second one "
        "overwrites the first in clients.",
        '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n'
        '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    ),
    Rule(
        "CHK011",
        "E",
        F,
        "delta for a choice after its finish_reason",
        "A choice is over once it has a finish_reason: later content, reasoning or tool "
        "calls for it are appended to an answer the client already considers final.",
        '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n'
        '{"choices":[{"index":0,"delta":{"content":"more"},"finish_reason":null}]}',
    ),
    Rule(
        "CHK012",
        "W",
        F,
        "finish_reason tool_calls without tool calls, or calls without it",
        "finish_reason is `tool_calls` exactly when the choice made tool calls; agents "
        "decide on it whether to run tools. Older Ollama sends `stop` after a tool call.",
        '{"delta":{"tool_calls":[{"index":0,"id":"call_1",...}]},"finish_reason":null}\n'
        '{"delta":{},"finish_reason":"stop"}',
    ),
    Rule(
        "CHK013",
        "E",
        F,
        "usage chunk is not the last chunk, or comes twice",
        "With stream_options.include_usage the server sends one last chunk with "
        "`choices: []` and `usage`, after every choice has its finish_reason: no chunk "
        "with choices follows it. (A choice that never finishes is reported by CHK009.)",
        '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n'
        '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    ),
    Rule(
        "CHK014",
        "W",
        F,
        "usage on a chunk that carries choices",
        "Usage normally comes alone in a `choices: []` chunk. Some servers repeat it on "
        "every chunk or put it on the finish chunk (a known server option); clients that "
        "sum usage per chunk over-count. Reported once per stream.",
        '{"choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":{...}}',
    ),
    Rule(
        "CHK015",
        "E",
        F,
        "SSE stream does not end with data: [DONE]",
        "On SSE the stream ends with `data: [DONE]`; without it a client cannot tell a "
        "finished stream from a dropped connection. (Not checked on JSONL: `[DONE]` is "
        "SSE framing, not a JSON value, and a JSON-lines stream ends with its file; nor "
        "after an error frame, where the stream ends, with or without `[DONE]`.)",
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],...}\n(end of stream)',
    ),
    Rule(
        "CHK016",
        "E",
        F,
        "data after data: [DONE]",
        "[DONE] is the last record; clients stop reading there and never see what follows. "
        "A file may hold several streams one after the other: a chunk of another completion "
        "id after `[DONE]` starts the next one.",
        'data: [DONE]\n\ndata: {"choices":[...],...}',
    ),
    Rule(
        "CHK017",
        "W",
        F,
        "error frame in the stream",
        'A `data: {"error": {…}}` frame (or a chunk with an `error` object, as '
        "OpenRouter sends) reports a failure mid-stream; the stream is well formed but the "
        "completion failed.",
        'data: {"error":{"message":"overloaded","type":"server_error"}}',
    ),
    Rule(
        "CHK018",
        "E",
        F,
        "chunk after an error frame",
        "An error frame ends the stream: only `data: [DONE]` may follow it.",
        'data: {"error":{"message":"overloaded"}}\n\n'
        'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}],...}',
    ),
    Rule(
        "CHK019",
        "E",
        F,
        "chunk is malformed (not an object, or bad choices)",
        "A chunk is a JSON object whose `choices` is a list of objects, each with an "
        "integer `index` and a `delta` object.",
        '{"id":"c1","object":"chat.completion.chunk","choices":{"index":0}}',
    ),
    Rule(
        "CHK100",
        "E",
        F,
        "chunk does not match the openai SDK type (--schema)",
        "Under --schema each chunk is validated against the openai SDK's "
        "ChatCompletionChunk model (extra fields allowed). Each distinct problem is "
        "reported once per stream.",
        '{"id":"c1","object":"chat.completion.chunk","created":"soon","model":"m",\n "choices":[]}',
        schema=True,
    ),
)

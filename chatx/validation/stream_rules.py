"""The rules of any stream, whatever its format (``STR…``): a payload that is no JSON,
an ignored SSE line, a non-streaming object. Every checker reports them (its base,
:class:`chatx.validation.base.Checker`, does); each format's own rules are in its codec
package (``chatx/codecs/<format>/rules.py``).
"""

from __future__ import annotations

from chatx.validation.rule import Rule

STREAM_RULES = (
    Rule(
        "STR001",
        "E",
        "any",
        "payload is not valid JSON",
        "Every record of a stream carries one JSON value: an SSE `data:` block, a JSONL "
        "line or an array element. A record that does not parse (a half-written event, a "
        "truncated line, a stray log message) cannot be given any meaning and every client "
        "either crashes on it or drops it silently.",
        'data: {"type":"response.output_text.delta","delta":"Hel\n',
    ),
    Rule(
        "STR002",
        "W",
        "any",
        "an SSE line that is no field is ignored",
        'The event-stream format (WHATWG HTML, "Interpreting an event stream") ignores a '
        "line whose field name is not `data`, `event`, `id` or `retry` and that does not "
        "start with `:` (a comment). Every client drops such a line without a word: an "
        "indented ` data: {...}` or a misspelt `Data:` loses the event it was meant to "
        "carry, and a header-like line that a proxy slipped in is noise at best.",
        'event: response.output_text.delta\n data: {"type":"response.output_text.delta",...}',
    ),
    Rule(
        "STR003",
        "E",
        "any",
        "a non-streaming object, not a stream",
        "The input is the object an API returns without `stream: true` (a "
        "`chat.completion`, a Responses `response`, a Llama Stack `completion_message`), "
        "not the records a streaming client reads: the openai SDK's stream accumulators "
        "and every SSE client fail on it. `chatx convert` writes the stream it stands for "
        "(and `collect` of that stream gives the object back); `chatx collect` reads it "
        "as it is. The object's own records are not checked against the stream rules.",
        '{"id":"chatcmpl-1","object":"chat.completion","choices":[{"message":{...}}]}',
    ),
)

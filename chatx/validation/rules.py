"""The rule registry: every rule ``chatx validate`` checks, with its documentation.

Ids are stable and namespaced by format (``RSP`` Responses events, ``CHK`` chat chunks,
``LLS`` Llama Stack events, ``STR`` any stream); a retired id is never reused. Each
format's rules are written out in its own catalogue module; this one only collects them.
"""

from __future__ import annotations

from chatx.validation.rule import Rule, Severity
from chatx.validation.rules_chat import CHAT_RULES
from chatx.validation.rules_llama_stack import LLAMA_STACK_RULES
from chatx.validation.rules_responses import RESPONSES_RULES

__all__ = ["RULES", "STREAM_RULES", "Rule", "Severity", "get_rule", "rules_for"]

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


def _collect() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for rule in (*STREAM_RULES, *RESPONSES_RULES, *CHAT_RULES, *LLAMA_STACK_RULES):
        if rule.id in rules:
            raise ValueError(f"duplicate rule id {rule.id}")
        rules[rule.id] = rule
    return rules


RULES: dict[str, Rule] = _collect()


def get_rule(rule_id: str) -> Rule | None:
    """The rule with this id (case-insensitive), or ``None``."""
    return RULES.get(rule_id.upper())


def rules_for(fmt: str) -> list[Rule]:
    """The rules that apply to a stream of format ``fmt`` (its own and ``any``)."""
    return [rule for rule in RULES.values() if rule.format in (fmt, "any")]

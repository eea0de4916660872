"""A ``chat.completion`` (the response without ``stream: true``) as its chunk stream.

Per choice, in order: a role chunk, then one chunk each for the reasoning, the content,
the refusal and every tool call (whole, as Groq and Mistral send calls), then the
finish chunk. Message fields no delta field names ride on the role chunk, but for those
that say something of the text before them, which ride after it: the reasoning's
signatures (OpenRouter's ``reasoning_details``, LiteLLM's ``thinking_blocks``) on the
reasoning chunk, so they close its reasoning item, and the content's citations
(``annotations``) on the content chunk, so they cite its message item; after every choice the usage chunk (``choices: []``, as OpenAI sends it
with ``include_usage``) and ``[DONE]``. A choice without a finish reason was cut short:
its stream has no ``[DONE]``, and the usage rides on the last chunk. Ids, ``created``, ``model`` and the envelope
fields come from the object: OpenAI repeats ``service_tier`` and ``system_fingerprint``
on every chunk, other top-level fields go on the first. ``collect`` of the stream gives
back the object's message, tool calls, logprobs, usage and finish reasons.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx.codecs.whole import present
from chatx.record import DONE

OBJECT = "chat.completion"
_ENVELOPE = ("id", "object", "created", "model")
_REPEATED = ("service_tier", "system_fingerprint")  # on every chunk, as OpenAI streams them
_TOP = frozenset((*_ENVELOPE, *_REPEATED, "choices", "usage"))
_REASONING = ("reasoning_content", "reasoning")
_MESSAGE = frozenset(("role", "content", "refusal", "tool_calls", *_REASONING))
_CHOICE = frozenset(("index", "message", "logprobs", "finish_reason"))
# Message fields that go after the text they say something of (see the module's doc).
_SIGNING = ("reasoning_details", "thinking_blocks")
_CITING = ("annotations",)


def is_completion(data: dict[str, Any]) -> bool:
    """A ``chat.completion`` whose choices hold messages, not deltas."""
    if data.get("object") != OBJECT:
        return False
    choices = data.get("choices")
    return type(choices) is list and all(
        type(choice) is dict and "delta" not in choice for choice in choices
    )


def describe(data: Any) -> str | None:
    """``"a chat.completion object"`` when ``data`` is one (see :func:`is_completion`)."""
    return "a chat.completion object" if type(data) is dict and is_completion(data) else None


def chunks(completion: dict[str, Any]) -> list[Any]:
    """The payloads a server streams for ``completion``, ``DONE`` last."""
    head = {**present(completion, _ENVELOPE), "object": "chat.completion.chunk"}
    head.update(present(completion, _REPEATED))
    first = {k: v for k, v in completion.items() if k not in _TOP}
    out: list[Any] = []
    choices = completion.get("choices") or ()
    for position, choice in enumerate(choices):
        for entry in _choice(choice, position):
            out.append({**head, **(first if not out else {}), "choices": [entry]})
    finished = all(c.get("finish_reason") is not None for c in choices)
    usage = completion.get("usage")
    if out and usage is not None and not finished:
        # A usage chunk of its own says every choice finished (chat rule 5): the usage
        # of a stream cut short rides on its last chunk, as vLLM's usage stats do.
        out[-1]["usage"] = usage
    elif usage is not None or not out:
        tail = {**head, **(first if not out else {}), "choices": []}
        if usage is not None:
            tail["usage"] = usage
        out.append(tail)
    if finished:  # a choice without a finish reason was cut short: no ending
        out.append(DONE)
    return out


def _choice(choice: dict[str, Any], position: int) -> list[dict[str, Any]]:
    """The ``choices`` entry of each chunk of one choice: its role, what its message says
    (:func:`_deltas`) and how it ends."""
    number = choice.get("index", position)
    message = choice.get("message")
    message = message if type(message) is dict else {}
    logprobs = choice.get("logprobs")
    lps = logprobs if type(logprobs) is dict else {}
    with_lps = "logprobs" in choice

    def entry(delta: dict[str, Any], lp: Any = None, finish: Any = None) -> dict[str, Any]:
        out = {"index": number, "delta": delta}
        if with_lps:
            out["logprobs"] = lp
        out["finish_reason"] = finish
        return out

    role = {"role": message.get("role") or "assistant"}
    # Message fields no delta field names (audio…) ride on the role chunk.
    role.update((k, v) for k, v in message.items() if k not in _MESSAGE and v not in _EMPTY)
    out = [entry(role)]
    _deltas(message, role, lps, entry, out)
    rest = {k: v for k, v in choice.items() if k not in _CHOICE}
    finish = choice.get("finish_reason")
    if finish is not None or rest:
        last = entry({}, None, finish)
        last.update(rest)
        out.append(last)
    return out


def _deltas(
    message: dict[str, Any],
    role: dict[str, Any],
    lps: dict[str, Any],
    entry: Callable[..., dict[str, Any]],
    out: list[dict[str, Any]],
) -> None:
    """The chunk entries (made by the choice's ``entry``, from a delta and its logprobs)
    of the message after its role chunk, onto ``out``, in the order a stream says them:
    reasoning, content, refusal, then each tool call. A field that is no delta's (a
    reasoning field that is no string, tool_calls that are no list) stays on ``role``."""
    said: list[str] = []
    for field in _REASONING:
        text = message.get(field)
        if type(text) is str and text and text not in said:  # vLLM may send both names
            said.append(text)
            out.append(entry({field: text, **_after(role, _SIGNING)}))
        elif text not in _EMPTY and type(text) is not str:
            role[field] = text
    content = message.get("content")
    if content not in _EMPTY:
        out.append(entry({"content": content, **_after(role, _CITING)}, _part(lps, "content")))
    refusal = message.get("refusal")
    if refusal not in _EMPTY:
        out.append(entry({"refusal": refusal}, _part(lps, "refusal")))
    calls = message.get("tool_calls")
    if type(calls) is list:
        for at, call in enumerate(calls):
            out.append(
                entry({"tool_calls": [{"index": at, **call} if type(call) is dict else call]})
            )
    elif calls not in _EMPTY:
        role["tool_calls"] = calls


def _after(role: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The ``fields`` of the role chunk's delta, moved to the chunk after it that
    carries the text they say something of (the first such chunk: they move once)."""
    moved = {field: role.pop(field) for field in fields if field in role}
    more = role.get("provider_specific_fields")
    if "thinking_blocks" in moved and type(more) is dict and "thinking_blocks" in more:
        # LiteLLM repeats the blocks there: both go together (signatures.read).
        moved["provider_specific_fields"] = role.pop("provider_specific_fields")
    return moved


def _part(lps: dict[str, Any], name: str) -> Any:
    """The logprobs of the chunk that carries ``name`` (content or refusal): its entries
    and a null for the other, as OpenAI streams them; null when there are none."""
    entries = lps.get(name)
    if not entries:
        return None
    if name == "content":
        return {"content": entries, "refusal": None}
    return {"content": None, "refusal": entries}


_EMPTY: tuple[Any, ...] = (None, "", [], {})

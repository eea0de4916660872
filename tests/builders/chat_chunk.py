"""Hand-made chat-chunk streams."""

from __future__ import annotations

from typing import Any

from tests.streams import records

CHAT_ID = "chatcmpl-T3st"
CREATED = 1700000000
MODEL = "gpt-test"


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    index: int = 0,
    *,
    choices: list[dict[str, Any]] | None = None,
    **top: Any,
) -> dict[str, Any]:
    """One ``chat.completion.chunk``: one choice from ``delta``/``finish``, or ``choices``."""
    if choices is None:
        choices = [{"index": index, "delta": delta or {}, "finish_reason": finish}]
    payload: dict[str, Any] = {
        "id": CHAT_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "choices": choices,
    }
    payload.update(top)
    return payload


def usage_chunk(
    prompt: int = 11,
    completion: int = 7,
    total: int | None = 18,
    *,
    cached: int | None = None,
    reasoning: int | None = None,
) -> dict[str, Any]:
    """The last chunk of an ``include_usage`` stream: ``choices: []`` plus ``usage``."""
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
    if total is not None:
        usage["total_tokens"] = total
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return chunk(choices=[], usage=usage)


def chat_text(*pieces: str, finish: str = "stop", usage: bool = True) -> list[dict[str, Any]]:
    """A plain text answer: role chunk, one chunk per piece, finish, usage."""
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": piece}) for piece in pieces]
    out.append(chunk({}, finish))
    if usage:
        out.append(usage_chunk())
    return out


def chat_streams(data: bytes) -> list[list[dict[str, Any]]]:
    """chatx's chat output split at ``[DONE]``: the chunks of each stream."""
    streams: list[list[dict[str, Any]]] = [[]]
    for record in records(data):
        if record.done:
            streams.append([])
        else:
            streams[-1].append(record.data)
    return [s for s in streams if s]

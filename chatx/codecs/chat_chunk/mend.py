"""The chat encoder's mending of a chat source's chunks that break chat's rules, and
the error object it writes; what it mends it says as repaired."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.residue import merge

OBJECT = "chat.completion.chunk"


def one_stream(chunk: dict[str, Any], stream_id: str, notes: Notes, said: set[str]) -> None:
    """Every chunk of a stream has its id and object name (chat rule 1; the openai
    SDK types say so): a source's chunk that says another (Groq's compound models
    change the id, Perplexity names its last chunk chat.completion.done) is written
    with the stream's, said once per stream (``said``). Azure's preamble is not the
    stream's and stays as it came."""
    if chunk.get("choices") == [] and chunk.get("object") in ("", None):
        return
    for key, value in (("id", stream_id), ("object", OBJECT)):
        if chunk.get(key) != value:
            if key not in said:
                said.add(key)
                notes.repaired(f"a chunk's {key} is not the stream's: the stream's written")
            chunk[key] = value


def later_entry(extra: dict[str, Any], notes: Notes, said: set[str]) -> dict[str, Any]:
    """A later tool_calls entry's residue without the call's id and name repeated
    (Novita's): the openai SDK joins strings of one call, and would read "0" + "0"."""
    function = extra.get("function")
    named = isinstance(function, dict) and bool(function.get("name"))
    if not extra.get("id") and not named:
        return extra  # none, or null as OpenAI's SDK dumps write it
    if "tool_calls" not in said:
        said.add("tool_calls")
        notes.repaired("a later tool_calls entry repeats its call's id or name: left out")
    extra = {k: v for k, v in extra.items() if k != "id" or not v}
    if named:
        rest = {k: v for k, v in function.items() if k != "name"}  # type: ignore[union-attr]
        if rest:
            extra["function"] = rest
        else:
            del extra["function"]
    return extra


def error_object(event: ir.Error, own: bool) -> dict[str, Any]:
    error: dict[str, Any] = {}
    if event.message is not None:
        error["message"] = event.message
    if event.type is not None:
        error["type"] = event.type
    if event.param is not None:
        error["param"] = event.param
    if event.code is not None:
        error["code"] = event.code
    if event.extra and own:
        merge(error, event.extra)
    return error

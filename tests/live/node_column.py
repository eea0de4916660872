"""The client matrix's Node column: the Vercel AI SDK (``ai`` with ``@ai-sdk/openai``,
``@ai-sdk/anthropic`` and ``@ai-sdk/openai-compatible``) reads captures from ``chatx
serve``, and what it read is held against what the capture means.

``tests/live/node/vercel_ai.mjs`` runs every cell in one Node process: each cell is one
capture through one model (OpenAI's chat completions, its Responses, Anthropic's
Messages, an OpenAI-compatible provider's chat) with ``streamText`` or ``generateText``,
and prints the text, tool calls, finish and errors the SDK gave. The packages come from
``$CHATX_NODE_MODULES`` (a ``node_modules`` directory), else from
``tests/live/node/node_modules`` (``npm install --prefix tests/live/node``, which
installs the versions ``tests/live/node/package.json`` names); without ``node`` or the
packages the column is left out, and :func:`unavailable` says why.

A cell passes when the SDK read what the capture says: its first choice's text (the
reasoning apart), its function calls (name and arguments, in order), and its finish as
the SDK words a provider's (``stop``, ``length``, ``tool-calls``, ``content-filter``).
A capture that ends in an error passes when the SDK raises the API's error (not
streamed: an HTTP error status) or streams an error part; a capture recorded without its
end passes whatever the SDK makes of it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chatx.codecs.base import HttpApi
from chatx.live.endpoints import by_path
from chatx.live.replay import is_verbatim
from chatx.live.served_captures import Capture

NODE_DIR = Path(__file__).resolve().parent / "node"
SCRIPT = NODE_DIR / "vercel_ai.mjs"
PACKAGES = ("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/openai-compatible")
# The column's clients, as the script names them: a model and how it is called.
MODELS = ("chat", "responses", "anthropic", "compatible")
CLIENTS = tuple(f"vercel-ai {model} {how}" for model in MODELS for how in ("stream", "generate"))
# The whole run: about 40 ms a cell; a hung cell fails the run, it does not hang it.
TIMEOUT = 600

# The finish a provider states, as the SDK words it (its unified finish reason), for
# each finish chatx's IR holds (chat's words; another API's own word where chat has none).
_UNIFIED = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


def modules() -> Path:
    return Path(os.environ.get("CHATX_NODE_MODULES") or NODE_DIR / "node_modules")


def unavailable() -> str | None:
    """Why the Node column cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    found = modules()
    missing = [p for p in PACKAGES if not (found / p / "package.json").is_file()]
    if missing:
        return (
            f"{', '.join(missing)} not in {found} (set CHATX_NODE_MODULES to a node_modules "
            "directory that has them, or run: npm install --prefix tests/live/node)"
        )
    return None


# A Responses item a client runs itself (not the provider: those the SDK marks
# provider-executed), read by the SDK as a tool call of its own name.
_CLIENT_ITEMS = {
    "apply_patch_call",
    "custom_tool_call",
    "local_shell_call",
    "shell_call",
    "computer_call",
}


@dataclass(frozen=True)
class Meaning:
    """What a capture says, as a client of any API should read it."""

    text: str
    refusal: str
    calls: list[tuple[str, Any]]
    finish: str | None
    raw_finish: str | None
    # Responses' own calls of a client-side tool (apply_patch_call…), by their type.
    client_items: list[str]


def meaning(capture: Capture) -> Meaning:
    """Its first stream's first choice: the text, the function calls (arguments read as
    JSON where they are), the finish."""
    stream = capture.streams[0]
    lane = stream.lanes.get(capture.lanes[0])
    if lane is None:
        return Meaning("", "", [], None, None, [])
    calls = [(call.name or "", _arguments(call.arguments)) for call in lane.calls]
    others = [i.data for i in lane.others() if isinstance(i.data, dict)]
    items = [
        item["type"]
        for item in others
        if item.get("type") in _CLIENT_ITEMS
        # A tool search the client runs (OpenAI's hosted one is the provider's).
        or (item.get("type") == "tool_search_call" and item.get("execution") == "client")
    ]
    return Meaning(lane.text, lane.refusal, calls, lane.finish, lane.raw_finish, items)


def _arguments(text: str) -> Any:
    if not text.strip():
        return {}  # no arguments: an empty object, as every API but chat's says it
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def run(url: str, captures: list[str], clients: tuple[str, ...] = CLIENTS) -> list[dict[str, Any]]:
    """What the SDK read, one dict per (capture, client), in that order."""
    cells = [
        {"url": url, "capture": name, "client": client.removeprefix("vercel-ai ")}
        for name in captures
        for client in clients
    ]
    env = {**os.environ, "CHATX_NODE_MODULES": str(modules())}
    done = subprocess.run(
        ["node", str(SCRIPT)],
        input=orjson.dumps(cells),
        capture_output=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    read = [orjson.loads(line) for line in done.stdout.splitlines() if line.startswith(b"{")]
    if done.returncode != 0 or len(read) != len(cells):
        said = done.stderr.decode("utf-8", "replace").strip()[-2000:]
        raise RuntimeError(
            f"{SCRIPT.name} exited {done.returncode} after {len(read)} of {len(cells)} cells: "
            f"{said}"
        )
    return read


def endpoint_of(client: str) -> HttpApi:
    """The API a cell's model calls."""
    model = client.removeprefix("vercel-ai ").split()[0]
    paths = {"responses": "/v1/responses", "anthropic": "/v1/messages"}
    found = by_path(paths.get(model, "/v1/chat/completions"))
    assert found is not None
    return found


@dataclass(frozen=True)
class Verdict:
    """``chatx``: something chatx sent made the SDK fail or misread the capture;
    ``expected``: the SDK failed or read otherwise, as it does on the provider's own
    answer; ``ok``: it read what the capture means."""

    outcome: str  # ok | expected | chatx
    said: str


def judge(capture: Capture, kind: str, read: dict[str, Any], served: Any = None) -> Verdict:
    """Whether the SDK read what the capture means (``kind`` as the matrix tells it);
    ``served`` fetches the final object the cell was answered (a schema's refusal is
    looked up in it)."""
    streamed = read["client"].endswith("stream")
    failed = read["thrown"] or (read["errors"][0] if read["errors"] else None)
    if kind == "cut":
        return Verdict("expected", "recorded without its end")
    endpoint = endpoint_of(read["client"])
    verbatim = streamed and is_verbatim(capture, endpoint, {})
    if kind == "error":
        found = _error_read(streamed, read, failed)
        if found.outcome == "chatx" and verbatim:  # the provider's bytes, as recorded
            return Verdict("expected", f"as recorded: {found.said}")
        return found
    own_api = capture.format == endpoint.format
    if failed is not None:
        said = f"{failed['name']}: {failed['message'][:160]}"
        own = _own_item_refused(capture, failed, served)
        if own is not None:
            return Verdict("expected", f"the SDK's schema refuses the provider's own {own}")
        if own_api and _refused(failed):
            # Its own API's values, as the provider sent them (a JSON lines capture goes
            # out as SSE, its records unchanged): the SDK's schema refuses the provider's.
            return Verdict("expected", f"the provider's own values: {said}")
        if _refused(failed) and _valid_by_the_providers_sdk(endpoint.api, failed, served):
            return Verdict("expected", f"valid by the provider's own SDK types: {said}")
        return Verdict("expected" if verbatim else "chatx", said)
    expected = meaning(capture)
    wrong = _differences(expected, read, endpoint.api)
    if own_api and wrong and read["raw"] is not None and read["raw"] == expected.raw_finish:
        # The provider's own word for the finish (xAI's REASON_MAX_LEN), sent as it came.
        wrong = [w for w in wrong if not w.startswith("finish ")]
        if not wrong:
            return Verdict("expected", f"the provider's own finish {read['raw']!r}")
    if not wrong:
        return Verdict("ok", "ok")
    if verbatim:  # the provider's bytes, as recorded: the SDK reads its answer so
        return Verdict("expected", "as recorded: " + "; ".join(wrong))
    return Verdict("chatx", "; ".join(wrong))


def _valid_by_the_providers_sdk(api: str, failed: dict[str, Any], served: Any) -> bool:
    """What the AI SDK's schema refused is valid by the provider's own SDK's types (the
    anthropic and openai Python SDKs' models of what the API sends): the AI SDK is
    stricter than the API (a citation's title, which Anthropic types may be null)."""
    from pydantic import TypeAdapter, ValidationError

    types = _PROVIDER_TYPES.get(api)
    if types is None:
        return False
    event, whole = types()
    found = re.search(r"Value: (\{.*\})\.\nError message", failed["message"], re.DOTALL)
    try:
        if found is not None:
            TypeAdapter(event).validate_python(orjson.loads(found.group(1)))
        elif failed.get("refused") and served is not None:
            TypeAdapter(whole).validate_python(served())
        else:
            return False
    except (ValidationError, orjson.JSONDecodeError):
        return False
    return True


def _anthropic_types() -> tuple[Any, Any]:
    from anthropic.types import Message, RawMessageStreamEvent

    return RawMessageStreamEvent, Message


def _responses_types() -> tuple[Any, Any]:
    from openai.types.responses import Response, ResponseStreamEvent

    return ResponseStreamEvent, Response


_PROVIDER_TYPES = {"anthropic": _anthropic_types, "responses": _responses_types}


def _refused(failed: dict[str, Any]) -> bool:
    """The SDK's schema refused what it was sent (a value, not a broken stream)."""
    return failed["name"] == "AI_TypeValidationError" or bool(failed.get("refused"))


def _error_read(streamed: bool, read: dict[str, Any], failed: Any) -> Verdict:
    if failed is None:
        if streamed and read["finish"] == "error":
            return Verdict("expected", "finish: error")
        return Verdict("chatx", "reported success for a capture that ends in an error")
    if not streamed and not isinstance(failed.get("status"), int):
        return Verdict(
            "chatx", f"not an HTTP error status: {failed['name']}: {failed['message'][:120]}"
        )
    return Verdict("expected", f"{failed['name']}: {failed['message'][:120]}")


def _own_item_refused(capture: Capture, failed: dict[str, Any], served: Any) -> str | None:
    """The type of the output item the SDK's schema refused, when it is an item the
    capture recorded as its provider sent it (an item the SDK does not know yet)."""
    places = failed.get("refused") or []
    if served is None or not places:
        return None
    body = served()
    recorded = {
        i.data.get("type")
        for lane in capture.streams[0].lanes.values()
        for i in lane.others()
        if isinstance(i.data, dict)
    }
    kinds = set()
    for place in places:
        if len(place) < 2 or place[0] != "output" or not isinstance(place[1], int):
            return None
        item = (
            (body.get("output") or [])[place[1]] if place[1] < len(body.get("output") or []) else {}
        )
        kinds.add(item.get("type") if isinstance(item, dict) else None)
    if kinds and kinds <= recorded:
        return " and ".join(sorted(str(k) for k in kinds)) + " item"
    return None


def _differences(expected: Meaning, read: dict[str, Any], api: str) -> list[str]:
    wrong = []
    # A refusal is text to the SDK (its finish content-filter), where the API says one.
    texts = {expected.text, expected.text + expected.refusal}
    if read["text"] not in texts:
        wrong.append(f"text {_short(read['text'])}, the capture's {_short(expected.text)}")
    own = [c for c in read["calls"] if not c["provider"]]
    functions = {name for name, _ in expected.calls}
    calls = [(c["name"], c["input"]) for c in own if c["name"] in functions or api != "responses"]
    if _no_empty(calls) != _no_empty(expected.calls) and not _cut_arguments(expected, calls, read):
        wrong.append(f"calls {_short(calls)}, the capture's {_short(expected.calls)}")
    items = len(own) - len(calls)
    if api == "responses" and items != len(expected.client_items):
        wrong.append(f"{items} calls of client tools, the capture's {expected.client_items}")
    finish = _finish(expected, api)
    if expected.refusal:
        finish = None if finish is None else {*finish, "content-filter"}
    if finish is not None and read["finish"] not in finish:
        wrong.append(f"finish {read['finish']!r} (raw {read['raw']!r}), expected {finish}")
    return wrong


def _no_empty(calls: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """No arguments said as "" or as {}: the same call (chat says the first, the
    other APIs an object)."""
    return [(name, {} if arguments == "" else arguments) for name, arguments in calls]


def _cut_arguments(expected: Meaning, calls: list[tuple[str, Any]], read: dict[str, Any]) -> bool:
    """Arguments recorded cut short (no JSON) are an empty object in a whole Anthropic
    message, whose input is an object: the same calls otherwise."""
    if not read["client"].startswith("anthropic") or len(calls) != len(expected.calls):
        return False
    return all(
        name == want and (got == arguments or (isinstance(arguments, str) and got == {}))
        for (name, got), (want, arguments) in zip(calls, expected.calls, strict=True)
    )


def _finish(expected: Meaning, api: str) -> set[str] | None:
    """The finishes the SDK may say for the capture's, through ``api``; None: any (a
    finish only one API has a word for, which each API says in its nearest)."""
    calls = bool(expected.calls or expected.client_items)
    if expected.finish is None:  # none recorded: what the calls make of it, or none
        return {"tool-calls" if calls else "stop", "other"}
    unified = _UNIFIED.get(expected.finish)
    if unified is None:
        return None
    if api == "responses" and unified in ("stop", "tool-calls"):
        # Responses says no finish for a completed answer: the SDK tells it by the calls
        # (by some of the client tools' calls: apply_patch, not a shell's).
        if expected.client_items and not expected.calls:
            return {"tool-calls", "stop"}
        return {"tool-calls" if calls else "stop"}
    return {unified}


def _short(value: Any) -> str:
    said = value if isinstance(value, str) else orjson.dumps(value).decode()
    return repr(said[:60] + ("…" if len(said) > 60 else ""))

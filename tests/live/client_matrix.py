"""The client matrix: real SDKs and agent frameworks read captures from ``chatx serve``,
and each cell (a capture through a client) is judged: did chatx serve it as the provider
would have, or did something chatx sent make the client fail?

    python -m tests.live.client_matrix [--per-format N] [--show]

A sample of ``../shared/captures`` (N per format, evenly spaced by name, and N/3 more
named for an error; every capture is asked for by its X-Chatx-Capture name) goes through each client:

* openai: chat completions sync and async, streamed and not; Responses, streamed and not;
* anthropic: messages, streamed and not;
* openai-agents: an agent on the chat completions model and one streamed on the
  Responses model;
* pydantic-ai: an agent on OpenAI's chat model and one streamed on Anthropic's.

A cell passes when the client reads a capture that ends well without raising, and when a
capture that ends in an error is raised as the API's error (not streamed: a client that
reports success has been lied to; streamed, the SDKs that yield error events instead of
raising pass too). A capture recorded without its end (a stream cut short) passes
whatever the client makes of it: the original fails the client the same way. A capture
whose finish Responses says incomplete (max tokens, a content filter, Anthropic's
pause_turn) may be raised on by the clients that raise on OpenAI's own incomplete
response (the openai SDK's stream helper, openai-agents), and passes when they do. Anything else (a parse or validation error, a cut connection, an
error answered for a capture that has none) is a chatx-caused failure. The agents only
read captures that end in text or an error: a capture calling tools the test agent does
not have fails in the agent, by design, whoever serves it, and one whose turn Anthropic
paused (pause_turn) is asked to go on until the agent gives up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatx.codecs.responses_event.shapes import terminal_status
from chatx.errors import ChatxError
from chatx.live.app import ServeApp
from tests.live import node_column
from tests.live.support import Running

try:
    from chatx.live.served_captures import Capture, load
except ImportError:  # a checkout from before the rename: the matrix measures those too
    from chatx.live.captures import Capture, load  # type: ignore[no-redef]
from tests.paths import SHARED

CAPTURES = SHARED / "captures"
FORMATS = ("chat-chunk", "responses-event", "anthropic-event", "llama-stack-event")
HEADER = "x-chatx-capture"
ASK = [{"role": "user", "content": "hi"}]


_NAMED_FAILING = re.compile(r"error|fail|overload", re.IGNORECASE)


@dataclass
class Cell:
    capture: str
    client: str
    passed: bool
    said: str
    # Passed, the client failing (or reading otherwise) as it does on the provider's own
    # answer: an error raised as the API's, a stream recorded cut, an SDK's own limits.
    expected: bool = False


def sample(per_format: int) -> list[Path]:
    """``per_format`` captures of each format, evenly spaced in name order."""
    chosen: list[Path] = []
    names: set[str] = set()
    for fmt in FORMATS:
        # A capture is asked for by its file name: one name that two formats' folders
        # both hold is taken once.
        files = sorted(
            p
            for p in (CAPTURES / fmt).iterdir()
            if p.is_file()
            and not p.name.endswith((".request.json", ".timing", ".md"))
            and p.name not in names
        )
        if not files:
            continue
        step = max(1, len(files) // per_format)
        spaced = files[::step][:per_format]
        # And those named for an error they end in (a failed stream asked for whole is
        # where clients were told success).
        failing = [p for p in files if _NAMED_FAILING.search(p.name) and p not in spaced]
        taken = spaced + failing[: max(1, per_format // 3)]
        chosen.extend(taken)
        names.update(p.name for p in taken)
    return chosen


def kind_of(capture: Capture) -> str:
    first = capture.streams[0]
    if first.errors:
        return "error"
    if not first.ended:
        return "cut"  # recorded without its end: a client may fail on it, as on the original
    if any(lane.finish == "pause_turn" for lane in first.lanes.values()):
        # Anthropic paused the turn: an agent asks to go on, and the capture, asked for
        # again, pauses again (any server replaying it would: the continuation is another
        # capture). The SDKs read it; Responses says it incomplete.
        return "paused"
    if any(terminal_status(lane.finish, False)[0] == "incomplete" for lane in first.lanes.values()):
        # Stopped at max tokens, a content filter, Anthropic's pause_turn: Responses ends
        # it with response.incomplete, as OpenAI does for its own.
        return "incomplete"
    lanes = first.lanes.values()
    said = {item.kind for lane in lanes for item in lane.items}
    if any(lane.tool_calls for lane in lanes) or said - {"message", "reasoning"} or first._others:
        return "tools"  # a call of any kind (a function, apply_patch, a hosted tool's)
    return "text"


# -- the clients: each reads one capture, named in its header, and returns or raises -------


def _openai(url: str, name: str) -> Any:
    import openai

    headers = {HEADER: name}
    return openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0, default_headers=headers)


def _async_openai(url: str, name: str) -> Any:
    import openai

    headers = {HEADER: name}
    return openai.AsyncOpenAI(
        base_url=f"{url}/v1", api_key="k", max_retries=0, default_headers=headers
    )


def _async_anthropic(url: str, name: str) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(
        base_url=url, api_key="k", max_retries=0, default_headers={HEADER: name}
    )


def chat_sync_stream(url: str, name: str) -> None:
    with _openai(url, name) as client:
        for _ in client.chat.completions.create(model="m", messages=ASK, stream=True):
            pass


def chat_sync(url: str, name: str) -> None:
    with _openai(url, name) as client:
        client.chat.completions.create(model="m", messages=ASK)


def chat_async_stream(url: str, name: str) -> None:
    async def run() -> None:
        async with _async_openai(url, name) as client:
            stream = await client.chat.completions.create(model="m", messages=ASK, stream=True)
            async for _ in stream:
                pass

    asyncio.run(run())


def chat_async(url: str, name: str) -> None:
    async def run() -> None:
        async with _async_openai(url, name) as client:
            await client.chat.completions.create(model="m", messages=ASK)

    asyncio.run(run())


def responses_stream(url: str, name: str) -> None:
    with _openai(url, name) as client, client.responses.stream(model="m", input="hi") as stream:
        for _ in stream:
            pass
        stream.get_final_response()


def responses(url: str, name: str) -> None:
    with _openai(url, name) as client:
        client.responses.create(model="m", input="hi")


def anthropic_stream(url: str, name: str) -> None:
    import anthropic

    with (
        anthropic.Anthropic(
            base_url=url, api_key="k", max_retries=0, default_headers={HEADER: name}
        ) as client,
        client.messages.stream(model="m", max_tokens=100, messages=ASK) as stream,  # type: ignore[arg-type]
    ):
        for _ in stream:
            pass
        stream.get_final_message()


def anthropic_messages(url: str, name: str) -> None:
    import anthropic

    with anthropic.Anthropic(
        base_url=url, api_key="k", max_retries=0, default_headers={HEADER: name}
    ) as client:
        client.messages.create(model="m", max_tokens=100, messages=ASK)  # type: ignore[arg-type]


def agents_chat(url: str, name: str) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled

    set_tracing_disabled(True)

    async def run() -> None:
        async with _async_openai(url, name) as client:
            model = OpenAIChatCompletionsModel(model="m", openai_client=client)
            agent = Agent(name="a", instructions="be brief", model=model)
            await Runner.run(agent, "hi", max_turns=1)

    asyncio.run(run())


def agents_responses_stream(url: str, name: str) -> None:
    from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled

    set_tracing_disabled(True)

    async def run() -> None:
        async with _async_openai(url, name) as client:
            model = OpenAIResponsesModel(model="m", openai_client=client)
            agent = Agent(name="a", instructions="be brief", model=model)
            result = Runner.run_streamed(agent, "hi", max_turns=1)
            async for _ in result.stream_events():
                pass

    asyncio.run(run())


def pydantic_ai_chat(url: str, name: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async def run() -> None:
        async with _async_openai(url, name) as client:
            provider = OpenAIProvider(openai_client=client)
            await Agent(OpenAIChatModel("m", provider=provider)).run("hi")

    asyncio.run(run())


def pydantic_ai_anthropic_stream(url: str, name: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    async def run() -> None:
        async with _async_anthropic(url, name) as client:
            provider = AnthropicProvider(anthropic_client=client)
            agent = Agent(AnthropicModel("m", provider=provider))
            async with agent.run_stream("hi") as result:
                await result.get_output()

    asyncio.run(run())


# name -> (the client, streamed, an agent)
CLIENTS: dict[str, tuple[Callable[[str, str], None], bool, bool]] = {
    "openai chat sync stream": (chat_sync_stream, True, False),
    "openai chat sync": (chat_sync, False, False),
    "openai chat async stream": (chat_async_stream, True, False),
    "openai chat async": (chat_async, False, False),
    "openai responses stream": (responses_stream, True, False),
    "openai responses": (responses, False, False),
    "anthropic stream": (anthropic_stream, True, False),
    "anthropic": (anthropic_messages, False, False),
    "openai-agents chat": (agents_chat, False, True),
    "openai-agents responses stream": (agents_responses_stream, True, True),
    "pydantic-ai openai chat": (pydantic_ai_chat, False, True),
    "pydantic-ai anthropic stream": (pydantic_ai_anthropic_stream, True, True),
}


def _api_error(exc: BaseException) -> bool:
    """An error the API answered (a status error, or an error event the SDK raised), in
    the exception or what caused it; a failed connection is none."""
    import anthropic
    import openai

    seen: BaseException | None = exc
    while seen is not None:
        connection = (openai.APIConnectionError, anthropic.APIConnectionError)
        if isinstance(seen, connection):
            return False
        if isinstance(seen, openai.APIError | anthropic.APIError):
            return True
        if (
            type(seen).__name__ in ("ModelHTTPError", "ModelAPIError")
            or type(seen).__module__.startswith("pydantic_ai")
            and "HTTP" in type(seen).__name__
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def judge(kind: str, streamed: bool, error: BaseException | None) -> tuple[bool, str]:
    if kind == "cut":
        return True, "recorded without its end" if error is None else f"as recorded: {error}"
    said_of = str(error)
    if (
        kind in ("incomplete", "paused")
        and error is not None
        and ("incomplete" in said_of or "completed" in said_of)
    ):
        # Responses ends such a stream with response.incomplete, as OpenAI does, which the
        # openai SDK's stream helper and openai-agents raise on, as on OpenAI's.
        return True, f"as a provider's: {type(error).__name__}"
    if error is None:
        if kind == "error" and not streamed:
            return False, "reported success for a capture that ends in an error"
        return True, "ok"
    said = f"{type(error).__name__}: {str(error)[:160]}"
    if kind == "error" and _api_error(error):
        return True, said
    return False, said


def run_matrix(
    paths: list[Path],
    log: Callable[[str], None] = lambda line: None,
    *,
    python: bool = True,
    node: tuple[str, ...] = (),
) -> list[Cell]:
    """Every cell of the captures at ``paths``: through the Python clients (``python``)
    and the Node column's clients named in ``node`` (see :mod:`tests.live.node_column`)."""
    captures: list[Capture] = []
    for path in paths:
        try:
            captures.extend(load([str(path)]))
        except ChatxError as exc:
            log(f"not a capture: {path.name}: {exc}")
    cells: list[Cell] = []
    with Running(ServeApp(captures)) as running:
        if python:
            for capture in captures:
                cells.extend(_python_cells(running.url, capture, log))
        if node:
            cells.extend(_node_cells(running.url, captures, node, log))
    return cells


def _python_cells(url: str, capture: Capture, log: Callable[[str], None]) -> list[Cell]:
    kind = kind_of(capture)
    cells = []
    for client, (call, streamed, agent) in CLIENTS.items():
        if agent and kind in ("tools", "paused"):
            continue
        error: BaseException | None = None
        try:
            call(url, capture.name)
        except Exception as exc:  # every failure is a cell's outcome, judged below
            error = exc
        passed, said = judge(kind, streamed, error)
        expected = passed and (error is not None or kind == "cut")
        cells.append(Cell(capture.name, client, passed, said, expected))
        if not passed:
            log(f"FAIL {client} <- {capture.name} ({kind}): {said}")
    return cells


def _node_cells(
    url: str, captures: list[Capture], clients: tuple[str, ...], log: Callable[[str], None]
) -> list[Cell]:
    by_name = {capture.name: capture for capture in captures}
    cells = []
    for read in node_column.run(url, list(by_name), clients):
        capture = by_name[read["capture"]]
        client = f"vercel-ai {read['client']}"
        verdict = node_column.judge(capture, kind_of(capture), read, _final(url, client, capture))
        passed = verdict.outcome != "chatx"
        cells.append(
            Cell(capture.name, client, passed, verdict.said, verdict.outcome == "expected")
        )
        if not passed:
            log(f"FAIL {client} <- {capture.name} ({kind_of(capture)}): {verdict.said}")
    return cells


def _final(url: str, client: str, capture: Capture) -> Callable[[], Any]:
    """The final object a Node cell was answered, asked for again (the answer is the same
    for the same request)."""

    def fetch() -> Any:
        import httpx2

        path = node_column.endpoint_of(client).path
        body = {"model": "m", "input": "hi", "messages": ASK, "max_tokens": 100}
        answer = httpx2.post(f"{url}{path}", json=body, headers={HEADER: capture.name})
        return answer.json()

    return fetch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-format", type=int, default=12)
    parser.add_argument("--show", action="store_true", help="say each failing cell")
    parser.add_argument(
        "--node",
        choices=("auto", "yes", "no", "only"),
        default="auto",
        help="the Vercel AI SDK's column (Node): auto, where node and its packages are; "
        "yes: required; no: left out; only: that column alone",
    )
    args = parser.parse_args(argv)
    if not CAPTURES.is_dir():
        print(f"no captures at {CAPTURES}", file=sys.stderr)
        return 2
    missing = node_column.unavailable() if args.node != "no" else None
    if missing is not None and args.node in ("yes", "only"):
        print(f"the Node column cannot run: {missing}", file=sys.stderr)
        return 2
    if missing is not None:
        print(f"the Node column is left out: {missing}", file=sys.stderr)
    node = node_column.CLIENTS if args.node != "no" and missing is None else ()
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    say = (lambda line: print(line, file=sys.stderr)) if args.show else (lambda line: None)
    cells = run_matrix(sample(args.per_format), say, python=args.node != "only", node=node)
    _summary(cells)
    return 0


def _summary(cells: list[Cell]) -> None:
    failed = Counter(c.client for c in cells if not c.passed)
    expected = Counter(c.client for c in cells if c.expected)
    total = Counter(c.client for c in cells)
    for client in total:
        print(
            f"{client:34} {total[client] - failed[client]:4}/{total[client]:<4}"
            f" ({expected[client]} as on the provider's own)"
        )
    captures = len({c.capture for c in cells})
    print(
        f"{len(cells)} cells ({captures} captures x {len(total)} clients): "
        f"{len(cells) - sum(failed.values())} pass, {sum(expected.values())} of them the "
        f"client failing or reading otherwise as on the provider's own answer; "
        f"{sum(failed.values())} chatx-caused failures"
    )


if __name__ == "__main__":
    sys.exit(main())

"""``make bench``: what the translating gateway costs per event over plain forwarding.

An upstream on loopback sends a chat stream of N text deltas, each event its own write.
The same stream is read three ways, each K times: straight from the upstream, through
``chatx proxy`` forwarding it as it came (a chat client), and through ``chatx proxy
--upstream-api chat`` translating it into Responses events (a Responses client, its
request translated on the way up). Each time is wall-clock from the request to the end of
the stream, the client reading every byte; the median counts. The gateway's cost per
event is (gateway - proxy) / N. Goal: at most 1 ms per event.

    python bench/gateway.py                 # N = 2000, K = 7
    python bench/gateway.py --events 500 --runs 3

The table goes to stdout and to ``bench/gateway-results.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from chatx import codecs
from chatx.live import server
from chatx.live.endpoints import by_name
from chatx.live.proxy import ProxyApp

HERE = Path(__file__).resolve().parent
GOAL_MS = 1.0


def chat_stream(events: int) -> list[bytes]:
    """A chat stream of ``events`` text deltas, then a finish, usage and [DONE]."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": "bench-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + orjson.dumps(body) + b"\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": f"word{n} "}) for n in range(events)]
    out.append(chunk({}, "stop"))
    return [*out, b"data: [DONE]\n\n"]


class Upstream:
    """Answers every request with the stream, one write per event."""

    def __init__(self, stream: list[bytes]) -> None:
        self.stream = stream

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        head = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        for piece in self.stream:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@contextmanager
def running(app: Any, lifespan: server.Lifespan = "off") -> Iterator[str]:
    sock = server.bind("127.0.0.1", 0)
    uv = server.make_server(app, "bench", lifespan=lifespan)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        if time.monotonic() > deadline:
            raise SystemExit("bench: a server did not start")
        time.sleep(0.01)
    try:
        yield server.url(sock)
    finally:
        uv.should_exit = True
        thread.join(30)
        sock.close()


def timed(url: str, body: dict[str, Any], runs: int) -> tuple[float, int]:
    """The median seconds of ``runs`` streamed requests, and the bytes one brought."""
    import httpx2

    times = []
    size = 0
    with httpx2.Client(timeout=120) as http:
        for _ in range(runs + 1):  # the first warms the connection and the imports
            start = time.perf_counter()
            with http.stream("POST", url, content=orjson.dumps(body)) as response:
                size = sum(len(piece) for piece in response.iter_raw())
            times.append(time.perf_counter() - start)
    return statistics.median(times[1:]), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if codecs.get("chat-chunk").requests is None or codecs.get("responses-event").requests is None:
        print("bench/gateway.py: not run: chat and Responses have no request mapping yet")
        return
    stream = chat_stream(args.events)
    chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    responses = {"model": "m", "input": "hi", "stream": True}
    with running(Upstream(stream)) as upstream:
        proxy = ProxyApp(upstream, None)
        gateway = ProxyApp(upstream, None, upstream_api=by_name("chat"))
        with running(proxy, "on") as plain, running(gateway, "on") as translating:
            rows = [
                ("upstream, direct", *timed(f"{upstream}/v1/chat/completions", chat, args.runs)),
                ("proxy (forwarded)", *timed(f"{plain}/v1/chat/completions", chat, args.runs)),
                (
                    "gateway (chat → Responses)",
                    *timed(f"{translating}/v1/responses", responses, args.runs),
                ),
            ]
    events = len(stream)
    per = (rows[2][1] - rows[1][1]) / events * 1000
    report(rows, events, args.runs, per)


def report(rows: list[tuple[str, float, int]], events: int, runs: int, per: float) -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    load = os.getloadavg()[0]
    lines = [
        "# chatx gateway benchmark",
        "",
        f"- Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {load:.2f}; Python {platform.python_version()}; chatx {commit}",
        f"- Run: `python bench/gateway.py` ({events} upstream events, median of {runs} runs, "
        "each after one warm-up; client, servers and upstream in one process on loopback)",
        "",
        "| path | median s | per event µs | bytes to the client |",
        "|---|---:|---:|---:|",
    ]
    for name, seconds, size in rows:
        lines.append(f"| {name} | {seconds:.3f} | {seconds / events * 1e6:.1f} | {size:,} |")
    verdict = "within" if per <= GOAL_MS else "OVER"
    lines += [
        "",
        f"Gateway over proxy: **{per * 1000:.1f} µs per event** ({verdict} the goal of "
        f"{GOAL_MS:g} ms).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "gateway-results.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

"""Deterministic benchmark streams for ``make bench``.

A chat-chunk SSE stream of exactly N chunks (plus ``data: [DONE]``) is generated from
nothing but ``kind`` and N: the same bytes every time, on every machine, whatever
``PYTHONHASHSEED`` says. The chunks look like OpenAI's wire format (``service_tier``,
``system_fingerprint``, ``logprobs: null``, ``obfuscation``, a usage chunk at the end).

Kinds:

- ``text``: one assistant message, a few characters per chunk.
- ``reasoning``: ``reasoning_content`` deltas for the first 40 % of the chunks, then text.
- ``tools``: many parallel tool calls (one every 50 chunks), each arguments string cut
  into fragments that join to valid JSON; ``finish_reason: tool_calls``.
- ``mixed``: ``reasoning_content`` for the first 30 % of the chunks, text for the next
  40 %, then tool calls as in ``tools``: what an agent's turn looks like.

The responses-event, llama-stack-event, anthropic-event and gemini-event sources are the
chat stream converted by chatx itself. Everything is cached under ``bench/out/``
(git-ignored); a manifest keeps the hash of what made each file (this module, and
chatx's source for the converted ones), so a stale file is rebuilt, never reused.

    python bench/generate.py --kind text --size 10k --format responses   # prints the path
    python bench/generate.py --all                                       # every file
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
MANIFEST = OUT / "manifest.json"

KINDS = ("text", "reasoning", "tools", "mixed")
SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1m": 1_000_000}
# Short names used on the command line and in file names → chatx format names.
FORMATS = {
    "chat": "chat-chunk",
    "responses": "responses-event",
    "llama": "llama-stack-event",
    "anthropic": "anthropic-event",
    "gemini": "gemini-event",
}

# Fragments per tool call in the ``tools`` kind.
CALL_FRAGMENTS = 50
# The start-up capture: 20 records (18 chunks, the usage chunk and [DONE]).
STARTUP_CHUNKS = 19

_WORD_LIST = (
    "The| stream| carries| text|,| reasoning| and| tool| calls| across| many| small| chunks|."
    "| Each| delta| holds| a| few| characters|;| some| are| naïve| café| 日本語| words| or"
    '| "quoted"| phrases|\n\n| with| numbers| like| 42| and| 3.14|!| Then| the| model'
    "| continues| writing| until| it| stops| —| finally|?|\n| émoji| 🙂| tab\there"
    "| back\\slash"
)
_WORDS = tuple(_WORD_LIST.split("|"))
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_TOOLS = ("get_weather", "search_web", "read_file", "run_query", "lookup_user")


def _word(i: int) -> str:
    # A fixed walk over the word list: no RNG, so no dependence on Python's version.
    return _WORDS[(i * 7 + i // 11) % len(_WORDS)]


def _obfuscation(i: int) -> str:
    x = (i * 2654435761 + 12345) & 0xFFFFFFFF
    chars = []
    for _ in range(1 + i % 12):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        chars.append(_ALPHABET[x % len(_ALPHABET)])
    return "".join(chars)


def chat_stream(kind: str, n: int) -> Iterator[bytes]:
    """The SSE bytes of an ``n``-chunk chat stream of ``kind``, in pieces."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (known: {', '.join(KINDS)})")
    if n < 3:
        raise ValueError("a stream needs at least 3 chunks (role, finish, usage)")
    dumps = orjson.dumps
    head = (
        b'data: {"id":"chatcmpl-bench'
        + kind.encode()
        + str(n).encode()
        + b'","object":"chat.completion.chunk","created":1700000000,'
        b'"model":"gpt-4o-2024-08-06","service_tier":"default",'
        b'"system_fingerprint":"fp_bench0001",'
    )
    choice_head = head + b'"choices":[{"index":0,"delta":'
    choice_tail = b',"logprobs":null,"finish_reason":null}],"obfuscation":"'
    body = n - 3  # the chunks between the role chunk and the finish + usage chunks
    reasoning_end = {"reasoning": body * 2 // 5, "mixed": body * 3 // 10}.get(kind, 0)
    tools_start = {"tools": 0, "mixed": body * 7 // 10}.get(kind, body)

    def chunk(i: int, delta: dict) -> bytes:
        return choice_head + dumps(delta) + choice_tail + _obfuscation(i).encode() + b'"}\n\n'

    if kind == "tools":
        first: dict = {"role": "assistant", "content": None, "refusal": None}
    elif kind in ("reasoning", "mixed"):
        first = {"role": "assistant", "content": None, "reasoning_content": ""}
    else:
        first = {"role": "assistant", "content": "", "refusal": None}
    block = [chunk(0, first)]
    call_args = ""
    call = -1
    for j in range(body):
        i = j + 1
        if j >= tools_start:
            piece = (j - tools_start) % CALL_FRAGMENTS
            if piece == 0:
                call += 1
                call_args = _arguments(call, CALL_FRAGMENTS - 1)
                delta: dict = {
                    "tool_calls": [
                        {
                            "index": call,
                            "id": f"call_bench{call:08d}",
                            "type": "function",
                            "function": {"name": _TOOLS[call % len(_TOOLS)], "arguments": ""},
                        }
                    ]
                }
            else:
                delta = {
                    "tool_calls": [
                        {
                            "index": call,
                            "function": {
                                "arguments": _fragment(call_args, piece - 1, CALL_FRAGMENTS - 1)
                            },
                        }
                    ]
                }
            if j == body - 1 and piece != CALL_FRAGMENTS - 1:
                # The stream ends inside this call: its last fragment takes the rest of
                # the arguments, so every call still joins to valid JSON.
                start = len(call_args) * (piece - 1) // (CALL_FRAGMENTS - 1) if piece else 0
                delta["tool_calls"][0]["function"]["arguments"] = call_args[start:]
        elif j < reasoning_end:
            delta = {"reasoning_content": _word(j)}
        else:
            delta = {"content": _word(j)}
        block.append(chunk(i, delta))
        if len(block) >= 4096:
            yield b"".join(block)
            block = []
    reason = b'"tool_calls"' if kind == "tools" or tools_start < body else b'"stop"'
    block.append(
        choice_head
        + b'{},"logprobs":null,"finish_reason":'
        + reason
        + b'}],"obfuscation":"'
        + _obfuscation(n - 2).encode()
        + b'"}\n\n'
    )
    usage = {
        "prompt_tokens": 57,
        "completion_tokens": n,
        "total_tokens": n + 57,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning_end,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    block.append(
        head
        + b'"choices":[],"usage":'
        + dumps(usage)
        + b',"obfuscation":"'
        + _obfuscation(n - 1).encode()
        + b'"}\n\n'
    )
    block.append(b"data: [DONE]\n\n")
    yield b"".join(block)


def _arguments(call: int, fragments: int) -> str:
    words = "".join(_word(call * 31 + k) for k in range(fragments))
    return orjson.dumps(
        {"query": words.strip(), "call": call, "limit": 10 + call % 7, "strict": call % 2 == 0}
    ).decode()


def _fragment(args: str, piece: int, fragments: int) -> str:
    start = len(args) * piece // fragments
    end = len(args) * (piece + 1) // fragments
    return args[start:end]


def chat_bytes(kind: str, n: int) -> bytes:
    """The whole chat stream at once (for tests and small sizes)."""
    return b"".join(chat_stream(kind, n))


# -- the cache ----------------------------------------------------------------------------


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _keys() -> dict[str, str]:
    own = _digest([Path(__file__).resolve()])
    chatx = _digest([p for p in (ROOT / "chatx").rglob("*.py") if "__pycache__" not in p.parts])
    return {"chat": own, "converted": own + "-" + chatx}


def _load_manifest() -> dict[str, dict]:
    try:
        return json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        return {}


def _save_manifest(manifest: dict[str, dict]) -> None:
    tmp = MANIFEST.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp, MANIFEST)


def chatx_command() -> list[str]:
    """How to run chatx: the console script next to this Python, else ``-m chatx``."""
    script = Path(sys.executable).with_name("chatx")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "chatx"]


def size_name(n: int) -> str:
    for name, value in SIZES.items():
        if value == n:
            return name
    return str(n)


def path_for(kind: str, n: int, fmt: str) -> Path:
    return OUT / f"{kind}-{size_name(n)}.{fmt}.sse"


def count_records(path: Path) -> int:
    """The number of ``data:`` payloads in an SSE file, ``[DONE]`` included."""
    count = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            count += block.count(b"\ndata:")
    with open(path, "rb") as f:
        if f.read(5) == b"data:":
            count += 1
    return count


class Source:
    """A generated input file and what the benchmark needs to know of it."""

    def __init__(self, path: Path, records: int, size: int) -> None:
        self.path = path
        self.records = records
        self.bytes = size


def ensure(kind: str, n: int, fmt: str = "chat", *, quiet: bool = False) -> Source:
    """The cached stream (generated or converted now if missing or stale)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    OUT.mkdir(parents=True, exist_ok=True)
    path = path_for(kind, n, fmt)
    keys = _keys()
    key = keys["chat"] if fmt == "chat" else keys["converted"]
    manifest = _load_manifest()
    entry = manifest.get(path.name)
    if (
        entry
        and entry.get("key") == key
        and path.exists()
        and path.stat().st_size == entry.get("bytes")
    ):
        return Source(path, entry["records"], entry["bytes"])
    tmp = path.with_name(path.name + ".part")
    if fmt == "chat":
        if not quiet:
            print(f"generate {path.name}", file=sys.stderr, flush=True)
        with open(tmp, "wb") as f:
            for piece in chat_stream(kind, n):
                f.write(piece)
    else:
        chat = ensure(kind, n, "chat", quiet=quiet)
        if not quiet:
            print(f"convert  {path.name}", file=sys.stderr, flush=True)
        command = [
            *chatx_command(),
            "convert",
            str(chat.path),
            "--to",
            FORMATS[fmt],
            "--out-container",
            "sse",
            "-q",
            "-o",
            str(tmp),
        ]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if done.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise RuntimeError(
                f"{' '.join(command)} failed ({done.returncode}): "
                f"{done.stderr.decode(errors='replace')[-2000:]}"
            )
    os.replace(tmp, path)
    entry = {"key": key, "records": count_records(path), "bytes": path.stat().st_size}
    manifest = _load_manifest()  # re-read: a nested ensure() may have written it
    manifest[path.name] = entry
    _save_manifest(manifest)
    return Source(path, entry["records"], entry["bytes"])


def ensure_startup() -> Source:
    """The ~20-event capture ``chatx convert``'s start-up is timed on."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "startup.chat.sse"
    data = chat_bytes("text", STARTUP_CHUNKS)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return Source(path, data.count(b"data:"), len(data))


def available_formats() -> list[str]:
    """The short names of the formats this chatx knows (llama-stack may not have landed)."""
    done = subprocess.run([*chatx_command(), "formats"], capture_output=True, text=True)
    names = set(done.stdout.split())
    return [short for short, full in FORMATS.items() if full in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=KINDS, default="text")
    parser.add_argument("--size", default="10k", help="1k, 10k, 100k, 1m or a number")
    parser.add_argument("--format", choices=tuple(FORMATS), default="chat")
    parser.add_argument(
        "--stdout", action="store_true", help="write the chat stream to stdout instead of the cache"
    )
    parser.add_argument(
        "--all", action="store_true", help="build every kind, size and available format"
    )
    args = parser.parse_args(argv)
    n = SIZES.get(args.size.lower()) or int(args.size)
    if args.stdout:
        for piece in chat_stream(args.kind, n):
            sys.stdout.buffer.write(piece)
        return 0
    if args.all:
        formats = available_formats()
        for size in SIZES.values():
            for kind in KINDS:
                for fmt in formats:
                    print(ensure(kind, size, fmt).path)
        return 0
    print(ensure(args.kind, n, args.format).path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The benchmark's stream generator is deterministic and its streams are well formed.

Performance itself is measured by ``make bench``, never by a timed test.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.bench_streams import generate

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind", generate.KINDS)
def test_same_bytes_twice(kind: str) -> None:
    assert generate.chat_bytes(kind, 500) == generate.chat_bytes(kind, 500)


def test_same_bytes_in_other_processes() -> None:
    """Nothing depends on hash randomisation, the clock or an RNG."""
    code = (
        "import hashlib, sys; sys.path.insert(0, 'bench'); import generate; "
        "print(hashlib.sha256(b''.join(generate.chat_bytes(k, 300) "
        "for k in generate.KINDS)).hexdigest())"
    )
    digests = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(done.stdout.strip())
    here = hashlib.sha256(b"".join(generate.chat_bytes(k, 300) for k in generate.KINDS))
    assert digests == {here.hexdigest()}


@pytest.mark.parametrize("kind", generate.KINDS)
@pytest.mark.parametrize("n", [3, 4, 52, 53, 54, 1000])
def test_exactly_n_chunks_and_valid_tool_arguments(kind: str, n: int) -> None:
    blocks = [b for b in generate.chat_bytes(kind, n).split(b"\n\n") if b]
    assert len(blocks) == n + 1
    assert blocks[-1] == b"data: [DONE]"
    arguments: dict[int, str] = {}
    finishes = []
    for block in blocks[:-1]:
        assert block.startswith(b"data: ")
        chunk = orjson.loads(block[6:])
        assert chunk["object"] == "chat.completion.chunk"
        for choice in chunk["choices"]:
            if choice["finish_reason"]:
                finishes.append(choice["finish_reason"])
            for call in choice["delta"].get("tool_calls") or ():
                index = call["index"]
                arguments[index] = arguments.get(index, "") + call["function"]["arguments"]
    calls = kind == "tools" or (kind == "mixed" and n > 3)
    assert finishes == ["tool_calls" if calls else "stop"]
    assert "usage" in orjson.loads(blocks[-2][6:])
    if calls and n > 3:
        assert arguments
        for text in arguments.values():
            assert isinstance(orjson.loads(text), dict)
    else:
        assert not arguments

"""The benchmark's files of exchanges (``bench/exchanges.py``, ``make bench``'s memory rows
at 1M) each hold the stream they are written from, whole, as their one stream."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.containers.common import chatx
from tests.containers.test_har_walk_commands import SSE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import exchanges  # noqa: E402


@pytest.mark.parametrize("layout", exchanges.LAYOUTS)
def test_each_layout_holds_the_stream(tmp_path: Path, layout: str) -> None:
    body = tmp_path / "text-1k.chat.sse"
    body.write_bytes(SSE)
    path = exchanges.ensure(layout, body)
    assert path.parent == tmp_path and path.exists()
    listed = chatx("ls", str(path))
    assert listed.code == 0, listed.err
    (line,) = listed.stdout.decode().splitlines()
    # the recorder of Llama Stack keeps the chunks, not the [DONE] after them
    records = 2 if layout == "llama-stack recording" else 3
    assert line.split()[:4] == [f"{path}#0", "chat-chunk", str(records), "records"], line
    converted = chatx("convert", f"{path}#0", "--to", "chat-chunk", "-q")
    bare = chatx("convert", str(body), "--to", "chat-chunk", "-q")
    assert converted.stdout == bare.stdout

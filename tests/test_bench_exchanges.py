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
    fmt = exchanges.LAYOUTS[layout][2]
    body = tmp_path / f"text-1k.{fmt}.sse"
    if fmt == "chat":
        body.write_bytes(SSE)
    else:
        chat = tmp_path / "chat.sse"
        chat.write_bytes(SSE)
        made = chatx("convert", str(chat), "--to", "llama-stack-event", "-q")
        body.write_bytes(made.stdout)
    path = exchanges.ensure(layout, body)
    assert path.parent == tmp_path and path.exists()
    listed = chatx("ls", str(path))
    assert listed.code == 0, listed.err
    (line,) = listed.stdout.decode().splitlines()
    # Llama Stack's recorders keep the chunks, not a [DONE] after them
    records = body.read_bytes().count(b"data: {" if "llama" in layout else b"data: ")
    name = "chat-chunk" if fmt == "chat" else "llama-stack-event"
    assert line.split()[:4] == [f"{path}#0", name, str(records), "records"], line
    converted = chatx("convert", f"{path}#0", "--to", "chat-chunk", "-q")
    bare = chatx("convert", str(body), "--to", "chat-chunk", "-q")  # the same stream
    assert converted.stdout == bare.stdout

"""Memory follows the text a stream carries, not its number of events (DESIGN §6).

Two generated chat streams of one-character deltas, 10k and 100k chunks: ten times the
events, about the same text. Each command runs in its own process, which reports its
peak RSS (VmHWM); the larger stream may not need much more than the smaller one. The 1M
figures are measured by ``make bench``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inprocess import peak_rss

SMALL, LARGE = 10_000, 100_000
GROWTH = 1.5  # at most this much more peak memory for ten times the events

_HEAD = b'data: {"id":"chatcmpl-m","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
_ROLE = _HEAD + b'{"role":"assistant","content":""},"finish_reason":null}]}\n\n'
_TEXT = _HEAD + b'{"content":"a"},"finish_reason":null}]}\n\n'
_END = _HEAD + b'{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


def write_stream(path: Path, chunks: int) -> Path:
    """A text-only chat stream of ``chunks`` one-character deltas, written in blocks."""
    with path.open("wb") as out:
        out.write(_ROLE)
        block = _TEXT * 1000
        for _ in range(chunks // 1000):
            out.write(block)
        out.write(_END)
    return path


@pytest.fixture(scope="module")
def streams(tmp_path_factory) -> dict[int, Path]:
    folder = tmp_path_factory.mktemp("memory")
    return {n: write_stream(folder / f"text-{n}.sse", n) for n in (SMALL, LARGE)}


COMMANDS = {
    "convert-responses": (["convert", "{file}", "--to", "responses-event", "-o", "/dev/null"], 0),
    "convert-llama": (["convert", "{file}", "--to", "llama-stack-event", "-o", "/dev/null"], 0),
    "validate": (["validate", "{file}"], 0),
    "diff-wire": (["diff", "{file}", "{file}", "--wire"], 0),
    "diff-semantic": (["diff", "{file}", "{file}", "--semantic"], 0),
    "show": (["show", "{file}"], 0),
    "collect": (["collect", "{file}"], 0),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_peak_memory_does_not_follow_the_number_of_events(streams, name):
    args, code = COMMANDS[name]
    peaks = {}
    for n, path in streams.items():
        peak, status, err = peak_rss([a.format(file=path) for a in args])
        assert status == code, err
        peaks[n] = peak
    assert peaks[LARGE] < GROWTH * peaks[SMALL], {n: p >> 20 for n, p in peaks.items()}


def test_stdin_is_read_as_a_stream_too(streams):
    """A pipe is converted as it comes: no more memory than the same file."""
    with streams[LARGE].open("rb") as stdin:
        piped, status, err = peak_rss(["convert", "-", "-o", "/dev/null"], stdin=stdin)
    assert status == 0, err
    from_file, _, _ = peak_rss(["convert", str(streams[LARGE]), "-o", "/dev/null"])
    assert piped < GROWTH * from_file


def test_many_notes_do_not_grow_without_bound(tmp_path):
    """A field the target has no place for, on every chunk: counted, not kept per chunk."""
    small = write_stream(tmp_path / "small.sse", SMALL)
    large = write_stream(tmp_path / "large.sse", LARGE)
    for path in (small, large):
        path.write_bytes(path.read_bytes().replace(b'"model":"m"', b'"model":"m","x_extra":1'))
    peaks = [
        peak_rss(["convert", str(p), "--to", "responses-event", "-o", "/dev/null"])[0]
        for p in (small, large)
    ]
    assert peaks[1] < GROWTH * peaks[0], [p >> 20 for p in peaks]

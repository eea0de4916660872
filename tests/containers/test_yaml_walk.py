"""A YAML cassette too big to hold is walked, its bodies' text decoded in pieces, and reads
exactly as it reads whole: the same exchanges, bodies, requests and errors.

Here every file is walked (``yaml_walk.BIG`` 0) and every body's quoted or literal text is
walked (``SPOOLED`` 0), decoded in pieces of a few bytes and read a few bytes at a time:
what a body of hundreds of MB takes, on texts of a few hundred. The texts hold what may
trip a reading that is not PyYAML's: quotes, escapes, folds, blank lines, trailing spaces,
other line breaks, and lines that look like keys and quotes where they are not.
"""

from __future__ import annotations

import base64
import copy
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx.containers import bodies, cassette, compressed, yaml_walk
from chatx.containers.bodies import BodyError
from chatx.errors import InputError
from tests.containers import test_stub_layouts
from tests.containers.common import FIXTURES, SAMPLES, commands_alike
from tests.containers.test_big_har import peak_rss
from tests.containers.test_har_walk_commands import SSE

URL = "https://api.openai.com/v1/chat/completions"


def read(data: bytes) -> tuple[list[Any], list[bool]]:
    """What a cassette reads as: each exchange and its body (or why it has none), or
    the error that refuses the file; and whether each body was walked (read from the
    :class:`bodies.Walked` that stood in for its text)."""
    out: list[Any] = []
    walked = []
    real = bodies.Walked.pieces
    read_from: list[bodies.Walked] = []

    def counted(self: bodies.Walked) -> Iterator[bytes]:
        read_from.append(self)
        return real(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bodies.Walked, "pieces", counted)
        try:
            for entry in cassette.entries(io.BytesIO(data)):
                before = len(read_from)
                try:
                    body: Any = entry.body()
                except BodyError as exc:
                    body = ("BodyError", str(exc))
                out.append((entry.method, entry.url, entry.status, entry.content_type,
                            entry.request, body))  # fmt: skip
                walked.append(len(read_from) > before)
        except InputError as exc:
            out.append(("InputError", str(exc), exc.line))
    return out, walked


class Walks:
    """The walk's sizes made small."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch

    def read(
        self, data: bytes, piece: int = 7, block: int = 13, line: int = 64
    ) -> tuple[list[Any], list[bool]]:
        """``data`` read whole, then walked: the same; what it reads as, and whether each
        body was walked."""
        with self.monkeypatch.context() as patch:
            patch.setattr(yaml_walk, "BIG", 1 << 40)
            whole, held = read(data)
        assert not any(held)
        with self.monkeypatch.context() as patch:
            # Lines of ``line`` bytes at most read ahead: a quoted text goes on over reads
            # (a longer line that opens no scalar is read whole).
            sizes = {"BIG": 0, "SPOOLED": 0, "PIECE": piece, "_READ": block, "_LINE": line}
            for name, value in sizes.items():
                patch.setattr(yaml_walk, name, value)
            walked, pieces = read(data)
        assert walked == whole
        return whole, pieces


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Walks:
    return Walks(monkeypatch)


def cassettes() -> Iterator[Path]:
    yield from sorted(FIXTURES.glob("*.y*ml"))
    if SAMPLES.is_dir():
        yield from sorted(SAMPLES.rglob("*.y*ml"))


def test_every_cassette_reads_walked_as_whole(walks: Walks) -> None:
    walked = []
    for path in cassettes():
        for piece, block, line in ((2, 1, 4096), (7, 13, 64), (64, 4096, 4096)):
            whole, was = walks.read(path.read_bytes(), piece, block, line)
            assert whole and whole[0][0] != "InputError", path
            if line > 64:
                walked.append((path.name, any(was)))
    # Every file with a body written quoted or as a literal block: all but the one whose
    # bodies are parsed_body values.
    assert [name for name, was in walked if not was] == ["parsed-body.yaml"] * 2


def cassette_of(body: Any, request: Any = '{"model":"m","stream":true}', **dump: Any) -> bytes:
    document = {
        "interactions": [
            {
                "request": {"body": request, "method": "POST", "uri": URL},
                "response": {
                    "body": {"string": body},
                    "headers": {"Content-Type": ["text/event-stream"]},
                    "status": {"code": 200, "message": "OK"},
                },
            },
            {"request": {"method": "GET", "uri": URL}, "response": {"body": {"string": "x"}}},
        ],
        "version": 1,
    }
    return yaml.dump(document, **dump).encode()


TEXT = st.lists(
    st.sampled_from(
        list("ab{}:,#-' \"\\\t\n") + ["data: ", "\n\n", "  ", "é", "\u2028", "\x85", "\r", "😀"]
    ),
    max_size=60,
).map("".join)
DUMPERS = [yaml.SafeDumper, getattr(yaml, "CSafeDumper", yaml.SafeDumper)]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=TEXT,
    style=st.sampled_from([None, "'", '"', "|"]),
    dumper=st.sampled_from(DUMPERS),
    unicode=st.booleans(),
    width=st.sampled_from([20, 80, 1 << 20]),
    piece=st.sampled_from([2, 3, 7, 64]),
    block=st.sampled_from([3, 13, 4096]),
)
def test_any_text_in_any_style_reads_walked_as_whole(
    walks: Walks, body: str, style: str | None, dumper: Any, unicode: bool, width: int,
    piece: int, block: int,
) -> None:  # fmt: skip
    data = cassette_of(body, body, Dumper=dumper, default_style=style, allow_unicode=unicode,
                       width=width)  # fmt: skip
    walks.read(data, piece, block)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.binary(min_size=1, max_size=200), dumper=st.sampled_from(DUMPERS))
def test_binary_bodies_read_walked_as_whole(walks: Walks, body: bytes, dumper: Any) -> None:
    # PyYAML writes bytes as !!binary base64 in a literal block
    whole, was = walks.read(cassette_of(body, Dumper=dumper))
    # bytes a compressor's magic starts are decompressed, walked or not
    assert was[0] and (whole[0][-1] == body or compressed.detect(body) is not None)


@pytest.mark.parametrize("style", ["'", '"', "|"])
def test_each_style_is_walked(walks: Walks, style: str) -> None:
    whole, was = walks.read(cassette_of(SSE.decode(), Dumper=yaml.SafeDumper, default_style=style))
    assert was[0] and whole[0][-1] == SSE


@pytest.mark.parametrize("block", [1, 2, 3, 5])
def test_quotes_doubled_across_reads(walks: Walks, block: int) -> None:
    """A single-quoted text's ``''`` read a byte at a time: a quote at the end of what
    is read is not its end before the next byte is seen."""
    body = "it's 'q' '' " * 12
    whole, was = walks.read(cassette_of(body, default_style="'"), 3, block)
    assert was[0] and whole[0][-1] == body.encode()


# Literal blocks as Ruby's VCR writes them (|, |-, |+), and what may stand around them.
RUBY = """\
http_interactions:
- request:
    method: post
    uri: {url}
    body:
      encoding: UTF-8
      string: '{{"model":"m"}}'
  response:
    status:
      code: 200
    headers:
      Content-Type:
      - text/event-stream
    body:
      encoding: UTF-8
      string: {body}
  recorded_at: Mon, 01 Jan 2026 00:00:00 GMT
recorded_with: VCR 6.4.0
"""

BLOCKS = {
    "clip": "|\n        data: 1\n\n        data: 2\n",
    "strip": "|-\n        data: 1\n\n        data: 2\n\n\n",
    "keep": "|+\n        data: 1\n\n        data: 2\n\n      \n\n",
    "comment": "|+ # the stream\n        data: 1\n\n",
    "leading blank lines": "|\n\n    \n        data: 1\n",
    "more indented lines": "|\n        data: 1\n          x: 'y\n         \n        z\n",
    "lines that look like keys": "|\n        string: 'abc\n        - \"d\n        body: |\n",
    "short blank lines inside": "|\n        a\n   \n\n  \n        b\n",
    "tabs after the indentation": "|\n        a\n        \tb\n        c\t\n",
    "a comment ends it": "|\n        a\n      # a comment\n",
    "base64": "!binary |-\n        " + "ZGF0YTogMQoK" * 5,
    "ruby base64_string": "|-\n        ZGF0YTogMQoK\n",
}


@pytest.mark.parametrize("name", BLOCKS)
def test_literal_blocks_read_walked_as_whole(walks: Walks, name: str) -> None:
    text = RUBY.format(url=URL, body=BLOCKS[name])
    if name == "ruby base64_string":
        text = text.replace("      string: |-", "      base64_string: |-")
    for piece, block in ((2, 1), (7, 13), (64, 64)):
        whole, was = walks.read(text.encode(), piece, block)
        assert was[0], name
        assert whole[0][0] == "POST" and not isinstance(whole[0][-1], tuple), whole


def test_a_block_that_ends_the_file_without_a_line_break(walks: Walks) -> None:
    for chomp in ("", "-", "+"):
        text = RUBY.format(url=URL, body=f"|{chomp}\n        data: 1\n\n        data: 2")
        text = text[: text.index("  recorded_at")].rstrip("\n")
        whole, was = walks.read(text.encode())
        assert was[0] and whole[0][-1].startswith(b"data: 1\n\ndata: 2")


# Files this reading does not follow: each is read whole, and reads the same.
WHOLE = {
    "folded": RUBY.format(url=URL, body=">\n        data: 1\n\n        data: 2\n"),
    "plain over lines": RUBY.format(url=URL, body="data\n        more"),
    "indentation in digits": RUBY.format(url=URL, body="|2\n          data: 1\n"),
    "an anchor on it": RUBY.format(url=URL, body="&b |\n        data: 1\n").replace(
        "recorded_with", "copy: *b\nrecorded_with"
    ),
    "another tag": RUBY.format(url=URL, body="!!str |\n        data: 1\n"),
    "a Ruby object tag": RUBY.format(url=URL, body="!ruby/string |\n        data: 1\n"),
    "on the next line": RUBY.format(url=URL, body="\n        'data: 1\n\n        x'"),
    "in a flow mapping": RUBY.format(url=URL, body="'x'").replace(
        "    body:\n      encoding: UTF-8\n      string: 'x'",
        "    body: {encoding: UTF-8,\n      string: 'data: 1\n\n        x'}",
    ),
    "a placeholder's words in the file": RUBY.format(url=URL, body="|\n        data: 1\n")
    + "note: chatx-walked-scalar-0\n",
    "CR LF line ends": RUBY.format(url=URL, body="|\n        data: 1\n\n").replace("\n", "\r\n"),
    "a CR in a block": RUBY.format(url=URL, body="|\n        data: 1\r\n        x\n"),
    "a NEL in a block": RUBY.format(url=URL, body="|\n        data: 1\x85x\n"),
    "an LS in a block": RUBY.format(url=URL, body="|\n        data: 1\u2028x\n"),
    "more after its quote": RUBY.format(url=URL, body="'data: 1\n\n        x' more"),
    "a longer blank line first": RUBY.format(url=URL, body="|\n            \n        data: 1\n"),
    "no deeper than its key": RUBY.format(url=URL, body="|\n      data: 1\n"),
    "empty": RUBY.format(url=URL, body="|\n"),
}


@pytest.mark.parametrize("name", WHOLE)
def test_files_not_followed_are_read_whole_the_same(walks: Walks, name: str) -> None:
    for piece, block in ((2, 1), (7, 13)):
        whole, was = walks.read(WHOLE[name].encode(), piece, block)
        assert not any(was), name


# Files PyYAML refuses: read whole, the same error said.
BAD = {
    "no closing quote": RUBY.format(url=URL, body="'data: 1\n\n        x").split("  recorded")[0],
    "a bad escape": RUBY.format(url=URL, body='"data: 1\\n\\n' + "x" * 40 + '\\q"'),
    "a document marker in a quote": RUBY.format(url=URL, body="'data: 1\n---\n        x'"),
    "a bad character": RUBY.format(url=URL, body="'data: \x01 1'"),
    "a key after a block at its depth": RUBY.format(url=URL, body="|\n        a\n        b: c\n")
    + "  : x\n",
    "a tab indenting a block line": RUBY.format(url=URL, body="|\n        a\n  \tb\n"),
    "a tab after its first line's indentation": RUBY.format(url=URL, body="|\n        \ta\n"),
    "bad base64": RUBY.format(url=URL, body="!binary |-\n        ZGF0YTogMQoK*"),
}


@pytest.mark.parametrize("name", BAD)
def test_files_in_error_say_the_same_error(walks: Walks, name: str) -> None:
    whole, _ = walks.read(BAD[name].encode())
    assert whole[-1][0] == "InputError" or isinstance(whole[0][-1], tuple), whole


# Lines that look like what they are not: the reading may be misled, never wrong.
MISLEADING = {
    "a plain continuation that opens a quote": RUBY.format(url=URL, body="'x'").replace(
        "recorded_at: Mon", "note: it said\n    - 'string: |\n    more\n  recorded_at: Mon"
    ),
    "a comment with a quote": RUBY.format(url=URL, body="'x' # it's\n      # string: 'a")
    .replace("recorded_at: Mon", "recorded_at: 'Mon")
    .replace("GMT", "GMT'"),
    "a quoted key": RUBY.format(url=URL, body="'data: 1\n\n        x'").replace(
        "      encoding: UTF-8\n      string: 'data",
        "      'encoding': UTF-8\n      \"string\": 'data",
    ),
    "quotes inside a block": RUBY.format(url=URL, body="|\n        'a\n        \"b\n        c'\n"),
    "a key in a quote": RUBY.format(url=URL, body="'a\n\n        string: |\n        b'"),
    "a block not a body's": RUBY.format(url=URL, body="'x'").replace(
        "recorded_at: Mon", "note: |\n    data: 1\n  recorded_at: Mon"
    ),
    "the placeholder's words as a body": RUBY.format(url=URL, body="'chatx-walked-scalar-0'"),
    "a list item key": RUBY.format(url=URL, body="'x'").replace(
        "    headers:\n      Content-Type:\n      - text/event-stream",
        "    headers:\n    - string: 'a\n\n        b'\n    - body: |\n        c",
    ),
}


@pytest.mark.parametrize("name", MISLEADING)
def test_lines_that_look_like_what_they_are_not(walks: Walks, name: str) -> None:
    for piece, block in ((2, 1), (7, 13)):
        walks.read(MISLEADING[name].encode(), piece, block)


def test_past_spans_huge_bodies_are_kept_as_written(
    walks: Walks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each body walked holds two open files until the document is built: the first
    SPANS are walked, the others read with the rest of the file."""
    document = yaml.safe_load(cassette_of(SSE.decode()))
    document["interactions"] = [copy.deepcopy(document["interactions"][0]) for _ in range(5)]
    monkeypatch.setattr(yaml_walk, "SPANS", 4)  # each exchange's request and response
    whole, was = walks.read(yaml.dump(document, Dumper=yaml.SafeDumper).encode())
    assert len(whole) == 5 and all(body == SSE for *_, body in whole)
    assert was == [True, True, False, False, False]


def test_blank_lines_before_a_block_are_not_held_past_a_bound(
    walks: Walks, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_walk, "_LINE", 64)
    for blank in (10, 100):
        text = RUBY.format(url=URL, body="|\n" + "\n" * blank + "        data: 1\n")
        _, was = walks.read(text.encode())
        assert was[0] == (blank < 64)


def test_every_command_reads_walked_cassettes_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [str(p) for p in cassettes()]
    made = tmp_path / "made.yaml"
    made.write_bytes(cassette_of(SSE.decode(), Dumper=yaml.SafeDumper, default_style='"'))
    paths.append(str(made))
    cases = commands_alike(paths, monkeypatch, yaml_walk, BIG=0, SPOOLED=0, PIECE=16)
    assert len(cases) > 20


def test_listing_a_cassette_with_a_huge_body_holds_pieces_of_it(tmp_path: Path) -> None:
    """A cassette holding a 40 MB stream in one body, double-quoted or a literal block."""
    stream = SSE[: -len(b"data: [DONE]\n\n")] * (40_000_000 // len(SSE)) + b"data: [DONE]\n\n"
    small = tmp_path / "small.yaml"
    small.write_bytes(cassette_of(SSE.decode(), Dumper=yaml.SafeDumper))
    base, code, err = peak_rss(["ls", str(small)])
    assert code == 0, err
    for style in ('"', "|"):
        large = tmp_path / "large.yaml"
        large.write_bytes(RUBY.format(url=URL, body=_written(stream, style)).encode())
        peak, code, err = peak_rss(["ls", str(large)])
        assert code == 0, err
        # Held whole, the body would be there several times over: read, composed, decoded.
        assert peak - base < 32 << 20, (style, peak >> 20, base >> 20)


def _written(stream: bytes, style: str) -> str:
    text = stream.decode()
    if style == "|":
        return "|\n" + "".join(f"        {line}\n" if line else "\n" for line in text.split("\n"))
    return yaml.dump(text, Dumper=DUMPERS[-1], default_style=style, width=1 << 30).strip()


# httpmock's mocks: a YAML stream of documents, each body walked where it is huge.


_read_cassette = read


def mocks_read(data: bytes) -> tuple[list[Any], list[bool]]:
    """httpmock.entries as :func:`read` reads a cassette."""
    from chatx.containers import httpmock

    real = cassette.entries
    try:
        cassette.entries = httpmock.entries  # type: ignore[assignment]
        return _read_cassette(data)
    finally:
        cassette.entries = real  # type: ignore[assignment]


def mocks_of(body: Any, **dump: Any) -> bytes:
    mocks = [
        {"when": {"path": "/v1/models/x", "method": "GET"}, "then": {"status": 404, "body": "{}"}},
        {
            "when": {"path": "/v1/messages", "method": "POST", "body": '{"model":"m"}'},
            "then": {
                "status": 200,
                "header": [{"name": "content-type", "value": "text/event-stream"}],
                "body_base64" if isinstance(body, bytes) else "body": body,
            },
        },  # fmt: skip
    ]
    if isinstance(body, bytes):
        mocks[1]["then"]["body_base64"] = base64.b64encode(body).decode()
    return yaml.dump_all(mocks, **dump).encode()


@pytest.mark.parametrize("style", [None, "'", '"', "|"])
def test_httpmock_documents_read_walked_as_whole(
    monkeypatch: pytest.MonkeyPatch, style: str | None
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "read", mocks_read)
    walks = Walks(monkeypatch)
    for body in (SSE.decode(), SSE):
        data = mocks_of(body, Dumper=yaml.SafeDumper, default_style=style)
        whole, was = walks.read(data)
        # base64 on one line is written plain, which is read with the rest of the file
        assert whole[1][-1] == SSE and was[1] == (style is not None or body != SSE)
    layout = test_stub_layouts.httpmock().encode()
    whole, was = walks.read(layout)
    assert was[1] and whole[1][-1] == test_stub_layouts.SSE.encode()
    # a placeholder's words in a later document: all read whole
    whole, was = walks.read(layout + b"---\nwhen: {path: chatx-walked-scalar-0}\n")
    assert not any(was) and len(whole) == 3

"""Every class of bad input has a defined behaviour on every command (DESIGN §6).

The table runs each class through convert (lenient and ``--strict``), validate, show,
collect and diff, in process, and checks the exit code, that stderr is chatx's own lines
with no traceback, that the problem is said with FILE:LINE, and that stdout carries data
only. Behaviours, in short:

- empty or blank input, not a stream: ``FILE:1: empty input`` / ``not a stream``, exit 2;
- a BOM, CR-only, CRLF or mixed line ends: read as LF is, same output;
- a record that cannot be read (non-UTF-8, half-written JSON, a NUL byte in a string, a
  value nested more than 200 levels, a number beyond a double): skipped with
  ``skipped: FILE:LINE:``, the rest converted, exit 2; ``--strict`` stops there, exit 2;
  validate reports it as a finding (exit 1);
- a JSON value that is not an object, or an object of another format, among good
  records: the codec refuses it (skipped) or reports what it cannot place (lost);
- ``[DONE]`` in the middle, records after it: another stream starts, with a warning;
- a line longer than 64 MiB: ``FILE:LINE: a line longer than 64 MiB starts here``, exit 2,
  read in bounded memory;
- an SSE line that is no field: ignored as the spec says, and said by every command (a
  warning; validate: rule STR002);
- integers beyond 64 bits are read as doubles, as JavaScript reads them; duplicate keys:
  the last one wins, as in JavaScript and Python.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from chatx.containers.lines import LineSplitter, LineTooLong
from chatx.containers.payload import MAX_DEPTH
from chatx.notes import Notes
from chatx.reading import framing
from tests.inprocess import Result, assert_clean, peak_rss, run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CHAT = (FIXTURES / "chat-chunk" / "text.sse").read_bytes()
RESPONSES = (FIXTURES / "responses-event" / "text.sse").read_bytes()
LLAMA = (FIXTURES / "llama-stack-event" / "text.jsonl").read_bytes()
GOOD = str(FIXTURES / "chat-chunk" / "text.sse")

COMMANDS: dict[str, list[str]] = {
    "convert": ["convert", "{file}", "--to", "responses-event"],
    "strict": ["convert", "{file}", "--to", "responses-event", "--strict"],
    "validate": ["validate", "{file}"],
    "show": ["show", "{file}"],
    "collect": ["collect", "{file}"],
    "diff": ["diff", "{file}", GOOD],
}


def blocks(data: bytes) -> list[bytes]:
    return [b for b in data.split(b"\n\n") if b]


def sse_of(parts: list[bytes]) -> bytes:
    return b"".join(p + b"\n\n" for p in parts)


CHAT_BLOCKS = blocks(CHAT)  # 8 blocks, block k on line 2k+1; [DONE] last, on line 15


def chat_with(index: int, block: bytes) -> bytes:
    """The chat fixture with block ``index`` replaced (index 1, line 3, says "Hello")."""
    parts = list(CHAT_BLOCKS)
    parts[index] = block
    return sse_of(parts)


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# -- the table ---------------------------------------------------------------------------


@dataclass
class Case:
    data: bytes
    codes: dict[str, set[int]]
    # Said on stderr (or, for validate and show, in their report on stdout): per command,
    # a regex with {file} for the input's name.
    said: dict[str, str] = field(default_factory=dict)
    bugs: dict[str, str] = field(default_factory=dict)  # command -> reason (strict xfail)


def every(code: int) -> dict[str, set[int]]:
    return dict.fromkeys(COMMANDS, {code})


def fatal(line: int, text: str) -> Case:
    """Input that is no stream at all: every command stops with FILE:LINE, exit 2."""
    return Case(
        b"",
        every(2),
        dict.fromkeys(COMMANDS, rf"^chatx: error: {{file}}:{line}: .*{text}"),
    )


def skipped(line: int, text: str) -> Case:
    """One unreadable record among good ones: skipped, said, the rest converted."""
    return Case(
        b"",
        {
            "convert": {2},
            "strict": {2},
            "validate": {1},
            "show": {2},
            "collect": {2},
            "diff": {2},
        },
        {
            "convert": rf"^chatx: skipped: {{file}}:{line}: record skipped: .*{text}",
            "strict": rf"^chatx: error: {{file}}:{line}: .*{text}",
            "validate": rf"^{{file}}:{line}: \w+ E .*{text}",
            # The view wraps long notes at the terminal's width.
            "show": rf"line {line}: record skipped: [\s\S]*{text}",
            "collect": rf"^chatx: skipped: {{file}}:{line}: record skipped: .*{text}",
            "diff": rf"\blines? {line}\b",
        },
    )


def good(codes: dict[str, set[int]] | None = None) -> Case:
    """Input that reads as the fixture does."""
    return Case(b"", codes or {**every(0), "validate": {0}})


def case(base: Case, data: bytes, **changes: object) -> Case:
    out = Case(data, dict(base.codes), dict(base.said), dict(base.bugs))
    for key, value in changes.items():
        getattr(out, key).update(value)  # type: ignore[attr-defined]
    return out


HALF = CHAT[: CHAT.index(b"data: [DONE]")] + b'data: {"id":"chatcmpl-fixturetext","obj'
DONE_MIDDLE = sse_of([*CHAT_BLOCKS[:3], b"data: [DONE]", *CHAT_BLOCKS[3:]])
AFTER_DONE = CHAT + CHAT_BLOCKS[2] + b"\n\n"
NOT_OBJECTS = b'data: [1,2,3]\n\ndata: 42\n\ndata: "x"\n\ndata: null\n\n'
OTHER_FORMAT = b'data: {"hello":"world"}\n\ndata: {"foo":1}\n\n'

CASES: dict[str, Case] = {
    "empty": case(fatal(1, "empty input"), b""),
    "whitespace": case(fatal(1, "empty input"), b"  \n\n\t \r\n"),
    "binary": case(fatal(1, "not a stream"), bytes(range(256)) * 4),
    "nul-only": case(fatal(1, "not a stream"), b"\x00\x00\x00\n"),
    "not-a-stream-line-3": case(fatal(3, "not a stream"), b"\n\nhello world\n"),
    "not-objects": case(fatal(1, "cannot tell the stream's format"), NOT_OBJECTS),
    "other-format": case(fatal(1, "cannot tell the stream's format"), OTHER_FORMAT),
    "bom": case(good(), b"\xef\xbb\xbf" + CHAT),
    "crlf": case(good(), CHAT.replace(b"\n", b"\r\n")),
    "cr-only": case(good(), CHAT.replace(b"\n", b"\r")),
    "mixed-line-ends": case(
        good(),
        b"".join(
            b + (b"\r\n\r\n", b"\n\r", b"\r\r", b"\n\n")[i % 4] for i, b in enumerate(CHAT_BLOCKS)
        ),
    ),
    "non-utf8": case(skipped(3, "invalid UTF-8"), CHAT.replace(b"Hello", b"He\xffllo")),
    "half-written-last": case(skipped(15, "half-written"), HALF),
    "nul-in-string": case(skipped(3, "control character"), CHAT.replace(b"Hello", b"He\x00llo")),
    "deeply-nested": case(
        skipped(5, "nested more than 200"), chat_with(2, b"data: " + nested(MAX_DEPTH + 1))
    ),
    "nested-beyond-orjson": case(
        skipped(5, "nested more than 200"), chat_with(2, b"data: " + nested(5000))
    ),
    "number-beyond-double": case(
        skipped(3, "number out of range"), CHAT.replace(b'"Hello"', b'"Hello","n":1e400')
    ),
    "not-an-object-among-chunks": case(
        skipped(5, "must be a JSON object"),
        chat_with(2, b"data: [1,2]"),
        # Readable JSON: diff's wire mode compares it as a value, a difference (1).
        codes={"validate": {1}, "diff": {1}},
        said={"validate": r"^{file}:5: "},
    ),
    "done-in-the-middle": Case(
        DONE_MIDDLE,
        # --strict: the second stream's first chunk has no role, and chatx adds one.
        {**every(0), "strict": {1}, "validate": {1}, "diff": {1}},
        {
            "convert": r"^chatx: warning: {file}:9: record after \[DONE\]",
            "strict": r"^chatx: error: {file}:9: repaired: ",
            "collect": r"^chatx: warning: {file}:9: record after \[DONE\]",
        },
    ),
    "records-after-done": Case(
        AFTER_DONE,
        {**every(0), "strict": {1}, "validate": {1}, "diff": {1}},
        {"convert": r"^chatx: warning: {file}:17: record after \[DONE\]"},
    ),
    "sse-field-without-colon": Case(
        chat_with(2, CHAT_BLOCKS[2] + b"\nbogus"),
        every(0),
        {"convert": r"^chatx: warning: {file}:6: line ignored: 'bogus' is not an SSE field"},
    ),
    "sse-data-with-a-space-before": Case(
        chat_with(2, b" " + CHAT_BLOCKS[2]),
        {**every(0), "validate": {0, 1}, "diff": {1}},
        {"convert": r"^chatx: warning: {file}:5: line ignored: ' data' .*did you mean 'data'"},
    ),
    "empty-data-field": case(skipped(5, "empty payload"), chat_with(2, b"data")),
    "integer-beyond-64-bits": Case(
        CHAT.replace(b'"created":1767225600', b'"created":123456789012345678901234567890'),
        {**every(0), "diff": {0, 1}},
    ),
    "duplicate-keys": Case(
        CHAT.replace(b'"content":"Hello"', b'"content":"Hello","content":"Bye"'),
        {**every(0), "diff": {1}},
    ),
    "json-array-cut-short": case(
        skipped(1, "half-written"),
        b"[" + b",".join(b[6:] for b in CHAT_BLOCKS[:-1])[:-40],
        said={"diff": r"half-written"},
    ),
}


def _params() -> list[object]:
    out = []
    for name, spec in CASES.items():
        for command in COMMANDS:
            marks = []
            if command in spec.bugs:
                marks.append(pytest.mark.xfail(strict=True, reason=spec.bugs[command]))
            out.append(pytest.param(name, command, marks=marks, id=f"{name}-{command}"))
    return out


def run_file(tmp_path: Path, command: str, data: bytes, name: str = "in.sse") -> Result:
    path = tmp_path / name
    path.write_bytes(data)
    args = [a.replace("{file}", name) for a in COMMANDS[command]]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        return run(args)


@pytest.mark.parametrize(("name", "command"), _params())
def test_bad_input(tmp_path, name, command):
    spec = CASES[name]
    result = run_file(tmp_path, command, spec.data)
    assert_clean(result, spec.codes[command])
    pattern = spec.said.get(command)
    if pattern is not None:
        where = (
            result.err
            if command not in ("validate", "show", "diff")
            else result.err + (result.stdout.decode("utf-8", "replace"))
        )
        assert re.search(pattern.replace("{file}", "in\\.sse"), where, re.M), where
    _stdout_is_data(command, result)


def _stdout_is_data(command: str, result: Result) -> None:
    """stdout holds only what the command makes: a stream, JSON, or its report."""
    if command in ("convert", "strict") and result.stdout:
        _, records = framing.read_records(result.stdout)
        assert all(r.error is None for r in records)
        assert result.stdout.endswith(b"\n\n"), "the last event is complete"
    elif command == "collect" and result.stdout:
        for value in re.split(rb"\n(?=\{)", result.stdout.strip()):
            orjson.loads(value)
    assert b"chatx: " not in result.stdout


# -- the same output whatever the line ends -------------------------------------------------


def _mixed(data: bytes) -> bytes:
    """LF, CRLF and CR in turn; never a CR right before an LF-led end (that is one CRLF)."""
    out, previous = [], b""
    for number, line in enumerate(data.split(b"\n")):
        if number:
            end = (b"\n", b"\r\n", b"\r")[number % 3]
            if previous == b"\r" and end.startswith(b"\n"):
                end = b"\r\n"
            out.append(end)
            previous = end
        out.append(line)
    return b"".join(out)


LINE_ENDS: dict[str, Callable[[bytes], bytes]] = {
    "bom": lambda d: b"\xef\xbb\xbf" + d,
    "crlf": lambda d: d.replace(b"\n", b"\r\n"),
    "cr": lambda d: d.replace(b"\n", b"\r"),
    "bom-crlf": lambda d: b"\xef\xbb\xbf" + d.replace(b"\n", b"\r\n"),
    "mixed": lambda d: _mixed(d),
}


@pytest.mark.parametrize("ends", sorted(LINE_ENDS))
@pytest.mark.parametrize(
    ("source", "data"), [("chat", CHAT), ("responses", RESPONSES), ("llama", LLAMA)]
)
@pytest.mark.parametrize("args", [["convert", "-", "--to", "chat-chunk"], ["collect", "-"]])
def test_line_ends_and_bom_do_not_change_the_output(ends, source, data, args):
    expected = run(args, data)
    got = run(args, LINE_ENDS[ends](data))
    assert_clean(got, {0})
    assert (got.code, got.stdout) == (expected.code, expected.stdout)


# -- what the defined behaviours give ------------------------------------------------------


def test_lenient_convert_keeps_every_good_record(tmp_path):
    """A bad record in the middle: everything else is converted, as without it."""
    bad = run_file(tmp_path, "convert", chat_with(2, b"data: {not json"))
    without = run(["convert", "-", "--to", "responses-event"], chat_with(2, b": dropped"))
    assert bad.code == 2
    assert bad.stdout == without.stdout
    assert re.search(r"^chatx: skipped: in\.sse:5: record skipped: invalid JSON", bad.err, re.M)


def test_every_skipped_record_is_said(tmp_path):
    parts = list(CHAT_BLOCKS)
    parts[1:4] = [b"data: {", b"data: \xff", b"data: [1]"]
    result = run_file(tmp_path, "convert", sse_of(parts))
    assert result.code == 2
    for line in (3, 5, 7):
        assert re.search(rf"^chatx: skipped: in\.sse:{line}: ", result.err, re.M), result.err


def test_strict_stops_at_the_first_bad_record_with_what_came_before(tmp_path):
    result = run_file(tmp_path, "strict", chat_with(3, b"data: {oops"))
    assert result.code == 2
    assert result.err.startswith("chatx: error: in.sse:7: invalid JSON")
    assert result.err.count("\n") == 1, "one error, nothing after it"
    assert b'"delta":","' in result.stdout  # line 5's chunk went out before line 7


def test_integers_beyond_64_bits_are_carried_exactly_and_said():
    big = 2**64  # one more than the largest unsigned 64-bit integer
    data = CHAT.replace(b'"prompt_tokens":12', b'"prompt_tokens":%d' % big)
    result = run(["convert", "-", "--to", "chat-chunk"], data)
    assert result.code == 0, result.err
    assert b'"prompt_tokens":18446744073709551616,' in result.stdout
    assert re.search(
        r"^chatx: warning: <stdin>:\d+: integer beyond 64 bits at usage.prompt_tokens: "
        r"18446744073709551616 is carried exactly",
        result.err,
        re.M,
    ), result.err


def test_duplicate_keys_the_last_one_wins():
    data = CHAT.replace(b'"content":"Hello"', b'"content":"Hello","content":"Bye"')
    result = run(["collect", "-"], data)
    assert result.code == 0
    assert orjson.loads(result.stdout)["choices"][0]["message"]["content"] == "Bye, world!"


def test_nesting_up_to_the_limit_goes_through_every_command():
    # MAX_DEPTH levels in all: the record, its choice list, choice, delta, then the field.
    deep = b'{"a":' * (MAX_DEPTH - 5) + b"1" + b"}" * (MAX_DEPTH - 5)
    data = CHAT.replace(b'"content":"Hello"', b'"content":"Hello","x":' + deep)
    for target in ("chat-chunk", "responses-event", "llama-stack-event"):
        for container in ("sse", "jsonl", "json"):
            result = run(["convert", "-", "--to", target, "--out-container", container], data)
            assert_clean(result, {0})
    for args in (["validate", "-", "--output", "json"], ["show", "-", "--events"],
                 ["collect", "-", "--as", "responses"], ["diff", "-", GOOD, "--all"],
                 ["diff", "-", GOOD, "--output", "json"]):  # fmt: skip
        assert_clean(run(args, data), {0, 1})


def test_half_written_json_array_converts_as_far_as_it_goes():
    elements = [b[6:] for b in CHAT_BLOCKS[:-1]]
    cut = b"[\n" + b",\n".join(elements)[:-30]
    result = run(["convert", "-", "--to", "chat-chunk"], cut)
    assert result.code == 2
    assert re.search(r"^chatx: skipped: <stdin>:8: .*half-written", result.err, re.M)
    assert b'"content":" world"' in result.stdout


# A text delta written after the Responses fixture's terminal event.
LATE_DELTA = (
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
    b'"item_id":"msg_fx1","output_index":0,"content_index":0,"delta":"late",'
    b'"sequence_number":11}\n\n'
)


def test_responses_event_after_the_terminal_event_is_said():
    result = run(["convert", "-", "--to", "responses-event"], RESPONSES + LATE_DELTA)
    assert_clean(result, {0, 2})
    assert re.search(r"^chatx: \w+: <stdin>:34: ", result.err, re.M), result.err


def test_nothing_is_written_after_the_terminal_event():
    result = run(["convert", "-", "--to", "responses-event"], RESPONSES + LATE_DELTA)
    *_, last = (r.data for r in framing.read_records(result.stdout)[1])
    assert last["type"] == "response.completed"


# -- a 100 MB line -------------------------------------------------------------------------

_HEAD = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"'


@pytest.fixture(scope="module")
def huge_line(tmp_path_factory) -> Path:
    """A chat stream whose second event is one 100 MB line (a 100 MB text delta)."""
    path = tmp_path_factory.mktemp("huge") / "in.sse"
    with path.open("wb") as out:
        out.write(CHAT_BLOCKS[0] + b"\n\n")
        out.write(_HEAD)
        piece = b"x" * (1 << 20)
        for _ in range(100):
            out.write(piece)
        out.write(b'"},"finish_reason":null}]}\n\n' + b"\n\n".join(CHAT_BLOCKS[2:]) + b"\n\n")
    return path


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_100_mb_line_is_refused_in_bounded_time(huge_line, command):
    started = time.monotonic()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(huge_line.parent)
        result = run([a.replace("{file}", huge_line.name) for a in COMMANDS[command]])
    assert time.monotonic() - started < 20
    assert_clean(result, {2})
    assert re.search(
        r"^chatx: error: in\.sse:3: a line longer than 64 MiB starts here", result.err, re.M
    ), result.err


def test_a_100_mb_line_is_read_in_bounded_memory(huge_line):
    """convert stops at 64 MiB of the line; it never holds the whole 100 MB."""
    peak, status, _ = peak_rss(["convert", str(huge_line), "-o", "/dev/null"])
    assert status == 2
    assert peak < 200 << 20, f"peak RSS {peak >> 20} MiB"


# -- the line splitter's limit, at a small scale -------------------------------------------


def test_splitter_returns_the_lines_before_a_long_one_then_refuses():
    splitter = LineSplitter(max_line=10)
    assert splitter.split(b"ab\ncd\n0123456") == [b"ab", b"cd"]
    with pytest.raises(LineTooLong) as info:
        splitter.split(b"789a")
    assert (info.value.lines, info.value.offset) == ([], 6)
    with pytest.raises(LineTooLong):
        splitter.split(b"\nmore\n")
    with pytest.raises(LineTooLong):
        splitter.finish()


def test_splitter_long_line_inside_one_chunk():
    splitter = LineSplitter(max_line=10)
    with pytest.raises(LineTooLong) as info:
        splitter.split(b"ok\r\n" + b"y" * 11 + b"\r\nlater\n")
    assert info.value.lines == [b"ok"]


@pytest.mark.parametrize("reader", ["sse", "jsonl"])
def test_reader_says_the_line_of_a_long_line(reader, monkeypatch):
    from chatx import containers

    monkeypatch.setattr(LineSplitter.__init__, "__defaults__", (64,))
    r = containers.get(reader).reader()
    first = b'data: {"a":1}\n\n' if reader == "sse" else b'{"a":1}\n\n'
    records = r.feed(first + b"z" * 100)
    assert [rec.data for rec in records] == [{"a": 1}]
    with pytest.raises(Exception) as info:
        r.feed(b"z")
    assert (info.value.line, info.value.offset) == (3, len(first))


def test_a_codec_bug_loses_one_record_not_the_run(tmp_path, monkeypatch):
    """An exception a codec did not mean: that record is skipped, saying it is a bug."""
    from chatx.codecs.chat_chunk import run_hook

    real = run_hook.ChatRunHook.decode  # what feeds each record in no run to the decoder

    def decode(self, record, raw):  # noqa: ANN001
        if record.line == 5:
            raise TypeError("unhashable type: 'list'")
        return real(self, record, raw)

    monkeypatch.setattr(run_hook.ChatRunHook, "decode", decode)
    for command in ("convert", "collect"):
        result = run_file(tmp_path, command, CHAT)
        assert result.code == 2
        assert re.search(
            r"^chatx: skipped: in\.sse:5: record skipped: internal error: TypeError: "
            r"unhashable type: 'list' \(a bug in chatx: run again with --traceback",
            result.err,
            re.M,
        ), result.err
        assert b"world" in result.stdout  # the records after it are there
    strict = run_file(tmp_path, "strict", CHAT)
    assert strict.code == 70 and "internal error: TypeError" in strict.err
    with pytest.raises(TypeError):
        run([*COMMANDS["convert"][:1], "-", "--traceback"], CHAT)


@pytest.mark.parametrize("mode", ["--wire", "--semantic"])
def test_diff_of_unreadable_records_is_trouble(tmp_path, mode):
    (tmp_path / "a.sse").write_bytes(chat_with(2, b'data: {"x": "\x01 one'))
    (tmp_path / "b.sse").write_bytes(chat_with(2, b'data: {"x": "\x01 two'))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        result = run(["diff", "a.sse", "b.sse", mode])
    assert result.code == 2
    assert re.search(r"^chatx: skipped: a\.sse:5: ", result.err, re.M), result.err


def _responses_with_done_at(block: int) -> bytes:
    parts = blocks(RESPONSES)
    return sse_of([*parts[:block], b"data: [DONE]", *parts[block:]])


_LLAMA = LLAMA.split(b"\n")


@pytest.mark.parametrize(
    ("data", "line"),
    [
        pytest.param(
            _responses_with_done_at(5),
            16,
            id="responses-done-in-the-middle",
        ),
        pytest.param(RESPONSES + b"data: [DONE]\n\n", 34, id="responses-done-at-the-end"),
        pytest.param(b"\n".join([*_LLAMA[:2], b"[DONE]", *_LLAMA[2:]]), 3, id="llama-done"),
        pytest.param(LLAMA + _LLAMA[1] + b"\n", 6, id="llama-after-complete"),
        pytest.param(AFTER_DONE, 17, id="chat-after-done"),
    ],
)
def test_done_and_records_after_the_end_are_said(data, line):
    result = run(["convert", "-", "--to", "chat-chunk"], data)
    assert_clean(result, {0})
    assert re.search(rf"^chatx: \w+: <stdin>:{line}: ", result.err, re.M), result.err


@pytest.mark.parametrize("command", COMMANDS)
def test_an_ignored_sse_line_is_said_by_every_command(tmp_path, command):
    result = run_file(tmp_path, command, chat_with(1, b" " + CHAT_BLOCKS[1]))
    said = result.err + result.stdout.decode("utf-8", "replace")
    assert re.search(r"\b3\b.*line ignored: ' data'", said), said


def test_open_records_lists_the_ignored_lines(tmp_path):
    path = tmp_path / "in.sse"
    path.write_bytes(chat_with(1, b" " + CHAT_BLOCKS[1]) + b"bogus\n\n")
    ignored: list[tuple[int, str]] = []
    container, records, _ = framing.open_records(str(path), None, ignored)
    assert container == "sse" and len(list(records)) == 7
    assert [line for line, _ in ignored] == [3, 17]
    notes = Notes()
    framing.read_records(path.read_bytes(), notes=notes)
    assert [(n.kind, n.line) for n in notes.items] == [("warning", 3), ("warning", 17)]

"""Nothing becomes empty without a word: a choice the stream does not have, a ``--from``
the input is not, input of nothing but ``[DONE]``."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatx import pipeline
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from tests.builders.chat_chunk import chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.inprocess import run
from tests.streams import CHAT, RESPONSES, sse

LLAMA = "llama-stack-event"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CHAT_FILE = FIXTURES / CHAT / "text.sse"
RESPONSES_FILE = FIXTURES / RESPONSES / "text.sse"
LLAMA_FILE = FIXTURES / LLAMA / "text.jsonl"

TWO_CHOICES = sse(
    [
        chunk(
            choices=[
                {"index": 0, "delta": {"role": "assistant", "content": "a"}},
                {"index": 1, "delta": {"role": "assistant", "content": "b"}},
            ]
        ),
        chunk({}, "stop", 0),
        chunk({}, "stop", 1),
    ]
)
ONE_CHOICE = sse(chat_text("hello"))
ERROR_ONLY = sse([{"error": {"message": "overloaded", "type": "server_error"}}], done=False)


# -- --choice N for a choice the stream does not have ----------------------------------


@pytest.mark.parametrize("dst", [CHAT, RESPONSES, LLAMA])
def test_a_missing_choice_is_an_error_naming_the_choices_there_are(dst):
    with pytest.raises(InputError) as caught:
        pipeline.convert(TWO_CHOICES, dst=dst, choice=5)
    assert str(caught.value).startswith("<input>: the stream has no choice 5: its choices are 0, 1")


def test_a_one_choice_stream_says_its_only_choice():
    for data in (ONE_CHOICE, ResponsesBuilder().message("hi").end().bytes()):
        with pytest.raises(InputError, match="no choice 1: its only choice is 0"):
            pipeline.convert(data, dst=RESPONSES, choice=1)


def test_choices_the_stream_has_still_convert():
    one = pipeline.convert(TWO_CHOICES, dst=RESPONSES, choice=1)
    assert b'"delta":"b"' in one and b'"delta":"a"' not in one
    assert pipeline.convert(ONE_CHOICE, dst=RESPONSES, choice=0) == pipeline.convert(
        ONE_CHOICE, dst=RESPONSES
    )


def test_a_stream_without_choices_is_choice_zero_and_nothing_else():
    """An error frame alone has no choice: --choice 0 converts the error it says."""
    out = pipeline.convert(ERROR_ONLY, dst=RESPONSES, choice=0)
    assert b"overloaded" in out
    assert out == pipeline.convert(ERROR_ONLY, dst=RESPONSES)
    with pytest.raises(InputError, match="no choice 1: it has no choices"):
        pipeline.convert(ERROR_ONLY, dst=RESPONSES, choice=1)


@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_cli_missing_choice_exits_2_naming_the_choices(strict):
    result = run(["convert", "--to", RESPONSES, "--choice", "3", *strict], TWO_CHOICES)
    assert result.code == 2, result.err
    assert "chatx: error: <stdin>: the stream has no choice 3: its choices are 0, 1" in result.err
    assert b"response.completed" not in result.stdout  # no clean ending for nothing


# -- --from F on input that is not F ----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "src", "looks"),
    [
        (LLAMA_FILE, CHAT, LLAMA),
        (LLAMA_FILE, RESPONSES, LLAMA),
        (RESPONSES_FILE, CHAT, RESPONSES),
        (RESPONSES_FILE, LLAMA, RESPONSES),
        (CHAT_FILE, RESPONSES, CHAT),
        (CHAT_FILE, LLAMA, CHAT),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_cli_from_a_format_the_input_is_not_exits_2_saying_what_it_is(path, src, looks):
    result = run(["convert", str(path), "--from", src, "--to", RESPONSES])
    assert result.code == 2, result.err
    assert result.err.startswith(
        f"chatx: error: {path}:1: the input is not {src}: it looks like {looks}"
    ), result.err
    assert len(result.err.splitlines()) == 1, "one error, not a line per record"
    assert result.stdout == b""
    assert "lost:" not in result.err


def test_library_convert_from_a_format_the_input_is_not_raises():
    with pytest.raises(InputError, match="the input is not chat-chunk: it looks like llama"):
        pipeline.convert(LLAMA_FILE.read_bytes(), dst=CHAT, src=CHAT)
    with pytest.raises(InputError, match="the input is not responses-event: it looks like chat"):
        pipeline.convert(CHAT_FILE.read_bytes(), dst=CHAT, src=RESPONSES)


def test_input_no_format_knows_is_not_the_named_one_either():
    data = sse([{"hello": "world"}, {"foo": 1}], done=False)
    with pytest.raises(InputError) as caught:
        pipeline.convert(data, dst=RESPONSES, src=CHAT)
    assert str(caught.value).startswith(
        "<input>:1: the input is not chat-chunk: none of its first records is one of its events"
    )


def test_the_named_format_may_start_after_a_bad_record():
    """The verdict looks at the first records, not only the first: a half-written first
    line is skipped, as without --from."""
    data = b'data: {"id": "chatcmpl-x", "obj\n\n' + ONE_CHOICE
    notes = Notes()
    out = pipeline.convert(data, dst=RESPONSES, src=CHAT, notes=notes)
    assert b"hello" in out
    assert [n.kind for n in notes.items] == ["skipped"]


def test_a_named_format_that_fits_streams_from_the_first_record():
    first = ONE_CHOICE.split(b"\n\n")[0] + b"\n\n"
    assert Transcoder(RESPONSES, src=CHAT).feed(first).startswith(b"event: response.created")


# -- [DONE] and nothing else ---------------------------------------------------------------


@pytest.mark.parametrize("dst", [CHAT, RESPONSES, LLAMA])
@pytest.mark.parametrize("data", [b"data: [DONE]\n\n", b"data: [DONE]\n\ndata: [DONE]\n\n"])
def test_input_of_only_done_gets_a_warning(data, dst):
    notes = Notes()
    pipeline.convert(data, dst=dst, notes=notes)
    assert [(n.kind, n.message, n.line) for n in notes.summary()] == [
        ("warning", "the input holds only data: [DONE]: no events", 1)
    ]


def test_cli_input_of_only_done_warns():
    result = run(["convert", "--to", RESPONSES], b"data: [DONE]\n\n")
    assert "chatx: warning: <stdin>:1: the input holds only data: [DONE]: no events" in result.err


def test_a_stream_with_events_gets_no_such_warning():
    notes = Notes()
    pipeline.convert(ONE_CHOICE, dst=CHAT, notes=notes)
    assert not any("only data: [DONE]" in n.message for n in notes.summary())

"""The library API: misuse is a TypeError or ValueError in plain words, bytes-like input
is taken, ``str`` is refused with what to do, a Transcoder converts one stream, and input
held in memory is called ``<input>`` wherever an error or note names it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import chatx
from chatx import EncodeOptions, Notes, Transcoder, pipeline
from chatx.errors import InputError, UsageError
from tests.builders.chat_chunk import chat_text
from tests.inprocess import run
from tests.streams import CHAT, RESPONSES, sse

BODY = sse(chat_text("Hello", " there"))
EXPECTED = pipeline.convert(BODY, dst=RESPONSES)


def feed_once(data: Any) -> bytes:
    transcoder = Transcoder(RESPONSES)
    return transcoder.feed(data) + transcoder.finish()


TAKERS: dict[str, Callable[[Any], Any]] = {
    "convert": lambda data: chatx.convert(data, dst=RESPONSES),
    "Transcoder.feed": feed_once,
    "read_records": chatx.read_records,
    "decode": lambda data: list(chatx.decode(data)),
    "validate": chatx.validate,
    "diff": lambda data: chatx.diff(data, data).same,
}


@pytest.mark.parametrize("kind", [bytearray, memoryview])
@pytest.mark.parametrize("name", list(TAKERS))
def test_bytes_like_input_is_taken_as_bytes(name, kind):
    take = TAKERS[name]
    assert repr(take(kind(BODY))) == repr(take(BODY))


def test_bytes_like_input_converts_to_the_same_bytes():
    assert chatx.convert(bytearray(BODY), dst=RESPONSES) == EXPECTED
    assert chatx.convert(memoryview(BODY), dst=RESPONSES) == EXPECTED
    assert feed_once(memoryview(BODY)) == EXPECTED


@pytest.mark.parametrize("name", list(TAKERS))
def test_str_is_refused_saying_to_encode_it(name):
    with pytest.raises(TypeError, match=r"takes bytes, not str.*encode"):
        TAKERS[name](BODY.decode())


@pytest.mark.parametrize("value", [None, 42, 1.5])
@pytest.mark.parametrize("name", list(TAKERS))
def test_values_that_are_no_stream_are_type_errors(name, value):
    with pytest.raises(TypeError, match=type(value).__name__):
        TAKERS[name](value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: chatx.convert(BODY, dst="no-such"),
        lambda: chatx.convert(BODY, dst=RESPONSES, src="no-such"),
        lambda: chatx.convert(BODY, dst=RESPONSES, container="no-such"),
        lambda: Transcoder("no-such"),
        lambda: chatx.validate(BODY, "no-such"),
        lambda: chatx.decode(BODY, "no-such"),
        lambda: Transcoder(RESPONSES, choice=-1),
    ],
    ids=["dst", "src", "container", "Transcoder", "validate", "decode", "choice"],
)
def test_impossible_values_are_value_errors(call):
    with pytest.raises(ValueError, match=r"no-such|0 or more") as caught:
        call()
    assert "Traceback" not in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"choice": "1"}, "choice is a choice index \\(int\\), not str"),
        ({"choice": True}, "not bool"),
        ({"options": {"reasoning": "text"}}, "options is a chatx.EncodeOptions, not dict"),
        ({"notes": []}, "notes is a chatx.Notes, not list"),
        ({"name": 3}, "name is the input's name"),
    ],
)
def test_arguments_of_the_wrong_type_are_type_errors(kwargs, says):
    with pytest.raises(TypeError, match=says):
        Transcoder(RESPONSES, **kwargs)


def test_a_format_name_that_is_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="a format is named by a string, not NoneType"):
        chatx.convert(BODY, dst=None)  # type: ignore[arg-type]


def test_the_right_arguments_are_taken():
    out = Transcoder(RESPONSES, choice=0, options=EncodeOptions(), notes=Notes(), name="x")
    assert out.feed(BODY) + out.finish() == EXPECTED
    assert chatx.validate(BODY, "chat") == chatx.validate(BODY, CHAT) == []  # aliases too


def test_feed_after_finish_raises():
    transcoder = Transcoder(RESPONSES)
    transcoder.feed(BODY)
    transcoder.finish()
    with pytest.raises(ValueError, match=r"feed\(\) after finish\(\)"):
        transcoder.feed(b"data: [DONE]\n\n")
    with pytest.raises(ValueError, match=r"finish\(\) called twice"):
        transcoder.finish()


def test_convert_from_a_format_the_input_is_not_raises_instead_of_returning_nothing():
    with pytest.raises(InputError, match="the input is not responses-event: it looks like chat"):
        chatx.convert(BODY, dst=CHAT, src=RESPONSES)


# -- one name for input held in memory ---------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: chatx.convert(b"", dst=RESPONSES),
        lambda: chatx.convert(b"hello\n", dst=RESPONSES),
        lambda: chatx.convert(b'data: {"x": 1}\n\n', dst=RESPONSES),
        lambda: chatx.convert(BODY, dst=RESPONSES, src="responses-event"),
        lambda: feed_once(b'data: {"x": 1}\n\n'),
        lambda: chatx.read_records(b"hello\n"),
        lambda: list(chatx.decode(b'data: {"x": 1}\n\n')),
        lambda: chatx.validate(b'data: {"x": 1}\n\n'),
    ],
    ids=["empty", "not-a-stream", "unknown", "not-src", "transcoder", "read", "decode", "validate"],
)
def test_errors_about_input_in_memory_name_it_input(call):
    with pytest.raises(InputError) as caught:
        call()
    assert str(caught.value).startswith("<input>"), str(caught.value)


def test_a_transcoder_without_a_name_says_input():
    with pytest.raises(UsageError, match="^<input>: the stream has several"):
        Transcoder(RESPONSES).feed(
            sse([{"object": "chat.completion.chunk", "choices": [{"index": 1, "delta": {}}]}])
            + sse([{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}}]}])
        )


def test_stdin_is_still_stdin():
    result = run(["convert", "--to", RESPONSES], b'data: {"x": 1}\n\n')
    assert result.code == 2
    assert result.err.startswith("chatx: error: <stdin>:1: "), result.err

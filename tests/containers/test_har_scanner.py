"""The HAR scanner: orjson finds where each entry ends (a window up to where the next
likely opens), the masked bracket scan when orjson cannot say; every entry comes out as
``json.loads`` reads it, whatever the reads, the windows and the bytes inside strings."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from chatx.containers import har
from chatx.errors import InputError
from tests.containers import make_fixtures as made


def scanned(data: bytes, block: int | None = None) -> list[Any]:
    class Slow(io.BytesIO):
        def read1(self, size: int | None = -1) -> bytes:
            size = -1 if size is None else size
            return super().read1(size if block is None or size < 0 else min(size, block))

    return [item for _, item in har._Scanner(Slow(data)).entries()]


def entry(text: str, **more: Any) -> dict[str, Any]:
    return made.har_entry("POST", "https://e.test/v1", {"q": text}, 200,
                          {"mimeType": "text/plain", "text": text}, **more)  # fmt: skip


# Strings that look like an entry's end from inside (a string ending in '}, {'), escaped
# backslashes before a closing quote, quotes and brackets in bodies, text that is not
# ASCII (orjson counts characters, the scanner bytes), empty and nested entries.
TRICKY = [
    entry("ends like a boundary }, {"),
    entry("a backslash at the end \\"),
    entry('\\"}, {"quoted": [1, 2]}, {"'),
    entry('ünïcødé 😀 before }, {" and after'),
    {},
    entry('data: {"a":[{"b":1},{"c":"}]"}]}\n\n' * 50),
    {
        "request": {"headers": [{"name": "a", "value": "b"}, {"name": "c", "value": "}, {"}]},
        "response": {"content": {"text": "x" * 5000}},
    },
    entry("last"),
]


def document(entries: list[Any], indent: int | None = None) -> bytes:
    log = {"log": {"version": "1.2", "pages": [{"id": "p", "x": '}, {"'}], "entries": entries}}
    return json.dumps(log, indent=indent, ensure_ascii=False).encode()


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("window", [1, 64, 1 << 20])
def test_every_entry_as_json_reads_it(
    indent: int | None, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(har, "_WINDOW", window)
    data = document(TRICKY, indent)
    assert scanned(data) == TRICKY
    for block in (1, 2, 3, 5, 17, 256, 4099):
        monkeypatch.setattr(har, "_BLOCK", block)
        assert scanned(data, block) == TRICKY, block


def test_bad_utf8_in_a_later_entry_is_that_entry_s_error() -> None:
    # orjson checks a window's UTF-8 before parsing it: the bad byte is in entry 2, and
    # the window of entry 1 reaches it; entry 1 still comes out, entry 2 is the error.
    good = document([entry("one"), entry("two"), entry("BAD"), entry("four")], 2)
    data = good.replace(b"BAD", b"B\xffD")
    read = har._Scanner(io.BytesIO(data)).entries()
    assert [next(read)[1], next(read)[1]] == [entry("one"), entry("two")]
    with pytest.raises(InputError) as caught:
        next(read)
    assert caught.value.message.startswith("not valid JSON in log.entries[2]: ")
    assert caught.value.message.endswith("not valid UTF-8: surrogates not allowed")
    # orjson says a bad byte is at the start of what it was given: the entry's first line
    opened = [line for line, _ in har._Scanner(io.BytesIO(good)).entries()][2]
    assert caught.value.line == opened == 57
    assert data.split(b"\n")[opened - 1].strip() == b"{"


def test_an_error_after_text_that_is_not_ascii_says_its_line() -> None:
    # orjson says where in characters; the line is its own count, not bytes counted that far
    text = "é" * 3000
    data = document([entry("ok"), {"a": text, "b": [1, 2], "c": "unquoted"}], 2)
    data = data.replace(b'"unquoted"', b"unquoted")
    with pytest.raises(InputError) as caught:
        list(har.entries(io.BytesIO(data)))
    assert caught.value.message.startswith("not valid JSON in log.entries[1]: ")
    assert caught.value.line == data[: data.index(b": unquoted")].count(b"\n") + 1


def test_python_work_per_entry_does_not_grow_with_what_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A browser's HAR gives each entry dozens of headers (two strings and an object each),
    # and a body dense with escapes: the scanner steps over none of them in Python, its
    # regular expressions are called a few times an entry (it was once per string).
    calls = []

    class Counted:
        def __init__(self, pattern: re.Pattern[bytes]) -> None:
            self.pattern = pattern

        def search(self, *args: Any) -> Any:
            calls.append(self.pattern.pattern)
            return self.pattern.search(*args)

        def match(self, *args: Any) -> Any:
            calls.append(self.pattern.pattern)
            return self.pattern.match(*args)

    for name, value in vars(har).copy().items():
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(har, name, Counted(value))
    headers = [{"name": f"x-header-{i}", "value": f"value {i}"} for i in range(300)]
    body = "".join(
        f'data: {{"choices":[{{"delta":{{"content":"w{i}"}}}}]}}\n\n' for i in range(3000)
    )
    entries = [entry(body, headers=headers)] * 20
    read = list(har.entries(io.BytesIO(document(entries, 2))))
    assert [e.body() for e in read] == [body.encode()] * len(entries)
    assert len(calls) <= 8 * len(entries), len(calls)  # 600 strings an entry

"""Runs written from a byte template (:class:`chatx.codecs.byte_template.PayloadTemplate`)
held to the dicts an encoder builds without one: a case is converted with the templates
refused (every record a dict, the path before) and as the CLI converts it, and the two
must give the same bytes and notes. The records written from a template are counted, so
that a case says which path it took."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from unittest import mock

import pytest

from chatx.codecs.byte_template import PayloadTemplate
from chatx.record import Dumped
from tests.captures import capture_params
from tests.streams import fed


@contextmanager
def copied() -> Iterator[None]:
    """Every encoder writes each run's records as dicts, as without templates."""
    with mock.patch.object(PayloadTemplate, "of", classmethod(lambda cls, *args, **kwargs: None)):
        yield


def convert(body: bytes, size: int, dst: str, **setup: Any) -> tuple[bytes, list[str], int]:
    """The output of ``body`` into ``dst`` fed ``size`` bytes at a time, its notes, and
    how many records the encoder wrote from a template."""
    written = 0
    write = PayloadTemplate.write

    def counted(self: PayloadTemplate, *args: Any, **kwargs: Any) -> list[Any]:
        nonlocal written
        out = write(self, *args, **kwargs)
        written += sum(len(p.payloads) for p in out if type(p) is Dumped)
        return out

    with mock.patch.object(PayloadTemplate, "write", counted):
        out, notes, _ = fed(body, range(0, len(body), size), dst, **setup)
    return out, notes, written


def same_as_copied(
    body: bytes,
    dst: str,
    sizes: tuple[int, ...] = (7,),
    *,
    before: Callable[[], AbstractContextManager[None]] = copied,
    **setup: Any,
) -> int:
    """Assert the whole body and each block size give the output and notes of the path
    without templates (``before``: the dicts, or an encoder's own longer way); the
    records written from a template in 4096-byte blocks (the records of the first block
    are parsed one by one: the format is not known yet, and so is a body fed whole)."""
    templated = 0
    for size in (len(body) or 1, 4096, *sizes):
        with before():
            old = convert(body, size, dst, **setup)
        assert old[2] == 0
        got = convert(body, size, dst, **setup)
        assert got[:2] == old[:2], size
        if size == 4096:
            templated = got[2]
    return templated


# Texts a template's holes must write as orjson writes them: quotes, backslashes and
# commas where one dumps of a run's strings is cut, controls, line separators, emoji,
# `%` (the template is a % format), halves of surrogate pairs (mended by the readers, or
# records of their own) and escapes written as text.
ADVERSARIAL = [
    'a "quoted" word',
    '": "x",',
    '"',
    "\\",
    '","',
    '\\","',
    "back\\slash \\n not a newline",
    "control \x00\x01\x1f\x7f and \t\n\r",
    "line\u2028separator\u2029",
    "emoji \U0001f600 and \U0001f469\u200d\U0001f4bb",
    "",
    "%s %% %d %(x)s",
    "\ud83d",  # half a pair, the other half next
    "\ude00 after",
    "lone \udc00 low",
    "lone high \ud800",
    "é ü 中文 \u00a0",
    "\\u00e9 written as text",
    "</script>",
]


def strewn(count: int, ascii: bool = True, more: tuple[str, ...] = ()) -> list[str]:
    """``count`` words with the :data:`ADVERSARIAL` texts (and ``more``) among them, apart
    and then next to each other; without the halves of surrogate pairs unless ``ascii``
    (raw UTF-8 cannot hold one)."""
    texts = [f" w{n}" for n in range(count)]
    odd = [*ADVERSARIAL, *more]
    for k, text in enumerate(odd):
        texts[40 + 7 * k] = text
        texts[count - len(odd) - 20 + k] = text
    if not ascii:
        texts = [t for t in texts if not any(0xD800 <= ord(c) < 0xE000 for c in t)]
    return texts


def captures_of(sources: tuple[str, ...]) -> list[Any]:
    """A ``pytest.param`` for every capture of each of ``sources``, named by format/file."""
    return [
        pytest.param(*param.values, id=f"{source}/{param.id}", marks=param.marks)
        for source in sources
        for param in capture_params(source)
    ]


class Target:
    """A target's conversions for the tests of its templates: :func:`convert` into
    ``dst``, and :func:`same_as_copied` against ``before`` (the dicts, or the
    encoder's own longer way)."""

    def __init__(
        self, dst: str, before: Callable[[], AbstractContextManager[None]] = copied
    ) -> None:
        self.dst = dst
        self.before = before

    def convert(self, body: bytes, size: int, **setup: Any) -> tuple[bytes, list[str], int]:
        return convert(body, size, self.dst, **setup)

    def same(self, body: bytes, sizes: tuple[int, ...] = (7,), **setup: Any) -> int:
        return same_as_copied(body, self.dst, sizes, before=self.before, **setup)

    def same_in_every_container(self, body: bytes) -> None:
        """:meth:`same` written as SSE (whole, and in 4096- and 7-byte blocks), JSON lines
        and one JSON array."""
        self.same(body)
        for container in CONTAINERS[1:]:
            self.same(body, sizes=(), out_container=container)


CONTAINERS = (None, "jsonl", "json")  # what --out-container writes: SSE (the default) and two


def chat_sse(head: dict[str, Any], choices: list[dict[str, Any]], ascii: bool = True) -> bytes:
    """A chat stream of one chunk a choice (``head`` its other fields), compact as most
    servers write it, escaped as ``json.dumps`` escapes when ``ascii`` (a lone surrogate
    as ``\\udXXX``; raw UTF-8 otherwise), and ``[DONE]``."""
    lines = [
        "data: "
        + json.dumps({**head, "choices": [c]}, ensure_ascii=ascii, separators=(",", ":"))
        + "\n\n"
        for c in choices
    ]
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8", "surrogatepass")

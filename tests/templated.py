"""Runs written from a byte template (:class:`chatx.codecs.byte_template.PayloadTemplate`)
held to the dicts an encoder builds without one: a case is converted with the templates
refused (every record a dict, the path before) and as the CLI converts it, and the two
must give the same bytes and notes. The records written from a template are counted, so
that a case says which path it took."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from chatx.codecs.byte_template import PayloadTemplate
from chatx.record import Dumped
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


def same_as_copied(body: bytes, dst: str, sizes: tuple[int, ...] = (7,), **setup: Any) -> int:
    """Assert the whole body and each block size give the dicts' output and notes; the
    records written from a template in 4096-byte blocks (the records of the first block
    are parsed one by one: the format is not known yet, and so is a body fed whole)."""
    templated = 0
    for size in (len(body) or 1, 4096, *sizes):
        with copied():
            before = convert(body, size, dst, **setup)
        assert before[2] == 0
        got = convert(body, size, dst, **setup)
        assert got[:2] == before[:2], size
        if size == 4096:
            templated = got[2]
    return templated

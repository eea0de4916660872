"""A source's runs into its own format written as their input bytes
(``chatx.codecs.as_input.AsInput``), held to the path before: each case converted as the
CLI does it and with every run's records replayed (``DeltaRun.replay``), whole and in
small blocks, must give the same bytes and notes. The encoder counts the records it
wrote as their input bytes (``AsInput.written_as_input``), so a case says which path it
took."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import orjson
from hypothesis import strategies as st

from chatx.codecs.as_input import AsInput
from tests.streams import fed


@contextmanager
def replayed() -> Iterator[None]:
    """The encoder replays a source's runs record by record, as before."""

    def replay(self: AsInput, run: Any) -> list[Any]:
        return run.replay(self.feed, self.notes)

    with mock.patch.object(AsInput, "write", replay):
        yield


def convert(body: bytes, size: int, dst: str, **setup: Any) -> tuple[bytes, list[str], int]:
    """The output of ``body`` into ``dst`` fed ``size`` bytes at a time, its notes, and
    how many records the encoder wrote as their input bytes."""
    out, notes, encoder = fed(body, range(0, len(body), size), dst, **setup)
    inputs = getattr(encoder, "inputs", None)
    return out, notes, inputs.written_as_input if isinstance(inputs, AsInput) else 0


def same_as_replayed(
    body: bytes, dst: str, sizes: tuple[int, ...] = (4096, 7, 64), **setup: Any
) -> int:
    """Assert every block size gives the replayed output and notes; the records written
    as their input bytes, at the last size."""
    with replayed():
        expected = convert(body, len(body) or 1, dst, **setup)
        assert expected[2] == 0
    copied = 0
    for size in (len(body) or 1, *sizes):
        with replayed():
            before = convert(body, size, dst, **setup)
        got = convert(body, size, dst, **setup)
        assert got[:2] == before[:2] == expected[:2], size
        copied = got[2]
    return copied


def escaped(text: str) -> bytes:
    """``text`` as a JSON string with every character a \\u escape (surrogate pairs for
    those beyond the BMP): the bytes a provider may write for the same text."""
    units = text.encode("utf-16-be")
    pairs = [units[i : i + 2].hex() for i in range(0, len(units), 2)]
    return b'"' + "".join(f"\\u{unit}" for unit in pairs).encode() + b'"'


def strings_written(alphabet: str) -> st.SearchStrategy[list[bytes]]:
    """JSON strings of texts of ``alphabet``, each written as orjson writes it or with
    every character a \\u escape (:func:`escaped`)."""
    text = st.text(alphabet=alphabet, min_size=1)
    one = st.one_of(text.map(orjson.dumps), text.map(escaped))
    return st.lists(one, min_size=1, max_size=30)

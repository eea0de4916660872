"""A source's runs into its own format written as their input bytes, where those are
what the encoder's ``feed`` would write of each record: a long stream goes out as it
came, without a dict built and dumped a record (the others of a run are replayed through
``feed``). An encoder that has it (Gemini's, Llama Stack's) says which of its state the
records' bytes depend on, and when a run cannot go out so (:class:`AsInput`'s ``state``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import replace
from itertools import accumulate
from operator import is_
from typing import Any

import orjson

from chatx import ir
from chatx.codecs.byte_template import TEXT
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.record import Dumped

_STAND_IN = orjson.dumps(TEXT)  # the JSON string of a text's stand-in


def _escaped(raws: list[bytes], around: tuple[bytes, bytes]) -> list[int]:
    """Which of ``raws`` (each the bytes ``around`` a JSON string) have a backslash in
    that string: found in all of them joined, where the bytes around it have none."""
    fixed = around[0].count(b"\\") + around[1].count(b"\\")
    if fixed:
        return [k for k, raw in enumerate(raws) if raw.count(b"\\") != fixed]
    blob = b"".join(raws)
    at = blob.find(b"\\")
    if at < 0:
        return []
    ends = list(accumulate(map(len, raws)))
    found: list[int] = []
    while at >= 0:
        k = bisect_right(ends, at)
        found.append(k)
        at = blob.find(b"\\", ends[k])
    return found


class AsInput:
    """Writes a source's run into its own format: ``feed`` is the encoder's, which writes
    a record the long way; ``state(run)`` the encoder's state that what ``feed`` writes
    of the run's records depends on, each part compared by identity (None: the run
    cannot go out as its input, and is replayed). ``feed`` must write a record of a run
    without changing that state, as a probe's record is fed to learn its bytes."""

    __slots__ = ("checked", "feed", "notes", "state", "written_as_input")

    def __init__(
        self,
        notes: Notes,
        feed: Callable[[list[ir.Event]], list[Any]],
        state: Callable[[DeltaRun], tuple[Any, ...] | None],
    ) -> None:
        self.notes = notes
        self.feed = feed
        self.state = state
        self.written_as_input = 0  # records that went out as their input bytes (tests count)
        self.checked: tuple[Any, ...] = ()  # what _writes_around found true last

    def write(self, run: DeltaRun) -> list[Any]:
        """A source's run: each record as its input bytes (the records between two
        replayed ones in one :class:`~chatx.record.Dumped`, which the writers frame as
        they are) where those are what ``feed`` writes of it, the others replayed. feed
        writes the bytes around the text's JSON string as they came
        (:meth:`_writes_around`); the string's bytes are the text as orjson writes it
        when they hold no backslash (no escape: no control character, quote or
        backslash in the text, and orjson escapes nothing else), and one with a
        backslash is compared with orjson's: an escape orjson would not write
        (``\\u00e9`` for é, ``\\/``) has its record replayed."""
        raws, around = run.raws, run.around
        if raws is None or around is None or not self._writes_around(run, around):
            return run.replay(self.feed, self.notes)
        if {*map(type, raws)} != {bytes}:
            raws = [bytes(raw) for raw in raws]  # a line begun in an earlier block
        head, tail = len(around[0]), len(around[1])
        dumps, texts = orjson.dumps, run.texts
        out: list[Any] = []
        kept, start = len(raws), 0  # start: the first record not written yet
        for k in _escaped(raws, around):
            raw = raws[k]
            if dumps(texts[k]) != raw[head : len(raw) - tail]:
                if start < k:
                    out.append(Dumped(None, raws[start:k]))
                self.notes.line = run.lines[k]
                out += self.feed(run.batch(k))
                kept -= 1
                start = k + 1
        if start < len(raws):
            out.append(Dumped(None, raws[start:]))
        self.written_as_input += kept
        return out

    def _writes_around(self, run: DeltaRun, around: tuple[bytes, bytes]) -> bool:
        """Whether ``feed`` writes each record of ``run`` as one chunk, the bytes
        ``around`` its text's JSON string: what it writes of the record with a stand-in
        for its text, cut there (feed places the text in that chunk and reads nothing
        else of it). The last answer is kept for the same run's template and state (a
        stream read a few records at a time makes many short runs)."""
        state = self.state(run)
        if state is None:
            return False
        key: tuple[Any, ...] = (run.proto, run.before, run.after, run.tail, around, *state)
        if len(key) == len(self.checked) and all(map(is_, key, self.checked)):
            return True
        probe = replace(run, texts=[TEXT], obfuscations=[None], lines=run.lines[:1], payloads=None)
        out = self.feed(probe.batch(0))  # of a plain record of its own, feed says no note
        if len(out) != 1:
            return False
        try:
            blob = orjson.dumps(out[0])
        except TypeError:
            return False
        head, text, tail = blob.partition(_STAND_IN)
        if (head, tail) != around or _STAND_IN in tail or not text:
            return False
        self.checked = key
        return True

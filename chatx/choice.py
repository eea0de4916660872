"""Which lanes reach the encoder: ``--choice N``, and the one lane of a one-lane target.

A decoder's events are its own: it may keep one and hand it on again (the shared residue
of a run of chunks), so a lane is renumbered on a copy, never in place. Runs
(:class:`~chatx.codecs.template.DeltaRun`) go through as runs, so ``--choice`` keeps
their speed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from chatx import ir
from chatx.arguments import missing_choice
from chatx.codecs.base import Codec
from chatx.codecs.template import DeltaRun
from chatx.drive import Drive
from chatx.errors import UsageError


class Lanes:
    """Keeps lane ``choice`` only, said as lane 0 (``--choice``); without a choice,
    refuses a second lane when the target holds one (``target.single_lane``).

    ``seen`` are the lanes the stream opened so far. A stream that ends without the
    chosen one sets ``drive.error``: what came before is written, then it is the error.
    """

    __slots__ = ("choice", "drive", "name", "seen", "target")

    def __init__(self, choice: int | None, target: Codec, name: str, drive: Drive) -> None:
        self.choice = choice
        self.target = target
        self.name = name
        self.drive = drive
        self.seen: set[int] = set()

    def select(self, events: list[ir.Event]) -> list[ir.Event]:
        """The events of ``events`` that go on."""
        if self.choice is None:
            if self.target.single_lane:
                self._one_lane(events)
            return events
        return self._chosen(events, self.choice)

    def select_run(self, run: DeltaRun) -> DeltaRun | None:
        """``run`` as it goes on, or None when its lane does not (its records' residue
        of no lane, ``run.before``, still does: the caller hands it on record by record).
        A run has no LaneStart, so without ``--choice`` there is nothing to check."""
        choice = self.choice
        if choice is None or run.lane == choice == 0:
            return run
        return run.on_lane(0) if run.lane == choice else None

    def _one_lane(self, events: list[ir.Event]) -> None:
        seen = self.seen
        for event in events:
            # Every lane opens with LaneStart (decoders say so before anything else of
            # the lane), so only those need a look.
            if type(event) is ir.LaneStart and event.lane not in seen:
                seen.add(event.lane)
                if len(seen) > 1:
                    raise UsageError(
                        f"{self.name}: the stream has several choices and "
                        f"{self.target.name} holds one: pass --choice N"
                    )

    def _chosen(self, events: list[ir.Event], choice: int) -> list[ir.Event]:
        kept: list[ir.Event] = []
        for event in events:
            if type(event) is ir.LaneStart:
                self.seen.add(event.lane)
            elif type(event) is ir.StreamEnd and choice not in self.seen:
                # The stream ends without the choice: no clean ending is written for it.
                missing = missing_choice(choice, self.seen, self.name)
                if missing is not None:
                    self.drive.error = missing
                    break
            lane = getattr(event, "lane", None)
            if lane is None:
                kept.append(event)
            elif lane == choice:
                kept.append(event if lane == 0 else _first_lane(event))
        return kept


def _first_lane(event: Any) -> ir.Event:
    """A copy of ``event`` (an event of one lane) said on lane 0."""
    return replace(event, lane=0)

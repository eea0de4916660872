"""What the Gemini encoder and its parts share: the response being written and the
chunk a batch builds."""

from __future__ import annotations

from typing import Any

from .records import response_fields


class Call:
    """A tool call being written: its name, id and the arguments so far; ``part`` is the
    part already placed (a Gemini source's call, written where it came)."""

    __slots__ = ("name", "id", "fragments", "ended", "part", "extra")

    def __init__(self, name: str | None, call_id: str | None) -> None:
        self.name = name
        self.id = call_id
        self.fragments: list[str] = []
        self.ended = False
        self.part: dict[str, Any] | None = None
        self.extra: dict[str, Any] = {}


class GeminiBatch:
    """The chunk one batch builds: each lane's parts and finish word, the candidates a
    Gemini source's residue closed, the usage, the chunk's own residue."""

    __slots__ = ("parts", "finish", "closed", "usage", "top", "record", "out")

    def __init__(self) -> None:
        self.parts: dict[int, list[dict[str, Any]]] = {}
        self.finish: dict[int, str] = {}
        self.closed: list[dict[str, Any]] = []  # candidates closed by their Meta (own)
        self.usage: dict[str, Any] | None = None
        self.top: dict[str, Any] | None = None  # the chunk's residue (own): one chunk
        self.record = False  # a Gemini source's chunk stands behind this batch
        self.out: list[Any] = []

    def lane_parts(self, lane: int) -> list[dict[str, Any]]:
        parts = self.parts.get(lane)
        if parts is None:
            parts = self.parts[lane] = []
        return parts


class GeminiWritten:
    """The response being written: its id, model and time, the lanes started and
    finished, the signatures waiting for a part, the calls being written, the finishing
    chunk held for the usage that may follow it, the losses said once."""

    __slots__ = (
        "own",
        "id",
        "model",
        "create",
        "lanes",
        "finished",
        "signatures",
        "calls",
        "usage",
        "held",
        "failed",
        "shown",
        "said",
    )

    def __init__(self, own: bool) -> None:
        self.own = own
        self.said: set[str] = set()
        self.restart("", None, None)

    def restart(self, sid: str, model: str | None, create: Any) -> None:
        self.id = sid
        self.model = model
        self.create = create
        self.lanes: set[int] = set()
        self.finished: set[int] = set()
        self.signatures: dict[int, str] = {}
        self.calls: dict[tuple[int, int], Call] = {}
        self.usage: dict[str, Any] | None = None
        self.held: dict[str, Any] | None = None
        self.failed = False
        self.shown: set[int] = set()  # lanes a chunk has carried

    def chunk(self, candidates: list[dict[str, Any]]) -> dict[str, Any]:
        """A chunk around ``candidates``, with the response's model, id and time."""
        out: dict[str, Any] = {"candidates": candidates} if candidates else {}
        return response_fields(out, self.model, self.id, self.create)

"""The chat decoder's plain chunk: the chunk almost every stream is made of.

One choice whose delta is only more text for the message, the reasoning or the tool
call already open. Decoding it without the general path (no per-field dispatch, one
shared event for the usual ``"logprobs": null, "finish_reason": null``) is most of the
decoder's speed on parsed records; anything else returns ``None`` and takes the
general path. The chat run hook (:mod:`.run_hook`) makes its templates of such chunks.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from chatx import ir
from chatx.codecs.chat_chunk.fields import MISSING, decode_usage, split_logprobs
from chatx.residue import ABSENT, NullResidue

# The delta fields a plain chunk has, and the item each adds to.
_ITEM_OF = {
    "content": "message",
    "reasoning_content": "reasoning",
    "reasoning": "reasoning",
    "tool_calls": "tool_call",
}
_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)


class ChoiceState:
    """What the decoder knows of one choice: the item open in it, its calls."""

    __slots__ = ("open", "open_call", "calls", "started", "finished", "seal", "said", "base")

    def __init__(self) -> None:
        self.open: str | None = None  # "message" | "reasoning" | "tool_call"
        self.open_call: int | None = None
        # Characters of content said, and where the open message item's text began in
        # it: a citation's span (annotations_in.py) is of the content.
        self.said = 0
        self.base = 0
        # The open reasoning item's (signature, encrypted), once a token seals it
        # (signatures.py): more reasoning is another item.
        self.seal: tuple[str | None, str | None] | None = None
        self.calls: set[int] = set()
        self.started = False
        self.finished = False


def _delta(
    item: str, number: int, field: str, call: Any, text: str, logprobs: Any, obfuscation: Any
) -> ir.Event | None:
    if item == "message":
        return ir.TextDelta(number, text, logprobs, {}, obfuscation)
    if logprobs is not None:  # logprobs beside no text: the general path says where
        return None
    if call is not None:
        return ir.ToolArgsDelta(number, call, text, {}, obfuscation)
    return ir.ReasoningDelta(number, text, "text", 0, {}, field, obfuscation)


def _fragment(calls: Any) -> tuple[Any, Any]:
    """(call, arguments) of ``[{"index": call, "function": {"arguments": …}}]``, the
    entry of a call's every chunk but its first; ``(None, None)`` for anything else."""
    if type(calls) is not list or len(calls) != 1:
        return None, None
    entry = calls[0]
    if type(entry) is not dict or len(entry) != 2:
        return None, None
    function = entry.get("function")
    if type(function) is not dict or len(function) != 1 or type(entry.get("index")) is not int:
        return None, None
    return entry["index"], function.get("arguments")


class Envelope:
    """What the last plain chunk had beside its choices, to know the next one's residue
    without working it out again: providers repeat the same envelope on every chunk
    (``service_tier``, ``system_fingerprint``…), only ``obfuscation`` changes."""

    __slots__ = ("keys", "meta", "obfuscated", "stable", "values")

    def __init__(self, data: dict[str, Any], meta: ir.Meta | None, obfuscated: bool) -> None:
        self.keys = frozenset(data)  # the same fields, whatever their order
        names = [k for k in data if k != "choices" and (k != "obfuscation" or not obfuscated)]
        self.values = itemgetter(*names)
        self.stable = self.values(data)
        self.meta = meta  # shared by the chunks that match: residue is never mutated
        self.obfuscated = obfuscated


class PlainChunks:
    """The plain chunk part of :class:`~chatx.codecs.chat_chunk.decode.ChatChunkDecoder`:
    the common chunk decoded at once (:meth:`chunk`) and the chunk's residue
    (:meth:`residue`). ``lanes`` is the decoder's own: this part adds to the item open in
    a lane, and never opens one."""

    __slots__ = ("envelope", "expect", "lanes", "null_metas")

    def __init__(self, lanes: dict[int, ChoiceState]) -> None:
        self.lanes = lanes
        self.reset()

    def reset(self) -> None:
        """A new stream: nothing known of its chunks yet."""
        self.expect: dict[str, Any] = {}  # the stream's own id, object, created, model
        self.null_metas: dict[tuple[Any, ...], ir.Meta | None] = {}
        self.envelope: Envelope | None = None

    # -- decoding --------------------------------------------------------------------

    def residue(self, data: dict[str, Any]) -> dict[str, Any]:
        """The chunk's fields the IR has no name for, in one pass over its keys.

        A field that differs from the stream's own value is residue too (Groq's compound
        final chunk has id "stub"; Perplexity ends with chat.completion.done)."""
        expect = self.expect
        extra: dict[str, Any] = {}
        for key, value in data.items():
            want = expect.get(key, MISSING)
            if want is MISSING:
                if key == "choices" or key == "usage":
                    if not value:
                        extra[key] = value
                elif key == "error":
                    if type(value) is not dict:
                        extra[key] = value
                else:
                    extra[key] = value
            elif value != want:
                extra[key] = value
        if "object" not in data:
            extra["object"] = ABSENT
        return extra

    def _envelope(self, data: dict[str, Any]) -> tuple[ir.Meta | None, Any]:
        """The chunk's record-level residue as a Meta (or ``None``), and its obfuscation
        when that is a string (it goes on the delta, see ``ir.OBFUSCATION``)."""
        envelope = self.envelope
        if (
            envelope is not None
            and data.keys() == envelope.keys
            and envelope.values(data) == envelope.stable
        ):
            obfuscation = data["obfuscation"] if envelope.obfuscated else None
            if obfuscation is None or type(obfuscation) is str:
                return envelope.meta, obfuscation
        extra = self.residue(data)
        obfuscation = extra.get("obfuscation")
        obfuscated = type(obfuscation) is str
        if obfuscated:
            del extra["obfuscation"]
        else:
            obfuscation = None
        meta = ir.Meta(None, extra) if extra else None
        # Nested residue is merged into the chunk an encoder builds, so it is not shared.
        shared = len(data) > 1 + obfuscated and all(
            type(value) is not dict and type(value) is not list for value in extra.values()
        )
        self.envelope = Envelope(data, meta, obfuscated) if shared else None
        return meta, obfuscation

    def _open_text(self, data: dict[str, Any]) -> tuple[Any, int, str, Any, str, str] | None:
        """(choice, lane, field, call, text, item) of a chunk whose one choice's delta is
        only more text for the item already open in its lane; else ``None``."""
        choices = data.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return None
        choice = choices[0]
        if type(choice) is not dict:
            return None
        delta = choice.get("delta")
        if type(delta) is not dict or len(delta) != 1:
            return None
        ((field, text),) = delta.items()
        call = None
        if field == "tool_calls":
            call, text = _fragment(text)
        if type(text) is not str or not text or choice.get("finish_reason") is not None:
            return None
        item = _ITEM_OF.get(field)
        number = choice.get("index")
        if item is None or type(number) is not int:
            return None
        lane = self.lanes.get(number)
        if lane is None or lane.open != item or lane.open_call != call or lane.finished:
            return None
        if lane.seal is not None:  # more reasoning opens another item: the long way
            return None
        return choice, number, field, call, text, item

    def chunk(self, data: dict[str, Any]) -> list[ir.Event] | None:
        """The common case, decoded without the general path: one choice whose delta is
        only more text for the message, the reasoning or the tool call already open.
        ``None`` sends it the long way."""
        found = self._open_text(data)
        if found is None or "error" in data:
            return None
        choice, number, field, call, text, item = found
        logprobs = choice.get("logprobs")
        cextra: dict[str, Any]
        if type(logprobs) is dict:
            logprobs, refusal = split_logprobs(logprobs, cextra := {})
            if refusal:
                return None
        elif logprobs is None:
            cextra = {}
        else:
            return None
        meta, obfuscation = self._envelope(data)
        event = _delta(item, number, field, call, text, logprobs, obfuscation)
        if event is None:
            return None
        out: list[ir.Event] = [meta, event] if meta is not None else [event]
        meta = self._choice_meta(number, choice, cextra, logprobs)
        if meta is not None:
            out.append(meta)
        usage = data.get("usage")
        if usage:
            if type(usage) is not dict:
                return None
            out.append(decode_usage(usage))
        if item == "message":
            self.lanes[number].said += len(text)
        return out

    def _choice_meta(
        self, number: int, choice: dict[str, Any], cextra: dict[str, Any], logprobs: Any
    ) -> ir.Meta | None:
        """The choice's residue beside its delta (a plain chunk); ``cextra`` may hold the
        residue of the choice's logprobs already, ``logprobs`` is what the delta took."""
        if not cextra and len(choice) == 4 and logprobs is None and "finish_reason" in choice:
            # "index", "delta", "logprobs": null, "finish_reason": null, in some order
            # (cextra holds what a logprobs object had beside its entries): one shared
            # event per shape.
            shape = ("choice", number, *choice)
            meta = self.null_metas.get(shape)
            if meta is None:
                meta = self.null_metas[shape] = self._residue_meta(number, choice, cextra)
            return meta
        return self._residue_meta(number, choice, cextra)

    def _residue_meta(
        self, number: int, choice: dict[str, Any], cextra: dict[str, Any]
    ) -> ir.Meta | None:
        nulls = not cextra  # a null Meta is shared and never reported: nulls only
        for key, value in choice.items():  # in the source's order, for byte fidelity
            if key != "index" and key != "delta" and (key != "logprobs" or value is None):
                cextra[key] = value
                if value is not None:
                    nulls = False
        if not cextra:
            return None
        if not nulls:
            return ir.Meta(number, cextra)
        # Most chunks repeat "logprobs": null, "finish_reason": null: one shared event.
        shape = (number, *cextra)
        meta = self.null_metas.get(shape)
        if meta is None:
            meta = self.null_metas[shape] = ir.Meta(number, NullResidue(cextra))
        return meta

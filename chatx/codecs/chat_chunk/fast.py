"""The chat decoder's fast path: the chunk almost every stream is made of.

One choice whose delta is only more text for the message already open. Decoding it
without the general path (no per-field dispatch, one shared event for the usual
``"logprobs": null, "finish_reason": null``) is most of chatx's speed on long streams;
anything else returns ``None`` and takes the general path.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.chat_chunk.fields import decode_usage, split_logprobs
from chatx.residue import NullResidue


class FastPath:
    """Mixed into :class:`~chatx.codecs.chat_chunk.decode.ChatChunkDecoder`."""

    lanes: dict[int, Any]
    null_metas: dict[tuple[Any, ...], ir.Meta]

    def _chunk_residue(self, data: dict[str, Any]) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def _text_chunk(self, data: dict[str, Any]) -> list[ir.Event] | None:
        """The common case, decoded without the general path: one choice whose delta is
        only more text for the message already open. ``None`` sends it the long way."""
        choices = data.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return None
        choice = choices[0]
        if type(choice) is not dict:
            return None
        delta = choice.get("delta")
        if type(delta) is not dict or len(delta) != 1:
            return None
        text = delta.get("content")
        if type(text) is not str or not text or choice.get("finish_reason") is not None:
            return None
        number = choice.get("index")
        if type(number) is not int:
            return None
        lane = self.lanes.get(number)
        if lane is None or lane.open != "message" or lane.finished or "error" in data:
            return None
        logprobs = choice.get("logprobs")
        out: list[ir.Event] = []
        extra = self._chunk_residue(data)
        if extra:
            out.append(ir.Meta(None, extra))
        if type(logprobs) is dict:
            lps = split_logprobs(logprobs, cextra := {})
            if lps[1]:
                return None
            out.append(ir.TextDelta(number, text, lps[0]))
        elif logprobs is None:
            out.append(ir.TextDelta(number, text))
            cextra = {}
        else:
            return None
        meta = self._choice_meta(number, choice, cextra)
        if meta is not None:
            out.append(meta)
        usage = data.get("usage")
        if usage:
            if type(usage) is not dict:
                return None
            out.append(decode_usage(usage))
        return out

    def _choice_meta(
        self, number: int, choice: dict[str, Any], cextra: dict[str, Any]
    ) -> ir.Meta | None:
        """The choice's residue beside its delta (fast path)."""
        nulls = True
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

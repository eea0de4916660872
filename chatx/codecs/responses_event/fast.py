"""The Responses decoder's fast path: the event a stream is mostly made of.

An ``output_text.delta`` in sequence that adds to the open part of a message, with no
field beside the usual ones. Decoding it without the general checks is most of the
decoder's speed on long streams; anything else returns ``None`` and goes the long way,
which says what is wrong.
"""

from __future__ import annotations

from typing import Any

from chatx import ir

_FAST_TEXT_KEYS = frozenset(
    (
        "type",
        "item_id",
        "output_index",
        "content_index",
        "delta",
        "logprobs",
        "sequence_number",
        "obfuscation",
    )
)


class FastText:
    """Mixed into :class:`~chatx.codecs.responses_event.decode.ResponsesDecoder`."""

    started: bool
    ended: bool
    expected_seq: int | None
    items: dict[Any, Any]

    def _text_fast(self, data: dict[str, Any]) -> list[ir.Event] | None:
        """The event almost every stream is made of, decoded without the general checks:
        more text for the open part of a message, in sequence, with nothing else beside
        it. ``None`` sends it the long way, which says what is wrong."""
        seq = data.get("sequence_number")
        if (
            not self.started
            or self.ended
            or seq != self.expected_seq
            or type(seq) is not int
            or not data.keys() <= _FAST_TEXT_KEYS
        ):
            return None
        output_index = data.get("output_index")
        state = self.items.get(output_index) if type(output_index) is int else None
        if state is None or state.kind != "message" or data.get("item_id") != state.id:
            return None
        index = data.get("content_index")
        part = state.parts.get(("output_text", index)) if type(index) is int else None
        delta, lps = data.get("delta"), data.get("logprobs")
        obfuscation = data.get("obfuscation")
        if (
            part is None
            or type(delta) is not str
            or type(lps) is not list
            or not (obfuscation is None or type(obfuscation) is str)
        ):
            return None
        self.expected_seq = seq + 1
        part[0].append(delta)
        if lps:
            part[1].extend(lps)
        return [ir.TextDelta(0, delta, lps or None, {}, obfuscation)]

"""The Llama Stack run hook: a long stream is mostly ``progress`` events of more text,
the same but for that text (:class:`~chatx.codecs.template.DeltaTemplate`).
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.byte_template import TEXT
from chatx.codecs.llama_stack_event.decode import LlamaStackDecoder
from chatx.codecs.llama_stack_event.read_stream import ReadStream
from chatx.codecs.template import DeltaHook, DeltaTemplate

_PROTO = ir.TextDelta(0, "")


def run_hook(decoder: LlamaStackDecoder) -> DeltaHook:
    """The Llama Stack :class:`~chatx.codecs.template.RunHook`, made with the decoder.
    Any record decoded drops the template; more plain text, said where the next record
    of more text would be that too, makes the next. A run moves the decoder's ``line``
    to its last record."""
    read = decoder.read

    def plain(out: list[ir.Event], quiet: bool) -> bool:
        return _plain_text(out, read)

    # Runs keep their records' bytes: into Llama Stack they go out as they came.
    return DeltaHook(decoder.feed, decoder.notes, read, plain, _template, raws=True)


def _plain_text(out: list[ir.Event], read: ReadStream) -> bool:
    """Whether ``out`` is one plain delta of more text, in the state where the next
    record of more text would be that too (the message open, nothing held)."""
    if len(out) != 1 or type(out[0]) is not ir.TextDelta:
        return False
    delta = out[0]
    return (
        not delta.extra
        and delta.logprobs is None
        and bool(delta.text)
        and read.open
        and read.message
        and read.hold is None
        and not read.may_hold
    )


def _template(data: Any, out: list[ir.Event]) -> DeltaTemplate | None:
    event = dict(data["event"])
    event["delta"] = {**event["delta"], "text": TEXT}
    return DeltaTemplate.make({**data, "event": event}, _PROTO)

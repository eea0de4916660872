"""Text in the Llama Stack encoder: text deltas as progress records, and the Llama
special tokens in chat text read as Llama Stack's own OpenAI-compat layer reads them.

``<|eot_id|>`` and ``<|eom_id|>`` set the stop reason, ``<|python_tag|>`` opens a
built-in tool call that runs to the end of the message; none of them reaches the text,
even when a delta boundary splits one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.residue import report

from . import records as r
from .special_tokens import PYTHON_TAG, TOKEN_STOP, TokenScanner, parse_tool_call

LS = r.LS


class TextEncoding:
    """Mixed into :class:`~chatx.codecs.llama_stack_event.encode.LlamaStackEncoder`."""

    # What the encoder holds and does that this part uses (set or defined there).
    notes: Any
    own: bool
    scanner: TokenScanner
    id: str
    count: int
    raw: list[str]
    token_stop: str | None
    python: list[str] | None
    logprobs: list[Any] | None
    _lane_ok: Callable[[int], bool]
    _stop_word: Callable[[], str | None]
    _patch: Callable[[list[Any], dict[str, Any]], None]
    _record_stop: Callable[[dict[str, Any]], dict[str, Any]]

    def _text(self, event: ir.TextDelta, out: list[Any]) -> None:
        if not self._lane_ok(event.lane):
            return
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        if not self.own:
            if event.extra:
                report(event.extra, self.notes, "delta.")
            self._scan(event.text, event.logprobs, out)
            return
        ls = event.extra.get(LS, {})
        if "~in_progress" in ls:
            self.raw.append(event.text)
            out.append(r.event("progress", r.tool_delta("in_progress", event.text)))
        elif "~failed" in ls:
            self._record_stop(ls)
            out.append(
                r.event("progress", r.tool_delta("failed", event.text), None, self._stop_word())
            )
        else:
            out.append(
                r.event("progress", r.text_delta(event.text), r.logprobs_from_ir(event.logprobs))
            )
        self._patch(out, ls)

    def _scan(self, text: str, logprobs: list[Any] | None, out: list[Any]) -> None:
        """Chat text through the special-token scanner."""
        if logprobs:
            self.logprobs = (self.logprobs or []) + logprobs
        for kind, piece in self.scanner.feed(text):
            if kind == "text":
                self._write_text(piece, out)
            elif piece == PYTHON_TAG:
                if self.python is None:  # a second tag inside a call says nothing new
                    self.python = []
                    out.append(r.event("progress", r.tool_delta("started", "")))
            else:
                self.token_stop = TOKEN_STOP[piece]
                self._close_python(out)

    def _write_text(self, text: str, out: list[Any]) -> None:
        logprobs, self.logprobs = r.logprobs_from_ir(self.logprobs), None
        if self.python is None:
            out.append(r.event("progress", r.text_delta(text), logprobs))
        else:
            self.python.append(text)
            out.append(r.event("progress", r.tool_delta("in_progress", text), logprobs))

    def _close_python(self, out: list[Any]) -> None:
        """The ``<|python_tag|>`` call is complete: parse it as Llama Stack would."""
        if self.python is None:
            return
        raw = "".join(self.python)
        self.python = None
        parsed = parse_tool_call(raw)
        if parsed is None:
            out.append(r.event("progress", r.tool_delta("failed", raw), None, self._stop_word()))
            return
        name, arguments = parsed
        call = r.tool_call(r.call_id(self.id, self.count), name, r.dumps(arguments))
        self.count += 1
        out.append(r.event("progress", r.tool_delta("succeeded", call), None, self._stop_word()))

    def _flush(self, out: list[Any]) -> None:
        """Text held by the scanner, and a python-tag call, end with the message."""
        if self.own:
            return
        tail = self.scanner.flush()
        if tail:
            self._write_text(tail, out)
        self._close_python(out)

"""Finish reasons: which words each encoder can say exactly.

The IR's ``Finish.reason`` is a chat word (``ir.FINISH_REASONS``) or, for a word no
decoder knows (vLLM's ``abort``, Gemini's ``recitation``), the source's own word as it
came. An encoder writes an exact equivalent when its format has one and says nothing;
otherwise it writes what its format can carry and reports the reason ``lost``, so that
``--strict`` stops there. A word is never read as another without a note.
"""

from __future__ import annotations

# Chat finish reasons as the openai SDK types name them. The IR adds "error", a generation
# that failed (OpenRouter's finish reason; Responses' "failed").
CHAT_WORDS = frozenset(("stop", "length", "tool_calls", "content_filter", "function_call"))

# Words servers put in a chat finish_reason for exactly what chat calls "stop" (a
# natural stop point or a provided stop sequence, in OpenAI's words): Hugging Face TGI's
# eos_token and stop_sequence, and the eos that Llama Stack's OpenAI-compat layer reads
# as end_of_turn together with eos_token (process_chat_completion_stream_response).
SAME_AS = {"eos": "stop", "eos_token": "stop", "stop_sequence": "stop"}


def exact(reason: str | None) -> str | None:
    """The chat word (or ``error``) that ``reason`` says exactly, or None for a word
    no format but chat has."""
    if reason in CHAT_WORDS or reason == "error":
        return reason
    return SAME_AS.get(reason or "")

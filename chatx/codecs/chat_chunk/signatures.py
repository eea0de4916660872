"""Reasoning signatures in chat deltas: what Anthropic calls a thinking block's signature
or a redacted thinking block, as the services that bridge other APIs to chat say it.

* OpenRouter's ``delta.reasoning_details``: ``reasoning.text`` entries (the text, also in
  ``delta.reasoning``, and a ``signature``, which may come first as "" and later in
  full), ``reasoning.summary`` (``summary``, also in ``delta.reasoning``) and
  ``reasoning.encrypted`` (``data``: an Anthropic redacted block, or the encrypted
  content of an OpenAI or xAI reasoning item);
* LiteLLM's ``delta.thinking_blocks``: ``{"type": "thinking", "thinking", "signature"}``
  (the text, also in ``delta.reasoning_content``; the signature "" or null until the
  block's end) and ``{"type": "redacted_thinking", "data"}``, which it may repeat in
  ``delta.provider_specific_fields``.

:func:`read` gives their tokens in order, which the decoder closes reasoning items with
(``ir.ItemEnd.signature`` / ``encrypted``), and what of each field no IR event says. The
fields stay the delta's residue (:class:`chatx.residue.Carried`, see
:func:`chatx.codecs.chat_chunk.fields.delta_residue`): chat output writes them
back as they came, another format reports only that part (the entries' ``format``,
``id``, ``index``…).

Gemini's ``thought_signature`` (``extra_content.google.thought_signature`` on a tool call
entry, or on a delta beside its text) is not read: it vouches for a tool call or a text
part, which no other format gives a signature, so it stays chat residue.
"""

from __future__ import annotations

from typing import Any, Literal

FIELDS = ("reasoning_details", "thinking_blocks")

# A token: "signature" vouches for the reasoning text shown; "data" is an item's opaque
# token, a signature when its reasoning text was shown, else the reasoning withheld;
# "redacted" is reasoning withheld, a block of its own.
Kind = Literal["signature", "data", "redacted"]
Token = tuple[Kind, str]

# Per entry type: the field that holds reasoning text (said when the delta's reasoning
# field says it), the field that holds a token and its kind.
_ENTRIES: dict[str, tuple[str | None, str | None, Kind]] = {
    "reasoning.text": ("text", "signature", "signature"),
    "reasoning.summary": ("summary", None, "signature"),
    "reasoning.encrypted": (None, "data", "data"),
    "thinking": ("thinking", "signature", "signature"),
    "redacted_thinking": (None, "data", "redacted"),
}


def read(delta: dict[str, Any], rest: dict[str, Any]) -> list[Token]:
    """The tokens of ``delta``'s ``reasoning_details`` and ``thinking_blocks``, in order.
    ``rest`` gets, for each field present, what of it no IR event says (``None``:
    nothing): entries of another type, their other fields, and their text unless the
    delta's reasoning field said it."""
    said = "".join(
        text
        for text in (delta.get("reasoning_content"), delta.get("reasoning"))
        if type(text) is str
    )
    tokens: list[Token] = []
    for name in FIELDS:
        if name in delta:
            rest[name] = _field(delta[name], said, tokens)
    more = delta.get("provider_specific_fields")
    if type(more) is dict and more.get("thinking_blocks", more) == delta.get("thinking_blocks"):
        # LiteLLM repeats the blocks there: what of them is lost is said once.
        rest["provider_specific_fields"] = {**more, "thinking_blocks": None}
    return tokens


def _field(entries: Any, said: str, tokens: list[Token]) -> Any:
    if type(entries) is not list or any(type(entry) is not dict for entry in entries):
        return entries  # not entries: none of it is said
    texts: list[str] = []
    lost: dict[str, Any] = {}
    for entry in entries:
        kind = entry.get("type")
        known = _ENTRIES.get(kind) if type(kind) is str else None
        if known is None:
            _keep(lost, entry.items())
            continue
        text_field, token_field, kind = known
        for key, value in entry.items():
            if key == "type":
                continue
            if key == text_field and type(value) is str:
                texts.append(value)
            elif key == token_field and type(value) is str:
                if value:  # OpenRouter's first signature is "": no token yet
                    tokens.append((kind, value))
            else:
                _keep(lost, ((key, value),))
    if "".join(texts) != said:
        _keep(lost, (("text", text) for text in texts))
    return lost or None


def _keep(lost: dict[str, Any], fields: Any) -> None:
    """Fields no event says; one value per name is enough to report it."""
    for key, value in fields:
        if lost.get(key) in (None, "", [], {}):
            lost[key] = value

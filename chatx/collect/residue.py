"""How a stream's residue (the source fields the IR has no name for) gathers into the
final object a client builds, as the stream's own format's client does.

Two ways, after the openai SDK's chat accumulator (``ChatCompletionStreamState``):

- :func:`settle` for fields that say a state (a record's ``provider``, a choice's
  ``content_filter_results`` or ``native_finish_reason``): the last value said wins, as
  the SDK takes the last ``finish_reason``, ``system_fingerprint`` and ``usage``; a later
  null or empty value says nothing and leaves it (Azure's closing chunk has
  ``"content_filter_results": {}`` after the choice's filter results, OpenRouter's last
  chunk ``"native_finish_reason": null`` after ``"stop"``). Objects settle key by key.
- :func:`accumulate` for a delta's fields (a message's ``reasoning_details``): the SDK's
  ``accumulate_delta``, so the message holds what its client holds: strings and numbers
  add up, objects merge, lists of entries with an ``index`` merge entry by entry, other
  lists extend.

Format-free: the Assembler keeps the residue so, each format's final builder says which
of its keys have a place.
"""

from __future__ import annotations

from typing import Any

from chatx.residue import ABSENT, is_empty

__all__ = ["accumulate", "settle"]


def settle(kept: dict[str, Any], extra: dict[str, Any]) -> None:
    """Take the non-empty values of ``extra`` into ``kept``, the last said winning."""
    for key, value in extra.items():
        if is_empty(value) or value is ABSENT:
            continue
        old = kept.get(key)
        if type(value) is dict and type(old) is dict:
            settle(old, value)
        else:
            kept[key] = _copy(value)


def accumulate(acc: dict[str, Any], delta: dict[str, Any]) -> None:
    """``delta`` added to ``acc`` as the openai SDK's ``accumulate_delta`` adds it (a
    list entry without an ``index`` where entries have one is appended, where the SDK
    raises)."""
    for key, value in delta.items():
        if value is ABSENT:
            continue
        if acc.get(key) is None:
            if not _indexed(value):
                acc[key] = _copy(value)
                continue
            acc[key] = []
        old = acc[key]
        if key in ("index", "type"):
            acc[key] = _copy(value)
        elif (type(old) is str and type(value) is str) or (
            type(old) in (int, float) and type(value) in (int, float)
        ):
            acc[key] = old + value
        elif type(old) is dict and type(value) is dict:
            accumulate(old, value)
        elif type(old) is list and type(value) is list:
            _entries(old, value)


def _entries(old: list[Any], value: list[Any]) -> None:
    if all(type(x) in (str, int, float) for x in old) and (old or not _indexed(value)):
        old.extend(_copy(value))
        return
    for entry in value:
        index = entry.get("index") if type(entry) is dict else None
        if type(index) is not int:
            old.append(_copy(entry))
        elif index < len(old) and type(old[index]) is dict:
            accumulate(old[index], entry)
        else:
            old.insert(index, _copy(entry))


def _indexed(value: Any) -> bool:
    return type(value) is list and any(type(e) is dict and "index" in e for e in value)


def _copy(value: Any) -> Any:
    """A copy a later merge may change without changing the event (a decoder may hand
    one residue dict to several records)."""
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items() if v is not ABSENT}
    if kind is list:
        return [_copy(v) for v in value]
    return value

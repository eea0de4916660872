"""Token usage as formats name it, read into IR ``Usage`` (one reader for all of them).

A format whose usage object names the counts the IR keeps (input, output, total, and the
two detail objects with ``cached_tokens`` and ``reasoning_tokens``) gives its names as a
:class:`UsageNames` (``Codec.usage``) and reads its usage with :func:`decode_usage`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from chatx import ir
from chatx.residue import set_or_drop


class UsageNames(NamedTuple):
    """A format's names for the counts the IR keeps."""

    input: str
    output: str
    total: str
    input_details: str
    output_details: str


def count(value: Any) -> int | None:
    """A token count, or ``None`` for anything that is not an integer."""
    return value if type(value) is int else None


def decode_usage(usage: dict[str, Any], names: UsageNames) -> ir.Usage:
    """The counts the IR names; everything else (and a count that is not an integer)
    stays residue, so the same format's encoder gives the object back."""
    counts = (names.input, names.output, names.total)
    extra = {k: v for k, v in usage.items() if k not in counts or type(v) is not int}
    cached = _detail(extra, names.input_details, "cached_tokens")
    reasoning = _detail(extra, names.output_details, "reasoning_tokens")
    return ir.Usage(
        count(usage.get(names.input)),
        count(usage.get(names.output)),
        count(usage.get(names.total)),
        cached,
        reasoning,
        extra,
    )


def _detail(extra: dict[str, Any], key: str, name: str) -> int | None:
    details = extra.get(key)
    if not isinstance(details, dict) or type(details.get(name)) is not int:
        return None
    set_or_drop(extra, key, {k: v for k, v in details.items() if k != name})
    return details[name]

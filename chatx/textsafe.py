"""Make stream text safe to print on a terminal.

Model output is untrusted: an ANSI escape sequence or a carriage return in a delta
must be shown, never obeyed. :func:`escape_text` turns every control character into a
visible escape; printing through rich additionally needs ``markup=False`` or
:func:`rich.markup.escape`, since ``[bold]`` is plain text to us but markup to rich.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls, DEL, C1 controls, and the Unicode format characters that reorder or
# break lines on a terminal (bidi overrides and isolates, line/paragraph separators);
# and lone surrogates, which no UTF-8 writer takes: a file name's bytes that are not
# UTF-8 reach Python as U+DC80..U+DCFF (surrogateescape).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # the byte a file name had
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(s: str) -> str:
    """Return ``s`` with control characters written as ``\\xNN`` / ``\\uNNNN`` escapes.

    Printable text, including non-ASCII letters and backslashes, is kept as it is.
    """
    return _UNSAFE.sub(_visible, s)


def escape_surrogates(s: str) -> str:
    """``s`` with each lone surrogate written as :func:`escape_text` writes it (a file
    name's byte that is not UTF-8 as ``\\xNN``); other characters kept."""
    return _SURROGATES.sub(_visible, s)


def json_safe(value: Any) -> Any:
    """``value`` with every string that holds a lone surrogate escaped by
    :func:`escape_surrogates`, so that JSON writers (UTF-8 only) take it."""
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value

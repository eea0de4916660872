"""Make stream text safe to print on a terminal.

Model output is untrusted: an ANSI escape sequence or a carriage return in a delta
must be shown, never obeyed. :func:`escape_text` turns every control character into a
visible escape; printing through rich additionally needs ``markup=False`` or
:func:`rich.markup.escape`, since ``[bold]`` is plain text to us but markup to rich.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, and the Unicode format characters that reorder or
# break lines on a terminal (bidi overrides and isolates, line/paragraph separators).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(s: str) -> str:
    """Return ``s`` with control characters written as ``\\xNN`` / ``\\uNNNN`` escapes.

    Printable text, including non-ASCII letters and backslashes, is kept as it is.
    """
    return _UNSAFE.sub(_visible, s)

"""chatx: a stream transcoder for LLM streaming output.

Library API (the CLI is a thin layer over it)::

    import chatx
    out = chatx.convert(open("capture.sse", "rb").read(), dst="responses-event")

``convert`` takes bytes (or an iterable of byte chunks) and returns bytes; for a live
stream use :class:`chatx.Transcoder` (``feed(bytes) -> bytes``, ``finish() -> bytes``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from chatx import codecs
from chatx.arguments import as_bytes
from chatx.codecs.base import EncodeOptions
from chatx.notes import Notes
from chatx.pipeline import Transcoder, convert

if TYPE_CHECKING:
    from chatx.diffing import DiffResult
    from chatx.reading.decoding import decode
    from chatx.reading.framing import read_records
    from chatx.validation import Finding


def diff(a: Any, b: Any, **kwargs: Any) -> DiffResult:
    """Compare two streams held in memory (bytes-like): see :func:`chatx.diffing.diff`
    (imported when first used)."""
    from chatx.diffing import diff as _diff

    return _diff(as_bytes(a, "diff()"), as_bytes(b, "diff()"), **kwargs)


def __getattr__(name: str) -> Any:
    """``decode`` and ``read_records``, imported when first asked for: the commands, which
    import this package, do not read a stream so (``convert`` never decodes alone)."""
    if name == "decode":
        from chatx.reading.decoding import decode

        return decode
    if name == "read_records":
        from chatx.reading.framing import read_records

        return read_records
    raise AttributeError(f"module 'chatx' has no attribute {name!r}")


def validate(records: Any, fmt: str | None = None, **kwargs: Any) -> list[Finding]:
    """Check a stream (bytes-like, or records) against a format's rules: see
    :func:`chatx.validation.validate_records`."""
    from chatx.validation import validate_records

    if isinstance(records, bytes | bytearray | memoryview | str):
        records = as_bytes(records, "validate()")
    elif not isinstance(records, Iterable):
        raise TypeError(f"validate() takes records or bytes, not {type(records).__name__}")
    if fmt is not None:  # a TypeError, or a ValueError naming the known formats
        fmt = codecs.get(fmt).name
    return validate_records(records, fmt, **kwargs)


__all__ = [
    "EncodeOptions",
    "Notes",
    "Transcoder",
    "convert",
    "decode",
    "diff",
    "read_records",
    "validate",
]
__version__ = "0.1.0"

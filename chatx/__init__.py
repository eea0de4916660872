"""chatx: a stream transcoder for LLM streaming output.

Library API (the CLI is a thin layer over it)::

    import chatx
    out = chatx.convert(open("capture.sse", "rb").read(), dst="responses-event")

``convert`` takes bytes (or an iterable of byte chunks) and returns bytes; for a live
stream use :class:`chatx.Transcoder` (``feed(bytes) -> bytes``, ``finish() -> bytes``).
"""

from __future__ import annotations

from chatx.codecs.base import EncodeOptions
from chatx.notes import Notes
from chatx.pipeline import Transcoder, convert, decode, read_records


def diff(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Compare two streams: see :func:`chatx.diffing.diff` (imported when first used)."""
    from chatx.diffing import diff as _diff

    return _diff(*args, **kwargs)


def validate(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Check a stream (bytes, or records) against a format's rules: see
    :func:`chatx.validation.validate_records`."""
    from chatx.validation import validate_records

    return validate_records(*args, **kwargs)


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

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

__all__ = ["EncodeOptions", "Notes", "Transcoder", "convert", "decode", "read_records"]
__version__ = "0.1.0"

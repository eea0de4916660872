"""The limits chatx holds on what it reads, in one place: each is the point where input
stops being a stream someone recorded and becomes a way to make chatx use unbounded
memory, time or stack. docs/security.md lists them, where each applies and what is said
when one is reached.

Kept apart from :mod:`chatx.settings` (which imports the pipeline): the containers that
enforce these import this module, and nothing here imports them back.
"""

from __future__ import annotations

# Deeper JSON is refused wherever it enters (a record, a request body, a recorded request
# or parsed body), so that nothing downstream meets it: orjson writes at most 254 levels
# (and an encoder may nest a source field deeper than it came), and the recursive Python
# code that walks values (scrubbing a request, residue, diff, show) stops at 1000 frames.
# Real payloads nest a few dozen levels.
MAX_DEPTH = 200

# A YAML cassette (chatx/containers/bounded_yaml.py), checked on the document as composed,
# before anything is built from it. The most values aliases (``*name``) may add to those
# the file writes out: no recorder writes aliases into a cassette's bodies, and a few KiB
# of anchors naming anchors stand for billions of values ("billion laughs") that every
# reader after the parser would walk; a million is tens of MiB of JSON at most.
MAX_YAML_ALIASED = 1_000_000
# The deepest a YAML document may nest, aliases followed: a cassette's own structure is
# five levels, a parsed body MAX_DEPTH more. (libyaml stops at 1000; PyYAML's Python
# composer recurses, and would reach Python's own limit.)
MAX_YAML_DEPTH = 250

# No event is this long; a line that is has no end in sight (a binary file, a stream
# without line ends). Reading stops there instead of holding all of it in memory.
MAX_LINE = 64 << 20

# The most bytes one compressed input or body may decompress to. A stream read from a
# file never holds more than a line of it, but a recorded body, or a file of exchanges
# read whole (a cassette, an httprr trace), is held decompressed: a few KiB of gzip or
# zstd can say gigabytes. Pipe it decompressed (``zcat F | chatx convert -``) to go past.
MAX_DECOMPRESSED = 1 << 30

# Compression inside compression (``Content-Encoding: gzip, gzip``, a ``.gz`` of a
# ``.gz``) is undone this many times at most; each layer stops at MAX_DECOMPRESSED.
MAX_LAYERS = 3


def size(limit: int) -> str:
    """A limit in bytes in words: ``64 MiB``, ``1 GiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if limit >= 1 << shift and limit % (1 << shift) == 0:
            return f"{limit >> shift} {unit}"
    return f"{limit} bytes"

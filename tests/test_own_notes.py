"""``extra`` holds source fields only: what a decoder tells its own codec's encoder rides
in the event's ``own`` (an :class:`chatx.ir.Own`), never under a private key in
``extra``. Before the ``own`` field, every codec but Gemini kept such keys, starting
with "~" (``~record``, ``~prefill``, ``~silent``…), beside the source's fields."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Any

import pytest

from chatx import codecs, ir
from chatx.codecs.anthropic_event.records import AnthropicOwn
from chatx.codecs.base import EncodeOptions
from chatx.errors import ChatxError
from chatx.notes import Notes
from chatx.reading.decoding import decode
from tests.captures import CAPTURES
from tests.streams import convert

ROOT = Path(__file__).resolve().parents[1]
FORMATS = [codec.name for codec in codecs.listed()]


def _streams(top: Path) -> list[tuple[str, Path]]:
    """Each format's streams under ``top`` (a folder per format), with their format."""
    return [
        (fmt, path)
        for fmt in FORMATS
        if (top / fmt).is_dir()
        for path in sorted((top / fmt).iterdir())
        if path.is_file() and path.suffix in (".sse", ".jsonl", ".json", ".txt")
    ]


FIXTURES = _streams(ROOT / "fixtures")


def _private_keys(value: Any, path: str = "") -> list[str]:
    """The paths of the keys starting with "~" in ``value``, at any depth."""
    found: list[str] = []
    if type(value) is dict:
        for key, inner in value.items():
            if type(key) is str and key.startswith("~"):
                found.append(path + key)
            found += _private_keys(inner, f"{path}{key}.")
    elif type(value) is list:
        for number, inner in enumerate(value):
            found += _private_keys(inner, f"{path}{number}.")
    return found


def _private_in(data: bytes, fmt: str) -> list[str]:
    """What the ``fmt`` decoder's events of ``data`` keep under a "~" key, by event."""
    found = []
    for batch in decode(data, src=fmt):
        for event in batch:
            for name in ("extra", "delta"):
                for key in _private_keys(getattr(event, name, None)):
                    found.append(f"{type(event).__name__}.{name}.{key}")
    return found


def test_fixtures_are_found() -> None:
    assert {fmt for fmt, _ in FIXTURES} == set(FORMATS)


@pytest.mark.parametrize(("fmt", "path"), FIXTURES, ids=lambda v: getattr(v, "name", v))
def test_a_fixture_and_its_conversions_decode_with_source_fields_only(fmt: str, path: Path) -> None:
    data = path.read_bytes()
    assert _private_in(data, fmt) == []
    for target in FORMATS:
        try:
            written, _ = convert(data, target, fmt)
        except ChatxError:
            continue  # input the conversion refuses (a fixture of bad input): no output
        assert _private_in(written, target) == [], target


def test_every_capture_decodes_with_source_fields_only() -> None:
    if not CAPTURES.is_dir():
        pytest.skip(f"no real captures: {CAPTURES} is absent")
    streams = _streams(CAPTURES)
    assert streams, f"no capture streams under {CAPTURES}"
    found = {
        path.name: keys for fmt, path in streams if (keys := _private_in(path.read_bytes(), fmt))
    }
    assert found == {}


# A string literal whose text starts with "~" (f-strings included; bytes are not text).
_PRIVATE_LITERAL = re.compile(r"""^[rRfFuU]*(['"]{1,3})~""")
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)


def test_no_private_key_is_written_in_chatx() -> None:
    """No string in chatx's source starts with "~": such a key in ``extra`` was how a
    codec kept its own notes (the byte literal of mitmflow's tnetstring list tag is
    bytes, not a key)."""
    found = []
    for path in sorted((ROOT / "chatx").rglob("*.py")):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        before = None
        for token in tokens:
            private = token.type == tokenize.STRING and _PRIVATE_LITERAL.match(token.string)
            # Python 3.12 and later split an f-string: its text follows FSTRING_START.
            if before == _FSTRING_START and token.string.startswith("~"):
                private = True
            if private:
                found.append(f"{path.relative_to(ROOT)}:{token.start[0]}: {token.line.strip()}")
            before = token.type
    assert found == []


def test_an_own_note_is_no_field_of_another_format() -> None:
    """A codec's note (an Anthropic record kept whole) is read by that codec alone:
    another format's encoder writes and reports nothing of it."""
    kept = ir.Meta(None, {}, None, None, AnthropicOwn(record={"type": "ping"}))
    batches = [[ir.StreamStart("msg_1", "m"), ir.LaneStart(0)], [kept], [ir.StreamEnd()]]
    for target in FORMATS:
        notes = Notes()
        encoder = codecs.get(target).encoder(notes, EncodeOptions(source_format="anthropic-event"))
        bare = codecs.get(target).encoder(Notes(), EncodeOptions(source_format="anthropic-event"))
        written = [encoder.feed(batch) for batch in batches]
        without = [bare.feed(batch) for batch in (batches[0], [], batches[2])]
        if target == "anthropic-event":
            assert written[1] == [{"type": "ping"}]
            continue
        assert (written, notes.lost_fields) == (without, {}), target

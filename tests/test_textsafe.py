"""Stream text printed on a terminal shows control characters, never obeys them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatx.textsafe import escape_text


def test_controls_become_visible() -> None:
    assert (
        escape_text("a\x1b[31mb\x07\r\n\t\x7f\x9b") == "a\\x1b[31mb\\x07\\x0d\\x0a\\x09\\x7f\\x9b"
    )
    assert escape_text("\u202eevil\u2028") == "\\u202eevil\\u2028"


def test_printable_text_is_kept() -> None:
    text = "Héllo — 世界 [bold]x[/bold] \\x1b 😀"
    assert escape_text(text) == text


@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    escaped = escape_text(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in escaped)

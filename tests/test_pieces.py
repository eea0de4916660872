"""Pieces hold a text as it arrives: whatever the pieces, the calls and their order, what
comes back is the text a plain string would hold."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from chatx import pieces as pieces_module
from chatx.pieces import Pieces

# Any code point, lone surrogates and emoji included: folded pieces are held as UTF-8.
_PIECE = st.text(st.characters(blacklist_categories=()), max_size=6)
_STEP = st.one_of(
    st.tuples(st.just("append"), _PIECE),
    st.tuples(st.just("extend"), st.lists(_PIECE, max_size=5)),
    st.tuples(st.just("text"), st.none()),
    st.tuples(st.just("equals"), _PIECE),
)


@settings(max_examples=300)
@given(start=st.one_of(st.none(), _PIECE), steps=st.lists(_STEP, max_size=60))
def test_pieces_hold_what_a_string_would(start, steps):
    with mock.patch.object(pieces_module, "_FOLD", 3):  # fold often: every path is taken
        _check(start, steps)


def _check(start, steps):
    held = Pieces() if start is None else Pieces.of(start)
    model = start or ""
    appended = start is not None
    for step, value in steps:
        if step == "append":
            held.append(value)
            model += value
            appended = True
        elif step == "extend":
            held.extend(value)
            model += "".join(value)
            appended = appended or bool(value)
        elif step == "text":
            assert held.text() == model
        else:
            assert held.equals(model + value) is (value == "")
            assert held.equals(model)
        assert held.size() == len(model)
        assert bool(held) is appended  # an empty piece too
    assert held.text() == model
    assert held.text() is held.text()  # joined once, then kept


def test_a_long_text_with_wide_characters_is_held_as_its_utf8():
    held = Pieces()
    for _ in range(4096):
        held.append("word 😀 ")
    # Folded: the bytes of the text, not four bytes a character as one str would take.
    assert sum(len(piece) for piece in held._folded) == len("word 😀 ".encode()) * 4096
    assert held.text() == "word 😀 " * 4096


def _long(text):
    held = Pieces()
    for piece in text:
        held.append(piece)
    return held


def test_pieces_that_join_to_one_long_text_share_its_str():
    words = ["word 😀 "] * 20000  # over the shared size in UTF-8
    first, second = _long(words), _long(words)
    assert first.text() is second.text()
    other = _long(["word 😁 "] * 20000)  # as long, another text: not shared
    assert other.text() == "word 😁 " * 20000 and other.text() is not first.text()
    third = _long(words[:-1] + ["word 😀 x"])
    assert third.text() is not first.text()


def test_a_long_text_is_not_kept_for_sharing_once_its_pieces_are_gone():
    first = _long(["gone 😀 "] * 20000)
    first.text()
    count = len(pieces_module._joined)
    del first
    assert len(pieces_module._joined) == count - 1


@given(st.text(st.characters(blacklist_categories=())), st.text(), st.integers(1, 9))
def test_spells_is_utf8_equality(text, other, step):
    whole = text.encode("utf-8", "surrogatepass")
    assert pieces_module._spells(whole, text, step)
    assert pieces_module._spells(whole, other, step) is (text == other)

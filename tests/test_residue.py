"""Residue: the patch between a source record and its canonical form."""

from __future__ import annotations

from typing import Any

import pytest

from chatx.residue import ABSENT, diff, exact_diff, merge, same


@pytest.mark.parametrize(
    ("one", "two"),
    [
        (1, 1.0),
        (1, True),
        (0, False),
        (0.0, False),
        ({"a": 1}, {"a": 1.0}),
        ([1, 2], [1, 2.0]),
        ({"a": [{"b": True}]}, {"a": [{"b": 1}]}),
        ({"a": 1}, {"a": 1, "b": None}),
        ([1], [1, 1]),
    ],
)
def test_same_tells_json_types_apart(one: Any, two: Any) -> None:
    assert one == two or len(str(one)) != len(str(two))  # Python may call them equal
    assert not same(one, two) and not same(two, one)


def test_same_says_equal_json_values_are_the_same() -> None:
    value = {"a": [1, 2.5, True, None, "x", {"b": []}], "c": {}}
    assert same(value, {"c": {}, "a": [1, 2.5, True, None, "x", {"b": []}]})


def test_exact_diff_keeps_a_value_of_another_type_where_diff_does_not() -> None:
    source = {"type": "content_block_stop", "index": True, "usage": {"n": 2.0, "m": 3}}
    canonical = {"type": "content_block_stop", "index": 1, "usage": {"n": 2, "m": 3}, "x": 0}
    assert diff(source, canonical) == {"x": ABSENT}  # 1 == True, 2 == 2.0 in Python
    patch = exact_diff(source, canonical)
    assert patch == {"index": True, "usage": {"n": 2.0}, "x": ABSENT}
    assert type(patch["index"]) is bool and type(patch["usage"]["n"]) is float
    rebuilt = merge(canonical, patch)
    assert same(rebuilt, source)

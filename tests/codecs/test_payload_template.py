"""The writing side of the byte templates (:class:`chatx.codecs.byte_template.PayloadTemplate`)
and the writers' :class:`chatx.record.Dumped`: a run's records made from a template must
be, byte for byte, what ``orjson.dumps`` writes of the dicts the encoder builds, and a
writer must frame a Dumped as it frames those dicts."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx import containers
from chatx.codecs.byte_template import PayloadTemplate, _strings
from chatx.record import DONE, Dumped
from tests.streams import dumped

SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=400)

# Strings orjson writes: no lone surrogate. The alphabet is JSON's punctuation and
# escapes, so that a quote, a backslash and a comma come next to each other often.
STRINGS = st.one_of(
    st.text().filter(lambda t: not any(0xD800 <= ord(c) < 0xE000 for c in t)),
    st.text(alphabet='"\\,/}]{[: \x00\n\u2028é😀%'),
    st.sampled_from(['": "x",', '\\"', "\\", '"', '","', '\\","', ",", "", "%s", "%d"]),
)


@SETTINGS
@given(st.lists(STRINGS, max_size=12))
def test_strings_are_what_orjson_writes_of_each(values: list[str]) -> None:
    assert _strings(values) == [orjson.dumps(value)[1:-1] for value in values]


def event(head: dict[str, Any]) -> Any:
    def make(text: str, obfuscation: str | None, number: Any) -> dict[str, Any]:
        payload = {**head, "delta": text, "logprobs": []}
        if obfuscation is not None:
            payload["obfuscation"] = obfuscation
        payload["sequence_number"] = number
        return payload

    return make


HEAD = {"type": "response.output_text.delta", "item_id": "msg_%s%d%%", "output_index": 0}


@SETTINGS
@given(
    texts=st.lists(STRINGS, min_size=1, max_size=8),
    obfuscated=st.booleans(),
    first=st.integers(0, 2**40),
)
def test_a_numbered_template_writes_what_orjson_writes_of_the_dicts(
    texts: list[str], obfuscated: bool, first: int
) -> None:
    make = event(HEAD)
    template = PayloadTemplate.of(make, obfuscated, numbered=True, name=HEAD["type"])
    assert template is not None
    obfuscations = [f'o{n}",' if obfuscated else None for n in range(len(texts))]
    out = template.write(texts, obfuscations, make, first)
    assert [type(p) for p in out] == [Dumped]
    assert out[0].name == HEAD["type"]
    numbers = range(first, first + len(texts))
    assert dumped(out) == [orjson.dumps(p) for p in map(make, texts, obfuscations, numbers)]


def test_records_the_template_has_no_hole_for_are_the_dicts() -> None:
    make = event(HEAD)
    plain = PayloadTemplate.of(make, False, numbered=True)
    hidden = PayloadTemplate.of(make, True, numbered=True)
    assert plain is not None and hidden is not None
    texts = ["a", "b"]
    assert plain.write(texts, ["x", None], make, 3) == [make("a", "x", 3), make("b", None, 4)]
    assert hidden.write(texts, ["x", None], make, 3) == [make("a", "x", 3), make("b", None, 4)]
    # A lone surrogate (which the readers mend before): orjson refuses it, the dicts.
    odd = ["a", "\ud800", "b"]
    assert plain.write(odd, [None] * 3, make, 0) == [make(t, None, n) for n, t in enumerate(odd)]
    assert plain.write([], [], make, 0) == []


def test_no_template_where_the_holes_are_out_of_order_or_a_stand_in_repeats() -> None:
    def number_first(text: str, obfuscation: str | None, number: Any) -> dict[str, Any]:
        return {"sequence_number": number, "delta": text}

    def twice(text: str, obfuscation: str | None, number: Any) -> dict[str, Any]:
        return {"delta": text, "echo": text}

    def big(text: str, obfuscation: str | None, number: Any) -> dict[str, Any]:
        return {"delta": text, "n": 2**70}

    assert PayloadTemplate.of(number_first, False, numbered=True) is None
    assert PayloadTemplate.of(twice, False) is None
    assert PayloadTemplate.of(big, False) is None


@pytest.mark.parametrize("container", ["sse", "jsonl", "json"])
@pytest.mark.parametrize("names", [False, True])
def test_writers_frame_a_dumped_as_its_dicts(container: str, names: bool) -> None:
    make = event(HEAD)
    texts = ["one", '"two",', "three"]
    payloads = [make(t, None, n) for n, t in enumerate(texts)]
    other = {"type": "response.created", "sequence_number": 9}
    blocks = [Dumped(HEAD["type"], [orjson.dumps(p) for p in payloads])]
    as_dicts = containers.get(container).writer(names)
    as_dumped = containers.get(container).writer(names)
    expected = as_dicts.write([other, *payloads, DONE]) + as_dicts.finish()
    got = as_dumped.write([other, *blocks, DONE]) + as_dumped.finish()
    assert got == expected
    assert (b"event: response.output_text.delta\n" in got) is (names and container == "sse")


def test_a_writer_that_does_not_know_a_dumped_fails_loudly() -> None:
    with pytest.raises(TypeError):
        orjson.dumps(Dumped(None, [b"{}"]))

"""A JSON cassette too big to hold is walked (chatx/containers/json_document.py):
its response bodies' strings decoded in pieces into a spool and given as
``bodies.Walked``, the rest parsed as the whole file is (integers beyond 64 bits exact).
Walked with every threshold forced small, a cassette must read as the one read whole:
the same entries, the same body bytes or body errors, the same error for a file that is
no JSON (message and line, where it has one fault)."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatx.containers import bodies, cassette, json_document, json_walk
from chatx.containers.bounded_yaml import load_yaml
from chatx.errors import InputError
from tests.containers import make_fixtures as made
from tests.containers.common import FIXTURES, SAMPLES, Slow, chatx, read_walked


def read(data: bytes, big: int | None = None, piece: int | None = None,
         keep: int | None = None, block: int | None = None) -> Any:  # fmt: skip
    return read_walked(cassette.entries, data, big, piece, keep, block)


def walked_too(data: bytes, pieces: tuple[int, ...] = (16, 17, 23, 64)) -> Any:
    """Walked with every body string spooled, or those past a length, in pieces and
    reads of each size, the cassette reads as it reads whole; that is returned."""
    whole = read(data)
    for piece in pieces:
        for block in (None, 1, 7):
            assert read(data, 0, piece, 0, block) == whole, (piece, block)
    for keep in (40, 300, 1 << 20):  # values this short copied whole, the others walked
        for block in (None, 7):
            assert read(data, 0, 16, keep, block) == whole, (keep, block)
    return whole


def document(*interactions: Any, ruby: bool = False, **more: Any) -> bytes:
    name = "http_interactions" if ruby else "interactions"
    return json.dumps({name: list(interactions), "version": 1, **more}, indent=2).encode()


def with_body(body: Any, **response: Any) -> dict[str, Any]:
    item = made.vcrpy(body)
    item["response"].update(response)
    return item


SSE = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"h\\"é😀\\n"}}]}\n\n' * 3
BODY = SSE.encode()


def b64(data: bytes, width: int | None = None) -> str:
    text = base64.b64encode(data).decode()
    if width:  # line breaks, as some recorders write base64
        text = "\n".join(text[at : at + width] for at in range(0, len(text), width))
    return text


# -- the cassettes there are, written as JSON ---------------------------------------------


def as_json(value: Any) -> Any:
    """A YAML cassette's document as a JSON cassette holds it: a ``!!binary`` body as
    Ruby's ``base64_string``, any other bytes as Latin-1 text."""
    if isinstance(value, dict):
        out = {key: as_json(item) for key, item in value.items()}
        if isinstance(value.get("string"), bytes):
            del out["string"]
            out["base64_string"] = base64.b64encode(value["string"]).decode()
        return out
    if isinstance(value, list):
        return [as_json(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def cassettes() -> Iterator[tuple[str, bytes]]:
    """Every cassette of the fixtures and the samples, as JSON (none of them is JSON:
    VCR.py writes JSON with ``serializer="json"``, which none of these used); and one
    of each body shape made here."""
    found = sorted(FIXTURES.glob("*.y*ml"))
    if SAMPLES.is_dir():
        found += sorted(SAMPLES.rglob("*.y*ml"))
    for path in found:
        value = load_yaml(path.read_bytes())
        if isinstance(value, dict) and ({"interactions", "http_interactions"} & set(value)):
            yield path.name, json.dumps(as_json(value), indent=2).encode()
    gz = gzip.compress(BODY, mtime=0)
    yield (
        "made",
        document(
            with_body({"string": SSE}),
            with_body(SSE),
            with_body({"base64_string": b64(BODY, 60)}),
            with_body({"base64_string": b64(gz)}, headers={"Content-Encoding": ["gzip"]}),
            with_body({"base64_string": "not base64!"}),
            with_body({"string": json.dumps({"object": "chat.completion", "choices": []})}),
            with_body({"string": ""}),
            with_body({"string": SSE}, parsed_body={"a": 1}),
        ),
    )


CASSETTES = list(cassettes())


def test_the_samples_are_there_or_said_absent() -> None:
    names = [name for name, _ in CASSETTES]
    assert {"styles.yaml", "ruby.yml", "parsed-body.yaml", "made"} <= set(names)
    if not SAMPLES.is_dir():
        pytest.skip(f"no container samples: {SAMPLES} is absent")
    assert len(names) >= 7


@pytest.mark.parametrize(("name", "data"), CASSETTES, ids=[name for name, _ in CASSETTES])
def test_every_cassette_walked_reads_as_read_whole(name: str, data: bytes) -> None:
    whole = walked_too(data)
    assert isinstance(whole, list) and whole, whole


def runs(path: str) -> Iterator[list[str]]:
    """ls, validate, and per stream ls, convert into two formats, collect and show."""
    yield ["ls", path]
    yield ["validate", path]
    for line in chatx("ls", path).stdout.decode().splitlines():
        address, format_ = line.split()[:2]
        yield ["ls", address]
        if format_ == "-":
            yield ["convert", address, "--to", "chat-chunk"]
            continue
        for target in ("chat-chunk", "responses-event"):
            yield ["convert", address, "--to", target]
        yield ["collect", address]
        yield ["show", address]
    yield ["convert", path, "--to", "responses-event"]


def test_every_command_reads_a_walked_cassette_as_one_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for number, (_, data) in enumerate(CASSETTES):
        path = tmp_path / f"c{number}.json"
        path.write_bytes(data)
        paths.append(str(path))
    cut = CASSETTES[0][1]
    (tmp_path / "cut.json").write_bytes(cut[: len(cut) // 2])
    (tmp_path / "escape.json").write_bytes(cut.replace(b"data: ", b"\\q", 1))
    paths += [str(tmp_path / "cut.json"), str(tmp_path / "escape.json")]
    cases = [args for path in paths for args in runs(path)]
    assert len(cases) > 30
    before = [chatx(*args) for args in cases]
    assert sum("not valid JSON: " in was.err and was.code == 2 for was in before) >= 2
    walks: list[int] = []
    real = json_walk.Walk.value

    def counted(self: json_walk.Walk) -> Any:
        walks.append(self.line)
        return real(self)

    monkeypatch.setattr(json_walk.Walk, "value", counted)
    for keep in (0, 1 << 20):
        monkeypatch.setattr(json_walk, "BIG", 0)
        monkeypatch.setattr(json_walk, "PIECE", 16)
        monkeypatch.setattr(json_document, "KEEP", keep)
        for args, was in zip(cases, before, strict=True):
            now = chatx(*args)
            assert (now.code, now.stdout, now.err) == (was.code, was.stdout, was.err), args
    assert len(walks) >= 2 * len(cases)


# -- what a file may hold -----------------------------------------------------------------

TEXTS = [
    SSE,
    "",
    'quotes " and backslashes \\ and \\\\" and slashes /',
    "controls \n\r\t\b\f\x00\x01\x1f",
    "ünïcødé é ß ✓ 😀 𝄞 中文 " * 3,
    "\u2028\u2029 separators",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("shape", ["string", "plain", "ascii"])
def test_text_reads_the_same(text: str, shape: str) -> None:
    body: Any = {"string": text} if shape != "plain" else text
    data = document(with_body(body))
    if shape == "ascii":
        data = json.dumps(json.loads(data), ensure_ascii=True).encode()
    walked_too(data)


def test_each_escape_cut_at_every_place() -> None:
    """An escape, a surrogate pair written as two escapes, a UTF-8 character: each at
    every offset from a piece's end."""
    for tail in ["\\u00e9", "\\ud83d\\ude00", '\\"', "\\\\", "\\n", "é", "😀", "中", "\\/"]:
        for offset in range(40):
            raw = ("x" * offset + tail) * 3
            data = ('{"interactions": [{"response": {"body": {"string": "'
                    + raw + '"}}}]}').encode()  # fmt: skip
            whole = read(data)
            for piece in range(16, 30):
                assert read(data, 0, piece, 0) == whole, (tail, offset, piece)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(max_size=80),
    ascii_only=st.booleans(),
    piece=st.integers(16, 40),
    block=st.sampled_from([None, 1, 3, 11]),
)
def test_any_text_any_escaping(text: str, ascii_only: bool, piece: int, block: int | None) -> None:
    body = {"interactions": [with_body({"string": text})]}
    data = json.dumps(body, ensure_ascii=ascii_only).encode()
    assert read(data, 0, piece, 0, block) == read(data)


@pytest.mark.parametrize(
    "text",
    [
        b64(BODY),
        b64(BODY, 76),
        b64(b"x"),
        b64(BODY) + "====",
        b64(BODY)[:-1],
        "=" + b64(BODY),
        b64(BODY) + "é",
        b64(BODY).replace("A", "*", 1),
        b64(gzip.compress(BODY, mtime=0)),
    ],
)
def test_base64_bodies_read_the_same(text: str) -> None:
    walked_too(document(with_body({"base64_string": text}), ruby=True))
    walked_too(document(with_body({"encoding": "UTF-8", "base64_string": text, "string": "s"})))


def test_the_body_before_or_after_the_other_fields() -> None:
    first = with_body({"string": SSE})
    first = {"response": dict(reversed(list(first["response"].items()))), **first}
    last = with_body({"base64_string": b64(BODY)})
    last["response"]["body"] = {"string": "unused", **last["response"]["body"]}
    last = dict(reversed(list(last.items())))
    walked_too(document(first, last, with_body(SSE)))
    walked_too(json.dumps({"version": 1, "interactions": [last, first]}).encode())


def test_duplicate_keys_keep_what_orjson_keeps() -> None:
    for raw in [
        '{"body": {"string": "one", "string": "two"}}',
        '{"body": {"string": "one", "string": 3}}',
        '{"body": {"string": "one"}, "body": {"other": 1}}',
        '{"body": "one", "body": {"string": "two"}}',
        '{"body": {"str\\u0069ng": "escaped key"}}',
        '{"body": [{"string": "in an array"}]}',
        '{"x": {"body": {"string": "deeper"}}}',
    ]:
        data = ('{"interactions": [{"request": {"body": "r"}, "response": ' + raw + "}]}").encode()
        assert read(data, 0, 16, 0) == read(data), raw


BIG_INT = 2**70


def test_a_huge_int_beside_a_walked_body() -> None:
    """A run of 19 digits anywhere (before the body, after it, inside it) reads the
    file with integers exact and lone surrogates as JSON.parse reads them."""
    lone = '{"string": "a\\ud83d b"}'
    for body, where in [(lone, "before"), (lone, "after"), ('"9999999999999999999\\ud83d"', "")]:
        head = f'{{"n": {BIG_INT}, ' if where == "before" else "{"
        tail = f', "m": {BIG_INT}}}' if where == "after" else "}"
        data = (head + '"interactions": [{"response": {"body": ' + body + "}}]" + tail).encode()
        whole = walked_too(data)
        assert isinstance(whole, list) and b"\xed\xa0\xbd" in whole[0][-1], whole
    data = document(with_body({"string": SSE}), n=BIG_INT)
    assert walked_too(data) == read(data.replace(str(BIG_INT).encode(), b"1"))


def test_a_lone_surrogate_without_a_huge_int_is_an_error_walked_or_not() -> None:
    for body in ['"a\\ud83d b"', '"\\ude00"', '"\\ud83d\\u0041"']:
        data = ('{"n": 1, "interactions": [{"response": {"body": ' + body + "}}]}").encode()
        whole = read(data)
        assert whole[:2] == ("InputError", "not valid JSON: no low surrogate in string") or (
            "surrogate" in whole[1]
        )
        assert read(data, 0, 16, 0) == whole


@pytest.mark.parametrize(
    "bad",
    [
        "\\x",  # no such escape
        "\\u12",  # a short \\u escape
        "\x01",  # a control character as it is
        "\n",  # a line break inside a string
    ],
)
def test_a_bad_body_string_is_the_same_error_walked_or_not(bad: str) -> None:
    for offset in (0, 5, 14, 30):
        data = ('{"interactions": [\n{"response": {"body": {"string": "'
                + "y" * offset + bad + 'z"}}}]}').encode()  # fmt: skip
        whole = read(data)
        assert whole[:2] != ("InputError", None) and whole[0] == "InputError"
        for piece in (16, 21):
            assert read(data, 0, piece, 0) == whole, (bad, offset)


def test_bad_utf8_is_the_same_error_walked_or_not() -> None:
    for bad in (b"\xff", b"\xc3", b"\xe4\xb8", b"\xed\xa0\x80", b"\xc3(\x80"):
        for where in (b"x" * 20 + bad, bad):
            data = b'{\n"interactions": [{"response": {"body": "' + where + b'"}}]}'
            whole = read(data)
            assert whole[:2] == ("InputError", "not valid JSON: str is not valid UTF-8: "
                                 "surrogates not allowed"), whole  # fmt: skip
            assert read(data, 0, 16, 0) == whole
        data = b'{"interactions": [{"request": {"body": "' + bad + b'"}}]}'
        assert read(data, 0, 16, 0) == read(data)


def test_a_body_that_never_ends_is_the_same_error() -> None:
    data = b'{"interactions": [\n{"response": {"body": {"string": "' + b"abc\\n" * 5000
    whole = read(data)
    assert whole == ("InputError", "not valid JSON: unexpected end of data", 2)
    assert read(data, 0, 64, 0) == read(data, 0, 64, 1 << 20) == whole
    cut = document(with_body({"string": SSE}))[:-40]
    assert read(cut, 0, 16, 0) == read(cut)


def test_content_after_the_document_and_no_json_are_the_same_error() -> None:
    good = document(with_body({"string": SSE}))
    for data in [
        good + b"\n\n x",
        good + b"\n{}",
        good.replace(b'"version"', b'"version" "x"'),
        good.replace(b'"status"', b'@"status"'),
        good.replace(b'"interactions": [', b'"interactions": [1 2, '),
    ]:
        whole = read(data)
        assert whole[0] == "InputError", data[-20:]
        assert read(data, 0, 16, 0) == whole, whole


def test_a_huge_document_that_is_no_json_is_said_early() -> None:
    """Tokens that make no JSON (a key with no value): the skeleton is checked as it
    grows, and the error said before the file is read to its end."""
    data = b'{"interactions": [{"a" "b" ' + b'"c", ' * 300_000 + b"}]}"
    stream = Slow(data, 1 << 16)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_walk, "BIG", 0)
        patch.setattr(json_document, "_BLOCK", 1 << 16)  # reads of 64 KiB, the file 1.5 MB
        with pytest.raises(InputError, match="not valid JSON: "):
            list(cassette.entries(stream))
    assert stream.tell() < len(data)


def test_nesting_beside_the_body() -> None:
    for depth in (50, 1000):
        deep = "[" * depth + "]" * depth
        data = ('{"x": ' + deep + ', "interactions": [{"response": {"body": '
                + json.dumps(SSE) + "}}]}").encode()  # fmt: skip
        assert read(data, 0, 16, 0) == read(data)
    deep = "[" * 1100 + "]" * 1100
    data = ('{"interactions": [{"x": ' + deep + ', "response": {"body": "'
            + "t" * 100 + '"}}]}').encode()  # fmt: skip
    whole = read(data)
    assert whole[:2] == ("InputError", "not valid JSON: depth limit exceeded")
    assert read(data, 0, 16, 0) == whole
    deep_body = {"interactions": [with_body({"string": SSE}, parsed_body=[[[[1]]]] * 3)]}
    walked_too(json.dumps(deep_body).encode())
    refused = {"interactions": [with_body(SSE)]}
    refused["interactions"][0]["request"]["body"] = json.dumps({"a": "[" * 300 + "]" * 300})
    nested = json.loads(refused["interactions"][0]["request"]["body"])
    nested["a"] = json.loads("[" * 250 + "]" * 250)
    refused["interactions"][0]["request"]["body"] = json.dumps(nested)
    whole = walked_too(json.dumps(refused).encode())
    assert whole[0][7] is not None  # the request nested past MAX_DEPTH refuses the exchange


def test_a_huge_value_that_is_no_body_is_held_and_reads_the_same() -> None:
    item = with_body({"string": SSE})
    item["request"]["body"] = json.dumps({**made.CHAT_REQUEST, "pad": "p" * 5000})
    item["response"]["headers"]["x-long"] = ["h" * 5000]
    data = document(item, other={"string": "s" * 5000}, body="b" * 5000)
    whole = walked_too(data)
    assert whole[0][6]["pad"] == "p" * 5000
    assert read(json.dumps({"big": "x" * 5000}).encode(), 0, 16, 0) == read(
        json.dumps({"big": "x" * 5000}).encode()
    )


def test_only_a_file_past_the_threshold_is_walked_and_spools_share_one_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walks: list[bodies.Walked] = []
    real = bodies.Walked.pieces

    def seen(self: bodies.Walked) -> Any:
        walks.append(self)
        return real(self)

    monkeypatch.setattr(bodies.Walked, "pieces", seen)
    data = document(*[with_body({"string": f"body {n} " + SSE}) for n in range(300)])
    whole = read(data)
    assert walks == []
    assert read(data, len(data)) == whole  # not past it: read whole
    assert walks == []
    assert read(data, len(data) - 1, 16, 0) == whole
    assert len(walks) == 300
    assert len({id(walked.text.file) for walked in walks}) == 1
    walks.clear()
    assert read(data, 0, 16, len(json.dumps(SSE)) + 8) == whole  # each body kept
    assert walks == []


def test_short_interactions_are_copied_whole_not_token_by_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python work per interaction, not per token: a cassette of many small ones costs
    a few followed tokens (the document's own, and its list's commas)."""
    followed: list[bytes] = []
    real = json_walk.Walk._token

    def counted(self: json_walk.Walk, token: bytes) -> bool:
        followed.append(token)
        return real(self, token)

    monkeypatch.setattr(json_walk.Walk, "_token", counted)
    data = document(*[with_body({"string": f"body {n} " + SSE}) for n in range(300)])
    whole = read(data)
    assert read(data, 0) == whole
    assert len(followed) < 300 + 10, followed[:20]
    followed.clear()
    assert read(data, 0, 16, 0) == whole  # every body walked: every token followed
    assert len(followed) > 300 * 20

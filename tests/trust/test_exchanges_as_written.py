"""Files of exchanges read as their writers meant: ``#N`` is the exchange's own
position, the same in every listing, message and command; a file is told by its
structure, whatever order its keys come in; YAML values JSON cannot hold are read as
docs/containers.md says or refused naming the place; Python 2 VCR.py cassettes are
read, and no YAML tag ever constructs a Python object; ``collect FILE#N`` uses the
request recorded with the stream, as ``convert`` does.

Every fixture is written here, one per layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.inprocess import Result, assert_clean, run

CHUNKS = [
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"},
                  "finish_reason": None}]},
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
]  # fmt: skip
SSE = "".join(f"data: {json.dumps(c)}\n\n" for c in CHUNKS) + "data: [DONE]\n\n"
URL = "https://api.openai.com/v1/chat/completions"
REQUEST = {"model": "m", "instructions": "be brief", "temperature": 0.25,
           "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip


def chatx(*args: str) -> Result:
    return run(list(args))


def write(folder: Path, name: str, data: str | bytes | dict[str, Any], **dump: Any) -> str:
    path = folder / name
    if isinstance(data, dict):
        data = json.dumps(data, **dump)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def indented(text: str, by: int) -> str:
    return "".join(" " * by + line + "\n" if line else "\n" for line in text.split("\n"))


def cassette(body_yaml: str, request_yaml: str = "", top: str = "") -> str:
    """A VCR.py cassette of one interaction; ``body_yaml``: the lines under response."""
    return (
        top + "interactions:\n- request:\n    method: POST\n    uri: " + URL + "\n"
        + request_yaml
        + "  response:\n    status: {code: 200, message: OK}\n"
        "    headers: {Content-Type: [text/event-stream]}\n" + body_yaml
    )  # fmt: skip


LITERAL_BODY = "    body:\n      string: |\n" + indented(SSE, 8)


# -- YAML values JSON cannot hold ----------------------------------------------------------


def parsed(value: str) -> str:
    return cassette(f"    parsed_body: {value}\n")


COMPLETION = "id: x, object: chat.completion, model: m, choices: [{index: 0, message: " \
    "{role: assistant, content: hi}, finish_reason: stop}]"  # fmt: skip


def collected(path: str) -> dict[str, Any]:
    result = chatx("collect", "-q", path + "#0")
    assert result.code == 0, result.err
    value = json.loads(result.stdout)
    assert isinstance(value, dict)
    return value


def test_a_timestamp_is_the_text_written(tmp_path: Path) -> None:
    path = write(tmp_path, "t.yaml", parsed("{" + COMPLETION + ", created: 2024-01-01, "
                                            "system_fingerprint: 2024-01-01T10:00:00Z}"))  # fmt: skip
    got = collected(path)
    assert got["system_fingerprint"] == "2024-01-01T10:00:00Z"


def test_keys_that_are_not_text_are_written_as_json_writes_them(tmp_path: Path) -> None:
    path = write(tmp_path, "k.yaml", parsed("{" + COMPLETION + ", created: 1, metadata: "
                                            "{1: a, null: c, 1.5: d, flags: {true: b}}}"))  # fmt: skip
    assert collected(path)["metadata"] == {
        "1": "a",
        "null": "c",
        "1.5": "d",
        "flags": {"true": "b"},
    }


def test_an_integer_beyond_64_bits_is_carried_exactly(tmp_path: Path) -> None:
    big = "123456789012345678901234567890"
    path = write(tmp_path, "b.yaml", parsed("{" + COMPLETION + f", created: {big}}}"))
    result = chatx("convert", path + "#0", "--to", "chat-chunk")
    assert result.code == 0, result.err
    assert f'"created":{big}'.encode() in result.stdout
    assert "integer beyond 64 bits at created" in result.err


def test_binary_in_a_parsed_body_is_its_text(tmp_path: Path) -> None:
    path = write(tmp_path, "bin.yaml", parsed("{" + COMPLETION + ", created: 1, "
                                              "system_fingerprint: !!binary ZnBfMQ==}"))  # fmt: skip
    assert collected(path)["system_fingerprint"] == "fp_1"


def test_binary_in_a_parsed_request_is_its_text(tmp_path: Path) -> None:
    path = write(tmp_path, "req.yaml", cassette(
        LITERAL_BODY, "    parsed_body: {model: m, instructions: !!binary YmUgYnJpZWY=}\n"))  # fmt: skip
    result = chatx("convert", path + "#0", "--to", "responses-event", "-q")
    assert result.code == 0, result.err
    assert b'"instructions":"be brief"' in result.stdout


def test_an_omap_is_an_object_and_pairs_a_list_of_lists(tmp_path: Path) -> None:
    path = write(tmp_path, "o.yaml", cassette(
        "    parsed_body: !!omap [{id: x}, {object: chat.completion}, {created: 1},\n"
        "      {model: m}, {choices: []}, {metadata: !!pairs [{a: 1}, {a: 2}]}]\n"))  # fmt: skip
    got = collected(path)
    assert list(got)[:3] == ["id", "object", "created"]
    assert got["metadata"] == [["a", 1], ["a", 2]]


REFUSED = {
    "set": ("{" + COMPLETION + ", created: 1, metadata: !!set {a, b}}",
            "interactions[0].response.parsed_body.metadata: a YAML set (!!set) has no JSON form"),
    "nan": ("{" + COMPLETION + ", created: .nan}",
            "interactions[0].response.parsed_body.created: nan has no JSON form"),
    "inf key": ("{" + COMPLETION + ", created: 1, metadata: {.inf: a}}",
                "a key in interactions[0].response.parsed_body.metadata: inf has no JSON form"),
    "binary not UTF-8": ("{" + COMPLETION + ", created: 1, id: !!binary //79}",
                         "interactions[0].response.parsed_body.id: !!binary bytes that are not "
                         "UTF-8 text"),
    "bad base64": ("{" + COMPLETION + ", created: 1, id: !!binary '@@'}", "bad base64"),
}  # fmt: skip


@pytest.mark.parametrize(("value", "said"), REFUSED.values(), ids=REFUSED.keys())
def test_a_value_json_has_no_form_for_is_refused_naming_the_place(
    tmp_path: Path, value: str, said: str
) -> None:
    path = write(tmp_path, "r.yaml", parsed(value))
    for command in (["ls", path], ["convert", path + "#0"], ["collect", path + "#0"]):
        result = chatx(*command)
        assert_clean(result, {2})
        assert said in result.err, (command, result.err)
        assert f"{path}#0" in result.err


def test_a_refused_request_refuses_its_exchange_not_the_others(tmp_path: Path) -> None:
    text = cassette(LITERAL_BODY, "    parsed_body: {model: m, tools: !!set {a}}\n")
    text += "- request: {method: POST, uri: " + URL + "}\n  response:\n" + LITERAL_BODY
    path = write(tmp_path, "two.yaml", text)
    result = chatx("ls", path)
    assert result.code == 2
    assert "interactions[0].request.parsed_body.tools: a YAML set (!!set)" in result.err
    assert f"{path}#1  chat-chunk" in result.stdout.decode()
    assert chatx("convert", path + "#1", "-q").code == 0


def test_python_2_unicode_and_str_are_read_as_text(tmp_path: Path) -> None:
    body = "    body:\n      string: !!python/unicode |\n" + indented(SSE, 8)
    request = f"    body: !!python/str '{json.dumps(REQUEST)}'\n"
    path = write(tmp_path, "py2.yaml", cassette(body, request))
    listed = chatx("ls", path)
    assert listed.code == 0, listed.err
    assert "chat-chunk  3 records" in listed.stdout.decode()
    converted = chatx("convert", path, "--to", "responses-event", "-q")
    assert converted.code == 0, converted.err
    assert b'"instructions":"be brief"' in converted.stdout


@pytest.mark.parametrize("tag", [
    "!!python/object/apply:os.system ['echo owned > OWNED']",
    "!!python/object/new:os.system ['echo owned > OWNED']",
    "!!python/object:builtins.dict {}",
    "!!python/name:os.system",
    "!!python/module:os",
    "!!python/tuple [a, b]",
    "!!python/bytes aGk=",
])  # fmt: skip
def test_no_other_python_tag_constructs_anything(
    tmp_path: Path, tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "evil.yaml", cassette(LITERAL_BODY, f"    body: {tag}\n"))
    result = chatx("ls", path)
    assert_clean(result, {2})
    assert f"{path}:5: not valid YAML: the tag !!python/" in result.err
    assert "names Python code to run, which chatx never does" in result.err
    assert not (tmp_path / "OWNED").exists()

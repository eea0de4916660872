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

from chatx.containers import demux
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
                                            "{1: a, true: b, null: c, 1.5: d, 0: e, false: f}}"))  # fmt: skip
    # Python holds 1 and true (0 and false) as one key: each is its own text first.
    assert collected(path)["metadata"] == {
        "1": "a", "true": "b", "null": "c", "1.5": "d", "0": "e", "false": "f"
    }  # fmt: skip


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


# -- #N is the exchange's own position --------------------------------------------------------


def har_entry(text: str | None, *, encoding: str | None = None, post: dict | None = None) -> dict:
    request: dict[str, Any] = {"method": "POST", "url": URL}
    if post is not None:
        request["postData"] = {"mimeType": "application/json", "text": json.dumps(post)}
    content: dict[str, Any] = {"mimeType": "text/event-stream"}
    if text is not None:
        content["text"] = text
    if encoding:
        content["encoding"] = encoding
    return {"request": request, "response": {"status": 200, "content": content}}


def har(*entries: Any) -> dict[str, Any]:
    return {"log": {"version": "1.2", "creator": {"name": "t"}, "entries": list(entries)}}


def listed(path: str) -> list[dict[str, Any]]:
    result = chatx("ls", "--output", "json", path)
    return [json.loads(line) for line in result.stdout.decode().splitlines()]


ELEMENTS = {
    "null": None,
    "number": 7,
    "string": "an entry that is a string",
    "array": [{"request": {"method": "GET"}}],
    "true": True,
    "empty object": {},
}


@pytest.mark.parametrize("element", ELEMENTS.values(), ids=ELEMENTS.keys())
def test_a_har_entry_is_numbered_by_its_place_in_log_entries(tmp_path: Path, element: Any) -> None:
    path = write(tmp_path, "e.har", har(element, har_entry(SSE), element, har_entry(SSE)))
    rows = listed(path)
    assert [row["index"] for row in rows] == [0, 1, 2, 3]
    assert [row["address"] for row in rows] == [f"{path}#{n}" for n in range(4)]
    assert [row["format"] for row in rows] == [None, "chat-chunk", None, "chat-chunk"]
    one = chatx("convert", path + "#1", "--to", "chat-chunk", "-q")
    three = chatx("convert", path + "#3", "--to", "chat-chunk", "-q")
    assert one.code == three.code == 0
    assert one.stdout == three.stdout != b""
    nothing = chatx("convert", path + "#0")
    assert_clean(nothing, {2})
    assert f"{path}#0: not a stream" in nothing.err


def test_the_same_numbers_in_ls_convert_out_dir_and_validate(tmp_path: Path) -> None:
    path = write(tmp_path, "n.har", har(None, har_entry("data: x\n\n"), har_entry(SSE), 5,
                                        har_entry(SSE)))  # fmt: skip
    assert [row["address"] for row in listed(path) if row["format"]] == [f"{path}#2", f"{path}#4"]
    out = tmp_path / "out"
    done = chatx("convert", path, "--to", "chat-chunk", "--out-dir", str(out), "-q")
    assert done.code == 0, done.err
    assert sorted(p.name for p in out.iterdir()) == ["n.2.chat-chunk.sse", "n.4.chat-chunk.sse"]
    checked = chatx("validate", path)
    assert checked.stdout.decode().splitlines() == [
        f"{path}#2: ok (chat-chunk, sse, 3 records)",
        f"{path}#4: ok (chat-chunk, sse, 3 records)",
    ]


def test_a_note_about_another_exchange_names_that_exchange(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.har", har(har_entry("!!!", encoding="base64"), har_entry(SSE)))
    expected = f"chatx: skipped: {path}#0: its body cannot be decoded (bad base64:"
    for command in (["convert", path, "--to", "chat-chunk"], ["collect", path],
                    ["diff", path, path + "#1"]):  # fmt: skip
        result = chatx(*command)
        assert result.code == 2, command
        lines = [line for line in result.err.splitlines() if "skipped" in line]
        assert lines and all(line.startswith(expected) for line in lines), (command, result.err)
        assert f"{path}#1: {path}#0" not in result.err
    listing = chatx("ls", path)
    assert f"chatx: error: {path}#0: its body cannot be decoded (bad base64:" in listing.err


def test_a_truncated_har_names_the_entry_by_its_place(tmp_path: Path) -> None:
    text = json.dumps(har(None, har_entry(SSE), har_entry(SSE)))
    path = write(tmp_path, "cut.har", text[: text.rindex('{"request"') + 20])
    result = chatx("ls", path)
    assert_clean(result, {2})
    assert "inside log.entries[2]" in result.err


def test_a_cassette_interaction_that_is_no_mapping_keeps_its_place(tmp_path: Path) -> None:
    text = cassette(LITERAL_BODY).replace("interactions:\n", "interactions:\n- just text\n", 1)
    path = write(tmp_path, "c.yaml", text)
    assert [(row["index"], row["format"]) for row in listed(path)] == [(0, None), (1, "chat-chunk")]


# -- told by structure, not by the first key ----------------------------------------------------


def recording(**extra: Any) -> dict[str, Any]:
    chunks = [{"__type__": "openai.types.chat.ChatCompletionChunk", "__data__": c} for c in CHUNKS]
    return {
        "test_id": "tests/test_x.py::test_y",
        "request": {
            "method": "POST",
            "url": URL,
            "body": REQUEST,
            "endpoint": "/v1/chat/completions",
        },
        "response": {"body": chunks, "is_streaming": True},
        **extra,
    }


LAYOUTS = {
    "har": ("a.har", har(har_entry(SSE)), {}),
    "har, sorted keys": ("b.har", har(har_entry(SSE)), {"sort_keys": True}),
    "har, a key before log": ("c.har", {"comment": "saved by hand", **har(har_entry(SSE))}, {}),
    "har, _recordingName first (Polly.JS)": (
        "d.har", {"log": {"_recordingName": "x" * 3000, **har(har_entry(SSE))["log"]}}, {}),
    "har, indented": ("e.har", har(har_entry(SSE)), {"indent": 2}),
    "json cassette, version first": (
        "f.json", {"version": 1, "interactions": [
            {"request": {"method": "POST", "uri": URL, "body": json.dumps(REQUEST)},
             "response": {"status": {"code": 200}, "body": {"string": SSE}}}]}, {}),
    "json cassette, sorted": (
        "g.json", {"version": 1, "interactions": [
            {"response": {"status": {"code": 200}, "body": {"string": SSE}},
             "request": {"uri": URL, "method": "POST"}}]}, {"sort_keys": True}),
    "ruby json cassette": (
        "h.json", {"recorded_with": "VCR 6.4.0", "http_interactions": [
            {"request": {"method": "post", "uri": URL},
             "response": {"status": {"code": 200}, "body": {"encoding": "UTF-8", "string": SSE}},
             "recorded_at": "Tue, 01 Dec 2026 00:00:00 GMT"}]}, {}),
    "recording": ("i.json", recording(), {}),
    "recording, sorted keys": ("j.json", recording(id_normalization_mapping={}), {"sort_keys": True}),
    "recording, response first": ("k.json", {"response": recording()["response"],
                                              "request": recording()["request"]}, {}),
    "recording, a big request first": (
        "l.json", {"request": {**recording()["request"], "body": {**REQUEST, "messages": [
            {"role": "user", "content": "x" * 40000}]}}, "response": recording()["response"]},
        {}),
}  # fmt: skip


@pytest.mark.parametrize(("name", "data", "dump"), LAYOUTS.values(), ids=LAYOUTS.keys())
def test_a_json_file_of_exchanges_is_told_by_its_structure(
    tmp_path: Path, name: str, data: dict[str, Any], dump: dict[str, Any]
) -> None:
    path = write(tmp_path, name, data, **dump)
    rows = listed(path)
    # A recording keeps the chunks the client got: no [DONE], which SSE bodies have.
    records = 2 if "response" in data and "is_streaming" in data["response"] else 3
    assert [(row["address"], row["format"], row["records"]) for row in rows] == [
        (f"{path}#0", "chat-chunk", records)
    ]
    assert chatx("convert", path, "-q").code == 0


YAML_LAYOUTS = {
    "interactions first": cassette(LITERAL_BODY) + "version: 1\n",
    "version first": cassette(LITERAL_BODY, top="version: 1\n"),
    "comments, a directive and --- first": "%YAML 1.1\n# recorded\n---\n" + cassette(LITERAL_BODY),
    "a long mapping first": cassette(LITERAL_BODY, top="meta:\n" + "  k: v\n" * 400),
    "ruby, sorted": "---\nhttp_interactions:\n- recorded_at: x\n  request:\n    method: post\n"
                    f"    uri: {URL}\n  response:\n    status: {{code: 200}}\n"
                    + LITERAL_BODY.replace("string: |", "encoding: UTF-8\n      string: |")
                    + "recorded_with: VCR 6.4.0\n",
}  # fmt: skip


@pytest.mark.parametrize("text", YAML_LAYOUTS.values(), ids=YAML_LAYOUTS.keys())
def test_a_yaml_cassette_is_told_by_its_structure(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "c.yaml", text)
    rows = listed(path)
    assert [(row["address"], row["format"]) for row in rows] == [(f"{path}#0", "chat-chunk")]


BARE = {
    "a json array of chat chunks": json.dumps(CHUNKS),
    "json lines of chat chunks": "".join(json.dumps(c) + "\n" for c in CHUNKS),
    "a responses event has a response object":
        json.dumps({"type": "response.created", "response": {"id": "r", "object": "response",
                    "created_at": 1, "status": "in_progress", "model": "m", "output": []},
                    "sequence_number": 0}) + "\n",
    "sse whose field looks like a key": "event: message\n" + SSE,
    "a chat completion with a log field": json.dumps({
        "id": "x", "object": "chat.completion", "created": 1, "model": "m",
        "log": "not a HAR", "choices": [{"index": 0, "message": {"role": "assistant",
        "content": "hi"}, "finish_reason": "stop"}]}),
}  # fmt: skip


@pytest.mark.parametrize("text", BARE.values(), ids=BARE.keys())
def test_a_bare_stream_is_not_taken_for_a_file_of_exchanges(tmp_path: Path, text: str) -> None:
    data = text.encode()
    assert demux.detect(data) is None
    path = write(tmp_path, "s.json", data)
    rows = listed(path)
    assert [row["address"] for row in rows] == [f"{path}#0"]
    assert rows[0]["format"] is not None


def test_detection_is_a_score() -> None:
    assert demux.scores(json.dumps(har()).encode())["har"] == 100
    assert demux.scores(b'{"log": {"_x": "')["har"] == 60  # cut before a HAR key: likely
    assert demux.scores(b'{"response": {"id": 1}}')["llama-stack-recording"] <= demux.PASS
    assert demux.scores(b'{"interactions": "no list"}')["vcr"] == 0


def test_detection_waits_for_the_structure_not_the_first_key() -> None:
    assert not demux.decidable(b'{"version": 1, "interact')
    assert demux.decidable(b'{"version": 1, "interactions": [{"request": {')
    assert demux.decidable(b'{"id": "c1", "object": "chat.completion.chunk"}\n')
    assert not demux.decidable(b"version: 1\n")
    assert demux.decidable(b"version: 1\ninteractions:\n")
    assert demux.decidable(b"data: {}\n")


# -- collect FILE#N uses the recorded request ---------------------------------------------------


@pytest.mark.parametrize("kind", ["har", "cassette", "recording"])
def test_collect_uses_the_request_recorded_with_the_stream(tmp_path: Path, kind: str) -> None:
    if kind == "har":
        path = write(tmp_path, "r.har", har(har_entry("data: x\n\n"), har_entry(SSE, post=REQUEST)))
        address = path + "#1"
    elif kind == "cassette":
        text = cassette(LITERAL_BODY, f"    body: '{json.dumps(REQUEST)}'\n")
        address = write(tmp_path, "r.yaml", text) + "#0"
    else:
        address = write(tmp_path, "r.json", recording()) + "#0"
    direct = chatx("collect", address, "--as", "responses")
    converted = chatx("convert", address, "--to", "responses-event")
    assert direct.code == converted.code == 0, (direct.err, converted.err)
    through = run(["collect", "-"], converted.stdout)
    assert json.loads(direct.stdout) == json.loads(through.stdout)
    response = json.loads(direct.stdout)
    assert (response["instructions"], response["temperature"]) == ("be brief", 0.25)
    assert direct.stderr == converted.stderr  # the same notes, in the same words


@pytest.mark.parametrize("name", ["r.json", "c.json"])
def test_integers_beyond_64_bits_in_json_files_of_exchanges_are_exact(
    tmp_path: Path, name: str
) -> None:
    """orjson reads them as doubles: a recording's chunk, or a JSON cassette's parsed
    body, kept 123456789012345678901234567890 as 1.2345678901234568e+29."""
    big = 123456789012345678901234567890
    chunks = [{**chunk, "created": big} for chunk in CHUNKS]
    if name == "r.json":
        data = recording()
        data["response"]["body"] = [{"__data__": chunk} for chunk in chunks]
    else:
        data = {"interactions": [{"request": {"method": "POST", "uri": URL},
                                  "response": {"parsed_body": [{"data": c} for c in chunks]}}]}  # fmt: skip
    path = write(tmp_path, name, data)
    result = chatx("convert", path, "--to", "chat-chunk")
    assert result.code == 0, result.err
    assert f'"created":{big}'.encode() in result.stdout

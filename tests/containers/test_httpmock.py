"""httpmock's YAML mocks (rig's cassettes) beyond what tests/containers/test_stub_layouts.py
covers: its other body and URL fields, and the cassette loader's bounds holding over a
file of many documents, not one document at a time."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from chatx import limits
from tests.containers.common import chatx
from tests.containers.test_stub_layouts import NOT_FOUND, REQUEST, SSE


def _laughs(levels: int) -> str:
    """A document whose aliases add about 10**levels values to the few it writes."""
    lines = ["when:", "  path: /x", "  method: GET", "then:", "  status: 404",
             "  l0: &l0 [a, a, a, a, a, a, a, a, a, a]"]  # fmt: skip
    for n in range(1, levels):
        lines.append(f"  l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]")
    lines.append(f"  body: '{NOT_FOUND}'")
    return "\n".join(lines) + "\n"


def test_base64_body_and_the_host_it_answers(tmp_path: Path) -> None:
    path = tmp_path / "mock.yaml"
    path.write_text(
        "when:\n  scheme: https\n  host: api.anthropic.com\n  port: 443\n  path: /v1/messages\n"
        f"  method: POST\n  json_body:\n    {json.dumps(REQUEST)}\n"
        "then:\n  status: 200\n  header:\n  - name: content-type\n    value: text/event-stream\n"
        f"  body_base64: {base64.b64encode(SSE.encode()).decode()}\n  delay: 20\n"
    )
    listed = chatx("ls", str(path))
    assert listed.code == 0, listed.err
    assert listed.stdout.decode().split()[:7] == [
        f"{path}#0", "anthropic-event", "6", "records", "POST",
        "https://api.anthropic.com/v1/messages", "200",
    ]  # fmt: skip
    collected = chatx("collect", "-q", "--as", "responses", str(path))
    assert json.loads(collected.stdout)["max_output_tokens"] == REQUEST["max_tokens"]


def test_aliases_are_bounded_over_the_whole_file(tmp_path: Path) -> None:
    """Each document adds about 111,110 values through its aliases: one is read, ten
    (1.1 million together, each under the bound alone) are refused."""
    one = tmp_path / "one.yaml"
    one.write_text(_laughs(5))
    assert chatx("ls", str(one)).code == 0
    many = tmp_path / "many.yaml"
    many.write_text("---\n".join([_laughs(5)] * 10))
    done = chatx("ls", str(many))
    assert done.code == 2
    assert f"add more than {limits.MAX_YAML_ALIASED:,} values" in done.err
    assert "Traceback" not in done.err


def test_a_python_tag_refuses_the_file_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "mock.yaml"
    path.write_text(
        "when:\n  path: /v1/messages\n  method: POST\nthen:\n  status: 200\n  body: hi\n---\n"
        "when:\n  path: /x\n  method: GET\nthen:\n  status: !!python/object/apply:os.getpid []\n"
    )
    done = chatx("ls", str(path))
    assert done.code == 2
    assert f"{path}:12:" in done.err and "names Python code to run" in done.err


def test_an_older_json_body_answer(tmp_path: Path) -> None:
    """httpmock 0.6's then.json_body: a JSON answer, here an error that is no stream."""
    path = tmp_path / "mock.yaml"
    path.write_text(f"when:\n  method: GET\n  path: /v1/models/x\nthen:\n  status: 404\n"
                    f"  json_body: '{NOT_FOUND}'\n")  # fmt: skip
    converted = chatx("convert", f"{path}#0", "--to", "chat", "-q")
    assert converted.code == 0, converted.err
    assert b"not found" in converted.stdout

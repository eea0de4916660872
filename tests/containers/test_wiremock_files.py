"""WireMock's ``bodyFileName``: a mapping under ``ROOT/mappings/`` names a body kept
under ``ROOT/__files/``. Read from there by every command; a name that leaves that
folder (``..``, an absolute path, a symlink out) is refused, never followed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.containers.common import chatx, same_meaning
from tests.containers.test_stub_layouts import REQUEST, SSE, wiremock_one


def _root(tmp_path: Path, name: str = "streams/messages.sse") -> Path:
    """A WireMock root: the mapping in mappings/, its body in __files/."""
    root = tmp_path / "wiremock"
    (root / "mappings").mkdir(parents=True)
    stub = wiremock_one()
    del stub["response"]["body"]
    stub["response"]["bodyFileName"] = name
    (root / "mappings" / "messages.json").write_text(json.dumps(stub))
    body = root / "__files" / "streams" / "messages.sse"
    body.parent.mkdir(parents=True)
    body.write_text(SSE)
    return root


def test_the_body_file_is_read_by_every_command(tmp_path: Path) -> None:
    root = _root(tmp_path)
    mapping = root / "mappings" / "messages.json"
    listed = chatx("ls", str(mapping))
    assert listed.code == 0, listed.err
    assert listed.stdout.decode().split()[:3] == [f"{mapping}#0", "anthropic-event", "6"]
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    same_meaning(f"{mapping}#0", str(root / "__files" / "streams" / "messages.sse"), str(request))
    assert chatx("validate", str(mapping)).code == 0
    out = tmp_path / "out"
    done = chatx("convert", str(root / "mappings"), "--to", "chat", "--out-dir", str(out), "-q")
    assert done.code == 0, done.err
    assert [p.name for p in out.iterdir()] == ["messages.0.chat-chunk.sse"]


def test_serve_answers_with_the_body_file(tmp_path: Path) -> None:
    pytest.importorskip("httpx2")
    from tests.live.support import post, serving

    mapping = _root(tmp_path) / "mappings" / "messages.json"
    with serving([str(mapping)]) as (running, _):
        answer = post(f"{running.url}/v1/messages", REQUEST)
    assert answer.status_code == 200
    assert answer.content == SSE.encode()


@pytest.mark.parametrize("name", ["../../secret.sse", "/etc/hostname", "..\\..\\secret.sse"])
def test_a_name_that_leaves_the_files_folder_is_refused(tmp_path: Path, name: str) -> None:
    root = _root(tmp_path, name)
    (tmp_path / "secret.sse").write_text(SSE)
    done = chatx("convert", f"{root / 'mappings' / 'messages.json'}#0", "--to", "chat")
    assert done.code == 2
    assert "leaves WireMock's __files: not read" in done.err


def test_a_symlink_out_of_the_files_folder_is_refused(tmp_path: Path) -> None:
    root = _root(tmp_path, "link.sse")
    (tmp_path / "secret.sse").write_text(SSE)
    os.symlink(tmp_path / "secret.sse", root / "__files" / "link.sse")
    done = chatx("convert", f"{root / 'mappings' / 'messages.json'}#0", "--to", "chat")
    assert done.code == 2
    assert "leads out of" in done.err and "not read" in done.err


def test_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    root = _root(tmp_path, "pipe.sse")
    os.mkfifo(root / "__files" / "pipe.sse")
    done = chatx("convert", f"{root / 'mappings' / 'messages.json'}#0", "--to", "chat")
    assert done.code == 2
    assert "no regular file" in done.err


def test_a_mapping_on_stdin_says_it_has_no_folder(tmp_path: Path) -> None:
    mapping = _root(tmp_path) / "mappings" / "messages.json"
    done = chatx("convert", "-", "--to", "chat", stdin=mapping.read_bytes())
    assert done.code == 2
    assert "read from stdin has no folder" in done.err

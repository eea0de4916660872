"""A directory walk (convert DIR --out-dir, validate DIR, serve DIR) finds files of
recorded exchanges and compressed files too; a file it finds that holds no stream is
said once, as a warning, and the others are read."""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
from pathlib import Path

import pytest

from chatx.live import served_captures
from chatx.outdir import walking
from tests.containers import make_fixtures as made
from tests.containers.common import FIXTURES, chatx

MKDOCS = b"site_name: notes\nnav:\n  - index.md\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Streams where they live, beside files a walk must pass over or leave out."""
    top = tmp_path / "recorded"
    (top / "vcr").mkdir(parents=True)
    shutil.copy(FIXTURES / "many.har", top / "session.har")
    (top / "vcr" / "styles.yaml.bz2").write_bytes(
        bz2.compress((FIXTURES / "styles.yaml").read_bytes())
    )
    shutil.copy(FIXTURES / "no-streams.yaml", top / "vcr" / "embeddings.yaml")
    (top / "chat.sse.gz").write_bytes(gzip.compress(made.CHAT, mtime=0))
    (top / "tools.xz").write_bytes(lzma.compress(made.CHAT_TOOLS))  # no suffix but its own
    (top / "mkdocs.yml").write_bytes(MKDOCS)  # YAML that is no cassette
    (top / "logs.tar.gz").write_bytes(gzip.compress(b"an archive", mtime=0))  # not taken
    (top / "chat.sse.request.json.gz").write_bytes(gzip.compress(b"{}", mtime=0))  # not taken
    return top


def test_names_a_walk_takes() -> None:
    takes = ["a.sse", "a.har", "a.yaml", "a.yml", "a.httprr", "a.mitm", "a.json", "a.sse.gz",
             "a.har.zst",
             "a.yaml.bz2", "a.jsonl.xz", "a.gz", "a.zst"]  # fmt: skip
    leaves = ["a.txt", "a.tar.gz", "a.log.gz", ".a.sse.gz", "a.request.json",
              "a.request.json.gz", "a.md"]  # fmt: skip
    assert [name for name in takes if walking.is_capture_name(name)] == takes
    assert [name for name in leaves if walking.is_capture_name(name)] == []
    assert [walking.capture_stem(n) for n in ("d/a.sse.gz", "d/a.har", "a.gz", "x.har#2")] == [
        "d/a", "d/a", "a", "x.har#2"
    ]  # fmt: skip


def test_convert_dir_writes_each_stream_and_says_each_file_without_one_once(
    folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = chatx("convert", str(folder), "--to", "chat-chunk", "--out-dir", str(out))
    assert done.code == 0, done.err
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == [
        "chat.chat-chunk.sse",
        "session.0.chat-chunk.sse", "session.1.chat-chunk.sse", "session.2.chat-chunk.sse",
        "session.4.chat-chunk.sse",
        "tools.chat-chunk.sse",
        *[f"vcr/styles.{n}.chat-chunk.sse" for n in range(6)],
    ]  # fmt: skip
    said = [line for line in done.err.splitlines() if not line.startswith("chatx: lost: ")]
    assert said == [  # Responses fields chat has no place for are the "lost" notes
        f"chatx: warning: {folder}/mkdocs.yml: a YAML file that is no VCR cassette,"
        " not a capture file: skipped",
        f"chatx: warning: {folder}/vcr/embeddings.yaml: no streams in"
        f" {folder}/vcr/embeddings.yaml (1 interaction, none streaming): skipped",
        "chatx: 12 converted, 0 unchanged, 12 written, 0 failed",
    ]
    # each output is what the stream converts to given alone
    bare = chatx("convert", "--to", "chat-chunk", "-q", stdin=made.CHAT_TOOLS).stdout
    assert (out / "tools.chat-chunk.sse").read_bytes() == bare
    alone = chatx("convert", f"{FIXTURES}/styles.yaml#3", "--to", "chat-chunk", "-q").stdout
    assert (out / "vcr" / "styles.3.chat-chunk.sse").read_bytes() == alone


def test_a_file_named_that_holds_no_stream_is_still_an_error(folder: Path, tmp_path: Path) -> None:
    named = folder / "vcr" / "embeddings.yaml"
    done = chatx("convert", str(folder / "chat.sse.gz"), str(named), "--out-dir", str(tmp_path))
    assert done.code == 2
    assert f"chatx: error: {named}: no streams in {named} (1 interaction" in done.err
    assert (tmp_path / "chat.responses-event.sse").is_file()


def test_validate_dir_checks_every_stream_found(folder: Path) -> None:
    done = chatx("validate", str(folder))
    assert done.code == 0, done.err
    checked = [line.split(": ")[0] for line in done.stdout.decode().splitlines()]
    assert checked == [
        f"{folder}/chat.sse.gz",
        f"{folder}/session.har#0", f"{folder}/session.har#1", f"{folder}/session.har#4",
        f"{folder}/tools.xz",
        *[f"{folder}/vcr/styles.yaml.bz2#{n}" for n in range(6)],
    ]  # fmt: skip
    assert done.err.splitlines() == [
        f"chatx: warning: {folder}/mkdocs.yml: a YAML file that is no VCR cassette,"
        " not a capture file: skipped",
        f"chatx: warning: {folder}/vcr/embeddings.yaml: no streams in"
        f" {folder}/vcr/embeddings.yaml (1 interaction, none streaming): skipped",
    ]


def test_serve_loads_each_stream_with_its_recorded_request(folder: Path) -> None:
    skipped: list[str] = []
    loaded = served_captures.load([str(folder)], skipped)
    assert [c.name for c in loaded] == [
        "recorded/chat.sse.gz",
        "recorded/session.har#0", "recorded/session.har#1", "recorded/session.har#2",
        "recorded/session.har#4",
        "recorded/tools.xz",
        *[f"recorded/vcr/styles.yaml.bz2#{n}" for n in range(6)],
    ]  # fmt: skip
    chat, first = loaded[0], loaded[1]
    assert (chat.stem, chat.data, chat.request) == ("recorded/chat", made.CHAT, None)
    assert (first.format, first.request, first.path) == (
        "chat-chunk", made.CHAT_REQUEST, f"{folder}/session.har#0"
    )  # fmt: skip
    assert loaded[3].whole and loaded[3].request == {**made.CHAT_REQUEST, "stream": False}
    assert skipped == [
        f"{folder}/mkdocs.yml: a YAML file that is no VCR cassette, not a capture file: skipped",
        f"{folder}/vcr/embeddings.yaml: no streams in {folder}/vcr/embeddings.yaml"
        " (1 interaction, none streaming): not a capture, skipped",
    ]


def test_serve_takes_a_har_named_on_the_command_line() -> None:
    loaded = served_captures.load([str(FIXTURES / "one-stream.har")])
    assert [(c.name, c.request) for c in loaded] == [("one-stream.har#1", made.CHAT_REQUEST)]
    with pytest.raises(Exception, match="no streams in"):
        served_captures.load([str(FIXTURES / "no-streams.har")])


def test_a_walk_passes_over_json_of_no_stream_format_but_not_broken_json(tmp_path: Path) -> None:
    top = tmp_path / "captures"
    top.mkdir()
    (top / "chat.json").write_bytes(made.CHAT.replace(b"data: ", b"").replace(b"[DONE]", b""))
    (top / "package.json").write_bytes(b'{"name": "my-app", "version": "1.0.0"}\n')
    (top / "settings.json.gz").write_bytes(gzip.compress(b'[{"theme": "dark"}]', mtime=0))
    done = chatx("validate", str(top))
    assert done.code == 0, done.err
    assert done.stdout.decode().startswith(f"{top}/chat.json: ok (chat-chunk, jsonl")
    assert done.err.splitlines() == [
        f"chatx: warning: {top}/{name}: a JSON file of no stream format chatx knows,"
        " not a capture file: skipped"
        for name in ("package.json", "settings.json.gz")
    ]
    # named on the command line it is still an error, and a capture cut short is no pass
    named = chatx("validate", str(top / "package.json"))
    assert named.code == 2 and "cannot tell the stream's format" in named.err
    (top / "cut.json").write_bytes(b'{"id": "chatcmpl-1", "object": "chat.completion.chunk", ')
    done = chatx("validate", str(top))
    assert done.code == 2 and f"{top}/cut.json:1" in done.err

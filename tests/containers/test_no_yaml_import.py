"""Start-up does not change: converting a bare stream never imports yaml, nor the
decompressors, nor the readers of files of exchanges."""

from __future__ import annotations

from tests.containers.common import ROOT, fixture
from tests.interpreter import last_json_line

# (bz2 and lzma are not listed: shutil imports them at every start, whatever chatx does)
LAZY = ("yaml", "gzip", "zstandard", "chatx.containers.har",
        "chatx.containers.cassette", "chatx.containers.llama_stack_recording", "chatx.containers.httprr")  # fmt: skip


def _loaded(argv: list[str]) -> tuple[int, list[str]]:
    script = (
        "import os, sys, json\n"
        "from chatx.cli import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"code = main({argv!r})\n"
        f"sys.__stdout__.write(json.dumps([code, [m for m in {LAZY!r} if m in sys.modules]]))\n"
    )
    code, loaded = last_json_line(script)
    return code, loaded


def test_converting_a_bare_stream_imports_no_container_reader() -> None:
    bare = str(ROOT / "fixtures" / "chat-chunk" / "text.sse")
    assert _loaded(["convert", bare, "-q"]) == (0, [])


def test_a_cassette_imports_yaml_and_its_reader_only() -> None:
    code, loaded = _loaded(["convert", fixture("styles.yaml") + "#0", "-q"])
    assert (code, loaded) == (0, ["yaml", "chatx.containers.cassette"])

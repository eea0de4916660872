"""Start-up: the registry imports a format's package when a question first reaches it
(``chatx.codecs.Registry``), and its probe, decoder, encoder and what the other commands
need load when a command uses them (``chatx.codecs.base.lazy``). So a ``convert`` of a
chat stream loads chat's decoder and the encoder of the format it writes, and nothing
else of any format: every format added does not slow the others. A usual ``convert``
command line is read without typer and click (``chatx.cli.convert.quick``). Each check
runs in a fresh interpreter, since this test process has long imported everything.
"""

from __future__ import annotations

import pytest

from chatx import codecs
from chatx.codecs.base import lazy
from tests.interpreter import fresh_python, last_json_line
from tests.paths import FIXTURES

PACKAGES = ("chat_chunk", "responses_event", "llama_stack_event", "anthropic_event")


def _codec_modules(argv: list[str]) -> tuple[int, list[str]]:
    """Run the CLI on ``argv`` in a fresh interpreter: its exit status and the modules of
    the codec packages it loaded (sorted), the shared ones (``chatx.codecs.base``…) aside."""
    prefixes = (*(f"chatx.codecs.{package}" for package in PACKAGES), "chatx.outdir")
    script = (
        "import os, sys, json\n"
        "from chatx.cli import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"code = main({argv!r})\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith({prefixes!r}))\n"
        "sys.__stdout__.write(json.dumps([code, loaded]))\n"
    )
    code, loaded = last_json_line(script)
    return code, loaded


def _of(package: str, loaded: list[str]) -> list[str]:
    return [
        m
        for m in loaded
        if m == f"chatx.codecs.{package}" or m.startswith(f"chatx.codecs.{package}.")
    ]


def test_chat_to_responses_loads_no_other_format_and_no_other_command() -> None:
    source = str(FIXTURES / "chat-chunk" / "text.sse")
    code, loaded = _codec_modules(["convert", source, "--to", "responses-event", "-q"])
    assert code == 0
    # chat's probe is sure of the first record, and responses-event is found second in
    # the registry: the formats after it are never reached, and Responses' probe is
    # never asked.
    for package in ("anthropic_event", "llama_stack_event", "gemini_event"):
        assert _of(package, loaded) == []
    assert "chatx.codecs.responses_event.probe" not in loaded
    # chat's decoder and Responses' encoder (with the modules they import), neither the
    # other side of either format nor another command's code (checker, catalogue,
    # final object, description, schema).
    for package in ("chat_chunk", "responses_event"):
        for module in ("check", "rules", "final", "describe", "schema"):
            assert f"chatx.codecs.{package}.{module}" not in loaded
    assert "chatx.codecs.chat_chunk.decode" in loaded
    assert "chatx.codecs.chat_chunk.encode" not in loaded
    assert "chatx.codecs.responses_event.encode" in loaded
    assert "chatx.codecs.responses_event.decode" not in loaded
    assert "chatx.codecs.responses_event.items" not in loaded  # the decoder's item tracker
    # one stream, to stdout: nothing of a many-file run (chatx.settings holds what both use)
    assert [m for m in loaded if m.startswith("chatx.outdir")] == []


def test_anthropic_to_chat_loads_anthropic_decoder_and_chat_encoder_only() -> None:
    source = str(FIXTURES / "anthropic-event" / "cache-usage.sse")
    code, loaded = _codec_modules(["convert", source, "--to", "chat-chunk", "-q"])
    assert code == 0
    assert "chatx.codecs.anthropic_event.decode" in loaded
    assert "chatx.codecs.anthropic_event.encode" not in loaded
    assert "chatx.codecs.chat_chunk.encode" in loaded
    assert "chatx.codecs.chat_chunk.decode" not in loaded
    # Sniffing asked chat's, Responses' and Llama Stack's probes before Anthropic's was
    # sure; Gemini, after it in the registry, was never reached.
    assert _of("llama_stack_event", loaded) == [
        "chatx.codecs.llama_stack_event",
        "chatx.codecs.llama_stack_event.probe",
    ]
    assert _of("gemini_event", loaded) == []
    assert "chatx.codecs.responses_event.decode" not in loaded
    assert "chatx.codecs.responses_event.encode" not in loaded


def _chatx_modules(argv: list[str], stdin: bytes = b"") -> tuple[int, list[str]]:
    """Run the CLI on ``argv`` (``stdin`` piped in) in a fresh interpreter: its exit
    status and every chatx module it loaded (sorted)."""
    script = (
        "import os, sys, json\n"
        "from chatx.cli import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"code = main({argv!r})\n"
        "loaded = sorted(m for m in sys.modules if m == 'chatx' or m.startswith('chatx.'))\n"
        "sys.__stdout__.write(json.dumps([code, loaded]))\n"
    )
    code, loaded = last_json_line(script, stdin=stdin)
    return code, loaded


def test_a_piped_stream_loads_what_a_file_does() -> None:
    """``curl … | chatx convert``: stdin's head is read to look at it and handed on
    (``opening.prefixed``), with neither decompression nor demux loaded."""
    piped = (FIXTURES / "chat-chunk" / "text.sse").read_bytes()
    code, loaded = _chatx_modules(["convert", "-", "--to", "responses-event", "-q"], piped)
    source = str(FIXTURES / "chat-chunk" / "text.sse")
    _, from_file = _chatx_modules(["convert", source, "--to", "responses-event", "-q"])
    assert code == 0
    assert loaded == from_file


def test_one_stream_convert_loads_its_own_command_and_reading_steps_only() -> None:
    """A bare SSE stream converted to stdout: the convert command alone of the eleven,
    opening and finding but not the bodies of exchanges nor what tells a file of them
    (an SSE head is a bare stream's) nor decompression (no magic), no reader of the
    other containers, no reading of records or decoding outside the Transcoder, no
    output file, no whole-object reader; no Responses part for citations or searches the
    stream does not have, nothing that formats a note or an error when none is said."""
    source = str(FIXTURES / "chat-chunk" / "text.sse")
    code, loaded = _chatx_modules(["convert", source, "--to", "responses-event", "-q"])
    assert code == 0
    others = ("validate", "rules", "diff", "show", "collect", "ls", "capture", "proxy", "serve")
    assert [m for m in loaded if m.removeprefix("chatx.cli.") in others] == []
    for module in (
        "chatx.reading.framing",
        "chatx.reading.decoding",
        "chatx.containers.bodies",
        "chatx.containers.members",
        "chatx.containers.jsonl",
        "chatx.containers.jsonarray",
        "chatx.atomic",
        "chatx.codecs.whole",
        "chatx.codecs.chat_chunk.whole",
        "chatx.containers.compressed",
        "chatx.containers.demux",
        "chatx.containers.base",
        "chatx.codecs.responses_event.citations",
        "chatx.codecs.responses_event.searches",
        "chatx.textsafe",
        "chatx.cli.root",
        "chatx.cli.formats",
    ):
        assert module not in loaded
    # 78 before these were deferred (issue 24), 58 after; gemini-event's registration
    # (its package and probe) made 60; 45 since the registry, probes, the reading of a
    # plain head, the Responses encoder's rarer parts and convert's command line load
    # what an input asks for (the byte templates' own module since, the finish words
    # in chatx.codecs.base); 46 with the block reader's own module, reading many records
    # at once apart from one record's template. A new module on this path shows here.
    assert len(loaded) <= 46, loaded


def _hooks(codec: codecs.Codec) -> list[tuple[str, object]]:
    described = codec.describe
    hooks = [
        ("decoder", codec.decoder),
        ("encoder", codec.encoder),
        ("whole", codec.whole),
        ("checker", codec.checker),
        ("rules", codec.rules),
        ("schema", codec.schema),
        ("final", codec.final),
        ("other_item", codec.other_item),
    ]
    if described is not None:
        hooks += [("kinds", described.kinds), ("preview", described.preview)]
        hooks += [("item", described.item)]
    return [(name, hook) for name, hook in hooks if hook is not None]


@pytest.mark.parametrize("codec", codecs.CODECS, ids=lambda codec: codec.name)
def test_every_lazy_hook_names_what_its_module_holds(codec: codecs.Codec) -> None:
    """A hook's module and name are strings: one that went stale would fail only when a
    command first called it."""
    for name, hook in _hooks(codec):
        stand_in = getattr(hook, "__self__", hook)  # rules: the bound ``load``
        assert isinstance(stand_in, lazy), (codec.name, name)
        assert stand_in.module.startswith(f"chatx.codecs.{codec.name.replace('-', '_')}.")
        assert callable(stand_in.load()) or name == "rules", (codec.name, name)
    assert codec.rules() and all(rule.id for rule in codec.rules())


def test_lazy_imports_its_module_when_first_called() -> None:
    script = (
        "import sys\n"
        "from chatx.codecs.base import lazy\n"
        "hook = lazy('chatx.codecs.anthropic_event.whole', 'describe')\n"
        "before = 'chatx.codecs.anthropic_event.whole' in sys.modules\n"
        "said = hook({'type': 'message', 'content': []})\n"
        "print(before, 'chatx.codecs.anthropic_event.whole' in sys.modules, said)\n"
    )
    done = fresh_python(script)
    assert done.stdout == "False True an Anthropic Message object\n"


# -- opening a plain file loads neither decompression nor what tells files of exchanges ---


def test_the_first_bytes_opening_looks_for_are_every_compression_magics() -> None:
    """``chatx.reading.opening`` loads ``compressed`` only for a head starting with one of
    these bytes: a compression added there and not here would go unread."""
    from chatx.containers import compressed
    from chatx.reading import opening

    magics = [magic for magic, _ in compressed._MAGIC]
    assert set(opening._MAGIC_FIRST) == {magic[:1] for magic in magics}


def _heads() -> list[bytes]:
    """The first bytes of every fixture and shared capture, and of samples of files of
    exchanges, whole and cut at a few lengths (a head read from a slow pipe)."""
    from tests.paths import SHARED

    roots = [FIXTURES, SHARED / "captures", SHARED / "samples" / "containers"]
    heads: list[bytes] = []
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else ():
            if path.is_file() and path.suffix not in (".md", ".tsv"):
                data = path.read_bytes()[:20000]
                heads += [data[:cut] for cut in (1, 3, 6, 40, 200, 4096, 20000)]
    heads += [b"\xef\xbb\xbf  \n data: {}\n", b"\n\n:ping\n", b"id: 1\n", b"retry: 5\n"]
    heads += [b"data:", b"event: x", b"interactions:\n", b"data: 1\ninteractions:\n"]
    return heads


def test_a_bare_sse_head_is_told_as_demux_tells_it() -> None:
    """A head that opens with an SSE field is read without ``demux``: what opening
    decides of it (a bare stream; enough to decide once a line is whole) is what demux
    decides, over every fixture's and capture's head, at several lengths."""
    from chatx.containers import demux
    from chatx.reading import opening

    heads = _heads()
    bare = [head for head in heads if opening._bare(head) is not None]
    assert len(bare) > 100  # the shortcut is taken, and held to demux's verdict below
    for head in heads:
        assert opening._decidable(head) == demux.decidable(head), head[:80]
        if opening._bare(head) is not None:
            assert demux.detect(head) is None, head[:80]


def test_a_head_is_decompressed_as_compressed_tells_it() -> None:
    from chatx.containers import compressed
    from chatx.reading import opening

    heads = _heads() + [b"\x1f", b"\x1f\x8b", b"BZ", b"BZh9", b"\xfd7zX", b"(\xb5/\xfd", b"("]
    for head in heads:
        assert opening._compression(head) == compressed.detect(head), head[:20]
        assert opening._undecided(head) == compressed.undecided(head), head[:20]


def test_the_registry_imports_a_package_when_a_question_reaches_it() -> None:
    script = (
        "import sys\n"
        "from chatx import codecs\n"
        "def have():\n"
        "    return [p for p in " + repr(PACKAGES + ("gemini_event",)) + "\n"
        "            if 'chatx.codecs.' + p in sys.modules]\n"
        "print(have())\n"
        "print(codecs.get('responses').name, have())\n"
        "print(codecs.CODECS[-2].name, have())\n"
        "print([c.name for c in codecs.CODECS[1:3]], len(codecs.CODECS))\n"
        "print([c.name for c in codecs.CODECS] == codecs.names(), have())\n"
    )
    done = fresh_python(script)
    every = ["chat_chunk", "responses_event", "llama_stack_event", "anthropic_event"]
    assert done.stdout.splitlines() == [
        # chatx's own import reads nothing of a format
        "[]",
        "responses-event ['chat_chunk', 'responses_event']",
        f"anthropic-event {every}",
        "['responses-event', 'llama-stack-event'] 5",
        f"True {[*every, 'gemini_event']}",
    ]

"""Start-up: the registry holds each format's probe; its decoder, its encoder and what the
other commands need load when a command uses them (``chatx.codecs.base.lazy``). So a
``convert`` loads the decoder of the format it reads and the encoder of the one it
writes, and nothing else of any format: every format added does not slow the others.
Each check runs in a fresh interpreter, since this test process has long imported
everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from chatx import codecs
from chatx.codecs.base import lazy
from tests.paths import FIXTURES, ROOT

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
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    code, loaded = json.loads(done.stdout.decode().rsplit("\n", 1)[-1])
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
    # Anthropic and Llama Stack: their package and probe, for sniffing; no decoder,
    # encoder, whole-object reader or vocabulary.
    assert _of("anthropic_event", loaded) == [
        "chatx.codecs.anthropic_event",
        "chatx.codecs.anthropic_event.probe",
    ]
    assert _of("llama_stack_event", loaded) == [
        "chatx.codecs.llama_stack_event",
        "chatx.codecs.llama_stack_event.probe",
    ]
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
    assert _of("llama_stack_event", loaded) == [
        "chatx.codecs.llama_stack_event",
        "chatx.codecs.llama_stack_event.probe",
    ]
    assert "chatx.codecs.responses_event.decode" not in loaded
    assert "chatx.codecs.responses_event.encode" not in loaded


def _chatx_modules(argv: list[str]) -> tuple[int, list[str]]:
    """Run the CLI on ``argv`` in a fresh interpreter: its exit status and every chatx
    module it loaded (sorted)."""
    script = (
        "import os, sys, json\n"
        "from chatx.cli import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"code = main({argv!r})\n"
        "loaded = sorted(m for m in sys.modules if m == 'chatx' or m.startswith('chatx.'))\n"
        "sys.__stdout__.write(json.dumps([code, loaded]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    code, loaded = json.loads(done.stdout.decode().rsplit("\n", 1)[-1])
    return code, loaded


def test_one_stream_convert_loads_its_own_command_and_reading_steps_only() -> None:
    """A bare SSE stream converted to stdout: the convert command alone of the eleven,
    opening and finding (a bare stream is told from a file of exchanges) but not the
    bodies of exchanges, no reader of the other containers, no reading of records or
    decoding outside the Transcoder, no output file, no whole-object reader."""
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
    ):
        assert module not in loaded
    # 78 before these were deferred (issue 24), 58 after; gemini-event's registration
    # (its package and probe) made 60. A new module on this path shows here.
    assert len(loaded) <= 60, loaded


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
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=ROOT, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False True an Anthropic Message object\n"

"""How the decoders are put together (issue 24, item 2), as the encoders are
(tests/codecs/test_encoder_parts.py): one slotted state shared by parts that take what
they use as constructor arguments, a table from a record's type to what reads it built
once, no mixin and no ``NotImplementedError`` stub anywhere in ``chatx/codecs``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from chatx import codecs
from chatx.codecs.base import open_decoder
from chatx.notes import Notes
from chatx.record import Record

ROOT = Path(__file__).resolve().parents[2] / "chatx" / "codecs"
# The decoder side of each codec that reads records through parts: the decoder, the
# state its parts share and the parts.
DECODER_MODULES = {
    "responses_event": ("decode", "read_response", "items", "deltas", "run_hook"),
    "anthropic_event": ("decode", "read_message", "blocks", "run_hook"),
    "llama_stack_event": ("decode", "read_stream", "held", "tool_calls", "run_hook"),
}
DECODERS = ("chat-chunk", "responses-event", "anthropic-event", "llama-stack-event")
# What each table reads, and a record each reads first.
TABLES = {
    "responses-event": (
        {
            "response.output_text.delta",
            "response.output_item.added",
            "response.output_item.done",
            "response.output_text.done",
            "response.completed",
            "error",
        },
        {"type": "response.created", "response": {"id": "resp_1"}, "sequence_number": 0},
    ),
    "anthropic-event": (
        {
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
            "error",
        },
        {"type": "message_start", "message": {"id": "msg_1", "content": []}},
    ),
    "llama-stack-event": (
        {"progress", "complete"},
        {"event": {"event_type": "start", "delta": {"type": "text", "text": ""}}},
    ),
}


def _classes(package: str) -> list[tuple[str, ast.ClassDef]]:
    found = []
    for module in DECODER_MODULES[package]:
        tree = ast.parse((ROOT / package / f"{module}.py").read_text())
        found += [(module, node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    return found


def test_no_not_implemented_stub_in_the_codecs() -> None:
    stubs = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted(ROOT.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "NotImplementedError" in line
    ]
    assert stubs == []


def test_no_class_in_the_codecs_is_a_mixin() -> None:
    """Every class in ``chatx/codecs`` derives from nothing of the codecs' own: a part
    is handed what it uses, never given it by a class it is mixed into."""
    own = {
        node.name
        for path in ROOT.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
    }
    mixed = [
        f"{path.relative_to(ROOT)} {node.name}({ast.unparse(base)})"
        for path in sorted(ROOT.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if ast.unparse(base) in own
    ]
    assert mixed == []


@pytest.mark.parametrize("package", sorted(DECODER_MODULES))
def test_no_host_attributes(package: str) -> None:
    """A part holds no class-level annotation of what a host would set (the mixins'
    ``items: dict[...]`` above their methods): what it uses it is given."""
    for module, node in _classes(package):
        if any(ast.unparse(b) == "Protocol" for b in node.bases):
            continue
        if any("dataclass" in ast.unparse(d) for d in node.decorator_list):
            continue
        annotated = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]  # type: ignore[union-attr]
        assert not annotated, f"{package}/{module}.py {node.name}: {annotated}"


@pytest.mark.parametrize("package", sorted(DECODER_MODULES))
def test_parts_are_slotted(package: str) -> None:
    """The state and the parts are slotted: a misspelt attribute fails where it is set
    instead of making a second one."""
    for module, node in _classes(package):
        if any("dataclass" in ast.unparse(d) for d in node.decorator_list):
            continue
        if module == "decode":  # the decoder itself: made once per input
            continue
        slots = [
            s
            for s in node.body
            if isinstance(s, ast.Assign) and any(ast.unparse(t) == "__slots__" for t in s.targets)
        ]
        assert slots, f"{package}/{module}.py {node.name} has no __slots__"


@pytest.mark.parametrize("name", DECODERS)
def test_decoders_derive_from_nothing(name: str) -> None:
    decoder = codecs.get(name).decoder(Notes())
    assert type(decoder).__mro__[1:] == (object,), type(decoder).__mro__


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_handler_table_is_built_once(name: str) -> None:
    kinds, first = TABLES[name]
    decoder = codecs.get(name).decoder(Notes())
    handlers = decoder.handlers  # type: ignore[attr-defined]
    assert kinds <= set(handlers)
    assert all(callable(handler) for handler in handlers.values())
    assert decoder.feed(Record(first, line=1))
    assert decoder.handlers is handlers  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ("anthropic-event", "llama-stack-event", "responses-event"))
def test_the_run_hook_shares_the_decoders_state(name: str) -> None:
    """The hook moves on the state the decoder's parts read (its line, its sequence
    number), not a copy of it."""
    codec = codecs.get(name)
    wrapper = open_decoder(codec, Notes())
    hook = wrapper.hook  # type: ignore[attr-defined]
    decoder = hook.decoder if hasattr(hook, "decoder") else hook.feed.__self__
    assert type(decoder) is codec.decoder.load()
    assert hook.read is decoder.read

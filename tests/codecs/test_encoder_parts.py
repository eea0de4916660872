"""How the encoders are put together (issue 24, item 2): each dispatches through one
table from an IR event's type to the method that writes it, built in its constructor,
and is composed of parts that take their collaborators as constructor arguments; no
encoder inherits behaviour from a mixin or holds a ``NotImplementedError`` stub.

A table that misses an event type would fail at the first such event with a KeyError,
which the pipeline's lenient mode turns into a skipped record: so every table must name
every type of :data:`chatx.ir.Event`, and nothing else.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from chatx import codecs, ir
from chatx.codecs.base import EncodeOptions
from chatx.notes import Notes

EVENT_TYPES = set(get_args(ir.Event))
ENCODERS = ("chat-chunk", "responses-event", "anthropic-event", "llama-stack-event")
ROOT = Path(__file__).resolve().parents[2] / "chatx" / "codecs"
# The encoder side of each codec: the encoder and the parts it makes.
ENCODER_MODULES = {
    "chat_chunk": ("encode", "chunks", "finishing", "annotations", "runs"),
    "responses_event": (
        "encode",
        "encode_items",
        "encode_deltas",
        "written",
        "citations",
        "searches",
    ),
    "anthropic_event": (
        "encode",
        "content",
        "ending",
        "runs",
        "written",
        "citations",
        "searches",
    ),
    "llama_stack_event": ("encode", "generation", "text", "calls", "ending"),
}


@pytest.mark.parametrize("name", ENCODERS)
@pytest.mark.parametrize("source", [None, "own"])
def test_every_event_type_has_one_handler(name: str, source: str | None) -> None:
    codec = codecs.get(name)
    options = EncodeOptions(source_format=name if source == "own" else None)
    encoder = codec.encoder(Notes(), options)
    handlers = encoder.handlers  # type: ignore[attr-defined]
    assert set(handlers) == EVENT_TYPES
    assert all(callable(handler) for handler in handlers.values())
    # Built once: the same table, whatever is fed.
    encoder.feed([ir.StreamStart("x", model="m")])
    assert encoder.handlers is handlers  # type: ignore[attr-defined]


def _classes(package: str) -> list[tuple[str, ast.ClassDef]]:
    found = []
    for module in ENCODER_MODULES[package]:
        tree = ast.parse((ROOT / package / f"{module}.py").read_text())
        found += [(module, node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    return found


@pytest.mark.parametrize("package", sorted(ENCODER_MODULES))
def test_no_mixin_and_no_stub(package: str) -> None:
    """A class of an encoder's parts derives from nothing but Protocol, and no method
    raises NotImplementedError: a part says what it needs in its constructor."""
    for module, node in _classes(package):
        bases = [ast.unparse(base) for base in node.bases]
        assert bases in ([], ["Protocol"]), f"{package}/{module}.py {node.name}{bases}"
        for raise_ in (n for n in ast.walk(node) if isinstance(n, ast.Raise)):
            said = ast.unparse(raise_.exc) if raise_.exc is not None else ""
            assert "NotImplementedError" not in said, f"{package}/{module}.py {node.name}"


@pytest.mark.parametrize("package", sorted(ENCODER_MODULES))
def test_no_host_attributes(package: str) -> None:
    """A part holds no class-level annotation of what a host would set (the mixins'
    ``notes: Notes`` above their methods): what it uses it is given."""
    for module, node in _classes(package):
        if any(ast.unparse(b) == "Protocol" for b in node.bases) or _is_dataclass(node):
            continue
        annotated = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]  # type: ignore[union-attr]
        assert not annotated, f"{package}/{module}.py {node.name}: {annotated}"


def _is_dataclass(node: ast.ClassDef) -> bool:
    return any("dataclass" in ast.unparse(d) for d in node.decorator_list)


@pytest.mark.parametrize("name", ENCODERS)
def test_encoders_derive_from_nothing(name: str) -> None:
    encoder = codecs.get(name).encoder(Notes(), EncodeOptions())
    assert type(encoder).__mro__[1:] == (object,), type(encoder).__mro__

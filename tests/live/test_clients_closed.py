"""Every SDK client the live tests make is closed by a ``with`` statement.

The openai and anthropic clients close their connection pool when they are finalized,
but a client in a reference cycle (they all are: each resource holds its client) is
finalized by the garbage collector in no set order: its pooled socket may go first, and
pytest then reports an unclosed socket as an error in whichever test runs at that moment
(seen under load, with ``-n 2``). A client closed by ``with`` leaves no socket behind.
"""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIENTS = {("openai", "OpenAI"), ("openai", "AsyncOpenAI"), ("anthropic", "Anthropic")}
CLIENTS |= {("anthropic", "AsyncAnthropic")}


def unclosed(source: str) -> list[int]:
    """The lines of SDK clients made outside a ``with`` item."""
    tree = ast.parse(source)
    managed = {
        id(item.context_expr)
        for node in ast.walk(tree)
        if isinstance(node, ast.With | ast.AsyncWith)
        for item in node.items
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id, node.func.attr) in CLIENTS
        and id(node) not in managed
    ]


def test_the_check_sees_a_client_left_open():
    assert unclosed("import openai\nclient = openai.OpenAI(base_url='x')\n") == [2]
    assert unclosed("import anthropic\nwith anthropic.Anthropic() as c:\n    pass\n") == []


def test_every_sdk_client_of_the_live_tests_is_closed_by_with():
    found = {path.name: unclosed(path.read_text()) for path in sorted(HERE.glob("test_*.py"))}
    assert {name: lines for name, lines in found.items() if lines} == {}
    assert any("openai.OpenAI(" in path.read_text() for path in HERE.glob("test_*.py"))

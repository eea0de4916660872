"""``convert`` keeps its start-up and its dependencies: the HTTP client and server that
``capture``, ``proxy`` and ``serve`` use are imported by those commands only.

Each check runs in a fresh interpreter (this test process has long imported them).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.interpreter import last_json_line
from tests.live.support import FIXTURES

HTTP = ("httpx", "httpx2", "httpcore", "httpcore2", "uvicorn", "starlette", "h11", "anyio")


def loaded_after(code: str) -> list[str]:
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        sys.__stdout__.write("\\n" + json.dumps([m for m in {HTTP!r} if m in sys.modules]))
    """)
    return last_json_line(script)


def test_cli_convert_imports_no_http_client_or_server(tmp_path: Path) -> None:
    source = FIXTURES / "chat-chunk" / "tool-call-parallel.sse"
    commands = [
        ["convert", str(source), "--to", fmt, "-q", "-o", str(tmp_path / f"out.{fmt}")]
        for fmt in ("responses-event", "llama-stack-event", "chat-chunk")
    ]
    loaded = loaded_after(f"""
        import os, sys
        from chatx.cli import main
        sys.stdout = open(os.devnull, "w")
        codes = [main(argv) for argv in {commands!r}]
        assert codes == [0, 0, 0], codes
    """)
    assert loaded == []


def test_help_lists_the_commands_without_importing_them() -> None:
    loaded = loaded_after("""
        import io, sys
        from chatx.cli import main
        out = sys.stdout = io.StringIO()
        assert main(["--help"]) == 0
        text = out.getvalue()
        assert all(f" {c} " in text for c in ("capture", "proxy", "serve")), text
    """)
    assert loaded == []


def test_the_commands_do_import_them() -> None:
    # The check above holds only if the modules are the ones these commands load.
    loaded = loaded_after("""
        import chatx.live.app, chatx.live.proxy, chatx.live.server, chatx.live.posting
        chatx.live.server.make_server(chatx.live.app.ServeApp([]), "test")
        import httpx2
    """)
    assert "uvicorn" in loaded and "httpx2" in loaded

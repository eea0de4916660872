"""Gemini CLI (``@google/gemini-cli``, which speaks only the Gemini API) over the gateway
in front of a chat upstream: an opt-in test, run where the CLI is installed (``npm i
@google/gemini-cli``; ``$CHATX_GEMINI_CLI`` names its binary, else ``gemini`` on the
PATH) and skipped, saying why, where it or npm is not.

The CLI runs non-interactively (``gemini -p``) with a home of its own (its settings
choose the API-key login), ``GEMINI_API_KEY`` and ``GOOGLE_GEMINI_BASE_URL`` pointing at
the gateway. The chat upstream, a loopback server the test starts, answers first with a
call of the CLI's own ``list_directory`` tool, then with text: the CLI runs the tool,
sends its output back (a Gemini functionResponse, a chat tool message upstream) and
prints the answer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.live.gateway_support import Answer, Scripted, chat_call, chat_text, gateway

KEY = "AIza-gemini-cli-SECRET-0031"
ANSWER = "The folder holds notes.txt."


def gemini_cli() -> str:
    """The Gemini CLI's binary, or a skip saying why there is none."""
    named = os.environ.get("CHATX_GEMINI_CLI")
    if named:
        return named
    if shutil.which("npm") is None:
        pytest.skip("npm is absent: Gemini CLI comes as an npm package (@google/gemini-cli)")
    found = shutil.which("gemini")
    if found is None:
        pytest.skip(
            "Gemini CLI is not installed: npm i @google/gemini-cli (or set CHATX_GEMINI_CLI)"
        )
    return found


def test_gemini_cli_runs_a_tool_over_chat(tmp_path: Path) -> None:
    cli = gemini_cli()
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
    )
    work.mkdir()
    (work / "notes.txt").write_text("tides at Brest\n")
    upstream = Scripted(
        Answer(chat_call("call_ls1", "list_directory", json.dumps({"dir_path": str(work)}))),
        Answer(chat_text(ANSWER)),
    )
    with gateway(upstream, "chat", models=["gemini-*=qwen3-coder"]) as (proxy, said):
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "GEMINI_API_KEY": KEY,
            "GOOGLE_GEMINI_BASE_URL": proxy.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_COLOR": "1",
        }
        done = subprocess.run(
            [cli, "-m", "gemini-2.5-flash", "-p", "What is in this folder?"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert ANSWER in done.stdout
    first, second = upstream.got[:2]
    assert first.path == second.path == "/v1/chat/completions"
    assert first.body["model"] == "qwen3-coder" and first.body["stream"] is True
    assert first.headers[b"authorization"] == f"Bearer {KEY}".encode()
    offered = [t["function"]["name"] for t in first.body["tools"]]
    assert "list_directory" in offered and "read_file" in offered
    assert first.body["messages"][0]["role"] == "system"
    assert "What is in this folder?" in json.dumps(first.body["messages"])
    # the tool's output goes back as a chat tool message answering the call
    calls = [m for m in second.body["messages"] if m.get("tool_calls")]
    results = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert calls and results
    assert calls[-1]["tool_calls"][0]["function"]["name"] == "list_directory"
    assert results[-1]["tool_call_id"] == calls[-1]["tool_calls"][0]["id"]
    assert "notes.txt" in results[-1]["content"]
    assert not any(KEY in line for line in said)

"""The pytest plugin: ``chatx_serve`` serves a test's captures on a free port and points
the openai and anthropic SDKs at it. Each case runs a small test suite with pytester."""

from __future__ import annotations

import shlex
import tomllib
from importlib.metadata import entry_points

import pytest

from tests.live.support import FIXTURES, ROOT

pytest_plugins = ["pytester"]

CHAT = FIXTURES / "chat-chunk" / "text.sse"
ANTHROPIC = FIXTURES / "anthropic-event"
# The plugin as the entry point loads it, by its module: a checkout whose venv was made
# before the entry point was added has it only so, and both never load it twice.
PLUGIN = ("-p", "no:chatx", "-p", "chatx.live.pytest_plugin")


def test_the_entry_point_names_the_plugin() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared["project"]["entry-points"]["pytest11"] == {"chatx": "chatx.live.pytest_plugin"}
    installed = [e for e in entry_points(group="pytest11") if e.name == "chatx"]
    assert all(e.value == "chatx.live.pytest_plugin" for e in installed)


def test_a_suite_reads_its_captures_through_the_sdks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        f"""
        import os

        import anthropic
        import openai
        import pytest

        @pytest.mark.chatx_captures({str(CHAT)!r}, {str(ANTHROPIC)!r})
        def test_clients(chatx_serve):
            assert os.environ["OPENAI_BASE_URL"] == chatx_serve.url + "/v1"
            assert os.environ["ANTHROPIC_BASE_URL"] == chatx_serve.url
            with openai.OpenAI(max_retries=0) as client:
                answer = client.chat.completions.create(
                    model="m", messages=[{{"role": "user", "content": "hi"}}],
                    extra_headers={{"x-chatx-capture": "text.sse"}},
                )
            assert answer.choices[0].message.content
            with anthropic.Anthropic(max_retries=0) as client:
                message = client.messages.create(
                    model="m", max_tokens=5, messages=[{{"role": "user", "content": "hi"}}],
                    extra_headers={{"x-chatx-capture": "anthropic-event/text.sse"}},
                )
            assert message.content

        def test_after_it_the_environment_is_as_it_was():
            assert "chatx" not in os.environ.get("OPENAI_BASE_URL", "")
        """
    )
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_the_ini_option_and_marker_options(pytester: pytest.Pytester) -> None:
    # A paths option is split as a shell splits: the checkout's path may hold spaces.
    pytester.makeini(f"[pytest]\nchatx_captures = {shlex.quote(str(CHAT))}\n")
    pytester.makepyfile(
        """
        import openai
        import pytest

        def test_from_the_ini(chatx_serve):
            with openai.OpenAI(max_retries=0) as client:
                answer = client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                )
            assert answer.choices[0].message.content

        @pytest.mark.chatx_captures(status=429)
        def test_a_fault(chatx_serve):
            with openai.OpenAI(max_retries=0) as client, pytest.raises(openai.RateLimitError):
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                )
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_no_captures_named_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_nothing_named(chatx_serve):
            pass
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*chatx_serve: name the captures*"])

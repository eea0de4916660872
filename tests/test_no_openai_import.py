"""The hot path never imports the openai SDK (about a second here) nor pydantic.

DESIGN §7: ``convert``, ``diff`` and ``show`` run on orjson and plain dicts; the openai
types are for ``validate --schema`` and the tests. Each check runs in a fresh
interpreter, since this test process has long imported everything.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from tests.bench_streams import generate
from tests.interpreter import last_json_line

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ("openai", "anthropic", "pydantic", "pydantic_core")  # the SDKs are --schema's
# typer 0.29 coerces CLI parameters through pydantic TypeAdapters (typer._adapters): a
# command parsed by typer loads pydantic (never openai) whatever chatx itself does.
TYPER_ADAPTERS = "typer._adapters"


def _loaded_after(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; return its result and the heavy modules loaded."""
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        sys.__stdout__.write("\\n" + json.dumps({{
            "result": result,
            "loaded": [m for m in {(*HEAVY, TYPER_ADAPTERS)!r} if m in sys.modules],
        }}))
    """)
    return last_json_line(script)


@pytest.fixture(scope="module")
def streams(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("streams")
    out = {}
    for kind in generate.KINDS:
        path = folder / f"{kind}.chat.sse"
        path.write_bytes(generate.chat_bytes(kind, 120))
        out[kind] = path
    return out


def _formats() -> list[str]:
    from chatx import codecs

    return codecs.names()


def test_library_conversion_loads_neither_openai_nor_pydantic(streams: dict[str, Path]) -> None:
    paths = [str(p) for p in streams.values()]
    report = _loaded_after(f"""
        import chatx
        result = []
        for path in {paths!r}:
            data = open(path, "rb").read()
            for fmt in {_formats()!r}:
                out = chatx.convert(data, dst=fmt)
                back = chatx.convert(out, dst="chat-chunk")
                result.append(len(out) > 0 and len(back) > 0)
        result = all(result)
    """)
    assert report["result"] is True
    assert report["loaded"] == []


def _cli(commands: list[list[str]]) -> dict[str, object]:
    return _loaded_after(f"""
        import os, sys
        from chatx.cli import main
        sys.stdout = open(os.devnull, "w")
        result = [main(argv) for argv in {commands!r}]
    """)


def _check_cli(report: dict[str, object]) -> None:
    loaded = report["loaded"]
    assert isinstance(loaded, list)
    assert "openai" not in loaded
    if TYPER_ADAPTERS in loaded and "pydantic" in loaded:
        pytest.xfail("typer's parameter coercion (typer._adapters) imports pydantic")
    assert [m for m in loaded if m != TYPER_ADAPTERS] == []


def test_cli_convert_does_not_import_openai(streams: dict[str, Path], tmp_path: Path) -> None:
    out = str(tmp_path / "out.sse")
    commands = [
        ["convert", str(path), "--to", fmt, "-q", "-o", out]
        for path in streams.values()
        for fmt in _formats()
    ]
    report = _cli(commands)
    assert report["result"] == [0] * len(commands)
    _check_cli(report)


@pytest.mark.skipif(
    importlib.util.find_spec("chatx.cli.show") is None, reason="chatx show does not exist yet"
)
def test_cli_show_does_not_import_openai(streams: dict[str, Path]) -> None:
    report = _cli([["show", str(path)] for path in streams.values()])
    assert report["result"] == [0] * len(streams)
    _check_cli(report)


@pytest.mark.skipif(
    importlib.util.find_spec("chatx.cli.diff") is None, reason="chatx diff does not exist yet"
)
def test_cli_diff_does_not_import_openai(streams: dict[str, Path], tmp_path: Path) -> None:
    import chatx

    other = tmp_path / "text.responses.sse"
    other.write_bytes(chatx.convert(streams["text"].read_bytes(), dst="responses-event"))
    text = str(streams["text"])
    report = _cli(
        [
            ["diff", text, text],
            ["diff", "--semantic", text, str(other)],
            ["diff", text, str(streams["reasoning"])],
        ]
    )
    result = report["result"]
    assert isinstance(result, list)
    assert result[:2] == [0, 0] and result[2] in (0, 1)
    _check_cli(report)

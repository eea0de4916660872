"""The codec descriptor is the only place a format is registered (issue 16).

Outside ``chatx/codecs/``, no module imports a format's package: every command reaches a
format through the registry (``chatx.codecs.CODECS``). And registering a ``Codec`` is
enough: a toy format with every field filled is validated, collected, shown, listed by
``rules`` and normalised by ``diff`` with no other file touched.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chatx import codecs
from chatx.codecs.base import Codec, Describe
from chatx.record import Record
from tests.paths import ROOT

PACKAGE = ROOT / "chatx"


def _format_packages(root: Path = PACKAGE) -> set[str]:
    """``chatx.codecs.<format>`` for each package under chatx/codecs."""
    return {f"chatx.codecs.{path.parent.name}" for path in (root / "codecs").glob("*/__init__.py")}


def _imported(module: str, is_package: bool, tree: ast.AST) -> set[str]:
    """Every module name an import in ``tree`` reaches, submodules named in a ``from``
    included (``from chatx.codecs import chat_chunk`` reaches ``chatx.codecs.chat_chunk``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def format_imports(root: Path = PACKAGE) -> list[tuple[str, str]]:
    """(module, format package it imports) for each chatx module outside chatx/codecs."""
    packages = _format_packages(root)
    hits = []
    for path in sorted(root.rglob("*.py")):
        if root / "codecs" in path.parents:
            continue
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        module = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in sorted(_imported(module, is_package, tree)):
            owner = next((p for p in packages if name == p or name.startswith(p + ".")), None)
            if owner is not None:
                hits.append((module, name))
    return hits


def test_the_format_packages_are_found() -> None:
    assert {"chatx.codecs.chat_chunk", "chatx.codecs.responses_event"} <= _format_packages()
    assert "chatx.codecs.base" not in _format_packages()


def test_the_walk_sees_every_way_of_importing_a_format_package(tmp_path: Path) -> None:
    root = tmp_path / "chatx"
    (root / "codecs" / "chat_chunk").mkdir(parents=True)
    (root / "validation").mkdir()
    (root / "codecs" / "chat_chunk" / "__init__.py").write_text("")
    (root / "codecs" / "chat_chunk" / "check.py").write_text("import chatx.cli\n")
    (root / "validation" / "x.py").write_text(
        textwrap.dedent("""
            import chatx.codecs.chat_chunk.check
            from chatx.codecs import chat_chunk, base
            from ..codecs.chat_chunk import check
            def late():
                from chatx.codecs.chat_chunk.final import to_chat
        """)
    )
    assert format_imports(root) == [
        ("chatx.validation.x", "chatx.codecs.chat_chunk"),
        ("chatx.validation.x", "chatx.codecs.chat_chunk.check"),
        ("chatx.validation.x", "chatx.codecs.chat_chunk.final"),
        ("chatx.validation.x", "chatx.codecs.chat_chunk.final.to_chat"),
    ]


def test_no_module_outside_the_codecs_imports_a_format_package() -> None:
    assert format_imports() == []


def test_every_registered_format_says_what_the_commands_need() -> None:
    """The three formats chatx had before the registry carried this: each is checked,
    collected and shown through its descriptor."""
    for name in ("chat-chunk", "responses-event", "llama-stack-event"):
        codec = codecs.get(name)
        assert codec.checker is not None and codec.final is not None, name
        assert codec.describe is not None and codec.collect_as, name
        assert codec.rules() and all(rule.format == name for rule in codec.rules()), name
        assert codec.checker("f", None).format == name


# A format with every field of the descriptor filled, written for this test: records
# {"toy": text, "toy_id": id}, ended by {"toy_end": reason}.
TOY = """
from chatx import codecs, ir
from chatx.codecs.base import Codec, Describe, HttpApi, RequestMapping
from chatx.request import Mapped, Message, Part, Request
from chatx.validation.base import Checker, catalogue
from chatx.validation.rule import Rule

RULES = (Rule("TOY001", "E", "toy-event", "a toy record has no text", "Each toy says.", "{}"),)


class ToyDecoder:
    def __init__(self, notes):
        self.started = False

    def feed(self, record):
        data = record.data
        out = []
        if not self.started:
            self.started = True
            out.append(ir.StreamStart(str(data.get("toy_id", ""))))
        if "toy_end" in data:
            out += [ir.Finish(0, data["toy_end"]), ir.StreamEnd()]
        else:
            out.append(ir.TextDelta(0, data.get("toy", "")))
        return out

    def finish(self):
        return []


class ToyEncoder:
    def __init__(self, notes, options):
        self.notes = notes

    def feed(self, events):
        return [{"toy": e.text} for e in events if type(e) is ir.TextDelta]

    def feed_run(self, run):
        return run.replay(self.feed, self.notes)

    def finish(self):
        return []


class ToyChecker(Checker):
    format = "toy-event"
    rules = catalogue(*RULES)

    def check(self, record):
        if not isinstance(record.data, dict) or not ("toy" in record.data or "toy_end" in record.data):
            self.report("TOY001", "no toy text")


def probe(records):
    return 100 if any(isinstance(r.data, dict) and "toy_id" in r.data for r in records) else 0


def final(stream, source, choice, notes):
    lane = stream.one_lane(choice, "a toy")
    return {"toy": lane.text, "end": lane.finish, "from": source}


def kinds(data):
    return ["toy " + ("end" if "toy_end" in data else "text")] if "toy_id" in data else None


def preview(data):
    return repr(data.get("toy")) if "toy_id" in data else None


def read_request(body):
    request = Request(api="toy", model=body.get("toy_model"))
    request.turns = [Message(role="user", parts=[Part(kind="text", text=t)]) for t in body["say"]]
    return Mapped(body=request, lost=[f"{k}" for k in body if k not in ("toy_model", "say")])


def write_request(request):
    said = [p.text for t in request.turns for p in getattr(t, "parts", []) if p.kind == "text"]
    lost = [f"tools[{n}] ({t.name})" for n, t in enumerate(request.tools)]
    return Mapped(body={"toy_model": request.model, "say": said}, lost=lost)


TOY = Codec(
    name="toy-event",
    description="a toy format",
    decoder=ToyDecoder,
    encoder=ToyEncoder,
    probe=probe,
    container="jsonl",
    checker=ToyChecker,
    rules=lambda: RULES,
    final=final,
    collect_as="toy",
    describe=Describe(kinds, preview, rank=5),
    volatile=frozenset(("toy_id",)),
    http=HttpApi("toy", "/v1/toy/stream", model_key="toy_model", key_header="x-toy-key"),
    requests=RequestMapping(read_request, write_request),
)
codecs.CODECS = (*codecs.CODECS, TOY)  # the registry line
"""


def _run_with_toy(
    tmp_path: Path, *commands: list[str], env: dict[str, str] | None = None
) -> list[dict[str, object]]:
    """Each command's exit code and output, run by an interpreter that registers the toy
    codec before any command module is imported."""
    script = TOY + "\nfrom chatx.cli import run\nrun()\n"
    results = []
    for argv in commands:
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            cwd=tmp_path,
            timeout=120,
            env=env,
        )
        out, err = done.stdout.decode(), done.stderr.decode()
        assert "Traceback" not in err, err
        results.append({"code": done.returncode, "out": out, "err": err})
    return results


def test_a_registered_codec_is_known_to_every_command(tmp_path: Path) -> None:
    good = [{"toy": "Hel", "toy_id": "t1"}, {"toy": "lo", "toy_id": "t1"}]
    (tmp_path / "a.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in [*good, {"toy_end": "stop", "toy_id": "t1"}])
    )
    (tmp_path / "b.jsonl").write_text(
        "".join(
            json.dumps(r) + "\n" for r in [{**g, "toy_id": "t2"} for g in good] + [{"toy_id": "t2"}]
        )
    )
    formats, rules, explain, valid, invalid, collect, as_toy, show, diff = _run_with_toy(
        tmp_path,
        ["formats"],
        ["rules", "--format", "toy-event"],
        ["rules", "toy001"],
        ["validate", "a.jsonl"],
        ["validate", "b.jsonl"],
        ["collect", "a.jsonl"],
        ["collect", "--as", "toy-event", "-f", "toy-event", "b.jsonl"],
        ["show", "a.jsonl", "--events"],
        ["diff", "a.jsonl", "b.jsonl", "--wire"],
    )
    assert "toy-event            a toy format [writes jsonl]" in formats["out"]
    assert rules["out"].splitlines()[-1] == "TOY001  E  toy-event          a toy record has no text"
    assert explain["out"].startswith("TOY001 (error, toy-event)\n\na toy record has no text\n")
    assert valid["code"] == 0
    assert invalid["code"] == 1 and "TOY001" in invalid["out"] and ":3:" in invalid["out"]
    assert json.loads(collect["out"]) == {"toy": "Hello", "end": "stop", "from": "toy-event"}
    assert json.loads(as_toy["out"]) == {"toy": "Hello", "end": None, "from": "toy-event"}
    assert "toy text 2" in show["out"] and "toy end 1" in show["out"]
    assert "'Hel'" in show["out"]
    # b's toy_id differs on every record and its last record is another: with the toy's
    # volatile field dropped, the first difference is that last record.
    assert diff["code"] == 1 and "event 2 (lines 3 / 3): toy_end" in diff["out"]
    assert "toy_id" not in diff["out"]


def test_show_asks_the_streams_own_format_before_a_higher_rank(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A format that claims every string ``type`` above Responses' rank (as one whose
    error event has Responses' nested error shape) describes such a record, but not in a
    Responses stream, whose own format claims it; a chat stream (rank 0, it claims any
    object) asks by rank."""
    from chatx.show import record_kinds, record_preview

    wide = Codec(
        name="wide-event",
        description="claims every typed object",
        decoder=lambda notes: None,  # type: ignore[arg-type,return-value]
        encoder=lambda notes, options: None,  # type: ignore[arg-type,return-value]
        probe=lambda records: 0,
        describe=Describe(
            lambda data: ["wide"] if isinstance(data.get("type"), str) else None,
            lambda data: "wide" if isinstance(data.get("type"), str) else None,
            rank=9,
        ),
    )
    monkeypatch.setattr(codecs, "CODECS", (*codecs.CODECS, wide))
    error = {"type": "error", "error": {"type": "server_error", "message": "down"}}
    record = Record(data={**error, "sequence_number": 3}, line=1)
    assert record_kinds(record) == ["wide"] and record_preview(record) == "wide"
    assert record_kinds(record, "responses-event") == ["error"]
    assert record_preview(record, "responses-event") == ""
    assert record_kinds(record, "chat-chunk") == ["wide"]
    chunk = Record(data={"object": "chat.completion.chunk", "choices": []}, line=2)
    assert record_kinds(chunk, "responses-event") == ["empty chunk"]


def test_a_registered_codec_brings_its_http_api(tmp_path: Path) -> None:
    """The descriptor's HttpApi is all serve and capture need: serve answers the toy's
    path with a toy stream, and capture --api toy posts to it,
    with no edit outside the toy's own code."""
    pytest.importorskip("uvicorn")
    pytest.importorskip("httpx2")
    good = [
        {"toy": "Hel", "toy_id": "t1"},
        {"toy": "lo", "toy_id": "t1"},
        {"toy_end": "stop", "toy_id": "t1"},
    ]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good))
    script = TOY + "\nfrom chatx.cli import run\nrun()\n"
    command = [sys.executable, "-c", script, "serve", "a.jsonl", "--port", "0"]
    with subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE, text=True) as server:
        assert server.stderr is not None
        try:
            banner = server.stderr.readline()
            url = re.search(r"http://127\.0\.0\.1:\d+", banner)
            assert url is not None, banner
            env = {**os.environ, "TOY_KEY": "toy-secret"}
            (captured,) = _run_with_toy(
                tmp_path,
                [
                    "capture",
                    "--api",
                    "toy",
                    "--base-url",
                    url.group(0) + "/v1",
                    "--api-key-env",
                    "TOY_KEY",
                    "-d",
                    '{"toy_model": "m"}',
                    "-o",
                    "out.sse",
                ],
                env=env,
            )
        finally:
            server.terminate()
        log = banner + server.stderr.read()
    assert "/v1/toy/stream" in banner, banner
    assert captured["code"] == 0, captured["err"]
    # serve writes every API's stream as SSE, the toy's too: what capture wrote as sent.
    sent = (tmp_path / "out.sse").read_text().split("\n")
    records = [json.loads(line[len("data: ") :]) for line in sent if line.startswith("data: {")]
    assert [r.get("toy") for r in records] == ["Hel", "lo"]
    assert "POST /v1/toy/stream" in log


def test_a_registered_codec_brings_its_request_mapping(tmp_path: Path) -> None:
    """The descriptor's RequestMapping is all the gateway needs to translate a request
    into or out of the toy's API: a toy body becomes a chat one and a chat one a toy
    one through the registry, each saying what it lost, with no edit outside the toy's
    own code."""
    script = TOY + textwrap.dedent("""
        import json
        toy, chat = codecs.get("toy-event").requests, codecs.get("chat-chunk").requests
        up = chat.write(toy.read({"toy_model": "m", "say": ["hi", "there"], "volume": 11}).body)
        tool = {"type": "function", "function": {"name": "f", "parameters": {}}}
        asked = {"model": "m", "messages": [{"role": "user", "content": "yo"}], "tools": [tool]}
        down = toy.write(chat.read(asked).body)
        print(json.dumps([up.body, down.body, down.lost]))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    up, down, lost = json.loads(done.stdout)
    assert up == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "there"}],
    }
    assert down == {"toy_model": "m", "say": ["yo"]}
    assert lost == ["tools[0] (f)"]

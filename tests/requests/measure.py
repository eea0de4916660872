"""The measurement issue 25 asks for: every request body in ../shared/requests (and the
hand-written ones here), translated into every other API, is

* **SDK-valid**: it passes that API's SDK request type, walked (:mod:`tests.requests.sdk`);
* **meaning kept**: what it says (:func:`meaning`: the system prompt, turns with roles and
  texts, media, calls with their arguments paired by id with results, reasoning, tools with
  their schemas, settings) is the source's, but for what the mapping said lost;
* **A → B → A**: read back, put in the client's shape (:func:`chatx.tool_shapes.restore`) and
  written in the source's API, it says what the source said, but for what either way said
  lost.

``python -m tests.requests.measure`` prints the counts by direction and the losses, for
the closing note; ``test_across.py`` holds them.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from chatx import codecs
from chatx.request import Message, Native, Part, Reasoning, Request, ToolCall, ToolResult, Turn
from chatx.request_mapping import EFFORT_BUDGETS
from chatx.tool_shapes import flat_name, restore
from tests.requests import sdk
from tests.requests.bodies import FOLDERS, HERE, REQUESTS, load

# --- what a request says ---------------------------------------------------------------

Entry = dict[str, Any]


def meaning(request: Request, lost: list[str]) -> dict[str, Any]:
    """What ``request`` says, in a shape two APIs' requests can be compared in, less what
    ``lost`` says could not go (its paths index ``request``)."""
    dropped = _Dropped(lost)
    system, first = _system(request, dropped)
    turns = [
        entry
        for index, turn in enumerate(request.turns)
        if index >= first and (entry := _turn(turn, dropped.turn(index))) is not None
    ]
    turns = _merged(turns)
    tools = [
        _tool(
            tool.kind,
            _tool_name(tool.kind, tool.name, tool.namespace),
            tool.parameters,
            tool.grammar,
        )  # fmt: skip
        for index, tool in enumerate(request.tools)
        if not dropped.whole(f"tools[{index}]")
    ]
    return {
        "system": system,
        "turns": turns,
        "tools": tools,
        "settings": _settings(request, dropped),
    }


def _merged(turns: list[Entry]) -> list[Entry]:
    """Texts of one role one after the other as one message: an API may join them (chat's
    content around calls or server tool blocks that could not go)."""
    out: list[Entry] = []
    for entry in turns:
        last = out[-1] if out else None
        if last and entry["t"] == last["t"] == "message" and entry["role"] == last["role"]:
            out[-1] = {
                **last,
                "text": last["text"] + entry["text"],
                "media": last["media"] + entry["media"],
            }
        else:
            out.append(entry)
    return out


@dataclass
class _Dropped:
    """What a list of lost paths takes out: whole turns, fields of a turn, settings."""

    lost: list[str]
    wholes: set[str] = field(default_factory=set)
    fields: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for path in self.lost:
            head = path.split(" ", 1)[0]
            if re.match(r"^turns\[\d+\]\.parts\[\d+\]\.", head):
                continue  # a part's own field (its cache_control): no meaning
            part = re.match(r"^(turns\[\d+\])\.(parts\[\d+\])$", head)
            if part is not None:  # one part of a turn: that part's media alone
                self.fields.setdefault(part.group(1), set()).add(part.group(2))
                continue
            found = re.match(r"^((?:turns|tools|instructions)\[\d+\])\.?([a-z_]*)", head)
            if found is None:
                self.wholes.add(re.split(r"[ .\[]", head, maxsplit=1)[0])
            elif found.group(2):
                self.fields.setdefault(found.group(1), set()).add(found.group(2))
            else:
                self.wholes.add(found.group(1))

    def whole(self, path: str) -> bool:
        return path in self.wholes

    def turn(self, index: int) -> set[str] | None:
        """The fields of turn ``index`` lost (``{"*"}``: all of it)."""
        path = f"turns[{index}]"
        return {"*"} if path in self.wholes else self.fields.get(path, set())


def _system(request: Request, dropped: _Dropped) -> tuple[str, int]:
    """The system prompt: the instructions and the system or developer messages the
    conversation opens with, texts joined (APIs without a place for several join them)."""
    texts = [
        p.text or ""
        for n, p in enumerate(request.instructions)
        if p.kind == "text" and not dropped.whole(f"instructions[{n}]")
    ]
    first = 0
    for turn in request.turns:
        if not (isinstance(turn, Message) and turn.role in ("system", "developer")):
            break
        texts += [p.text or "" for p in turn.parts if p.kind == "text"]
        first += 1
    return "\n\n".join(t for t in texts if t), first


def _turn(turn: Turn, lost: set[str] | None) -> Entry | None:
    lost = lost or set()
    if "*" in lost:
        return None
    if isinstance(turn, Message):
        entry = _content(turn.parts, lost)
        if not entry["text"] and not entry["media"]:
            return None  # an empty message: a placeholder some APIs need, others not
        role = "user" if turn.role in ("system", "developer") and "role" in lost else turn.role
        return {"t": "message", "role": role, **entry}
    if isinstance(turn, ToolCall):
        return {"t": "call", "id": turn.call_id, "name": flat_name(turn.name, turn.namespace),
                "kind": turn.kind, "args": _arguments(turn)}  # fmt: skip
    if isinstance(turn, ToolResult):
        error = bool(turn.is_error) and "is_error" not in lost
        return {"t": "result", "id": turn.call_id, "error": error, **_content(turn.parts, lost)}
    if isinstance(turn, Reasoning):
        proof = (turn.signature is not None and "signature" not in lost) or (
            turn.encrypted is not None and "encrypted_content" not in lost
        )
        return {"t": "reasoning", "text": turn.text, "proof": proof}
    assert isinstance(turn, Native)
    return {"t": "native", "kind": turn.kind}


def _content(parts: list[Part], lost: set[str]) -> Entry:
    text = "".join(p.text or "" for p in parts if p.kind == "text")
    media = [
        (p.kind, _media(p))
        for n, p in enumerate(parts)
        if p.kind not in ("text", "other") and f"parts[{n}]" not in lost
    ]
    return {"text": text, "media": [] if "parts" in lost else media}


def _media(part: Part) -> str:
    if part.url is not None and part.url.startswith("data:"):
        return part.url.partition(",")[2]
    return part.url or part.data or ""


def _arguments(turn: ToolCall) -> Any:
    if turn.kind == "custom":
        return turn.arguments
    try:
        return json.loads(turn.arguments or "{}")
    except ValueError:
        return turn.arguments


def _tool_name(kind: str, name: str, namespace: str | None) -> str:
    """The tool's name; a built-in's the same in every API that has it (Anthropic's dated
    web search is Responses' web_search)."""
    if kind == "builtin" and name.startswith("web_search"):
        return "web_search"
    return flat_name(name, namespace)


def _tool(kind: str, name: str, parameters: Any, grammar: Any) -> Entry:
    if parameters == {"type": "object", "properties": {}}:
        parameters = None  # no parameters, as an API that requires a schema says it
    return {"kind": kind, "name": name, "parameters": parameters, "grammar": grammar}


def _settings(request: Request, dropped: _Dropped) -> Entry:
    choice = request.tool_choice
    said: Entry = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "stop": request.stop,
        "stream": request.stream,
        "user": request.user,
        # calls in parallel unless told: true and unsaid mean the same
        "parallel_tool_calls": request.parallel_tool_calls is False or None,
        "tool_choice": None if choice is None or "" in choice.extra else (choice.mode, choice.name),
        "response_format": _schema(request.response_format),
        "reasoning": _effort(request),
    }
    names = {
        "reasoning_budget": "reasoning",
        "reasoning_effort": "reasoning",
        "reasoning": "reasoning",
        "response_format": "response_format",
    }
    for lost in dropped.wholes:
        said.pop(names.get(lost, lost), None)
    return said


def _schema(value: dict[str, Any] | None) -> Any:
    if value is None:
        return None
    return value.get("schema", value.get("type"))


def _effort(request: Request) -> str | None:
    if request.reasoning_effort is not None:
        return request.reasoning_effort
    if request.reasoning_budget is None:
        return None
    said = EFFORT_BUDGETS[0][0]
    for name, least in EFFORT_BUDGETS:
        if request.reasoning_budget >= least:
            said = name
    return said


def comparable(source: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """``target``'s settings kept to those ``source`` set: a target API may have to say
    more (Anthropic's max_tokens) or fill a default."""
    settings = {
        k: v for k, v in target["settings"].items() if source["settings"].get(k) not in (None, [])
    }
    return {**target, "settings": settings}


def settled(said: dict[str, Any]) -> dict[str, Any]:
    """Settings set to nothing, left out."""
    settings = {k: v for k, v in said["settings"].items() if v not in (None, [])}
    return {**said, "settings": settings}


# --- one body, one direction -----------------------------------------------------------


@dataclass
class Outcome:
    """What became of one body sent from one API to another."""

    name: str
    source: str
    target: str
    source_valid: bool = True
    errors: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    back_lost: list[str] = field(default_factory=list)
    kept: bool = False
    round_trip: bool = False
    differs: str = ""


def mapping(codec: str) -> Any:
    found = codecs.get(codec).requests
    assert found is not None, codec
    return found


def across(name: str, body: Any, source: str, target: str) -> Outcome:
    """``body`` of ``source``'s API sent to ``target``'s and back, measured."""
    out = Outcome(name, source, target)
    out.source_valid = not sdk.errors(source, body) if sdk.has_types(source) else True
    read = mapping(source).read(body)
    request: Request = read.body
    written = mapping(target).write(request)
    out.lost = [*read.lost, *written.lost]
    if sdk.has_types(target):  # a model the source lacks is filled in: none is invented
        out.errors = sdk.errors(target, {"model": "a-model", **written.body})
    came = restore(_routed(target, mapping(target).read(written.body).body, request), written.names)
    said = settled(meaning(request, out.lost))
    heard = comparable(said, meaning(came, []))
    out.kept = said == heard
    back = mapping(source).write(came)
    out.back_lost = back.lost
    again = _routed(source, mapping(source).read(back.body).body, came)
    once = settled(meaning(came, back.lost))
    out.round_trip = comparable(once, meaning(again, [])) == once and out.kept
    if not out.kept:
        out.differs = _first_difference(said, heard)
    elif not out.round_trip:
        out.differs = "back: " + _first_difference(once, comparable(once, meaning(again, [])))
    return out


def _routed(codec: str, request: Request, sent: Request) -> Request:
    """``request`` read from a body of ``codec``'s API with what that API's path says: a
    Gemini body holds neither the model nor whether it streams, which the gateway puts in
    the path it posts to (``models/{model}:streamGenerateContent``) and reads from a
    client's."""
    path = codecs.get(codec).http
    if path is not None and "{model}" in path.path:
        request.model, request.stream = sent.model, sent.stream
    return request


def _first_difference(one: Any, two: Any, path: str = "") -> str:
    if isinstance(one, dict) and isinstance(two, dict):
        for key in [*one, *(k for k in two if k not in one)]:
            if one.get(key) != two.get(key):
                return _first_difference(one.get(key), two.get(key), f"{path}.{key}")
    if isinstance(one, list) and isinstance(two, list):
        for index, (a, b) in enumerate(zip_longest(one, two)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return f"{path}: {str(one)[:80]!r} vs {str(two)[:80]!r}"


def bodies(codec: str) -> list[tuple[str, Any]]:
    """The real bodies of ``codec``'s API, then the hand-written ones."""
    folder = REQUESTS / FOLDERS[codec]
    files = [*sorted(folder.glob("*.json")), *sorted(HERE.glob(f"{FOLDERS[codec]}__*.json"))]
    return [(f.name, load(f)) for f in files]


def directions() -> list[tuple[str, str]]:
    mapped = [c for c in FOLDERS if codecs.get(c).requests is not None]
    return [(a, b) for a in mapped for b in mapped if a != b]


def main() -> int:
    if not REQUESTS.is_dir():
        print(f"{REQUESTS} is absent", file=sys.stderr)
        return 2
    for source, target in directions():
        outcomes = [across(n, b, source, target) for n, b in bodies(source)]
        valid = sum(not o.errors for o in outcomes) if sdk.has_types(target) else "(no SDK types)"
        written = sum(o.name.startswith(FOLDERS[source] + "__") for o in outcomes)
        print(
            f"{source} -> {target}: {len(outcomes)} bodies ({written} hand-written), SDK-valid {valid}"
            f" (sources valid in their own SDK: {sum(o.source_valid for o in outcomes)}),"
            f" meaning kept {sum(o.kept for o in outcomes)},"
            f" A->B->A {sum(o.round_trip for o in outcomes)}"
        )
        for o in outcomes:
            if o.errors or not o.round_trip:
                print(f"    {o.name}: {o.errors[:1] or o.differs}")
        losses = Counter(_kind(p) for o in outcomes for p in o.lost)
        said = ", ".join(f"{k} {v}" for k, v in losses.most_common())
        print(f"    lost: {said}")
    return 0


def _kind(path: str) -> str:
    """A lost path without its indexes and values, to count kinds."""
    path = re.sub(r"\[\d+\]", "[]", path)
    return re.sub(
        r" \((\d+|[a-z]+[^)]*|.*tokens.*)\)$",
        lambda m: f" ({m.group(1)})" if not m.group(1)[0].isdigit() else "",
        path,
    )


if __name__ == "__main__":
    raise SystemExit(main())

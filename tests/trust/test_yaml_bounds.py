"""A YAML cassette cannot make chatx use unbounded memory, time or stack: aliases may
add at most MAX_YAML_ALIASED values to what the file writes, nesting stops at MAX_YAML_DEPTH
(aliases followed), an alias inside the value it names is refused, and only one
document is read. Each case is read by both of PyYAML's safe loaders: libyaml's, which
chatx uses when it is there, and the Python one it falls back to."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from chatx import limits
from chatx.containers import bodies, bounded_yaml, cassette
from chatx.errors import InputError
from tests.inprocess import assert_clean, run

ROOT = Path(__file__).resolve().parents[2]

LOADERS = {
    "libyaml": bounded_yaml.loader_on(yaml.CSafeLoader),
    "python": bounded_yaml.loader_on(yaml.SafeLoader),
}

STREAM = (
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    '"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)

HEAD = "interactions:\n- request: {method: POST, uri: 'https://x/v1/chat/completions'}\n"


def laughs_sequence(levels: int = 9) -> str:
    """The classic: each anchor a list of ten aliases to the one before (10**9 values)."""
    lines = [HEAD + "  response:", "    l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels):
        lines.append(f"    l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]")
    lines.append(f"    parsed_body: *l{levels - 1}")
    return "\n".join(lines) + "\n"


def laughs_mapping(levels: int = 9) -> str:
    """The same through mappings, whose values are the aliases."""
    lines = [
        HEAD + "  response:",
        "    l0: &l0 {" + ", ".join(f"k{j}: lol" for j in range(10)) + "}",
    ]
    for n in range(1, levels):
        lines.append(f"    l{n}: &l{n} {{" + ", ".join(f"k{j}: *l{n - 1}" for j in range(10)) + "}")
    lines.append(f"    parsed_body: *l{levels - 1}")
    return "\n".join(lines) + "\n"


def laughs_keys() -> str:
    """Aliases in key position: a key that is a huge aliased list (unhashable too)."""
    return laughs_sequence().replace("    parsed_body: *l8", "    parsed_body: {? *l8 : x}")


def load(text: str, loader: str) -> object:
    return bounded_yaml.load_yaml(text.encode(), LOADERS[loader])


def refused(text: str, loader: str) -> InputError:
    with pytest.raises(InputError) as caught:
        load(text, loader)
    return caught.value


def nested_flow(levels: int) -> str:
    return HEAD + "  response: {parsed_body: " + "[" * levels + "]" * levels + "}\n"


def nested_block(levels: int) -> str:
    """Block sequences, one level of indentation each."""
    body = "".join("  " * n + "-\n" for n in range(levels)) + "  " * levels + "- x\n"
    return "interactions:\n" + body


# -- aliases --------------------------------------------------------------------------------


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("text", [laughs_sequence(), laughs_mapping(), laughs_keys()],
                         ids=["sequence", "mapping", "keys"])  # fmt: skip
def test_billion_laughs_is_refused_before_anything_is_built(text: str, loader: str) -> None:
    assert len(text) < 1200
    error = refused(text, loader)
    assert "billion laughs" in error.message
    assert f"more than {limits.MAX_YAML_ALIASED:,} values" in error.message


def _fan(aliases: int, anchor_values: int = 999) -> str:
    """One anchor (a list: itself and ``anchor_values`` scalars), named ``aliases`` times:
    the aliases add ``aliases * (anchor_values + 1)`` values."""
    anchor = "[" + ", ".join(["x"] * anchor_values) + "]"
    return f"a: &a {anchor}\nb: [" + ", ".join(["*a"] * aliases) + "]\n"


@pytest.mark.parametrize("loader", LOADERS)
def test_the_alias_limit_is_where_it_is_documented(loader: str) -> None:
    assert limits.MAX_YAML_ALIASED == 1_000_000
    at_limit = yaml.compose(_fan(1000), Loader=LOADERS[loader])
    bounded_yaml._bounded(at_limit)  # adds exactly 1,000,000: read
    past = yaml.compose(_fan(1001), Loader=LOADERS[loader])
    with pytest.raises(InputError, match="billion laughs"):
        bounded_yaml._bounded(past)


@pytest.mark.parametrize("loader", LOADERS)
def test_a_few_aliases_are_read_as_the_values_they_name(loader: str) -> None:
    text = (
        "interactions:\n"
        "- request: {method: POST, uri: x, headers: &h {Accept: [text/event-stream]}}\n"
        "  response: {status: {code: 200}, headers: *h, body: {string: &s 'data: 1'}}\n"
        "- request: {method: POST, uri: x, headers: *h}\n"
        "  response: {status: {code: 200}, headers: *h, body: {string: *s}}\n"
    )
    document = load(text, loader)
    assert isinstance(document, dict)
    second = document["interactions"][1]
    assert second["response"]["headers"] == {"Accept": ["text/event-stream"]}
    assert second["response"]["body"]["string"] == "data: 1"


@pytest.mark.parametrize("loader", LOADERS)
def test_many_distinct_anchors_each_named_once_are_read(loader: str) -> None:
    count = 20000
    text = "a: [" + ", ".join(f"&a{n} {n}" for n in range(count)) + "]\n"
    text += "b: [" + ", ".join(f"*a{n}" for n in range(count)) + "]\n"
    document = load(text, loader)
    assert isinstance(document, dict)
    assert document["b"] == list(range(count))


RECURSIVE = {
    "sequence": "a: &a [x, *a]\n",
    "mapping": "a: &a {k: *a}\n",
    "indirect": "a: &a [[{k: [*a]}]]\n",
    "root": "&r {interactions: *r}\n",
    "in a cassette": HEAD + "  response: &r {parsed_body: *r}\n",
}


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("text", RECURSIVE.values(), ids=RECURSIVE.keys())
def test_an_alias_inside_the_value_it_names_is_refused(text: str, loader: str) -> None:
    error = refused(text, loader)
    assert "recursive anchor" in error.message
    assert error.line is not None


def test_an_alias_to_an_anchor_not_yet_written_is_a_yaml_error() -> None:
    error = refused("a: *nowhere\n", "libyaml")
    assert "not valid YAML" in error.message


# -- nesting --------------------------------------------------------------------------------


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("text", [
    nested_flow(100_000),
    HEAD + "  response: {parsed_body: " + "{a: " * 100_000 + "x" + "}" * 100_000 + "}\n",
    nested_flow(limits.MAX_YAML_DEPTH),
    nested_block(limits.MAX_YAML_DEPTH),
    "- " * 5000 + "x\n",
    "[{a: " * 2000 + "x" + "}]" * 2000 + "\n",
], ids=["flow-100k", "flow-mapping-100k", "flow-just-past", "block-just-past", "block-line",
        "mixed"])  # fmt: skip
def test_nesting_past_the_limit_is_refused_without_a_recursion_error(
    text: str, loader: str
) -> None:
    error = refused(text, loader)
    assert error.message == f"YAML refused: nested deeper than {limits.MAX_YAML_DEPTH} levels"
    assert error.line is not None


@pytest.mark.parametrize("loader", LOADERS)
def test_nesting_up_to_the_limit_is_read(loader: str) -> None:
    # The cassette's own levels (mapping, list, item, response, parsed_body's mapping)
    # and the lists, MAX_YAML_DEPTH in all.
    levels = limits.MAX_YAML_DEPTH - 5
    document = load(nested_flow(levels), loader)
    assert isinstance(document, dict)
    value = document["interactions"][0]["response"]["parsed_body"]
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    assert depth == levels - 1  # the innermost list is empty


@pytest.mark.parametrize("loader", LOADERS)
def test_nesting_made_by_aliases_counts(loader: str) -> None:
    """Each anchor one list deeper than the one it names: written 2 levels deep, 301
    once followed."""
    text = "a0: &a0 [x]\n" + "".join(f"a{n}: &a{n} [*a{n - 1}]\n" for n in range(1, 300))
    error = refused(text, loader)
    assert "nested deeper than" in error.message


@pytest.mark.parametrize("loader", LOADERS)
def test_ruby_objects_nested_to_the_limit_build_without_a_recursion_error(loader: str) -> None:
    levels = limits.MAX_YAML_DEPTH - 2
    text = "x: " + "!ruby/object:Foo {a: " * levels + "1" + "}" * levels + "\n"
    document = load(text, loader)
    assert isinstance(document, dict)


def test_a_parsed_body_nested_past_what_json_holds_is_that_exchange_refused() -> None:
    levels = limits.MAX_DEPTH + 1
    text = nested_flow(levels) + "- request: {method: POST, uri: x}\n  response:\n"
    text += "    body: {string: '" + STREAM.replace("\n", "\n\n      ") + "'}\n"
    (first, second) = cassette.entries(text.encode())
    with pytest.raises(bodies.BodyError, match=f"nested deeper than {limits.MAX_DEPTH}"):
        first.body()
    assert second.body().startswith(b"data: ")


# -- sizes and documents ----------------------------------------------------------------------


@pytest.mark.parametrize("loader", LOADERS)
def test_a_huge_scalar_is_read_whole(loader: str) -> None:
    text = "x" * (8 << 20)
    document = load(f"interactions: []\nbig: {text}\n", loader)
    assert isinstance(document, dict)
    assert len(document["big"]) == 8 << 20


@pytest.mark.parametrize("loader", LOADERS)
def test_only_one_document_is_read(loader: str) -> None:
    text = "interactions: []\n" + "---\ninteractions: []\n" * 100_000
    error = refused(text, loader)
    assert "single document" in error.message
    assert error.line == 2


def test_an_empty_document_holds_no_interactions(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("interactions:\n")
    result = run(["ls", str(path)])
    assert_clean(result, {2})


# -- the commands -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [laughs_sequence(), laughs_mapping()], ids=["sequence", "mapping"])
@pytest.mark.parametrize("command", ["ls", "convert", "validate", "collect"])
def test_every_command_refuses_a_billion_laughs_file_with_exit_2(
    tmp_path: Path, text: str, command: str
) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(text)
    result = run([command, str(path)])
    assert_clean(result, {2})
    assert f"{path}:1: YAML refused: its aliases" in result.err


def _limit_memory() -> None:
    gib = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (gib, gib))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds memory on Linux only")
@pytest.mark.parametrize("levels", [9, 12])
def test_a_billion_laughs_file_converts_in_a_gib_of_address_space(
    tmp_path: Path, levels: int
) -> None:
    """It took gigabytes, then died with SIGSEGV; in 1 GiB of address space (a
    process of chatx starts in about a tenth of that) it is refused with exit 2."""
    path = tmp_path / "laughs.yaml"
    path.write_text(laughs_mapping(levels))
    done = subprocess.run(
        [sys.executable, "-m", "chatx", "convert", str(path), "--to", "chat-chunk"],
        capture_output=True,
        cwd=ROOT,
        timeout=300,
        preexec_fn=_limit_memory,
    )
    assert done.returncode == 2, done.stderr.decode()
    assert b"billion laughs" in done.stderr

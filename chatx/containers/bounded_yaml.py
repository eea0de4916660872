"""YAML read safely, as JSON values: the one YAML reader of every file of exchanges
written in YAML (VCR cassettes, httpmock's documents).

The document is composed first and bounded before anything is built from it (aliases,
depth, recursive anchors: :data:`~chatx.limits.MAX_YAML_ALIASED`,
:data:`~chatx.limits.MAX_YAML_DEPTH`), then constructed by PyYAML's safe loader with the
tags recorders write (Ruby VCR's ``!binary`` and ``!ruby/…``, Python 2 VCR.py's
``!!python/str``) and no tag that runs code. :func:`as_json` then makes a constructed
value the JSON value it stands for, refusing what JSON cannot hold.

PyYAML is imported here only, when a YAML file is read.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from math import isfinite
from typing import Any

import orjson

from chatx.containers.bodies import BodyError, b64
from chatx.errors import InputError
from chatx.limits import MAX_DEPTH, MAX_YAML_ALIASED, MAX_YAML_DEPTH


def load_yaml(data: bytes, loader: Any = None, checked: Callable[[Any], None] | None = None) -> Any:
    """A YAML cassette's document, read with ``loader`` (a class from :func:`loader_on`;
    the libyaml one when there is libyaml); ``checked`` is given its composed root
    before anything is built from it."""
    loader = (loader or safe_loader())(data)
    with _reading(loader):
        node = loader.get_single_node()
        if node is None:
            return None
        _bounded(node)
        if checked is not None:
            checked(node)
        return loader.construct_document(node)


def load_yaml_documents(
    data: bytes, loader: Any = None, checked: Callable[[Any], None] | None = None
) -> Iterator[Any]:
    """Each document of a YAML stream (``---`` before each), in order, read as
    :func:`load_yaml` reads one (``checked`` given each composed root): the values
    aliases add count over the whole file, so that many documents each under
    MAX_YAML_ALIASED cannot add up past it."""
    loader = (loader or safe_loader())(data)
    budget = MAX_YAML_ALIASED
    with _reading(loader):
        while loader.check_node():
            node = loader.get_node()
            budget -= _bounded(node, budget)
            if checked is not None:
                checked(node)
            yield loader.construct_document(node)


@contextmanager
def _reading(loader: Any) -> Iterator[None]:
    """While ``loader`` reads: PyYAML's errors said as chatx says them, and the loader
    disposed of at the end, however it ends."""
    import yaml

    try:
        yield
    except yaml.MarkedYAMLError as exc:
        raise _not_valid(exc) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def _not_valid(exc: Any) -> InputError:
    """PyYAML's error as chatx says it, with its line."""
    mark = exc.problem_mark or exc.context_mark
    what = ", ".join(str(part) for part in (exc.context, exc.problem) if part)
    if "maximum nesting depth" in what:  # libyaml's own bound, past ours
        return _too_deep(mark)
    return InputError(f"not valid YAML: {what}", line=mark.line + 1 if mark else None)


# -- bounds ------------------------------------------------------------------------------


def _bounded(root: Any, budget: int = MAX_YAML_ALIASED) -> int:
    """Refuse a composed document whose aliases make it larger than it is written by more
    than ``budget`` values (MAX_YAML_ALIASED for a file, less what its earlier documents
    added), or deeper than MAX_YAML_DEPTH, or that holds an alias inside the value it
    names: before anything is built from it; else the values its aliases add. The node
    graph is as written (an alias is the node it names, shared), so this costs one
    visit per written node."""
    size: dict[int, int] = {}  # id(node) -> values once aliases are expanded
    height: dict[int, tuple[int, Any]] = {}  # id(node) -> (levels, its deepest leaf)
    entered: set[int] = set()  # the nodes on the path from the root: a cycle returns to one
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            entered.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            below = max((height[id(child)] for child in children), default=(0, node),
                        key=lambda pair: pair[0])  # fmt: skip
            height[key] = (below[0] + 1, below[1])
            continue
        if key in size:
            continue
        entered.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in entered:
                raise InputError(
                    "YAML refused: an alias inside the value it names (a recursive anchor)",
                    line=child.start_mark.line + 1,
                )
            if id(child) not in size:
                stack.append((child, False))
    levels, deepest = height[id(root)]
    if levels > MAX_YAML_DEPTH:
        raise _too_deep(deepest.start_mark)
    added = size[id(root)] - len(size)
    if added > budget:
        raise InputError(
            f"YAML refused: its aliases (*name) add more than {MAX_YAML_ALIASED:,} values to the"
            f' {len(size):,} it writes (a "billion laughs" file)',
            line=root.start_mark.line + 1,
        )
    return added


def _too_deep(mark: Any) -> InputError:
    return InputError(
        f"YAML refused: nested deeper than {MAX_YAML_DEPTH} levels",
        line=mark.line + 1 if mark is not None else None,
    )


def _children(node: Any) -> list[Any]:
    value = node.value
    if isinstance(value, list):
        if value and isinstance(value[0], tuple):  # a mapping: (key, value) pairs
            return [part for pair in value for part in pair]
        return value
    return []


_LOADER: Any = None


def safe_loader() -> Any:
    """PyYAML's safe loader (libyaml's when there is one), bounded (see :func:`_bounded`),
    that also reads Ruby VCR's tags, ``!binary`` (base64 bytes) and ``!ruby/…`` objects
    (read as plain values), and Python 2 VCR.py's ``!!python/unicode`` and
    ``!!python/str`` (text). Any other ``!!python/…`` tag is refused: it names Python
    code to run. Bad base64 under ``!binary`` or ``!!binary`` fails that body only."""
    global _LOADER
    if _LOADER is None:
        import yaml

        _LOADER = loader_on(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return _LOADER


def loader_on(base: Any) -> Any:
    """The cassette loader built on ``base`` (a safe loader, libyaml's or Python's)."""

    class Loader(base):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            """Python's composer recurses per level: stopped at MAX_YAML_DEPTH, before
            Python's own limit (libyaml's composer does not come here)."""
            self.depth += 1
            try:
                if self.depth > MAX_YAML_DEPTH:
                    raise _too_deep(self.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    Loader.construct_mapping = _construct_mapping
    Loader.add_constructor("!binary", _binary)
    Loader.add_constructor("tag:yaml.org,2002:binary", _binary)
    Loader.add_multi_constructor("!ruby/", _ruby)
    Loader.add_constructor("tag:yaml.org,2002:python/unicode", _text)
    Loader.add_constructor("tag:yaml.org,2002:python/str", _text)
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", _python)
    # A date or a time is the text written: JSON has no such type, and the string a
    # server sent is what a recorder wrote unquoted.
    Loader.add_constructor("tag:yaml.org,2002:timestamp", _text)
    Loader.add_constructor("tag:yaml.org,2002:omap", _ordered)
    return Loader


def _construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
    """A mapping as PyYAML builds it, but each key that is a number, a boolean or null
    made the text JSON writes for it as it is read: a Python dict holds ``1`` and
    ``true`` (or ``0`` and ``false``) as one key, which JSON's "1" and "true" are not."""
    import yaml

    loader.flatten_mapping(node)  # merge keys (<<) first, as PyYAML does
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key is None or isinstance(key, bool | int) or isinstance(key, float) and isfinite(key):
            key = _key(key, "a mapping")
        if not isinstance(key, Hashable):
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, "found unhashable key",
                key_node.start_mark,
            )  # fmt: skip
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


def _binary(loader: Any, node: Any) -> bytes:
    try:
        return b64(loader.construct_scalar(node))
    except BodyError:
        return Undecodable(loader.construct_scalar(node))  # said when the body is read


def _ruby(loader: Any, suffix: str, node: Any) -> Any:
    """A Ruby object, as the plain value it is written as. Built as a plain mapping or
    list is, filled after, not by recursion (which a document nested to MAX_YAML_DEPTH
    would take past Python's limit)."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        return loader.construct_yaml_map(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_yaml_seq(node)
    return loader.construct_scalar(node)


def _text(loader: Any, node: Any) -> str:
    return str(loader.construct_scalar(node))


def _ordered(loader: Any, node: Any) -> Iterator[dict[Any, Any]]:
    """``!!omap``: a mapping in the order written, which a JSON object is."""
    import yaml

    made: dict[Any, Any] = {}
    yield made
    steps = loader.construct_yaml_omap(node)
    pairs = next(steps)
    for _ in steps:
        pass
    for key, value in pairs:
        if not isinstance(key, Hashable):
            raise yaml.constructor.ConstructorError(
                None, None, "an !!omap key that is a list or a mapping", node.start_mark
            )
        made[key] = value


def _python(loader: Any, suffix: str, node: Any) -> Any:
    import yaml

    raise yaml.constructor.ConstructorError(
        None, None,
        f"the tag !!python/{suffix} names Python code to run, which chatx never does "
        "(of Python's tags only !!python/str and !!python/unicode are read, as text)",
        node.start_mark,
    )  # fmt: skip


class Undecodable(bytes):
    """A ``!binary`` scalar that is not base64: kept, and said when its body is read."""

    text: str

    def __new__(cls, text: str) -> Undecodable:
        made = super().__new__(cls, b"")
        made.text = text
        return made


# -- YAML values as JSON -------------------------------------------------------------------


def as_json(value: Any, path: str) -> Any:
    """A parsed body or request as the JSON value it stands for. YAML has values JSON has
    not: a key that is no string is written as JSON writes that scalar (``1``, ``true``,
    ``null``), ``!!binary`` is its UTF-8 text, a list of pairs a list of lists, an
    integer beyond 64 bits is kept exact (a date is its text already: see the loader).
    A set, bytes that are not UTF-8, a number JSON has none for (``.nan``, ``.inf``) and
    nesting deeper than MAX_DEPTH are refused (BodyError naming the place)."""
    top: list[Any] = [None]
    # (value, the container and key its JSON form goes to, its path, its depth)
    stack: list[tuple[Any, Any, Any, str, int]] = [(value, top, 0, path, 0)]
    while stack:
        node, into, at, where, depth = stack.pop()
        kind = type(node)
        if depth >= MAX_DEPTH and kind in (dict, list, tuple):
            raise BodyError(f"{where}: nested deeper than {MAX_DEPTH} levels")
        if kind is dict:
            made: dict[str, Any] = {}
            for key, item in node.items():
                name = _key(key, where)
                made[name] = None
                stack.append((item, made, name, f"{where}.{name}", depth + 1))
            into[at] = made
        elif kind is list or kind is tuple:
            into[at] = [None] * len(node)
            for n, item in enumerate(node):
                stack.append((item, into[at], n, f"{where}[{n}]", depth + 1))
        else:
            into[at] = _scalar(node, where)
    return top[0]


def _key(key: Any, where: str) -> str:
    """A mapping key as JSON has it: text, or a scalar written as JSON writes it."""
    if isinstance(key, str):
        return key
    if isinstance(key, bytes):
        return str(_scalar(key, f"a key in {where}"))
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)  # exact, however long
    if key is None or isinstance(key, bool | float):
        return orjson.dumps(_scalar(key, f"a key in {where}")).decode()
    raise BodyError(f"{where}: a key that is a {type(key).__name__} (JSON keys are text)")


def _scalar(value: Any, where: str) -> Any:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise BodyError(f"{where}: {value!r} has no JSON form")
        return value
    if isinstance(value, bytes):  # !!binary in a value JSON holds as text
        if isinstance(value, Undecodable):
            b64(value.text)  # raises BodyError, saying why
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise BodyError(f"{where}: !!binary bytes that are not UTF-8 text") from None
    if isinstance(value, set | frozenset):
        raise BodyError(f"{where}: a YAML set (!!set) has no JSON form")
    raise BodyError(f"{where}: a {type(value).__name__} has no JSON form")

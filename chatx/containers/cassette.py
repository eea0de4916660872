"""VCR cassettes: VCR.py and pytest-recording (``interactions:``), Ruby VCR
(``http_interactions:``), as YAML or as JSON.

YAML is read with PyYAML, imported here only, when a cassette is read: each writer picks
its own scalar style for a body (literal ``|``, folded ``>``, single- or double-quoted,
wrapped) and only a YAML parser reads them all back to the same text.

Response bodies come as ``body: {string: …}`` (text, or bytes from ``!!binary``), Ruby's
``{encoding, string: !binary …}`` or ``{base64_string: …}``, a plain string, or a
``parsed_body`` a serializer stored already parsed: a JSON object, a list of SSE events
(``{event, data}``), or a list of payloads. Parsed bodies are written back as the bytes
a server sends: SSE for events, JSON lines for payloads, JSON for an object.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from math import isfinite
from typing import Any

import orjson

from chatx.containers import exact
from chatx.containers.bodies import (
    BodyError,
    Entry,
    b64,
    decoded,
    header,
    json_object,
    status_code,
    text_bytes,
)
from chatx.containers.lines import BOM
from chatx.containers.payload import lenient_dumps
from chatx.errors import InputError
from chatx.limits import MAX_DEPTH, MAX_YAML_ALIASED, MAX_YAML_DEPTH

_SSE_KEYS = {"event", "data", "id", "retry"}


def entries(data: bytes) -> Iterator[Entry]:
    """The interactions of a cassette held in ``data``."""
    document = _load(data)
    items, name = None, "interactions"
    if isinstance(document, dict):
        name = "interactions" if "interactions" in document else "http_interactions"
        items = document.get(name)
    if not isinstance(items, list):
        raise InputError("not a VCR cassette: no list of interactions", line=1)
    for index, item in enumerate(items):
        yield _entry(index, item if isinstance(item, dict) else {}, f"{name}[{index}]")


def _load(data: bytes) -> Any:
    if data.removeprefix(BOM).lstrip()[:1] == b"{":  # a JSON cassette
        return _load_json(data.removeprefix(BOM))
    return load_yaml(data)


def load_yaml(data: bytes, loader: Any = None) -> Any:
    """A YAML cassette's document, read with ``loader`` (a class from :func:`loader_on`;
    the libyaml one when there is libyaml)."""
    import yaml

    loader = (loader or _loader())(data)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _bounded(node)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = ", ".join(str(part) for part in (exc.context, exc.problem) if part)
        if "maximum nesting depth" in what:  # libyaml's own bound, past ours
            raise _too_deep(mark) from None
        raise InputError(f"not valid YAML: {what}", line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def _load_json(data: bytes) -> Any:
    """A JSON cassette; integers beyond 64 bits read exactly, as a stream's are."""
    return exact.document(data)


# -- bounds ------------------------------------------------------------------------------


def _bounded(root: Any) -> None:
    """Refuse a composed document whose aliases make it larger than it is written by more
    than MAX_YAML_ALIASED values, or deeper than MAX_YAML_DEPTH, or that holds an alias inside
    the value it names: before anything is built from it. The node graph is as written
    (an alias is the node it names, shared), so this costs one visit per written node."""
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
    if size[id(root)] - len(size) > MAX_YAML_ALIASED:
        raise InputError(
            f"YAML refused: its aliases (*name) add more than {MAX_YAML_ALIASED:,} values to the"
            f' {len(size):,} it writes (a "billion laughs" file)',
            line=root.start_mark.line + 1,
        )


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


def _loader() -> Any:
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
        return _Undecodable(loader.construct_scalar(node))  # said when the body is read


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


class _Undecodable(bytes):
    """A ``!binary`` scalar that is not base64: kept, and said when its body is read."""

    text: str

    def __new__(cls, text: str) -> _Undecodable:
        made = super().__new__(cls, b"")
        made.text = text
        return made


def _entry(index: int, item: dict[str, Any], path: str) -> Entry:
    request = item.get("request")
    response = item.get("response")
    request = request if isinstance(request, dict) else {}
    response = response if isinstance(response, dict) else {}
    headers = response.get("headers")
    method = request.get("method")
    try:
        recorded, refused = _request(request, f"{path}.request"), None
    except BodyError as exc:
        # A request with a value JSON cannot hold is not read at all: what it asked for
        # would be guessed otherwise. The exchange is then one that cannot be read.
        recorded, refused = None, str(exc)
    return Entry(
        index,
        None,
        method=method.upper() if isinstance(method, str) else None,
        url=_str(request.get("uri") or request.get("url")),
        status=status_code(response.get("status")),
        content_type=header(headers, "content-type"),
        request=recorded,
        load=lambda: decoded(
            _body(response, f"{path}.response"), header(headers, "content-encoding")
        ),
        refused=refused,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _request(request: dict[str, Any], path: str) -> dict[str, Any] | None:
    if "parsed_body" in request:
        return json_object(as_json(request["parsed_body"], f"{path}.parsed_body"))
    try:
        return json_object(_raw(request.get("body")))
    except BodyError:
        return None


def _body(response: dict[str, Any], path: str) -> bytes:
    if "parsed_body" in response:
        return _unparsed(as_json(response["parsed_body"], f"{path}.parsed_body"))
    return _raw(response.get("body"))


def _raw(body: Any) -> bytes:
    """A recorded body's bytes, from every shape the writers use."""
    if isinstance(body, dict):
        if "base64_string" in body:
            return b64(str(body["base64_string"]))
        body = body.get("string")
    if isinstance(body, _Undecodable):
        b64(body.text)  # raises BodyError, saying why
    return text_bytes(body)


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
        if isinstance(value, _Undecodable):
            b64(value.text)  # raises BodyError, saying why
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise BodyError(f"{where}: !!binary bytes that are not UTF-8 text") from None
    if isinstance(value, set | frozenset):
        raise BodyError(f"{where}: a YAML set (!!set) has no JSON form")
    raise BodyError(f"{where}: a {type(value).__name__} has no JSON form")


def _unparsed(value: Any) -> bytes:
    """A ``parsed_body`` written back as the bytes a server sends."""
    if isinstance(value, str | bytes):
        return text_bytes(value)
    if isinstance(value, list) and value and all(_sse_event(item) for item in value):
        return b"".join(_sse(item) for item in value)
    if isinstance(value, list):
        return b"".join(lenient_dumps(item) + b"\n" for item in value)
    return lenient_dumps(value)


def _sse_event(item: Any) -> bool:
    return isinstance(item, dict) and "data" in item and set(item) <= _SSE_KEYS


def _sse(item: dict[str, Any]) -> bytes:
    out = b""
    for name in ("event", "id", "retry"):
        if item.get(name) is not None:
            out += f"{name}: {item[name]}\n".encode()
    data = item["data"]
    payload = text_bytes(data) if isinstance(data, str) else lenient_dumps(data)
    for line in payload.split(b"\n"):
        out += b"data: " + line + b"\n"
    return out + b"\n"

"""``chatx validate``: check a stream against its format's rules (DESIGN.md §5).

Library entry point::

    findings = validate_records(records, "responses-event", container="sse")
    findings = validate_records(open("capture.sse", "rb").read())  # format detected

Each format has a streaming checker (``feed(record)`` / ``finish()``) that keeps only the
state later rules need, in its codec package (``Codec.checker``); the rules themselves,
with their ids and documentation, are collected in :mod:`chatx.validation.rules`. The
format is the codec name callers pass, or the one ``chatx.codecs.sniff`` finds in the
first records.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

from chatx import codecs
from chatx.errors import UsageError
from chatx.reading.framing import group_bytes
from chatx.record import Record
from chatx.validation.base import Checker, Finding
from chatx.validation.rule import Rule
from chatx.validation.rules import RULES, get_rule, rules_for

__all__ = [
    "Checker",
    "Finding",
    "RULES",
    "Rule",
    "get_rule",
    "make_checker",
    "rules_for",
    "check_groups",
    "sniff_groups",
    "validate_records",
]


def make_checker(
    fmt: str, *, file: str = "<input>", container: str | None = None, schema: bool = False
) -> Checker:
    """A fresh checker for ``fmt``; with ``schema`` it also validates the SDK types."""
    codec = next((c for c in codecs.CODECS if c.name == fmt), None)
    factory = codec.checker if codec is not None else None
    if codec is None or factory is None:
        known = [codec.name for codec in codecs.listed() if codec.checker is not None]
        raise UsageError(f"cannot validate format {fmt!r} (expected one of {', '.join(known)})")
    checker = factory(file, container)
    checker.whole_object = codecs.whole_object
    if schema:
        # The format's SDK is an optional extra: when it is not installed, say so instead
        # of failing on the first record. Looked up, not imported in a try, so an SDK
        # that is installed but broken still fails loudly.
        package, extra = codec.schema_sdk or ("openai", "schema")
        if importlib.util.find_spec(package) is None:
            raise UsageError(
                f"--schema needs the {package} SDK, which is not installed "
                f"(pip install 'chatx[{extra}]')"
            )
        # Imported only here: the schema module pulls in pydantic, the hooks the SDK.
        from chatx.validation.schema import with_schema

        checker = with_schema(checker)
    return checker


def validate_records(
    records: Iterable[Record] | bytes,
    fmt: str | None = None,
    *,
    schema: bool = False,
    container: str | None = None,
    file: str = "<input>",
    ignored: list[tuple[int, str]] | None = None,
    found: Callable[[list[Finding]], object] | None = None,
) -> list[Finding]:
    """Check every record of one stream and return all findings, in stream order.

    ``records`` are records, or the bytes of a stream (framed here, the container
    detected unless given); ``fmt`` is detected from the first records when not given.
    ``container`` is the framing the records came from (``sse``, ``jsonl``, ``json``);
    rules about SSE framing (``data: [DONE]``) apply only when it is ``sse``. The input
    lines the reader ignored are findings too (STR002): bytes are read for them here;
    for records, pass the list :func:`chatx.reading.framing.open_records` fills as ``ignored``.
    ``found``, when given, is called with the findings as they are known, for a live
    input checked live: after each record those it brought (an empty list when none),
    at the end the rest, in stream order.
    """
    reader = None
    groups: Iterator[list[Record]]
    if isinstance(records, bytes | bytearray):
        ignored = []
        container, reader, groups = group_bytes(bytes(records), container, ignored, file)
    else:
        groups = ([record] for record in records)
    if fmt is None:
        fmt, groups = sniff_groups(groups)
    checker = make_checker(fmt, file=file, container=container, schema=schema)
    return check_groups(checker, groups, ignored, found, reader)


def check_groups(
    checker: Checker,
    groups: Iterable[list[Record]],
    ignored: list[tuple[int, str]] | None = None,
    found: Callable[[list[Finding]], object] | None = None,
    reader: Any = None,
) -> list[Finding]:
    """What :func:`validate_records` does once it has a checker: records in the lists
    each read gives them (:func:`chatx.reading.framing.open_groups`), read from
    ``reader``. Once a record parsed, the reader leaves the payloads after it unparsed
    for a checker that knows records by their bytes (:meth:`Checker.knows`), which takes
    a run of them in one list at once, as convert's decoders do (not one made with
    ``schema``, whose SDK reads each record). ``found`` is called after each record, or
    run of records the checker took at once."""
    # A RawReader (the Protocol's isinstance is slow), for a checker that knows records
    unparsed = type(checker).knows is not Checker.knows and hasattr(reader, "raw")
    shown, said, feed = 0, checker.findings, checker.feed
    none: list[Finding] = []
    for group in groups:
        at, count = 0, len(group)
        while at < count:
            taken = _run(checker, group, at, ignored)
            if taken:
                at += taken
                if found is not None:
                    found(none)
                continue
            record = group[at]
            at += 1
            if ignored:
                checker.ignored_lines(ignored, record.line)
            feed(record)
            if unparsed and record.error is None and not record.done:
                reader.raw, unparsed = True, False  # the payloads after a first that parsed
            if found is not None:
                if len(said) == shown:  # most records: nothing found, no list made
                    found(none)
                else:
                    found(said[shown:])
                    shown = len(said)
    if ignored:
        checker.ignored_lines(ignored)
    findings = checker.finish()
    if found is not None:
        found(sorted(findings[shown:], key=_index))
    return sorted(findings, key=_index)


def _run(
    checker: Checker, group: list[Record], at: int, ignored: list[tuple[int, str]] | None
) -> int:
    """How many records from ``at`` on the checker took by their bytes (0: none). Not
    past a line the reader ignored: its STR002 is said before the record after it, with
    the index of the one before."""
    if checker.known is None or (ignored and ignored[0][0] < group[-1].line):
        return 0
    return checker.run(group, at)


def sniff_groups(groups: Iterator[list[Record]]) -> tuple[str, Iterator[list[Record]]]:
    """The format of records in lists, told from the first records as every command
    tells it (reading no further than needed), and the lists again from the first."""
    pulled: list[list[Record]] = []

    def records() -> Iterator[Record]:
        for group in groups:
            pulled.append(group)
            yield from group

    codec, _ = codecs.sniff_iter(records())
    return codec.name, chain(pulled, groups)


def _index(finding: Finding) -> int:
    return finding.index

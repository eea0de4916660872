"""``validate --schema``: check each event's fields against the SDK types of its format.

Each format says which SDK type checks a payload (``Codec.schema``, which imports the SDK
when called) and under which rule (``Codec.schema_rule``); this module runs them and
keeps the errors that say something about the stream. It is imported only when
``--schema`` is asked for (``import openai`` costs about a second).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from chatx import codecs
from chatx.record import Record
from chatx.validation.base import Checker


class SchemaChecker(Checker):
    """Runs the format's own checker and, for each record, the SDK type validation.

    Findings go to the inner checker's list, so lines and indexes stay its own. Each
    distinct problem (event type, field, error kind) is reported once per file: an
    early-2025 recording without sequence_number would otherwise repeat it on every event.
    """

    def __init__(self, inner: Checker) -> None:
        super().__init__(inner.file, inner.container)
        self.inner = inner
        self.format = inner.format
        self.findings = inner.findings
        codec = codecs.get(inner.format)
        self.rule = codec.schema_rule
        self.schema = codec.schema
        self.seen: set[tuple[Any, ...]] = set()

    def feed(self, record: Record) -> None:
        self.inner.feed(record)
        rule, schema = self.rule, self.schema
        if rule is None or schema is None or record.done or record.error is not None:
            return
        found = schema(record.data)
        if found is None:
            return
        adapter, data = found
        try:
            adapter.validate_python(data)
        except ValidationError as exc:
            self._report(rule, data, exc)

    def _report(self, rule: str, data: Any, exc: ValidationError) -> None:
        etype = data.get("type") if isinstance(data, dict) else None
        for error in relevant_errors(exc.errors(include_url=False)):
            loc = ".".join(str(part) for part in error["loc"] if not _is_member(part))
            key = (etype, loc, error["type"])
            if key in self.seen:
                continue
            self.seen.add(key)
            what = f"{etype}: " if etype else ""
            self.inner.report(rule, f"{what}{loc or '(event)'}: {error['msg']}")

    def finish(self) -> list:
        return self.inner.finish()


def with_schema(checker: Checker) -> Checker:
    """Wrap ``checker`` so that it also validates records against the SDK types."""
    return SchemaChecker(checker)


_DRIFTING = frozenset({"missing", "literal_error", "enum"})


def _is_member(part: Any) -> bool:
    """A union member in an error location (a class name; field names are snake_case)."""
    return isinstance(part, str) and part[:1].isupper()


def relevant_errors(errors: list[Any]) -> list[Any]:
    """The errors that say something about the stream rather than about the SDK's types.

    * In a union (an output item, a content part) only the member whose ``type`` literal
      matched is relevant; when none matched, the nested object has a type this SDK does
      not know (a newer item kind) and is an extension, not an error.
    * A missing field or an unknown enum value is reported only at the top level of the
      event. Deeper down the SDK lags behind the servers: it marks fields required that
      servers omit in partial objects (OpenAI's own ``output_item.added`` sends a
      web_search_call without ``action``) or that newer SDK releases added
      (``usage.input_tokens_details.cache_write_tokens``), and its enums miss values
      OpenAI sends (source type ``api``, error code ``insufficient_quota``).
    """
    rejected = {
        tuple(e["loc"][:-1])
        for e in errors
        if e["type"] == "literal_error"
        and e["loc"]
        and e["loc"][-1] == "type"
        and len(e["loc"]) > 1
        and _is_member(e["loc"][-2])
    }
    kept = []
    for error in errors:
        loc = tuple(error["loc"])
        members = [i for i, part in enumerate(loc) if _is_member(part)]
        if any(loc[: i + 1] in rejected for i in members):
            continue
        depth = len(loc) - len(members)
        if depth > 1 and error["type"] in _DRIFTING:
            continue
        kept.append(error)
    return kept

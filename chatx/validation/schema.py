"""``validate --schema``: check each event's fields against the openai SDK's types.

This is the only module of chatx.validation that imports the openai SDK, and it is itself
imported only when ``--schema`` is asked for (``import openai`` costs about a second).

Responses events are looked up by their ``type`` in a dict built once from the SDK's event
classes, and each class gets its own cached ``TypeAdapter``: validating against the SDK's
published ``ResponseStreamEvent`` union instead is about 17 times slower, because pydantic
tries the union's members rather than jumping to the one the ``type`` names.
"""

from __future__ import annotations

import typing
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from chatx.record import Record
from chatx.validation.base import Checker
from chatx.validation.chat import is_azure_preamble

RULE_FOR_FORMAT = {"responses-event": "RSP100", "chat-chunk": "CHK100"}


@cache
def responses_classes() -> dict[str, type]:
    """``type`` value → SDK event class, read from the SDK's own union."""
    from openai.types.responses import ResponseStreamEvent

    union = typing.get_args(ResponseStreamEvent)[0]  # Annotated[Union[...], discriminator]
    classes: dict[str, type] = {}
    for cls in typing.get_args(union):
        (literal,) = typing.get_args(cls.model_fields["type"].annotation)
        classes[literal] = cls
    return classes


@cache
def _adapter(cls: type) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


@cache
def _chunk_adapter() -> TypeAdapter[Any]:
    from openai.types.chat import ChatCompletionChunk

    return TypeAdapter(ChatCompletionChunk)


def adapter_for(fmt: str, data: Any) -> TypeAdapter[Any] | None:
    """The adapter that validates ``data``, or ``None`` when there is no SDK type for it."""
    if fmt == "chat-chunk":
        return _chunk_adapter()
    if fmt == "responses-event" and isinstance(data, dict):
        kind = data.get("type")
        cls = responses_classes().get(kind) if isinstance(kind, str) else None
        return _adapter(cls) if cls is not None else None
    return None


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
        self.rule = RULE_FOR_FORMAT.get(inner.format)
        self.seen: set[tuple[Any, ...]] = set()

    def feed(self, record: Record) -> None:
        self.inner.feed(record)
        rule = self.rule
        if rule is None or record.done or record.error is not None:
            return
        data = record.data
        # Azure's prompt-filter preamble belongs to no completion (see CHK001), and an
        # error frame is not a chunk at all (CHK017).
        if (
            self.format == "chat-chunk"
            and isinstance(data, dict)
            and (is_azure_preamble(data) or (data.get("error") and "choices" not in data))
        ):
            return
        adapter = adapter_for(self.format, data)
        if adapter is None:
            return
        if self.format == "responses-event" and isinstance(data.get("error"), dict):
            # The nested error shape (what OpenAI sends) is as valid as the flat one the
            # SDK type describes (DESIGN.md §5): validate it flattened.
            data = {
                **data["error"],
                "type": "error",
                "sequence_number": data.get("sequence_number"),
            }
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

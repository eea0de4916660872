"""The rule registry: every rule ``chatx validate`` checks, with its documentation.

Ids are stable and namespaced by format (``RSP`` Responses events, ``CHK`` chat chunks,
``LLS`` Llama Stack events, ``ANT`` Anthropic Messages events, ``STR`` any stream); a
retired id is never reused. The rules of any stream are in
:mod:`chatx.validation.stream_rules`; each format's are in its codec package, and the
registry's ``Codec.rules`` hands them here.

:data:`RULES` is collected when first read, not when this module is imported: a codec's
catalogue imports :mod:`chatx.validation.rule`, whose package imports this module, so
collecting at import would ask a catalogue for its rules while it is being imported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from chatx import codecs
from chatx.validation.rule import Rule
from chatx.validation.stream_rules import STREAM_RULES

__all__ = ["RULES", "get_rule", "rules_for"]


def _collect() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    catalogues = [codec.rules() for codec in codecs.listed()]
    for rule in (*STREAM_RULES, *(rule for catalogue in catalogues for rule in catalogue)):
        if rule.id in rules:
            raise ValueError(f"duplicate rule id {rule.id}")
        rules[rule.id] = rule
    return rules


class _Rules(Mapping[str, Rule]):
    """Every rule by id, in listing order: those of any stream, then each format's."""

    def __init__(self) -> None:
        self._rules: dict[str, Rule] | None = None

    def _all(self) -> dict[str, Rule]:
        if self._rules is None:
            self._rules = _collect()
        return self._rules

    def __getitem__(self, rule_id: str) -> Rule:
        return self._all()[rule_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


RULES: Mapping[str, Rule] = _Rules()


def get_rule(rule_id: str) -> Rule | None:
    """The rule with this id (case-insensitive), or ``None``."""
    return RULES.get(rule_id.upper())


def rules_for(fmt: str) -> list[Rule]:
    """The rules that apply to a stream of format ``fmt`` (its own and ``any``)."""
    return [rule for rule in RULES.values() if rule.format in (fmt, "any")]

"""Every validation rule has a fixture pair that proves it: found by name, never listed.

``fixtures/validate/<RULE-ID>.bad.<ext>`` breaks that rule (and only it) and
``<RULE-ID>.good.<ext>`` is its valid twin. A rule without a pair fails the test run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatx.reading.framing import read_records
from chatx.validation import RULES, validate_records
from chatx.validation.rule import Rule
from tests.paths import ROOT

FIXTURES = ROOT / "fixtures" / "validate"
CONTAINER = {".sse": "sse", ".jsonl": "jsonl", ".json": "json"}
# Rules that cannot be broken alone: the other rule is part of the violation.
IMPLIED = {
    "CHK018": {"CHK017"},  # a chunk after an error frame needs the error frame
    "GEM005": {"GEM008"},  # the same, after a Gemini error object
}


def fixture(rule_id: str, kind: str) -> Path:
    found = sorted(FIXTURES.glob(f"{rule_id}.{kind}.*"))
    assert len(found) == 1, f"{rule_id}: expected one {kind} fixture, found {found}"
    return found[0]


def check(path: Path, rule: Rule) -> list:
    # The bytes, not the records: rules about the lines the reader ignores need them.
    fmt = rule.format if rule.format != "any" else "responses-event"
    return validate_records(
        path.read_bytes(),
        fmt,
        container=CONTAINER[path.suffix],
        file=path.name,
        schema=rule.schema,
    )


def test_every_rule_has_a_fixture_pair() -> None:
    names = {path.name.split(".")[0] for path in FIXTURES.iterdir()}
    missing = sorted(set(RULES) - names)
    assert not missing, f"rules without fixtures: {missing}"
    assert not names - set(RULES), f"fixtures for unknown rules: {sorted(names - set(RULES))}"


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_bad_fixture_breaks_only_its_rule(rule_id: str) -> None:
    rule = RULES[rule_id]
    findings = check(fixture(rule_id, "bad"), rule)
    reported = {finding.rule for finding in findings}
    assert rule_id in reported, findings
    assert reported - {rule_id} <= IMPLIED.get(rule_id, set()), findings
    assert all(f.severity == rule.severity for f in findings if f.rule == rule_id)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_good_twin_is_clean(rule_id: str) -> None:
    findings = check(fixture(rule_id, "good"), RULES[rule_id])
    assert findings == []


@pytest.mark.parametrize("rule_id", sorted(r.id for r in RULES.values() if not r.schema))
def test_good_twin_matches_the_sdk_types(rule_id: str) -> None:
    """The twins are real-looking streams: the openai SDK types accept them too."""
    rule = RULES[rule_id]
    if rule.format == "llama-stack-event":
        pytest.skip("the openai SDK has no Llama Stack types")
    path = fixture(rule_id, "good")
    container, records = read_records(path.read_bytes(), CONTAINER[path.suffix])
    fmt = rule.format if rule.format != "any" else "responses-event"
    assert validate_records(records, fmt, container=container, schema=True) == []


def test_rule_documentation_is_complete() -> None:
    for rule in RULES.values():
        assert rule.severity in ("E", "W"), rule.id
        assert rule.summary and rule.explanation and rule.bad_example, rule.id
        assert rule.id[:3] in ("RSP", "CHK", "LLS", "ANT", "GEM", "STR") and rule.id[3:].isdigit()

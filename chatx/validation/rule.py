"""The type of one validation rule, apart from the registry that collects them.

The per-format catalogues (``rules_*``) and the registry (:mod:`chatx.validation.rules`)
both import it, so the registry imports its catalogues at the top with no cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["E", "W"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: ``E`` rules make ``validate`` fail, ``W`` rules only with ``--strict``.

    ``format`` is a codec name, or ``any``; ``schema`` rules run only under ``--schema``.
    """

    id: str
    severity: Severity
    format: str
    summary: str
    explanation: str
    bad_example: str
    schema: bool = False

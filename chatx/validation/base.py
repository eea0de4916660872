"""What a check produces, and the plumbing every format's checker shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from chatx import codecs
from chatx.record import Record
from chatx.validation.rules import RULES


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule violation: where (file, 1-based line, 0-based record index) and what."""

    file: str
    line: int
    index: int
    rule: str
    severity: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "index": self.index,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
        }


class Checker:
    """Base of the streaming checkers: ``feed(record)`` per record, ``finish()`` once.

    Checkers keep only what later rules need (open items, joined text per open part),
    never the whole stream, and append :class:`Finding` objects to ``findings``.
    """

    format = ""

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        self.file = file
        self.container = container
        self.findings: list[Finding] = []
        self.index = -1  # index of the record being checked
        self.line = 0  # its line
        self.whole = False  # every record so far is a non-streaming object (STR003)

    def feed(self, record: Record) -> None:
        """Check one record; findings are appended, nothing is returned."""
        self.index += 1
        self.line = record.line
        if record.error is not None:
            self.report("STR001", f"payload is not valid JSON: {record.error}")
            return
        if (self.index == 0 or self.whole) and self._whole(record):
            return
        self.whole = False
        self.check(record)

    def ignored_lines(self, ignored: list[tuple[int, str]], before: int | None = None) -> None:
        """Report each input line the reader ignored (STR002) before line ``before`` (all
        when None), and take it out of ``ignored``. Call it before feeding the record at
        ``before``: a line is said with the record whose block holds it or that it follows
        (the first record for lines before any)."""
        said = 0
        for line, why in ignored:
            if before is not None and line >= before:
                break
            self.report("STR002", why, line=line, index=max(self.index, 0))
            said += 1
        del ignored[:said]

    def check(self, record: Record) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self) -> list[Finding]:
        """End of input: run the end-of-stream rules and return every finding."""
        return self.findings

    def _whole(self, record: Record) -> bool:
        """Report a non-streaming object (STR003); True when the record is one."""
        for codec in codecs.CODECS:
            what = codec.whole(record.data) if codec.whole is not None else None
            if what is not None:
                self.whole = True
                self.report(
                    "STR003",
                    f"{what}, not a stream: `chatx convert --to {codec.name}` writes "
                    "the stream it stands for",
                )
                return True
        return False

    def report(
        self, rule_id: str, message: str, *, line: int | None = None, index: int | None = None
    ) -> None:
        """Record a violation of ``rule_id``, at the current record unless told otherwise."""
        rule = RULES[rule_id]
        if self.whole and rule.format != "any":
            return  # a non-streaming input has no stream for the end-of-stream rules to end
        self.findings.append(
            Finding(
                self.file,
                self.line if line is None else line,
                self.index if index is None else index,
                rule.id,
                rule.severity,
                message,
            )
        )


def is_int(value: object) -> TypeGuard[int]:
    """A JSON integer (``True`` is an int to Python, never to JSON)."""
    return isinstance(value, int) and not isinstance(value, bool)

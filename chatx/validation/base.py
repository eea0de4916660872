"""What a check produces, and the plumbing every format's checker shares.

The checkers live in their codec packages (``chatx/codecs/<format>/check.py``) and derive
from :class:`Checker`; this module knows no format and imports no codec, so that a
checker can import it while the registry imports the codec packages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from chatx.codecs.byte_template import ByteTemplate
from chatx.containers.payload import parse
from chatx.record import RawRegion, Record
from chatx.validation.rule import Rule
from chatx.validation.stream_rules import STREAM_RULES

# What a payload is when it is a format's non-streaming object, and that format's name
# (None for anything else): chatx.codecs.whole_object, which make_checker hands on.
WholeObject = Callable[[Any], tuple[str, str] | None]


def catalogue(*rules: Rule) -> dict[str, Rule]:
    """The rules a checker reports, by id: those of any stream, then ``rules``."""
    return {rule.id: rule for rule in (*STREAM_RULES, *rules)}


def _not_whole(data: Any) -> None:
    return None


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


class Known:
    """A record a checker checked without a finding, as bytes with holes (a
    :class:`~chatx.codecs.byte_template.ByteTemplate`): a record that is those bytes around
    other values is the same record but for them. Checking it would find nothing either,
    as long as the records since were such ones too, and would keep only what ``take``
    keeps of its text (a delta's, added to its value; the record as the last one).

    Why that holds is the format's to say in its checker's ``knows``: which of its rules
    look at a hole's value, and what a record of the kind changes that a later one's rules
    read. A hole's value is read as a full parse reads it; ``number`` gives the value the
    number hole must have (the sequence number expected), and an empty text is no delta
    the template stands for: such records are parsed and checked."""

    __slots__ = ("event", "number", "take", "template", "text_at")

    def __init__(
        self,
        template: ByteTemplate,
        event: str | None,
        take: Callable[[str], None],
        number: Callable[[], int] | None = None,
    ) -> None:
        self.template = template
        self.event = event  # the SSE event name of the record (a rule may read it)
        self.text_at = template.at[0]
        self.take = take  # given the record's text
        self.number = number

    @classmethod
    def of(
        cls,
        payload: dict[str, Any],
        holes: list[str],
        event: str | None,
        take: Callable[[str], None],
        number: Callable[[], int] | None = None,
    ) -> Known | None:
        """The template of ``payload``, a record with each of ``holes`` in place of a
        value: :data:`~chatx.codecs.byte_template.TEXT` first, the text given to ``take``
        (then ``OBFUSCATION``, and ``NUMBER`` for the number ``number`` gives); None
        when it cannot be made."""
        template = ByteTemplate.make(payload, holes)
        return cls(template, event, take, number) if template is not None else None

    def took(self, raw: bytes) -> bool:
        """Whether ``raw`` is the template's record but for its holes: then ``take`` has
        kept what checking it keeps."""
        values = self.template.match(raw, self.number() if self.number is not None else None)
        if values is None or not values[self.text_at]:
            return False
        self.take(values[self.text_at])
        return True


class Checker:
    """Base of the streaming checkers: ``feed(record)`` per record, ``finish()`` once.

    Checkers keep only what later rules need (open items, joined text per open part),
    never the whole stream, and append :class:`Finding` objects to ``findings``. A
    subclass names its ``format`` and the ``rules`` it reports (:func:`catalogue`).
    ``whole_object`` tells a non-streaming object (STR003): the registry's, which
    :func:`chatx.validation.make_checker` gives each checker it makes.
    """

    format = ""
    rules: Mapping[str, Rule] = catalogue()

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        self.file = file
        self.container = container
        self.findings: list[Finding] = []
        self.index = -1  # index of the record being checked
        self.line = 0  # its line
        self.whole = False  # every record so far is a non-streaming object (STR003)
        self.whole_object: WholeObject = _not_whole
        self.known: Known | None = None  # the record the next raw ones may repeat

    def feed(self, record: Record) -> None:
        """Check one record, parsed or raw (its payload's bytes, ``Record.raw``, which a
        reader leaves unparsed once :func:`chatx.validation.validate_records` asks it);
        findings are appended, nothing is returned."""
        self.index += 1
        self.line = record.line
        raw = record.raw if record.data is None and record.error is None else None
        known = self.known
        if known is not None:
            if raw is not None and record.event == known.event and known.took(raw):
                return
            self.known = None  # any other record ends what the template stood for
        said = len(self.findings)
        if raw is not None:
            record = parse(raw, record.event, record.line)
        if record.error is not None:
            self.report("STR001", f"payload is not valid JSON: {record.error}")
            return
        if (self.index == 0 or self.whole) and self._whole(record):
            return
        self.whole = False
        self.check(record)
        if raw is not None and type(record.data) is dict and len(self.findings) == said:
            self.known = self.knows(record)

    def run(self, records: Sequence[Record], start: int) -> int:
        """Take the raw records from ``start`` on that repeat the one :attr:`known` stands
        for (of its SSE event name, each), as :meth:`feed` takes each: how many."""
        known = self.known
        assert known is not None  # the caller asks only then
        number = known.number() if known.number is not None else None
        texts, _, lines = known.template.read(records, start, known.text_at, None, number)
        event = known.event
        taken = 0
        if type(records) is RawRegion:  # none of them named: no record made to be asked
            taken = len(texts) if event is None else 0
        else:
            for record in records[start : start + len(texts)]:
                if record.event != event:
                    break
                taken += 1
        if not taken:
            return 0
        self.index += taken
        self.line = lines[taken - 1]
        take = known.take
        for text in texts[:taken]:
            take(text)
        return taken

    def knows(self, record: Record) -> Known | None:
        """The records this checker may take by their bytes after ``record``, a JSON
        object it just checked without a finding: what a format's checker says of a
        record that the next ones repeat but for their text (a delta), or None (the
        default)."""
        return None

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
        found = self.whole_object(record.data)
        if found is None:
            return False
        what, name = found
        self.whole = True
        self.report(
            "STR003",
            f"{what}, not a stream: `chatx convert --to {name}` writes the stream it stands for",
        )
        return True

    def report(
        self, rule_id: str, message: str, *, line: int | None = None, index: int | None = None
    ) -> None:
        """Record a violation of ``rule_id``, at the current record unless told otherwise."""
        rule = self.rules[rule_id]
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

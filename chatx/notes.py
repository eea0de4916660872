"""Diagnostics a codec or a pipeline raises without doing I/O.

Codecs never print: they add notes here and the caller decides where they go (stderr
for the CLI, a list for the library). ``lost`` notes about fields are aggregated by key,
so a 100k-chunk stream says "obfuscation (100000 records)" once, not 100k times.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

NoteKind = Literal["repaired", "lost", "skipped", "warning"]


@dataclass(slots=True)
class Note:
    """One thing worth telling the user: what happened, and on which input line."""

    kind: NoteKind
    message: str
    line: int | None = None
    # The input it is about when that is not the one being read: another exchange of
    # the same file, skipped on the way to the one read (``FILE#0``), named as ls does.
    where: str | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        where = f"{self.where}: {where}" if self.where else where
        return f"{self.kind}: {where}{self.message}"


@dataclass
class Notes:
    """Collects notes; ``strict`` turns the first one of a strict kind into an error."""

    items: list[Note] = field(default_factory=list)
    lost_fields: Counter[str] = field(default_factory=Counter)
    line: int | None = None  # the input line being processed, set by the pipeline

    def add(
        self, kind: NoteKind, message: str, line: int | None = None, where: str | None = None
    ) -> None:
        if where is not None:  # another input's: none of this one's lines
            self.items.append(Note(kind, message, line, where))
            return
        self.items.append(Note(kind, message, line if line is not None else self.line))

    def repaired(self, message: str) -> None:
        self.add("repaired", message)

    def warning(self, message: str) -> None:
        self.add("warning", message)

    def lost(self, message: str) -> None:
        """Something the source says that the target format cannot hold."""
        self.add("lost", message)

    def lost_field(self, path: str) -> None:
        """A field with no place in the target; counted, reported once at the end."""
        self.lost_fields[path] += 1

    def summary(self) -> list[Note]:
        """Every note, with the lost-field counts folded into one note per field."""
        out = list(self.items)
        for path, count in sorted(self.lost_fields.items()):
            plural = "s" if count != 1 else ""
            out.append(
                Note(
                    "lost",
                    f"field {path} has no place in the target format ({count} record{plural})",
                )
            )
        return out

    def __bool__(self) -> bool:
        return bool(self.items or self.lost_fields)

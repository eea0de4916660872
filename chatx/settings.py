"""What one conversion is asked for, whether it writes one stream to stdout or a
many-file run's outputs: the target formats ``--to`` names, and the settings a
:class:`~chatx.pipeline.Transcoder` is made from. Kept apart from :mod:`chatx.outdir` so
that converting one stream loads nothing of a many-file run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from chatx import codecs
from chatx.codecs.base import EncodeOptions
from chatx.errors import UsageError
from chatx.notes import Notes
from chatx.pipeline import Transcoder


def targets(specs: Sequence[str]) -> list[str]:
    """``--to`` values (repeated and/or comma-separated, ``all``) as codec names, in order."""
    names: list[str] = []
    for spec in specs:
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            found = codecs.names() if part == "all" else [codecs.get(part).name]
            names += [n for n in found if n not in names]
    if not names:
        raise UsageError("--to names no format")
    return names


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a conversion needs besides its job (sent to worker processes)."""

    src: str | None = None
    container: str | None = None
    out_container: str | None = None
    options: EncodeOptions = field(default_factory=EncodeOptions)
    choice: int | None = None
    strict: bool = False

    def recorded(self, request: dict[str, Any] | None, found: str | None = None) -> Settings:
        """These settings with the request recorded beside a stream (a HAR, a cassette):
        it fills the Responses envelope as ``--request`` does, unless that was given; and
        the format ``ls`` found for the stream (``found``, from its URL and records) read
        as ``--from`` unless that was given, so that convert reads it as ls lists it."""
        settings = self
        if found is not None and self.src is None:
            settings = replace(settings, src=found)
        if request is None or self.options.request is not None:
            return settings
        return replace(settings, options=replace(self.options, request=request))

    def transcoder(self, target: str, name: str, notes: Notes) -> Transcoder:
        """A Transcoder to ``target`` with these settings."""
        return Transcoder(
            target,
            src=self.src,
            container=self.container,
            out_container=self.out_container,
            options=self.options,
            choice=self.choice,
            strict=self.strict,
            name=name,
            notes=notes,
        )

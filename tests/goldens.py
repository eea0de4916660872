"""Golden fixtures: every input under ``fixtures/<format>/`` converted to every format.

``python -m tests.goldens`` regenerates ``fixtures/expected/`` with chatx itself and
prints ``GEN <path>`` for each file it changes (untouched files stay untouched, as
FFmpeg's fate does); ``--check`` writes nothing and exits 1 naming the stale files.
The expected notes (what chatx said on stderr) are kept beside each output.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from chatx import codecs
from chatx.errors import ChatxError
from chatx.notes import Notes
from chatx.pipeline import convert

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED = ROOT / "expected"
# Several-choice inputs go to one-choice formats through --choice.
CHOICES = {"two-choices": (0, 1)}


def inputs() -> list[tuple[str, Path]]:
    """(format, path) of every fixture input; an empty list is an error, not a pass."""
    found = [
        (codec.name, path)
        for codec in codecs.CODECS
        for path in sorted((ROOT / codec.name).glob("*.*"))
    ]
    if not found:
        raise SystemExit(f"no fixture inputs under {ROOT}")
    return found


def render() -> Iterator[tuple[Path, bytes]]:
    """Every expected file and the bytes it must hold."""
    for src, path in inputs():
        data = path.read_bytes()
        for dst in codecs.CODECS:
            choices: tuple[int | None, ...] = (None,)
            if dst.single_lane and path.stem in CHOICES:
                choices = CHOICES[path.stem]
            for choice in choices:
                stem = path.stem if choice is None else f"{path.stem}.choice{choice}"
                base = EXPECTED / dst.name / f"{stem}.from-{src}"
                notes = Notes()
                try:
                    out = convert(data, src=src, dst=dst.name, choice=choice, notes=notes)
                except ChatxError as exc:
                    out = b""
                    notes.add("warning", f"error: {exc}")
                yield base.with_name(base.name + "." + dst.container), out
                said = "".join(f"{note}\n" for note in notes.summary())
                yield base.with_name(base.name + ".notes"), said.encode()


def stale() -> list[tuple[Path, bytes]]:
    """The expected files whose content is not what chatx writes now."""
    return [
        (path, data) for path, data in render() if not path.exists() or path.read_bytes() != data
    ]


def main(argv: list[str]) -> int:
    changed = stale()
    if "--check" in argv:
        for path, _ in changed:
            print(f"STALE {path.relative_to(ROOT.parent)}")
        if changed:
            print("fixtures are stale: run `make fixtures` and review the diff", file=sys.stderr)
        return 1 if changed else 0
    for path, data in changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"GEN {path.relative_to(ROOT.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

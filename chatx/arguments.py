"""Argument checks: what the pipeline refuses, and how it says so. A library call that
cannot mean anything (TypeError, ValueError, in plain words), and input that is not what
an argument asked for (``--from``, ``--choice``: InputError, located like any bad input)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from chatx import codecs
from chatx.codecs.base import Codec, EncodeOptions
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record

# The name errors and notes give input held in memory; stdin is "<stdin>", a file its path.
INPUT = "<input>"


def as_bytes(data: Any, what: str) -> bytes:
    """``data`` as bytes: bytes-like values are taken, anything else is a TypeError."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    if isinstance(data, str):
        raise TypeError(
            f"{what} takes bytes, not str: a stream is read as bytes "
            "(encode the text first: data.encode('utf-8'))"
        )
    raise TypeError(
        f"{what} takes bytes (bytes, bytearray or memoryview), not {type(data).__name__}"
    )


def chunks_of(data: Any, what: str) -> Iterable[Any]:
    """The byte chunks of a stream given whole (bytes-like) or as an iterable of chunks."""
    if isinstance(data, bytes | bytearray | memoryview):
        return (data,)
    if isinstance(data, str) or not isinstance(data, Iterable):
        as_bytes(data, what)  # raises, saying what to pass
    return data


def check_arguments(choice: Any, options: Any, notes: Any, name: Any) -> None:
    """The Transcoder's arguments that are not format names (``codecs.get`` checks those)."""
    if choice is not None:
        if isinstance(choice, bool) or not isinstance(choice, int):
            raise TypeError(f"choice is a choice index (int), not {type(choice).__name__}")
        if choice < 0:
            raise ValueError(f"choice is a choice index, 0 or more, not {choice}")
    if options is not None and not isinstance(options, EncodeOptions):
        raise TypeError(f"options is a chatx.EncodeOptions, not {type(options).__name__}")
    if notes is not None and not isinstance(notes, Notes):
        raise TypeError(f"notes is a chatx.Notes, not {type(notes).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"name is the input's name (str), not {type(name).__name__}")


def source_format(records: Sequence[Record], name: str, *, final: bool) -> Codec | None:
    """:func:`chatx.codecs.sniff`, its errors located in ``name``; when none of the first
    records is readable, the error is what is wrong with the first."""
    try:
        return codecs.sniff(records, final=final)
    except InputError as exc:
        window = records[: codecs.PROBE_RECORDS]
        if all(r.error for r in window):
            bad = window[0]
            raise InputError(
                bad.error or "", file=name, line=bad.line, expected="a JSON payload"
            ) from None
        raise exc.located(name) from None


def named_format(src: Codec, records: Sequence[Record], name: str, *, final: bool) -> bool:
    """``--from F``: True when one of the first records is F's (or none can tell: only
    unreadable records or ``[DONE]``); False while fewer than those have come (``final``:
    no more will); an InputError saying what the input is when none of them is F's.

    Like :func:`chatx.codecs.sniff`, this looks at the first records only: the verdict
    does not depend on how many of them one read brought."""
    window = records[: codecs.PROBE_RECORDS]
    usable = [r for r in window if not r.error and not r.done]
    if any(src.probe([r]) > 0 for r in usable):
        return True
    if not final and len(window) < codecs.PROBE_RECORDS:
        return False
    if not usable:  # nothing to tell by: what is wrong with them is said as they decode
        return True
    raise _not_the_named_format(src, window, name, usable[0].line)


def _not_the_named_format(
    src: Codec, records: Sequence[Record], name: str, line: int
) -> InputError:
    """``--from F`` on input none of whose first records is F's."""
    looks = codecs.looks_like(records)
    if looks is not None and looks is not src:
        message = f"the input is not {src.name}: it looks like {looks.name}"
        expected = f"{src.name} records (without --from it reads as {looks.name})"
    else:
        message = f"the input is not {src.name}: none of its first records is one of its events"
        expected = f"{src.name} records"
    return InputError(message, file=name, line=line, expected=expected)


def missing_choice(choice: int, lanes: Collection[int], name: str) -> InputError | None:
    """``--choice N`` for a choice the stream never had (known once it has ended): the
    InputError naming the choices it had. A stream without choices at all (an error
    frame only) is what choice 0 of it says."""
    if choice in lanes or (choice == 0 and not lanes):
        return None
    if lanes:
        has = ", ".join(map(str, sorted(lanes)))
        which = f"its choices are {has}" if len(lanes) > 1 else f"its only choice is {has}"
    else:
        which = "it has no choices"
    return InputError(
        f"the stream has no choice {choice}: {which}",
        file=name,
        expected=f"--choice one of {', '.join(map(str, sorted(lanes)))}" if lanes else None,
    )

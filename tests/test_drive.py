"""chatx.drive: the one loop that feeds records to a codec, lenient or strict."""

from __future__ import annotations

import io

import pytest

from chatx.drive import Drive, NoteReporter, pump
from chatx.errors import InputError, NotRepresentable
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.reading.decoding import decode
from chatx.record import Record

GOOD = [Record({"n": 1}, line=1), Record({"n": 2}, line=3)]
BAD_JSON = Record(None, line=5, error="payload is not valid JSON")


def _feed(record: Record, out: list[object]) -> None:
    n = record.data["n"]
    out.append(f"a{n}")
    if n == 3:
        raise InputError("three is refused", expected="one or two")
    if n == 4:
        raise KeyError("four")
    out.append(f"b{n}")


def test_lenient_skips_what_it_cannot_take_and_says_so():
    notes = Notes()
    drive = Drive(notes)
    records = [GOOD[0], BAD_JSON, Record({"n": 3}, line=7), Record({"n": 4}, line=9), GOOD[1]]
    out = drive.run(records, _feed, [])
    # A record that fails half-way gives nothing: its first payload is taken back.
    assert out == ["a1", "b1", "a2", "b2"]
    assert drive.skipped == 3
    assert drive.error is None
    said = [(n.kind, n.line, n.message) for n in notes.items]
    assert said[:2] == [
        ("skipped", 5, "record skipped: payload is not valid JSON"),
        ("skipped", 7, "record skipped: three is refused (expected one or two)"),
    ]
    assert said[2][:2] == ("skipped", 9)
    assert said[2][2].startswith("record skipped: internal error: KeyError: 'four'")
    assert notes.line == 3  # the last record read


def test_strict_stops_at_the_first_and_keeps_the_error_located():
    notes = Notes()
    drive = Drive(notes, strict=True, name="in.sse")
    out = drive.run([GOOD[0], Record({"n": 3}, line=7), GOOD[1]], _feed, [])
    assert out == ["a1", "b1"]  # the refused record's own payload is not written
    assert drive.skipped == 0
    assert notes.items == []
    assert isinstance(drive.error, InputError)
    assert str(drive.error) == "in.sse:7: three is refused (expected one or two)"


def test_strict_turns_the_first_repair_or_loss_into_the_error():
    notes = Notes()

    def repairs_the_second(record: Record, out: list[object]) -> None:
        out.append(record.data["n"])
        if record.data["n"] == 2:
            notes.repaired("something")

    drive = Drive(notes, strict=True, name="in.sse")
    out = drive.run(GOOD, repairs_the_second, [])
    assert out == [1]  # the record that broke the rule is not written
    assert isinstance(drive.error, NotRepresentable)
    assert str(drive.error) == "in.sse:3: repaired: something"


def test_lenient_notes_a_repair_and_goes_on():
    notes = Notes()

    def repairs(record: Record, out: list[object]) -> None:
        out.append(record.data["n"])
        notes.repaired("something")

    drive = Drive(notes, name="in.sse")
    assert drive.run(GOOD, repairs, []) == [1, 2]
    drive.check()  # nothing to do when lenient
    assert drive.error is None and len(notes.items) == 2


def test_strict_check_at_the_end_says_a_lost_field():
    notes = Notes()
    drive = Drive(notes, strict=True, name="in.sse")
    notes.lost_field("usage.cost")
    with pytest.raises(NotRepresentable, match="in.sse: lost: field usage.cost"):
        drive.check()


def test_strict_lets_a_codec_bug_through():
    with pytest.raises(KeyError):
        Drive(Notes(), strict=True).run([Record({"n": 4}, line=1)], _feed, [])


def test_decode_and_transcoder_say_a_skipped_record_alike():
    chunk = b'data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\n'
    data = chunk + b"data: {not json\n\n" + chunk + b"data: [DONE]\n\n"
    decoded, converted = Notes(), Notes()
    list(decode(data, notes=decoded))
    transcoder = Transcoder("chat-chunk", notes=converted)
    transcoder.feed(data)
    transcoder.finish()
    skipped = [(n.line, n.message) for n in decoded.items if n.kind == "skipped"]
    assert len(skipped) == 1 and skipped[0][0] == 3
    assert skipped == [(n.line, n.message) for n in converted.items if n.kind == "skipped"]
    assert transcoder.skipped == 1


def test_pump_writes_what_the_transcoder_gives_and_reports_notes(capsys):
    chunk = b'data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\n'
    notes = Notes()
    out = io.BytesIO()
    transcoder = Transcoder("chat-chunk", notes=notes, name="in.sse")
    pump(io.BytesIO(chunk + b"data: {bad\n\n"), out, transcoder, NoteReporter(notes, "in", False))
    assert out.getvalue().startswith(b"data: {")
    assert "chatx: skipped: in:3: record skipped: " in capsys.readouterr().err

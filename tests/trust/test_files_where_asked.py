"""Issue 23, class 3: files are written only where asked.

Whatever someone planted beside an output — a symlink to a file outside (the one they
want overwritten, or /dev/null), a dangling symlink (the file they want created), a
directory, a FIFO — at every name chatx would use that can be guessed (the ``-o`` and
``--out-dir`` temporaries under the names main used, with this process's PID; ``OUT.part``;
the request file's temporary), no byte goes through it, and no output ends up a symlink
that chatx made. Temporary names are unpredictable; ``OUT.part`` keeps its documented
name and is created exclusively, so what is planted there makes ``capture`` refuse
before the request is sent. A symlink at ``-o`` or ``OUT`` is followed when it is yours
(the file it names is replaced), refused when it is another user's.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from chatx import atomic, pipeline, settings
from chatx.cli.output import OutputError, OutputFile
from chatx.live.recorded_files import Recording
from chatx.outdir import planning, running
from tests.builders.chat_chunk import chat_text
from tests.inprocess import assert_clean, run
from tests.live.support import FIXTURES, Running
from tests.streams import CHAT, RESPONSES, sse
from tests.trust.files_support import Fixed

BODY = sse(chat_text("Hello", " there"))
STREAM = (FIXTURES / "chat-chunk/text.sse").read_bytes()
SECRET = b"the file outside, to be kept\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory that nothing may be written into, with a file that must not change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim").write_bytes(SECRET)
    return folder


def untouched(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["victim"]
    assert (folder / "victim").read_bytes() == SECRET


def fifo_with_a_reader(path: Path) -> int:
    """A FIFO at ``path`` with a reader that never blocks a writer's open (so that a
    chatx that did write into it would be caught, not hang)."""
    os.mkfifo(path)
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


def read_all(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 20)
    except BlockingIOError:
        return b""
    finally:
        os.close(fd)


# What can be planted at a name, each made by a function of (path, outside).
PLANTS: dict[str, Callable[[Path, Path], None]] = {
    "symlink-to-a-file": lambda p, o: p.symlink_to(o / "victim"),
    "dangling-symlink": lambda p, o: p.symlink_to(o / "created"),
    "symlink-to-dev-null": lambda p, o: p.symlink_to("/dev/null"),
    "symlink-to-a-directory": lambda p, o: p.symlink_to(o, target_is_directory=True),
    "directory": lambda p, o: p.mkdir(),
}


def not_a_symlink_chatx_made(path: Path, expected: bytes) -> None:
    assert not path.is_symlink() and stat.S_ISREG(path.lstat().st_mode)
    assert path.read_bytes() == expected


def someone_else_s(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``path`` (a symlink or a file) another user's: chowned when running as root,
    else this process pretends to be another user."""
    if os.geteuid() == 0:
        os.lchown(path, 4242, 4242)
    else:
        uid = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: uid + 1)


# -- -o FILE: its temporary file ------------------------------------------------------------


def test_o_temporary_names_are_unpredictable_and_hidden(tmp_path: Path) -> None:
    names = []
    for _ in range(3):
        with OutputFile(str(tmp_path / "out.sse")) as out:
            out.write(b"x")
            names.append(Path(out.temporary or "").name)
    assert len(set(names)) == 3
    assert all(re.fullmatch(r"\.out\.sse\.[0-9a-f]{12}\.tmp", n) for n in names), names
    assert str(os.getpid()) not in "".join(names)


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_o_goes_through_nothing_planted_at_the_names_main_used(
    tmp_path: Path, outside: Path, plant: str
) -> None:
    """main named it ``.NAME.PID.N.tmp`` for N < 100: all of them planted, the run
    still writes its output, and only there."""
    (tmp_path / "in.sse").write_bytes(BODY)
    for attempt in range(100):
        PLANTS[plant](tmp_path / f".out.sse.{os.getpid()}.{attempt}.tmp", outside)
    result = run(
        ["convert", str(tmp_path / "in.sse"), "--to", RESPONSES, "-o", str(tmp_path / "out.sse")]
    )
    assert_clean(result, {0})
    not_a_symlink_chatx_made(tmp_path / "out.sse", pipeline.convert(BODY, dst=RESPONSES))
    untouched(outside)


def test_o_temporary_creation_never_follows_a_symlink(tmp_path: Path, outside: Path) -> None:
    """Should a random name be taken (here: forced), the next one is tried; what is at
    the taken name is not opened."""
    taken = tmp_path / ".out.sse.000000000000.tmp"
    taken.symlink_to(outside / "created")
    with pytest.raises(FileExistsError):
        atomic.create(str(taken))
    untouched(outside)


def test_o_your_own_symlink_is_followed_and_stays_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "in.sse").write_bytes(BODY)
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "out.sse"
    real.write_bytes(b"old\n")
    link = tmp_path / "out.sse"
    link.symlink_to(real)
    result = run(["convert", str(tmp_path / "in.sse"), "--to", CHAT, "-o", str(link)])
    assert_clean(result, {0})
    assert link.is_symlink() and real.read_bytes() == pipeline.convert(BODY, dst=CHAT)
    # A temporary file was made beside the file replaced, and is gone.
    assert [p.name for p in (tmp_path / "real").iterdir()] == ["out.sse"]


def test_o_your_own_dangling_symlink_makes_its_file_as_a_shell_would(tmp_path: Path) -> None:
    (tmp_path / "in.sse").write_bytes(BODY)
    link = tmp_path / "out.sse"
    link.symlink_to("made.sse")
    assert_clean(run(["convert", str(tmp_path / "in.sse"), "-o", str(link)]), {0})
    assert link.is_symlink() and (tmp_path / "made.sse").read_bytes()


def test_o_another_user_s_symlink_is_refused(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a shared directory (/tmp) a symlink at a name you are about to write is the
    oldest trick: Linux follows it only for its owner, and so does chatx."""
    (tmp_path / "in.sse").write_bytes(BODY)
    link = tmp_path / "out.sse"
    link.symlink_to(outside / "victim")
    someone_else_s(link, monkeypatch)
    result = run(["convert", str(tmp_path / "in.sse"), "-o", str(link)])
    assert_clean(result, {2})
    assert "a symlink of another user" in result.err and "not followed" in result.err
    untouched(outside)
    assert link.is_symlink()
    with pytest.raises(OutputError), OutputFile(str(link)):
        pass


# -- --out-dir: its temporary files -----------------------------------------------------------


def out_dir_job(tmp_path: Path) -> planning.Job:
    source = tmp_path / "a.sse"
    source.write_bytes(BODY)
    (tmp_path / "out").mkdir()
    jobs, problems = planning.plan([str(source)], [CHAT], tmp_path / "out")
    assert problems == [] and len(jobs) == 1
    return jobs[0]


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_out_dir_goes_through_nothing_planted_at_the_name_main_used(
    tmp_path: Path, outside: Path, plant: str
) -> None:
    """main wrote ``DIR/.NAME.PID.tmp`` through whatever was there: into the victim, a
    new file outside, /dev/null (and the output became a symlink to it)."""
    job = out_dir_job(tmp_path)
    PLANTS[plant](job.output.parent / f".{job.output.name}.{os.getpid()}.tmp", outside)
    outcome = running.convert_job(job, settings.Settings())
    assert outcome.status == "written", outcome.error
    not_a_symlink_chatx_made(job.output, pipeline.convert(BODY, dst=CHAT))
    untouched(outside)


def test_out_dir_goes_through_no_fifo_planted_at_the_name_main_used(tmp_path: Path) -> None:
    job = out_dir_job(tmp_path)
    reader = fifo_with_a_reader(job.output.parent / f".{job.output.name}.{os.getpid()}.tmp")
    outcome = running.convert_job(job, settings.Settings())
    assert read_all(reader) == b""
    assert outcome.status == "written", outcome.error
    not_a_symlink_chatx_made(job.output, pipeline.convert(BODY, dst=CHAT))


def test_out_dir_temporary_names_are_unpredictable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    create = atomic.create
    monkeypatch.setattr(
        atomic, "create", lambda path, mode=0o666: made.append(path) or create(path, mode)
    )
    job = out_dir_job(tmp_path)
    for text in ("one", "two", "three"):
        (tmp_path / "a.sse").write_bytes(sse(chat_text(text)))
        assert running.convert_job(job, settings.Settings()).status == "written"
    names = [Path(p).name for p in made]
    assert len(set(names)) == 3 and all(n.startswith(".a.chat-chunk.sse.") for n in names)
    assert str(os.getpid()) not in "".join(names)
    assert sorted(p.name for p in job.output.parent.iterdir()) == ["a.chat-chunk.sse"]


def test_out_dir_a_fifo_at_an_output_name_is_neither_read_nor_replaced(tmp_path: Path) -> None:
    """main read it to compare with the new output, and waited for a writer forever."""
    job = out_dir_job(tmp_path)
    os.mkfifo(job.output)
    for check in (False, True):
        outcome = running.convert_job(job, settings.Settings(), check=check)
        assert outcome.status == "failed"
        assert outcome.error == f"{job.output}: a FIFO is there, not a file: not replaced"
    assert stat.S_ISFIFO(job.output.lstat().st_mode)


def test_out_dir_cli_output_stays_inside_dir_with_every_plant(
    tmp_path: Path, outside: Path
) -> None:
    """The whole command, every output name's old temporary planted, and a symlink
    inside DIR to a file outside at an output's own name."""
    (tmp_path / "in").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "in" / f"{name}.sse").write_bytes(BODY)
    out = tmp_path / "out"
    out.mkdir()
    (out / "c.chat-chunk.sse").symlink_to(outside / "victim")
    for name in ("a", "b"):
        (out / f".{name}.chat-chunk.sse.{os.getpid()}.tmp").symlink_to(outside / "victim")
    result = run(["convert", str(tmp_path / "in"), "--to", CHAT, "--out-dir", str(out)])
    assert_clean(result, {2})
    assert "would be written outside" in result.err
    assert "2 converted, 0 unchanged, 2 written, 1 failed" in result.err
    untouched(outside)
    for name in ("a", "b"):
        not_a_symlink_chatx_made(out / f"{name}.chat-chunk.sse", pipeline.convert(BODY, dst=CHAT))


# -- capture: OUT.part, the request's temporary, OUT -----------------------------------------


@pytest.fixture
def upstream() -> Iterator[tuple[Running, Fixed]]:
    app = Fixed(STREAM)
    with Running(app) as running:
        yield running, app


def capture(url: str, out: Path) -> object:
    ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    return run(
        [
            "capture",
            "--base-url",
            f"{url}/v1",
            "-d",
            orjson.dumps(ask).decode(),
            "-o",
            str(out),
            "-q",
        ]
    )


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_capture_refuses_what_is_planted_at_out_part_before_sending(
    upstream: tuple[Running, Fixed], tmp_path: Path, outside: Path, plant: str
) -> None:
    """main opened OUT.part for writing, following the symlink (into the victim, into a
    new file outside, into /dev/null, after which OUT was renamed a symlink to it)."""
    running, app = upstream
    out = tmp_path / "a.sse"
    PLANTS[plant](tmp_path / "a.sse.part", outside)
    result = capture(running.url, out)
    assert_clean(result, {2})
    assert f"is at {tmp_path / 'a.sse.part'}, where a capture writes" in result.err
    assert app.received == []  # refused before anything is paid for
    assert not os.path.lexists(out)
    untouched(outside)


def test_capture_refuses_a_fifo_planted_at_out_part(
    upstream: tuple[Running, Fixed], tmp_path: Path
) -> None:
    running, app = upstream
    reader = fifo_with_a_reader(tmp_path / "a.sse.part")
    result = capture(running.url, tmp_path / "a.sse")
    assert read_all(reader) == b""
    assert_clean(result, {2})
    assert "a FIFO is at" in result.err and app.received == []
    assert not os.path.lexists(tmp_path / "a.sse")


def test_capture_refuses_another_user_s_file_at_out_part(
    upstream: tuple[Running, Fixed], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing into it would hand its owner the stream; it cannot be removed in /tmp."""
    running, app = upstream
    part = tmp_path / "a.sse.part"
    part.write_bytes(b"theirs\n")
    someone_else_s(part, monkeypatch)
    result = capture(running.url, tmp_path / "a.sse")
    assert_clean(result, {2})
    assert "a file of another user" in result.err and app.received == []
    assert part.read_bytes() == b"theirs\n"


def test_capture_replaces_an_earlier_interrupted_capture_s_part(
    upstream: tuple[Running, Fixed], tmp_path: Path
) -> None:
    """The documented OUT.part of an earlier Ctrl-C (a regular file of yours) is made
    room for, its request too: a whole capture leaves no stale part behind."""
    running, _ = upstream
    (tmp_path / "a.sse.part").write_bytes(b"data: {")
    (tmp_path / "a.sse.part.request.json").write_bytes(b"{}\n")
    assert_clean(capture(running.url, tmp_path / "a.sse"), {0})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.sse",
        "a.sse.request.json",
        "a.sse.timing",
    ]
    not_a_symlink_chatx_made(tmp_path / "a.sse", STREAM)


@pytest.mark.parametrize("plant", ["symlink-to-a-file", "dangling-symlink", "symlink-to-dev-null"])
def test_capture_request_file_goes_through_nothing_planted(
    upstream: tuple[Running, Fixed], tmp_path: Path, outside: Path, plant: str
) -> None:
    """main wrote the request to ``.OUT.request.json.tmp`` through whatever was there;
    the request file itself, if a symlink is planted there, is replaced, not followed."""
    running, _ = upstream
    PLANTS[plant](tmp_path / ".a.sse.request.json.tmp", outside)
    PLANTS[plant](tmp_path / "a.sse.request.json", outside)
    assert_clean(capture(running.url, tmp_path / "a.sse"), {0})
    untouched(outside)
    request = tmp_path / "a.sse.request.json"
    assert not request.is_symlink() and orjson.loads(request.read_bytes())["model"] == "m"
    not_a_symlink_chatx_made(tmp_path / "a.sse", STREAM)


def test_capture_out_your_own_symlink_is_followed(
    upstream: tuple[Running, Fixed], tmp_path: Path
) -> None:
    """As for convert's -o: the file the symlink names is what the capture replaces;
    its part and request files go beside that file."""
    running, _ = upstream
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "a.sse"
    real.write_bytes(b"old\n")
    link = tmp_path / "a.sse"
    link.symlink_to(real)
    assert_clean(capture(running.url, link), {0})
    assert link.is_symlink() and real.read_bytes() == STREAM
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == [
        "a.sse",
        "a.sse.request.json",
        "a.sse.timing",
    ]


@pytest.mark.parametrize("what", ["symlink-to-dev-null", "fifo", "directory"])
def test_capture_out_that_is_no_file_is_refused_before_sending(
    upstream: tuple[Running, Fixed], tmp_path: Path, what: str
) -> None:
    """A capture renames its part file onto OUT: onto /dev/null (a symlink of yours to
    it), that would replace the device for everyone when run as root; onto a FIFO, lose
    it. Refused before the request is paid for."""
    running, app = upstream
    out = tmp_path / "a.sse"
    if what == "fifo":
        os.mkfifo(out)
    elif what == "directory":
        out.mkdir()
    else:
        out.symlink_to("/dev/null")
    result = capture(running.url, out)
    assert_clean(result, {2})
    said = {"fifo": "a FIFO is there", "directory": "a directory"}
    assert said.get(what, "a device is there, not a file") in result.err
    assert app.received == []
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sse"]


def test_capture_refuses_a_directory_at_its_request_file_before_sending(
    upstream: tuple[Running, Fixed], tmp_path: Path
) -> None:
    """The request is renamed onto OUT.request.json once the stream has ended: a
    directory there would fail it after the capture is paid for."""
    running, app = upstream
    (tmp_path / "a.sse.request.json").mkdir()
    result = capture(running.url, tmp_path / "a.sse")
    assert_clean(result, {2})
    assert f"a directory is at {tmp_path / 'a.sse.request.json'}" in result.err
    assert app.received == [] and sorted(p.name for p in tmp_path.iterdir()) == [
        "a.sse.request.json"
    ]


def test_o_goes_through_no_fifo_planted_at_the_names_main_used(tmp_path: Path) -> None:
    (tmp_path / "in.sse").write_bytes(BODY)
    readers = [
        fifo_with_a_reader(tmp_path / f".out.sse.{os.getpid()}.{attempt}.tmp")
        for attempt in range(3)
    ]
    result = run(["convert", str(tmp_path / "in.sse"), "-o", str(tmp_path / "out.sse")])
    assert [read_all(reader) for reader in readers] == [b""] * 3
    assert_clean(result, {0})
    not_a_symlink_chatx_made(tmp_path / "out.sse", pipeline.convert(BODY, dst=RESPONSES))


def test_capture_out_another_user_s_symlink_is_refused_before_sending(
    upstream: tuple[Running, Fixed],
    tmp_path: Path,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    running, app = upstream
    link = tmp_path / "a.sse"
    link.symlink_to(outside / "victim")
    someone_else_s(link, monkeypatch)
    result = capture(running.url, link)
    assert_clean(result, {2})
    assert "a symlink of another user" in result.err and app.received == []
    untouched(outside)


def test_a_part_file_swapped_for_a_symlink_while_written_is_not_renamed_to_out(
    tmp_path: Path, outside: Path
) -> None:
    """OUT never ends up a symlink: the part file is renamed only while it is still the
    file chatx created."""
    recording = Recording(tmp_path / "a.sse", {"model": "m"})
    recording.write(b"data: 1\n\n")
    recording.part.unlink()
    recording.part.symlink_to(outside / "victim")
    with pytest.raises(atomic.PlacementError, match="replaced while it was written"):
        recording.close(whole=True)
    assert not os.path.lexists(tmp_path / "a.sse")
    untouched(outside)


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_proxy_recording_never_opens_what_is_at_its_name(
    tmp_path: Path, outside: Path, plant: str
) -> None:
    PLANTS[plant](tmp_path / "a.sse.part", outside)
    with pytest.raises(FileExistsError):
        Recording(tmp_path / "a.sse", None, exclusive=True)
    untouched(outside)

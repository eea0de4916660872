"""Files written only where asked: a new file is created exclusively, never through
something already at its name, and a finished one is renamed into place.

A temporary file gets an unpredictable name beside its target (``.NAME.<random>.tmp``):
nobody can plant a symlink, a FIFO or a directory at it ahead of time, and should a
name be taken all the same, ``O_CREAT | O_EXCL | O_NOFOLLOW`` fails instead of opening
what is there (a dangling symlink included). A rename replaces a directory entry and
never writes through it: the bytes land in the file chatx made, and the name ends up
that file, never a symlink. Used by ``-o`` (:mod:`chatx.cli.output`), ``--out-dir``
(:mod:`chatx.outdir.running`) and the files ``capture`` and ``proxy`` leave
(:mod:`chatx.live.recorded_files`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat

from chatx.errors import ChatxError

# A new file at exactly this name: fails if anything is there, a symlink included.
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
CREATE |= getattr(os, "O_CLOEXEC", 0)
_TRIES = 100
# How deep a chain of symlinks at an output's name is followed (Linux's own limit).
_MAX_LINKS = 40


class PlacementError(ChatxError):
    """A file could not be put where it was asked, for what is already there (exit 2)."""


def create(path: str, mode: int = 0o666) -> int:
    """A descriptor for a new file at ``path`` (the umask applies to ``mode``);
    FileExistsError when anything is there."""
    return os.open(path, CREATE, mode)


def temporary_beside(target: str, suffix: str = ".tmp", mode: int = 0o666) -> tuple[str, int]:
    """A new file with an unpredictable hidden name in ``target``'s directory, and its
    descriptor: ``.NAME.<random>.tmp``, hidden so that no directory walk reads it."""
    folder, name = os.path.split(target)
    for _ in range(_TRIES):
        path = os.path.join(folder, f".{name}.{secrets.token_hex(6)}{suffix}")
        try:
            return path, create(path, mode)
        except FileExistsError:  # 48 random bits taken: someone is guessing, or unlucky
            continue
    raise FileExistsError(errno.EEXIST, "no free name for a temporary file", target)


def replace_with(target: str, data: bytes) -> None:
    """``target`` holds ``data``: written to a temporary file beside it, then renamed
    onto it (what was at ``target``, a symlink included, is replaced, never written
    through). OSError names ``target``, never the temporary file."""
    temporary: str | None = None
    try:
        temporary, fd = temporary_beside(target)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, target) from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def same_file(fd: int, path: str) -> bool:
    """Whether ``path`` is still the file open as ``fd`` (not replaced by something else
    since, such as a symlink): checked before renaming it into place."""
    try:
        here, mine = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)


def own_target(path: str) -> str:
    """The file an output named ``path`` is: ``path`` itself, or what the symlinks at
    that name lead to when each of them is yours (or root's). Someone else's symlink is
    a PlacementError: it is followed by no one but its owner, as Linux's
    ``protected_symlinks`` has it in a shared directory such as /tmp."""
    for _ in range(_MAX_LINKS):
        try:
            info = os.lstat(path)
        except OSError:
            return path  # nothing there (or unreachable: opening it says why)
        if not stat.S_ISLNK(info.st_mode):
            return path
        if info.st_uid not in (os.geteuid(), 0):
            raise PlacementError(
                f"{path}: a symlink of another user (uid {info.st_uid}): not followed; "
                "remove it or choose another name"
            )
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    raise PlacementError(f"{path}: {os.strerror(errno.ELOOP)}")


def what_is(info: os.stat_result) -> str:
    """What a directory entry is, in words (a symlink is said, not followed)."""
    mode = info.st_mode
    for test, words in (
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return words
    if info.st_uid != os.geteuid():
        return f"a file of another user (uid {info.st_uid})"
    return "a file"

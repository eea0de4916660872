"""A WireMock response body kept in a file of its own (``"bodyFileName":
"messages-stream.txt"``): WireMock keeps stub mappings under ``ROOT/mappings/`` and the
bodies they name under ``ROOT/__files/``, which is where the name is looked up first;
then in a ``__files`` folder beside the mapping, then beside the mapping itself.

The name comes from the file being read, so it is confined: a name that is absolute or
goes up (``..``) is refused, and so is one that leads, through a symlink, out of the
folder it was looked up in; only a regular file is read (a FIFO would block), at most
:data:`~chatx.limits.MAX_DECOMPRESSED` bytes of it, as a recorded body is held whole.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from chatx.containers.bodies import BodyError
from chatx.limits import MAX_DECOMPRESSED, size


def read(name: object, mapping: str | None) -> bytes:
    """The bytes of the body file ``name`` that the mapping at ``mapping`` names."""
    if not isinstance(name, str) or not name:
        raise BodyError(f"bodyFileName {name!r} is no file name")
    if mapping is None:
        raise BodyError(
            f"its body is in another file ({name!r}, under WireMock's __files), and a "
            "mapping read from stdin has no folder: name the mapping file"
        )
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if not parts or parts[0] == "/" or ".." in parts or ":" in parts[0]:
        raise BodyError(f"bodyFileName {name!r} leaves WireMock's __files: not read")
    places = _places(Path(mapping))
    for place in places:
        found = _inside(place, Path(place, *parts))
        if found is not None:
            return _bounded(found, name)
    looked = ", ".join(str(place) for place in places)
    raise BodyError(f"its body file {name!r} is not there (looked in {looked})")


def _places(mapping: Path) -> list[Path]:
    """Where a mapping's body files are: ``ROOT/__files`` for a mapping anywhere under
    ``ROOT/mappings``, then ``__files`` beside the mapping, then its own folder."""
    folder = mapping.parent
    places = []
    for above in (folder, *folder.parents):
        if above.name == "mappings":
            places.append(above.parent / "__files")
            break
    for place in (folder / "__files", folder):
        if place not in places:
            places.append(place)
    return places


def _inside(place: Path, candidate: Path) -> Path | None:
    """``candidate`` when it is a file whose real path is inside ``place``'s."""
    try:
        real = candidate.resolve(strict=True)
        root = place.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_relative_to(root):
        raise BodyError(f"its body file {str(candidate)!r} leads out of {str(place)!r}: not read")
    return real


def _bounded(path: Path, name: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise BodyError(f"its body file {name!r} cannot be read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BodyError(f"its body file {name!r} is no regular file")
        data = file.read(MAX_DECOMPRESSED + 1)
    if len(data) > MAX_DECOMPRESSED:
        raise BodyError(
            f"its body file {name!r} is larger than {size(MAX_DECOMPRESSED)}, the most chatx"
            " holds of one body (MAX_DECOMPRESSED): convert the file itself"
        )
    return data

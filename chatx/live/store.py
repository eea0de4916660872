"""The responses the gateway served, kept for ``previous_response_id`` and
``GET``/``DELETE /v1/responses/{id}``: what a Responses client asks of a server with state,
which a chat, Anthropic or Llama Stack upstream does not keep.

One SQLite file (stdlib ``sqlite3``), by default in the user's data directory
(``$XDG_DATA_HOME/chatx/responses.sqlite``, else ``~/.local/share/chatx/``), made readable
by its owner alone. Each row is a response: its object as the client got it, and the
conversation it closes as Responses input items (the history sent, then the response's
output), so that a request naming it as ``previous_response_id`` sends the upstream the
whole history. Credentials are left out of both (:func:`~chatx.live.recorded_files.scrub`), as
from every file chatx writes.

Every call is short (one indexed row); the gateway makes them in worker threads, off the
event loop. WAL lets one process read while another writes.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import orjson

from chatx import atomic
from chatx.live.recorded_files import scrub

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    id TEXT PRIMARY KEY,
    response BLOB NOT NULL,
    items BLOB NOT NULL
)
"""


def default_path() -> Path:
    """Where the store lives unless ``--store`` says: the user's data directory."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "chatx" / "responses.sqlite"


def _own_file(path: Path) -> None:
    """Make ``path`` a file of the user's own, readable by them alone (conversations are
    private), or say what stands there instead: never opened through a symlink, a FIFO or
    another user's file put there first."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        if os.path.islink(path):
            raise OSError(f"{path} is a symlink: the store is never opened through one") from None
        raise OSError(f"{path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        raise OSError(f"{path}: {atomic.what_is(info)} is there, not a store of yours")


class Store:
    """Responses by id. Thread-safe: one connection, one lock, each call one statement."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _own_file(path)
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.execute(_SCHEMA)

    def put(self, rid: str, response: dict[str, Any], items: list[Any]) -> None:
        """Keep ``response`` and the conversation it closes (``items``), replacing any
        response of the same id."""
        row = (rid, orjson.dumps(scrub(response)), orjson.dumps(scrub(items)))
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)", row)

    def response(self, rid: str) -> bytes | None:
        """The response object as served, or None when none is kept under ``rid``."""
        with self.lock:
            row = self.db.execute("SELECT response FROM responses WHERE id = ?", (rid,)).fetchone()
        return None if row is None else bytes(row[0])

    def items(self, rid: str) -> list[Any] | None:
        """The conversation ``rid`` closes, as Responses input items."""
        with self.lock:
            row = self.db.execute("SELECT items FROM responses WHERE id = ?", (rid,)).fetchone()
        if row is None:
            return None
        items: list[Any] = orjson.loads(row[0])
        return items

    def delete(self, rid: str) -> bool:
        """Forget ``rid``; whether it was kept."""
        with self.lock:
            cursor = self.db.execute("DELETE FROM responses WHERE id = ?", (rid,))
        return cursor.rowcount > 0

    def close(self) -> None:
        with self.lock:
            self.db.close()

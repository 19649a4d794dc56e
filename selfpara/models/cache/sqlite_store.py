"""A CallStore in one SQLite file (WAL mode, safe for several processes at once).

It is the evaluation package's call cache (`selfpara bench` reruns are free) and a cache
the library can keep across runs (`cache="sqlite:///path"`). Calls are quick local
reads and writes, made directly on the event loop.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from selfpara.errors import ConfigError
from selfpara.models.cache.stores import CacheStoreError

UNIX_EPOCH_JULIAN_DAY = 2440587.5
"""The Julian day of 1970-01-01T00:00Z: `created` is in Julian days, as SQLite's julianday('now') writes it."""


class SQLiteStore:
    """Cached calls in the table `calls` (key, completion JSON, created) of one SQLite file.

    Args:
        path: the database file (its folder is created).
        ttl_s: seconds an entry is served after it was stored; None: forever.
        readonly: open an existing file read-only (never created, never written); a
            missing file or table then reads as empty.
        clock: seconds since the Unix epoch, what `created` and `ttl_s` are counted from (a
            wall clock: rows outlive the process; tests pass a fake one).

    Raises ConfigError when the file cannot be opened.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        ttl_s: float | None = None,
        readonly: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path).expanduser()
        self.name = f"sqlite:{self.path}"
        self.ttl_s = ttl_s
        self.clock = clock
        self.readonly = readonly
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            if readonly:
                if self.path.exists():
                    uri = f"{self.path.resolve().as_uri()}?mode=ro"
                    self._db = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                _create_private(self.path)
                self._db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False, isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, completion TEXT NOT NULL, "
                    "created REAL DEFAULT (julianday('now')))"
                )
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"{self.path}: cannot open the call cache ({exc})") from None

    def get_now(self, key: str) -> str | None:
        """`get` without an event loop."""
        if self._db is None:
            return None
        sql = "SELECT completion FROM calls WHERE key = ?"
        args: tuple[object, ...] = (key,)
        if self.ttl_s is not None:
            sql += " AND created > ?"
            args = (key, self._julian_now() - self.ttl_s / 86400)
        try:
            with self._lock:
                row = self._db.execute(sql, args).fetchone()
        except sqlite3.OperationalError as exc:
            if self.readonly and "no such table" in str(exc):
                return None
            raise CacheStoreError(f"cannot read {self.path}: {exc}") from None
        except sqlite3.Error as exc:
            raise CacheStoreError(f"cannot read {self.path}: {exc}") from None
        return None if row is None else str(row[0])

    def put_now(self, key: str, value: str) -> None:
        """`put` without an event loop."""
        if self.readonly or self._db is None:
            raise CacheStoreError(f"{self.path} is open read-only")
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO calls (key, completion, created) VALUES (?, ?, ?)",
                    (key, value, self._julian_now()),
                )
        except sqlite3.Error as exc:
            raise CacheStoreError(f"cannot write {self.path}: {exc}") from None

    def _julian_now(self) -> float:
        return self.clock() / 86400 + UNIX_EPOCH_JULIAN_DAY

    async def get(self, key: str) -> str | None:
        return self.get_now(key)

    async def put(self, key: str, value: str) -> None:
        self.put_now(key, value)

    def __len__(self) -> int:
        if self._db is None:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        """Close the file (the store is unusable afterwards)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    async def aclose(self) -> None:
        """Nothing per event loop: the file stays open until `close`."""


def _create_private(path: Path) -> None:
    """Create the database file readable by its owner only, unless it exists: SQLite gives its -wal and
    -shm files the database file's mode, so they are private too (cached answers are users' questions)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))

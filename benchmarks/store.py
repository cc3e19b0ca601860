"""The results store: one SQLite file (WAL journal), one row per finished run.

Every row is committed on its own the moment its run finishes (``synchronous=FULL``), so a sweep
interrupted by Ctrl-C or SIGKILL loses no finished row; a run is identified by (instance hash,
method, options JSON, seed), a UNIQUE key, so resuming never duplicates one: runs already stored
are skipped, and ``--rerun`` replaces them (UPSERT). Only the process that runs the sweep writes;
every statement is parameterised.

A store is marked as dmlopt's in the SQLite header (``PRAGMA application_id``,
:data:`APPLICATION_ID`) when it is created (in a temporary file linked into place, so a store is
never seen half-made). An existing file is opened only if it is a dmlopt store: marked, or made
by the previous version (unmarked, with a ``runs`` table holding the known columns); anything
else (an unrelated SQLite database, an empty or non-SQLite file, a directory, a FIFO) is refused
before it is opened for writing, so it is left byte for byte as it was. :func:`read` opens a
store read-only.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import stat
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any, Literal

from dmlopt.errors import InstanceError

SCHEMA_VERSION = 2

#: the SQLite ``application_id`` of a dmlopt results store ("dmlo")
APPLICATION_ID = 0x646D6C6F

_SQLITE_MAGIC = b"SQLite format 3\x00"

#: (column, SQL type) of the ``runs`` table, in order
COLUMNS: list[tuple[str, str]] = [
    ("suite", "TEXT"),
    ("problem", "TEXT NOT NULL"),
    ("instance", "TEXT NOT NULL"),
    ("instance_hash", "TEXT NOT NULL"),
    ("kind", "TEXT NOT NULL"),  # exact | heuristic | bound
    ("method", "TEXT NOT NULL"),  # highs:paper | heuristic name
    ("options", "TEXT NOT NULL"),  # canonical JSON
    ("seed", "INTEGER NOT NULL"),
    ("status", "TEXT NOT NULL"),  # optimal feasible time_limit infeasible error killed
    ("objective", "REAL"),
    ("bound", "REAL"),
    ("gap", "REAL"),
    ("seconds", "REAL"),  # the method's own time (Result.seconds)
    ("wall_seconds", "REAL"),  # start of the child process to its row, as the runner saw it
    ("build_seconds", "REAL"),
    ("time_limit", "REAL"),
    ("peak_mem_mb", "REAL"),  # peak resident memory of the child process
    ("feasible", "INTEGER"),
    ("dmlopt_version", "TEXT"),
    ("solver_version", "TEXT"),
    ("python", "TEXT"),
    ("host", "TEXT"),
    ("timestamp", "TEXT"),  # UTC, ISO 8601, when the run finished
    ("message", "TEXT"),
    ("metrics", "TEXT"),  # JSON object of the evaluator's metrics
    # JSON list of [seconds, incumbent, bound] of an exact run over time (schema 2; NULL in a
    # store of schema 1, which gains the column when opened for writing)
    ("trace", "TEXT"),
    # wall seconds of the untimed warm-up run before a heuristic's first run in a worker
    # process (one-time costs plus one run; schema 2)
    ("warmup_seconds", "REAL"),
]
NAMES = [c for c, _ in COLUMNS]
#: columns a store may lack (added after schema 1): read as NULL, added when opened to write
ADDED = ("trace", "warmup_seconds")
KEY = ("instance_hash", "method", "options", "seed")


def _create_sql() -> str:
    cols = ",\n  ".join(f"{c} {t}" for c, t in COLUMNS)
    return (
        f"CREATE TABLE IF NOT EXISTS runs (\n  id INTEGER PRIMARY KEY,\n  {cols},\n"
        f"  UNIQUE ({', '.join(KEY)})\n)"
    )


class Store:
    """A results store at ``path``: an existing dmlopt store, or a new one (created with its
    directory); :class:`InstanceError` naming ``field`` if ``path`` holds anything else (an
    unrelated SQLite database, any other file, a directory)."""

    def __init__(self, path: str | Path, field: str = "store"):
        self.path = Path(path)
        try:
            state = check(self.path, field)
            if state == "missing":
                _create(self.path)
                state = check(self.path, field)  # another process may have put something there
            self.conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise InstanceError(field, str(self.path), f"cannot be created or opened ({exc})") \
                from None
        try:
            if state == "legacy":  # a store of the previous version: marked from now on
                self.conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute(_create_sql())
            have = {r[1] for r in self.conn.execute("PRAGMA table_info(runs)")}
            for col, sql in COLUMNS:
                if col in ADDED and col not in have:  # a store of schema 1
                    self.conn.execute(f"ALTER TABLE runs ADD COLUMN {col} {sql}")
            self.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            self.conn.close()
            raise InstanceError(field, str(self.path), f"cannot be written ({exc})") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keys(self) -> set[tuple[str, str, str, int]]:
        """Keys of every stored run."""
        return self._keys(self.conn.execute(f"SELECT id, {', '.join(KEY)} FROM runs"))

    def failed_keys(self) -> set[tuple[str, str, str, int]]:
        return self._keys(self.conn.execute(
            f"SELECT id, {', '.join(KEY)} FROM runs WHERE status IN ('error', 'killed')"))

    def _keys(self, cur: Any) -> set[tuple[str, str, str, int]]:
        """The keys of the rows of ``cur``, each checked for its columns' types (a store edited
        by hand: a seed that is not an integer is an error naming the row, not a crash)."""
        out = set()
        for rid, h, m, o, s in cur:
            for col, v, kind in (("instance_hash", h, str), ("method", m, str),
                                 ("options", o, str), ("seed", s, int)):
                if not isinstance(v, kind) or isinstance(v, bool):
                    raise InstanceError("store", str(self.path),
                                        f"row {rid}: {col} = {v!r} is not "
                                        f"{'an integer' if kind is int else 'text'}")
            out.add((h, m, o, s))
        return out

    def put(self, row: dict[str, Any]) -> None:
        """Insert one finished run (replacing a stored run with the same key); committed."""
        values = [_sql_value(row.get(c)) for c in NAMES]
        updates = ", ".join(f"{c}=excluded.{c}" for c in NAMES if c not in KEY)
        self.conn.execute(
            f"INSERT INTO runs ({', '.join(NAMES)}) VALUES ({', '.join('?' * len(NAMES))}) "
            f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {updates}",
            values,
        )

    def rows(self) -> list[dict[str, Any]]:
        """Every stored run as a dict (``metrics`` decoded), in insertion order."""
        return _fetch(self.conn, self.path)

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def _sql_value(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True, allow_nan=False)
    return v


def _create(path: Path) -> None:
    """A new, marked, empty store at ``path`` (made beside it and linked into place; an existing
    file at ``path`` is never replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".dmlopt-store-", suffix=".sqlite", dir=path.parent)
    os.close(fd)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute(_create_sql())
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not os.path.lexists(path):
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def check(path: str | Path, field: str = "store") -> Literal["missing", "ours", "legacy"]:
    """What ``path`` holds: nothing, a marked dmlopt store, or an unmarked store of the previous
    version; :class:`InstanceError` for anything else. Nothing is written."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if path.is_symlink():
            raise InstanceError(field, str(path), "is a dangling symbolic link") from None
        return "missing"
    except IsADirectoryError:
        raise InstanceError(field, str(path), "is a directory (give a .sqlite file)") from None
    except OSError as exc:
        raise InstanceError(field, str(path), f"cannot be read ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InstanceError(field, str(path), "is a directory (give a .sqlite file)")
        if not stat.S_ISREG(mode):
            raise InstanceError(field, str(path), "is not a regular file")
        header = os.read(fd, 100)
    finally:
        os.close(fd)
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise InstanceError(field, str(path), "exists and is not a dmlopt results store (not "
                            "an SQLite database); give a new file name")
    app_id = int.from_bytes(header[68:72], "big")
    if app_id == APPLICATION_ID:
        return "ours"
    if app_id == 0 and _has_runs_table(path):
        return "legacy"
    raise InstanceError(field, str(path), "exists and is not a dmlopt results store (an SQLite "
                        "database of something else); give a new file name")


def _connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection. Without a ``-wal`` file beside it (nobody is writing and every
    row is in the file) the file is opened as immutable, so that SQLite creates nothing beside
    it (a read-only connection to a WAL database would leave ``-wal`` and ``-shm`` files)."""
    uri = "file:" + urllib.parse.quote(str(path.absolute())) + "?mode=ro"
    if not os.path.exists(f"{path}-wal"):
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, timeout=30)


def _has_runs_table(path: Path) -> bool:
    """Whether an unmarked SQLite file has the ``runs`` table of the previous version."""
    try:
        conn = _connect_ro(path)
    except sqlite3.Error:
        return False
    try:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return {"id", *NAMES} - set(ADDED) <= cols


def read(path: str | Path) -> list[dict[str, Any]]:
    """Rows of an existing store, opened read-only; :class:`InstanceError` if it is missing or
    not a dmlopt store."""
    path = Path(path)
    if check(path) == "missing":
        raise InstanceError("store", str(path), "does not exist")
    try:
        conn = _connect_ro(path)
    except sqlite3.Error as exc:
        raise InstanceError("store", str(path), f"cannot be read ({exc})") from None
    try:
        return _fetch(conn, path)
    except sqlite3.Error as exc:
        raise InstanceError("store", str(path), f"cannot be read ({exc})") from None
    finally:
        conn.close()


def _check_row(row: dict[str, Any], path: Path | None) -> None:
    """A row read back holds what its column's SQL type says (SQLite keeps any value in any
    column): a ``TEXT NOT NULL`` a string, an ``INTEGER`` an int, a ``REAL`` a number (or
    NULL where allowed); else :class:`InstanceError` naming the store, the row and the field."""
    for col, sql in COLUMNS:
        v = row[col]
        if v is None:
            if "NOT NULL" in sql:
                raise InstanceError("store", str(path), f"row {row['id']}: {col} is NULL "
                                    f"(must be {sql.split()[0].lower()})")
            continue
        kind = sql.split()[0]
        ok = (isinstance(v, str) if kind == "TEXT"
              else isinstance(v, int) and not isinstance(v, bool) if kind == "INTEGER"
              else isinstance(v, int | float) and not isinstance(v, bool))
        if not ok:
            raise InstanceError("store", str(path), f"row {row['id']}: {col} = {v!r} is not "
                                f"{'an integer' if kind == 'INTEGER' else kind.lower()}")


def _fetch(conn: sqlite3.Connection, path: Path | None = None) -> list[dict[str, Any]]:
    have = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    names = [c for c in NAMES if c in have or c not in ADDED]  # schema 1: no trace column
    cur = conn.execute(f"SELECT id, {', '.join(names)} FROM runs ORDER BY id")
    out = []
    for rec in cur:
        row = dict.fromkeys(NAMES)
        row.update(zip(["id", *names], rec, strict=True))
        _check_row(row, path)
        try:
            row["metrics"] = json.loads(row["metrics"]) if row["metrics"] else {}
        except (TypeError, ValueError):
            row["metrics"] = {}
        row["trace"] = trace_of(row["trace"])
        out.append(row)
    return out


def trace_of(text: Any) -> list[list[float | None]]:
    """A stored trace decoded: ``[[seconds, incumbent, bound], ...]`` in time order, finite
    numbers or None; ``[]`` for NULL or anything that is not such a list (a trace is a figure's
    data, never a reason to refuse a store).

    Parameters
    ----------
    text : the ``trace`` column of one row.

    Returns
    -------
    list
        The points, time non-decreasing.

    References
    ----------
    Issue 54, item 5.
    """
    try:
        data = json.loads(text) if isinstance(text, str) and text else []
    except ValueError:
        return []
    out: list[list[float | None]] = []
    if not isinstance(data, list):
        return []
    for p in data:
        if not (isinstance(p, list) and len(p) == 3):
            return []
        vals = [float(x) if isinstance(x, int | float) and not isinstance(x, bool)
                and math.isfinite(x) else None for x in p]
        if vals[0] is None or (out and vals[0] < out[-1][0]):
            return []
        out.append(vals)
    return out

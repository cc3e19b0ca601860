"""The results store: one SQLite file (WAL journal), one row per finished run.

Every row is committed on its own the moment its run finishes (``synchronous=FULL``), so a sweep
interrupted by Ctrl-C or SIGKILL loses no finished row; a run is identified by (instance hash,
method, options JSON, seed), a UNIQUE key, so resuming never duplicates one: runs already stored
are skipped, and ``--rerun`` replaces them (UPSERT). Only the process that runs the sweep writes;
every statement is parameterised.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

from dmlopt.errors import InstanceError

SCHEMA_VERSION = 1

#: (column, SQL type) of the ``runs`` table, in order
COLUMNS: list[tuple[str, str]] = [
    ("suite", "TEXT"),
    ("problem", "TEXT NOT NULL"),
    ("instance", "TEXT NOT NULL"),
    ("instance_hash", "TEXT NOT NULL"),
    ("kind", "TEXT NOT NULL"),  # exact | heuristic
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
]
NAMES = [c for c, _ in COLUMNS]
KEY = ("instance_hash", "method", "options", "seed")


def _create_sql() -> str:
    cols = ",\n  ".join(f"{c} {t}" for c, t in COLUMNS)
    return (
        f"CREATE TABLE IF NOT EXISTS runs (\n  id INTEGER PRIMARY KEY,\n  {cols},\n"
        f"  UNIQUE ({', '.join(KEY)})\n)"
    )


class Store:
    """A results store at ``path`` (created with its directory if needed)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute(_create_sql())
        self.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keys(self) -> set[tuple[str, str, str, int]]:
        """Keys of every stored run."""
        cur = self.conn.execute(f"SELECT {', '.join(KEY)} FROM runs")
        return {(h, m, o, int(s)) for h, m, o, s in cur}

    def failed_keys(self) -> set[tuple[str, str, str, int]]:
        cur = self.conn.execute(
            f"SELECT {', '.join(KEY)} FROM runs WHERE status IN ('error', 'killed')"
        )
        return {(h, m, o, int(s)) for h, m, o, s in cur}

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
        return _fetch(self.conn)

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def _sql_value(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True)
    return v


def read(path: str | Path) -> list[dict[str, Any]]:
    """Rows of an existing store; :class:`InstanceError` if it is missing or not a store."""
    path = Path(path)
    if not path.is_file():
        raise InstanceError("store", str(path), "does not exist")
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "runs" not in tables:
            raise InstanceError("store", str(path), "is not a dmlopt results store (no runs table)")
        return _fetch(conn)
    except sqlite3.DatabaseError as exc:
        raise InstanceError("store", str(path), f"cannot be read ({exc})") from None
    finally:
        conn.close()


def _fetch(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    cur = conn.execute(f"SELECT id, {', '.join(NAMES)} FROM runs ORDER BY id")
    out = []
    for rec in cur:
        row = dict(zip(["id", *NAMES], rec, strict=True))
        row["metrics"] = json.loads(row["metrics"]) if row["metrics"] else {}
        out.append(row)
    return out

"""Instance and solution files: JSON in and out, validated, written atomically.

Files are data, never code: JSON is parsed with the standard library, the file size is checked
before it is read, and every write goes to a temporary file in the target directory that is then
renamed over the target, so an interrupted write never leaves a half-written file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import resources
from pathlib import Path
from typing import IO, Any

import pydantic

from dmlopt import registry
from dmlopt.errors import InstanceError
from dmlopt.validation import parse

#: Largest instance file read, in bytes (override with DMLOPT_MAX_FILE_BYTES).
MAX_FILE_BYTES = int(os.environ.get("DMLOPT_MAX_FILE_BYTES", 512 * 2**20))


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix); renamed to ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # no extra dots: Pyomo guesses a file's format from the text after the first dot
    fd, tmp = tempfile.mkstemp(prefix=f"_tmp_{path.stem.replace('.', '_')}_",
                               suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success rename it to ``path``."""
    with atomic_path(path) as tmp, open(tmp, mode) as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_open(path, "w") as fh:
        fh.write(text)


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, with a size bound and errors that name the file."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InstanceError("file", str(path), "does not exist") from None
    except OSError as exc:
        raise InstanceError("file", str(path), f"cannot be read ({exc.strerror})") from None
    if size > MAX_FILE_BYTES:
        raise InstanceError(
            "file", str(path), f"is {size} bytes, above the limit {MAX_FILE_BYTES} "
            "(set DMLOPT_MAX_FILE_BYTES to raise it)"
        )
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise InstanceError(
            "file", str(path), f"is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError("file", str(path), f"cannot be read ({exc})") from None


def instance_from_dict(data: Any) -> Any:
    """Validate a dict with a ``problem`` field into that problem's ``Instance``."""
    if not isinstance(data, dict):
        raise InstanceError("instance", type(data).__name__, "must be a JSON object")
    if "problem" not in data:
        raise InstanceError(
            "problem", None, f"is missing (one of: {', '.join(registry.names())})"
        )
    name = data["problem"]
    if name not in registry.names():
        raise InstanceError("problem", name,
                            f"is not a known problem (one of: {', '.join(registry.names())})")
    problem = registry.get(name)
    return parse(problem.model.Instance, data)


def load(source: str | Path | dict) -> Any:
    """Load an instance from a JSON file path, a shipped instance name or a dict.

    A name such as ``"tabgp/er12-p05-0"`` that is not an existing path is looked up among the
    instances shipped in ``dmlopt.data``.
    """
    if isinstance(source, dict):
        return instance_from_dict(source)
    path = Path(source)
    if not path.exists():
        shipped = data_path(str(source))
        if shipped is not None:
            path = shipped
    return instance_from_dict(read_json(path))


def data_path(name: str) -> Path | None:
    """Path of a shipped data file (``tabgp/er12-p05-0`` or with extension), or None."""
    root = resources.files("dmlopt.data")
    for candidate in (root.joinpath(name), root.joinpath(f"{name}.json")):
        if candidate.is_file():
            return Path(str(candidate))
    return None


def to_json(obj: pydantic.BaseModel) -> str:
    return obj.model_dump_json(indent=None, exclude_none=True)


def save(obj: pydantic.BaseModel, path: str | Path) -> None:
    """Write an instance or solution as JSON, atomically."""
    atomic_write_text(path, to_json(obj) + "\n")


def instance_hash(instance: pydantic.BaseModel) -> str:
    """Content hash of an instance (canonical JSON, SHA-256, 16 hex digits)."""
    canon = json.dumps(instance.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def load_solution(instance: Any, source: str | Path | dict) -> Any:
    """Validate a solution (file path or dict) for ``instance``'s problem."""
    data = source if isinstance(source, dict) else read_json(source)
    return parse(registry.of(instance).model.Solution, data, prefix="solution")

"""Instance and solution files: JSON in and out, validated, written atomically; the one writer.

Files are data, never code: JSON is parsed with the standard library, the file size is checked
before it is read, and every write goes to a temporary file in the target directory that is then
renamed over the target, so an interrupted write never leaves a half-written file.

Every file dmlopt writes (results, solutions, models, figures, reports, exports, checkpoints,
docs blocks) goes through the writers here (:func:`write_bytes`, :func:`atomic_write_text`,
:func:`write_json`, :func:`write_csv`, :func:`save_figure`, :func:`save_npz`,
:func:`copy_file`, :func:`atomic_open`). A symbolic link at the final path is replaced, never
followed (``os.replace`` renames over the link itself); a name built from data goes through
:func:`safe_name` / :func:`inside`, so it is one path component inside the destination.
``tests/core/test_writer.py`` fails on any other write in the package.
"""

from __future__ import annotations

import hashlib
import io as _stdio
import json
import os
import re
import stat
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import resources
from pathlib import Path
from typing import IO, Any

import pydantic

from dmlopt import registry
from dmlopt.errors import ConfigError, InstanceError
from dmlopt.validation import parse

#: Largest file read, in bytes, when ``DMLOPT_MAX_FILE_BYTES`` is not set.
DEFAULT_MAX_FILE_BYTES = 512 * 2**20

#: Largest file read, in bytes: ``None`` means "``DMLOPT_MAX_FILE_BYTES``, checked when a file
#: is read, else :data:`DEFAULT_MAX_FILE_BYTES`" (tests may set a number here).
MAX_FILE_BYTES: int | None = None


def max_file_bytes() -> int:
    """The largest file read, in bytes: :data:`MAX_FILE_BYTES` if set, else the environment
    variable ``DMLOPT_MAX_FILE_BYTES`` (a positive integer in decimal digits), else
    :data:`DEFAULT_MAX_FILE_BYTES`.

    Read when a file is read (never at import, so ``dmlopt --version`` works whatever the
    environment says).

    Returns
    -------
    int
        The limit in bytes.

    Raises
    ------
    ConfigError
        The variable is set but is not a positive integer (``abc``, ``1e3``, ``-5``, ``0``).

    References
    ----------
    docs/architecture.md (files are data).
    """
    if MAX_FILE_BYTES is not None:
        return MAX_FILE_BYTES
    return env_int("DMLOPT_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES)


def env_int(name: str, default: int, low: int = 1, high: int = 2**62) -> int:
    """An integer environment variable, checked: digits only, within ``[low, high]``.

    Parameters
    ----------
    name : the variable.
    default : its value when unset or empty.
    low, high : the accepted range.

    Returns
    -------
    int
        The value.

    Raises
    ------
    ConfigError
        Naming the variable, its text and the rule.

    References
    ----------
    docs/architecture.md.
    """
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not re.fullmatch(r"\+?[0-9]{1,19}", text):
        raise ConfigError(name, text, f"must be a whole number of bytes from {low} to {high} "
                          "(decimal digits only)")
    value = int(text)
    if not low <= value <= high:
        raise ConfigError(name, text, f"must be from {low} to {high}")
    return value


#: Deepest nesting of lists/objects accepted in a JSON or TOML file (instances need about 5).
MAX_DEPTH = 64


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: characters the temporary file beside an output adds to its name (``_tmp_`` ... ``_XXXXXXXX``)
_TMP_EXTRA = 16


def _check_path_text(path: str | Path, field: str) -> Path:
    text = os.fspath(path)
    if not isinstance(text, str) or not text:
        raise InstanceError(field, path, "must be a non-empty path")
    if "\x00" in text:
        raise InstanceError(field, text, "contains a NUL byte")
    out = Path(text)
    for part in out.parts:
        if len(os.fsencode(part)) + _TMP_EXTRA > _name_max(out):
            raise InstanceError(field, text, f"has a name too long for the file system "
                                f"({len(os.fsencode(part))} bytes; at most "
                                f"{_name_max(out) - _TMP_EXTRA} here)")
    return out


def _name_max(path: Path) -> int:
    """The longest file name the file system of ``path``'s nearest existing folder takes."""
    try:
        return int(os.pathconf(_existing_ancestor(path), "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


def _existing_ancestor(path: Path) -> Path:
    here = path.absolute().parent
    while not here.exists() and here != here.parent:
        here = here.parent
    return here


def _check_parent(path: Path, field: str) -> None:
    """Every existing ancestor is a directory, and the nearest one takes a new file."""
    here = path.absolute().parent
    while not here.exists() and here != here.parent:
        if here.is_symlink():  # a dangling link where a folder would be created
            raise InstanceError(field, str(path), f"has {here} as a folder, a broken link")
        here = here.parent
    if not here.is_dir():
        raise InstanceError(field, str(path), f"has {here} as a folder, but it is a file")
    try:  # a probe says more than the mode bits (root, read-only mounts)
        fd, probe = tempfile.mkstemp(prefix="_probe_", dir=here)
    except OSError as exc:
        raise InstanceError(field, str(path), f"cannot be written: {here} is not writable "
                            f"({exc.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def check_output(path: str | Path, field: str = "output") -> Path:
    """An output file path, checked before any work: no NUL byte, names the file system takes,
    a parent that is (or can be made) a writable folder, and not a directory or special file
    (it is replaced atomically: a temporary file in the same folder, then a rename, so a
    symbolic link at ``path`` is replaced, never followed)."""
    path = _check_path_text(path, field)
    if path.is_dir():
        raise InstanceError(field, str(path), "is a directory (give a file path)")
    if path.exists() and not path.is_file():
        raise InstanceError(field, str(path), "exists and is not a regular file")
    if not str(path.name) or path.name in (".", ".."):
        raise InstanceError(field, str(path), "must name a file")
    _check_parent(path, field)
    return path


def check_output_dir(path: str | Path, field: str = "output") -> Path:
    """An output folder, checked before any work: no NUL byte, names the file system takes,
    a folder (or nothing yet) whose nearest existing ancestor takes new files."""
    path = _check_path_text(path, field)
    if path.exists() and not path.is_dir():
        raise InstanceError(field, str(path), "exists and is not a directory")
    _check_parent(path / "x", field)
    return path


def _cannot_write(path: Path | str, exc: OSError) -> InstanceError:
    return InstanceError("output", str(path), f"cannot be written ({exc.strerror or exc})")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix); renamed to ``path`` on success.

    The file gets the permissions of a newly created file under the user's umask (mkstemp
    alone would leave it 0600); on any failure the temporary file is removed. A symbolic link
    at ``path`` is replaced by the file, its target is never written.

    Parameters
    ----------
    path : the final file.

    Returns
    -------
    Iterator[Path]
        The temporary path to write.

    Raises
    ------
    InstanceError
        The path cannot be written (a name too long, no permission, a file where a folder
        would be), naming the path and the reason.

    References
    ----------
    POSIX ``rename(2)``: atomic within a file system.
    """
    path = check_output(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # no extra dots: Pyomo guesses a file's format from the text after the first dot
        fd, tmp = tempfile.mkstemp(prefix=f"_tmp_{path.stem.replace('.', '_')[:40]}_",
                                   suffix=path.suffix[:16], dir=path.parent)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    os.close(fd)
    try:
        yield Path(tmp)
        try:
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except OSError as exc:
            raise _cannot_write(path, exc) from None
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success rename it to ``path``.

    Parameters
    ----------
    path : the final file.
    mode : ``"w"`` (text, UTF-8) or ``"wb"``.

    Returns
    -------
    Iterator[IO]
        The open temporary file.

    References
    ----------
    :func:`atomic_path`.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode {mode!r} (only 'w' or 'wb')")
    with atomic_path(path) as tmp:
        try:
            fh = open(tmp, mode, **({"encoding": "utf-8"} if mode == "w" else {}))  # noqa: SIM115
        except OSError as exc:
            raise _cannot_write(path, exc) from None
        with fh:
            yield fh
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as exc:
                raise _cannot_write(path, exc) from None


@contextmanager
def scratch_path(directory: str | Path, suffix: str = "") -> Iterator[Path]:
    """A new empty temporary file in ``directory`` (for a tool that writes a file by name,
    such as Pyomo's model writer), removed when the block ends, whatever happens.

    Parameters
    ----------
    directory : an existing folder (the destination, so the file never leaves it).
    suffix : the file's suffix (Pyomo guesses a format from it).

    Returns
    -------
    Iterator[Path]
        The temporary path.

    References
    ----------
    Python ``tempfile.mkstemp``.
    """
    try:
        fd, raw = tempfile.mkstemp(prefix="_tmp_", suffix=suffix, dir=directory)
    except OSError as exc:
        raise _cannot_write(Path(directory) / f"_tmp_{suffix}", exc) from None
    os.close(fd)
    try:
        yield Path(raw)
    finally:
        with suppress(OSError):
            os.unlink(raw)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_open`).

    Parameters
    ----------
    path : the final file.
    text : its content.

    Returns
    -------
    None

    References
    ----------
    :func:`atomic_path`.
    """
    with atomic_open(path, "w") as fh:
        fh.write(text)


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_open`).

    Parameters
    ----------
    path : the final file.
    data : its content.

    Returns
    -------
    None

    References
    ----------
    :func:`atomic_path`.
    """
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def write_json(path: str | Path, data: Any, **dumps: Any) -> None:
    """Write ``data`` as JSON (``json.dumps(data, **dumps)`` and a newline) atomically.

    Parameters
    ----------
    path : the final file.
    data : a JSON-serialisable value.
    dumps : options of :func:`json.dumps` (``indent``, ``sort_keys``, ``default``).

    Returns
    -------
    None

    References
    ----------
    RFC 8259 (JSON).
    """
    atomic_write_text(path, json.dumps(data, **dumps) + "\n")


def write_csv(path: str | Path, table: Any, **to_csv: Any) -> None:
    """Write a pandas DataFrame (or Series) as CSV atomically: the text is made in memory
    (``table.to_csv(None, ...)``), then written by :func:`atomic_write_text`.

    Parameters
    ----------
    path : the final file.
    table : a DataFrame or Series.
    to_csv : options of ``DataFrame.to_csv`` (``index``, ...).

    Returns
    -------
    None

    References
    ----------
    RFC 4180 (CSV).
    """
    atomic_write_text(path, table.to_csv(None, **to_csv))


def save_figure(fig: Any, path: str | Path, **savefig: Any) -> None:
    """Save a matplotlib figure atomically: rendered to memory (``fig.savefig`` on a BytesIO,
    the format taken from ``path``'s suffix unless given), then :func:`write_bytes`; a link
    at ``path`` is replaced, never followed.

    Parameters
    ----------
    fig : a matplotlib Figure.
    path : the final file (``.png``, ``.pdf``, ``.svg``).
    savefig : options of ``Figure.savefig`` (``dpi``, ``bbox_inches``, ``format``).

    Returns
    -------
    None

    References
    ----------
    matplotlib ``Figure.savefig``.
    """
    check_output(path)
    savefig.setdefault("format", Path(path).suffix.lstrip(".").lower() or "png")
    buf = _stdio.BytesIO()
    fig.savefig(buf, **savefig)
    write_bytes(path, buf.getvalue())


def save_npz(path: str | Path, **arrays: Any) -> None:
    """Write numpy arrays as an ``.npz`` file atomically (``np.savez`` on the temporary file).

    Parameters
    ----------
    path : the final file.
    arrays : the arrays by name.

    Returns
    -------
    None

    References
    ----------
    numpy ``savez``.
    """
    import numpy as np

    with atomic_open(path, "wb") as fh:
        np.savez(fh, **arrays)


def copy_file(source: str | Path, path: str | Path) -> None:
    """Copy a regular file's bytes to ``path`` atomically (read in chunks, never a link's
    target written).

    Parameters
    ----------
    source : the file to copy (a regular file).
    path : the final file.

    Returns
    -------
    None

    References
    ----------
    :func:`atomic_path`.
    """
    try:
        src = open(source, "rb")  # noqa: SIM115
    except OSError as exc:
        raise InstanceError("file", str(source), f"cannot be read ({exc.strerror})") from None
    with src, atomic_open(path, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)


#: characters a name from data keeps; anything else becomes ``_``
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=,@-]+")


def safe_name(text: Any, limit: int = 96) -> str:
    """One safe file-name component from a name built from data (a problem, instance, method
    or suite name): letters, digits and ``._+=,@-`` kept, every other run of characters
    (``/``, ``\\``, NUL, spaces, ``..``) made ``_``, no leading dot, at most ``limit``
    characters. A name that had to change gets 8 hex digits of its hash before its suffix
    (``gap-x_NAME-1a2b3c4d.png``), so two different names never share a file.

    Parameters
    ----------
    text : the name (any value; ``str(text)`` is used).
    limit : the longest result.

    Returns
    -------
    str
        A single path component, never empty, ``.`` or ``..``.

    References
    ----------
    POSIX portable file-name character set.
    """
    raw = str(text)
    name = _UNSAFE.sub("_", unicodedata.normalize("NFKC", raw)).lstrip(".")
    name = re.sub(r"\.{2,}", "_", name)
    if name == raw and 0 < len(name) <= limit:
        return name
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    suffix = m.group(0) if (m := re.search(r"\.[A-Za-z0-9]{1,8}$", name)) else ""
    stem = name[: len(name) - len(suffix)][: max(1, limit - 9 - len(suffix))] or "_"
    return f"{stem}-{digest}{suffix}"


def inside(root: str | Path, *names: Any) -> Path:
    """``root / safe_name(n1) / safe_name(n2) ...``, checked to stay inside ``root`` even
    through a link already there (a link in ``root`` pointing elsewhere is refused).

    Parameters
    ----------
    root : the destination folder the user named.
    names : names built from data; the last one is the file name.

    Returns
    -------
    Path
        The path inside ``root``.

    Raises
    ------
    InstanceError
        A link inside ``root`` leads out of it.

    References
    ----------
    :func:`safe_name`.
    """
    root = Path(root)
    path = root.joinpath(*(safe_name(n) for n in names))
    base = root.resolve()
    here = path.parent.resolve()
    if here != base and base not in here.parents:
        raise InstanceError("output", str(path), f"leads out of {root} through a link")
    return path


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file, at most ``limit`` (default :data:`MAX_FILE_BYTES`).

    Special files (a FIFO, ``/dev/zero``, a directory, a socket) are refused without blocking:
    the file is opened non-blocking and checked with ``fstat`` before anything is read, and no
    more than ``limit + 1`` bytes are ever read.
    """
    limit = max_file_bytes() if limit is None else limit
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InstanceError("file", str(path), "does not exist") from None
    except IsADirectoryError:
        raise InstanceError("file", str(path), "is a directory, not a file") from None
    except OSError as exc:
        raise InstanceError("file", str(path), f"cannot be read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InstanceError("file", str(path), "is not a regular file (FIFOs, devices and "
                                "directories are not read)")
        if st.st_size > limit:
            raise InstanceError(
                "file", str(path), f"is {st.st_size} bytes, above the limit {limit} "
                "(set DMLOPT_MAX_FILE_BYTES to raise it)"
            )
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise InstanceError("file", str(path), f"holds more than {limit} bytes (set "
                                "DMLOPT_MAX_FILE_BYTES to raise the limit)")
        return b"".join(chunks)
    except OSError as exc:
        raise InstanceError("file", str(path), f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


_CONTAINERS = frozenset({dict, list})


def check_depth(data: Any, where: str, limit: int = MAX_DEPTH) -> None:
    """Refuse data nested deeper than ``limit`` lists/objects (iterative: no recursion)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                raise InstanceError("file", where, f"is nested deeper than {limit} levels")
            children = node.values() if isinstance(node, dict) else node
            if not _CONTAINERS.isdisjoint(map(type, children)):  # a row of numbers: skipped
                stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))


def _text(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError("file", str(path), f"is not UTF-8 text (byte {exc.start})") from None


def read_json(path: str | Path) -> Any:
    """Parse a JSON file with the bounded reader: regular file, byte cap, depth cap, numbers
    that JSON allows (``NaN``/``Infinity`` are refused)."""
    path = Path(path)
    text = _text(path, read_bytes(path))

    def _constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        data = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise InstanceError(
            "file", str(path), f"is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg})"
        ) from None
    except ValueError as exc:
        raise InstanceError("file", str(path), f"is not valid JSON ({exc})") from None
    except RecursionError:
        raise InstanceError("file", str(path), f"is nested deeper than {MAX_DEPTH} "
                            "levels") from None
    check_depth(data, str(path))
    return data


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML file with the bounded reader (regular file, byte cap, depth cap)."""
    import tomllib

    path = Path(path)
    text = _text(path, read_bytes(path))
    if _bracket_depth(text) > MAX_DEPTH:
        raise InstanceError("file", str(path), f"is nested deeper than {MAX_DEPTH} levels")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstanceError("file", str(path), f"is not valid TOML ({exc})") from None
    except RecursionError:
        raise InstanceError("file", str(path), f"is nested deeper than {MAX_DEPTH} "
                            "levels") from None
    check_depth(data, str(path))
    return data


def _bracket_depth(text: str) -> int:
    """An upper bound on the nesting of TOML arrays/inline tables (brackets outside strings
    are not told apart here; a deep string of brackets is refused too, which is harmless)."""
    depth = best = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return best


def _json_type(data: Any) -> str:
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "number",
            float: "number"}.get(type(data), type(data).__name__)


def instance_from_dict(data: Any) -> Any:
    """Validate a dict with a ``problem`` field into that problem's ``Instance``."""
    if not isinstance(data, dict):
        raise InstanceError("instance", message=f"instance: a JSON {_json_type(data)} where a "
                            "JSON object is required")
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

    A name such as ``"tabgp/er12-p03-tau1-s0"`` that is not an existing path is looked up among
    the instances shipped in ``dmlopt.data`` (``dmlopt list --data`` lists them).
    """
    if isinstance(source, dict):
        return instance_from_dict(source)
    if not isinstance(source, str | Path):
        raise InstanceError("instance", type(source).__name__, "must be a path, a shipped "
                            "name or a dict")
    if isinstance(source, str) and "\x00" in source:
        raise InstanceError("instance", source, "contains a NUL byte")
    path = Path(source)
    try:
        exists = path.exists()
    except OSError as exc:  # a name too long, a loop of links
        raise InstanceError("instance", str(source), f"cannot be read ({exc.strerror})") from None
    if not exists and ".." not in path.parts:
        shipped = data_path(str(source))
        if shipped is not None:
            path = shipped
        elif not path.suffix and not path.is_absolute():  # a shipped name that is not one
            raise InstanceError("instance", str(source), _no_such_name(str(source)))
    return instance_from_dict(read_json(path))


def _no_such_name(name: str) -> str:
    """The rule for a name that is neither a file nor a shipped instance: the nearest shipped
    names, and where the list is."""
    import difflib

    near = difflib.get_close_matches(name, shipped_instances(), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return (f"is neither a file nor a shipped instance{hint} (`dmlopt list --data` lists the "
            "shipped ones)")


def shipped_instances() -> list[str]:
    """Names of the instances shipped in ``dmlopt.data`` (``tabgp/er12-p03-tau1-s0``, ...)."""
    root = Path(str(resources.files("dmlopt.data")))
    out = []
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root)
        if len(rel.parts) == 2 and not rel.name.startswith(("topology-", "references")):
            out.append(str(rel.with_suffix("")))
    return out


def data_path(name: str) -> Path | None:
    """Path of a shipped data file (``tabgp/er12-p03-tau1-s0`` or with extension), or None."""
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
    return dump_hash(instance.model_dump(mode="json"))


def dump_hash(dump: dict[str, Any]) -> str:
    """:func:`instance_hash` of the instance whose ``model_dump(mode="json")`` is ``dump``.

    Parameters
    ----------
    dump : dict
        The instance's JSON dump (a caller that keeps the dump hashes it without a second).

    Returns
    -------
    str
        The same 16 hex digits as :func:`instance_hash` of the instance.

    References
    ----------
    Ours: SHA-256 of the canonical JSON (sorted keys, no spaces).
    """
    canon = json.dumps(dump, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def load_solution(instance: Any, source: Any) -> Any:
    """Validate a solution (a file path, or the parsed JSON value) for ``instance``'s problem.

    ``instance`` may be a dict (validated as :func:`load` does); a path is refused as
    :func:`load` refuses one (bytes, a NUL byte: :class:`InstanceError` naming it).
    """
    if isinstance(instance, dict):
        instance = instance_from_dict(instance)
    if isinstance(source, bytes | bytearray):
        raise InstanceError("solution", type(source).__name__, "must be a path (a str or a "
                            "pathlib.Path) or a parsed JSON object")
    if isinstance(source, str | Path) and "\x00" in str(source):
        raise InstanceError("solution", str(source), "contains a NUL byte")
    data = read_json(source) if isinstance(source, str | Path) else source
    if not isinstance(data, dict):
        raise InstanceError("solution", message=f"solution: a JSON {_json_type(data)} where a "
                            "JSON object is required")
    return parse(registry.of(instance).model.Solution, data, prefix="solution")

"""An instance from whatever names one: a JSON file, a shipped instance name or an id of the
reference library (``tap/qaplib-nug12``, as ``dmlopt references`` prints it).

:func:`load` is ``dmlopt.load`` and what every command line command and every entry point of
:mod:`dmlopt.api` loads an instance with. A file or a shipped instance of that name wins; a
name that is neither is looked up among the library's ids (``PROBLEM/ID``, or ``ID`` alone
when one library holds it), and the record's instance is loaded: its shipped file, or the
generator spec of its provenance (QAPLIB's instances, say).
"""

from __future__ import annotations

import difflib
import re
from functools import cache
from pathlib import Path
from typing import Any

from dmlopt import io
from dmlopt.errors import DmloptError, InstanceError

#: the shape of a library id, with or without its problem (``tap/qaplib-nug12``)
_ID = re.compile(r"(?:[A-Za-z0-9_]{1,64}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def load(source: str | Path | dict) -> Any:
    """Load an instance from a JSON file, a shipped instance name, a library id or a dict.

    Parameters
    ----------
    source : str, Path or dict
        A path to an instance JSON file; a shipped instance name (``tabgp/er12-p03-tau1-s0``,
        ``dmlopt list --data`` lists them); an id of the reference library,
        ``PROBLEM/ID`` (``tap/qaplib-nug12``, ``dmlopt references`` lists them) or ``ID``
        alone when only one library holds it; or the instance as a dict.

    Returns
    -------
    Instance
        The problem's validated instance (the problem is its ``problem`` field, or the
        library's).

    Raises
    ------
    InstanceError
        A file that breaks the instance's rules, or a name that is neither a file, a shipped
        instance nor a library id (with the nearest names).

    References
    ----------
    :mod:`dmlopt.io` (bounded readers), :mod:`dmlopt.references` (the library); ``dmlopt
    references`` prints every id this accepts.

    Examples
    --------
    >>> import dmlopt
    >>> dmlopt.load("tap/qaplib-chr12a").n
    12
    """
    rec = _named_record(source)
    if rec is not None:
        return rec.load_instance()
    try:
        return io.load(source)
    except InstanceError as exc:
        if isinstance(source, str | Path) and "neither a file nor a shipped instance" in str(exc):
            raise InstanceError("instance", str(source), _no_such_name(str(source))) from None
        raise


def record_of(name: str) -> Any:
    """The reference library's record an id names, or None.

    Parameters
    ----------
    name : ``PROBLEM/ID`` (``tap/qaplib-nug12``) or ``ID`` alone (None when several libraries
        hold that id).

    Returns
    -------
    dmlopt.references.Record or None
        The record (of the library in force: ``DMLOPT_REFERENCES_ROOT`` or the installed one).

    References
    ----------
    :mod:`dmlopt.references`.
    """
    ids = _ids(_library_state())
    if name in ids:
        return ids[name]
    matches = [r for key, r in ids.items() if "/" in key and key.split("/", 1)[1] == name]
    return matches[0] if len(matches) == 1 else None


def library_ids() -> list[str]:
    """Every id of the reference library in force, as ``PROBLEM/ID`` (the names :func:`load`
    accepts besides files and shipped instances).

    Returns
    -------
    list of str
        Sorted; empty when no library can be read.

    References
    ----------
    :mod:`dmlopt.references`; ``dmlopt references`` prints the same records.
    """
    return sorted(_ids(_library_state()))


def _named_record(source: Any) -> Any:
    """The record ``source`` names when it is no file and no shipped instance, else None."""
    if not isinstance(source, str | Path):
        return None
    text = str(source)
    if not _ID.fullmatch(text):
        return None
    try:
        if Path(text).exists() or io.data_path(text) is not None:
            return None
    except (OSError, ValueError):
        return None
    return record_of(text)


def _library_state() -> tuple[str, tuple[tuple[str, int, int], ...]]:
    """The library's root and each references file's modification time and size: the key
    under which its ids are cached (a library rebuilt in the process is read again)."""
    from dmlopt import references

    root = references.data_root()
    state = []
    for path in references.files(root).values():
        try:
            st = path.stat()
        except OSError:
            continue
        state.append((str(path), st.st_mtime_ns, st.st_size))
    return str(root), tuple(state)


@cache
def _ids(state: tuple[str, tuple[tuple[str, int, int], ...]]) -> dict[str, Any]:
    """``PROBLEM/ID`` -> record, for every readable library under ``state``'s root (a library
    that cannot be read holds no ids: ``dmlopt references --verify`` says what is wrong)."""
    from dmlopt import references

    out: dict[str, Any] = {}
    root = Path(state[0])
    for problem in references.files(root):
        try:
            recs = references.records(problem, root)
        except DmloptError:
            continue
        out.update({f"{r.problem}/{r.id}": r for r in recs})
    return out


def _no_such_name(name: str) -> str:
    """The rule for a name that is neither a file, a shipped instance nor a library id: the
    nearest names of either kind, and where they are listed."""
    names = io.shipped_instances() + library_ids()
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return (f"is neither a file, a shipped instance nor a reference library id{hint} (`dmlopt "
            "list --data` lists the shipped instances, `dmlopt references` the library)")

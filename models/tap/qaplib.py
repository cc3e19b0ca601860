"""QAPLIB reader: ``.dat`` instances and ``.sln`` solutions (Burkard, Karisch, Rendl 1997).

A ``.dat`` file holds ``n`` and two ``n x n`` matrices A and B, whitespace separated; the
Koopmans-Beckmann QAP is ``min_p sum_{i,j} A[i][j] * B[p(i)][p(j)]`` over permutations p. A
``.sln`` file holds ``n``, the optimal (or best known) objective and an optimal permutation
(1-based; a permutation of 0..n-1, as QAPLIB publishes tai40a's, is read as 0-based). A QAP is
a TAP (paper 000, equation 8) with K = 1 and as many VMs as modules: M = A (module traffic),
D = B (VM distances) and module i goes to VM p(i).

TAP requires D symmetric with a zero diagonal. When B is not but A is, the roles are swapped
(``sum A[i][j] B[p(i)][p(j)] = sum B[k][l] A[q(k)][q(l)]`` with q the inverse of p); the
instance then records ``swapped`` so :func:`solution` inverts the published permutation. A file
where neither matrix qualifies is rejected. (All 76 shipped instances have a symmetric B with a
zero diagonal; lipa*a/b have an asymmetric A, which TAP allows.)

Files are data: parsed as numbers only (no eval), at most :data:`MAX_FILE_BYTES`. The header's
size n is checked before anything is allocated: the memory and work an instance of that size
needs (:func:`estimate`) against the size limits in force (``--size-limit``,
``DMLOPT_SIZE_LIMIT``, :class:`dmlopt.contract.Limits`), then the number of entries the file
holds against 2 n^2 (``.dat``) or n + 2 (``.sln``), counted without splitting the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from dmlopt.contract import Size
from dmlopt.errors import InstanceError

#: largest file read, in bytes
MAX_FILE_BYTES = 64 * 2**20
#: bytes and operations per matrix entry of an instance: the parsed token, the numpy arrays, the
#: TAP instance's lists and their validation
ENTRY_BYTES, ENTRY_OPS = 200.0, 400.0


@dataclass(frozen=True)
class QAP:
    """A parsed ``.dat`` file: ``A`` (flows) and ``B`` (distances), both ``n x n``."""

    name: str
    A: np.ndarray
    B: np.ndarray

    @property
    def n(self) -> int:
        return int(self.A.shape[0])


def estimate(n: int) -> Size:
    """What reading a QAPLIB instance of size ``n`` needs (two n x n matrices).

    Parameters
    ----------
    n : int
        The size the file's header claims.

    Returns
    -------
    dmlopt.contract.Size
        Peak bytes and elementary operations, from ``n`` alone.
    """
    entries = 2.0 * float(n) ** 2
    return Size(ENTRY_BYTES * entries, ENTRY_OPS * entries)


def _read_text(path: Path) -> bytes:
    """The bytes of a regular ASCII file of at most :data:`MAX_FILE_BYTES` (read by
    :func:`dmlopt.io.read_bytes`: a FIFO or a device is refused, never waited on)."""
    from dmlopt.io import read_bytes

    data = read_bytes(path, MAX_FILE_BYTES)
    if data and max(data) > 127:
        where = next(i for i, c in enumerate(data) if c > 127)
        raise InstanceError("file", str(path), f"is not a plain-text QAPLIB file (a non-ASCII "
                            f"byte at offset {where})")
    return data


def _count_tokens(data: bytes) -> int:
    """The number of whitespace-separated tokens of ASCII ``data``, without splitting it."""
    if not data:
        return 0
    word = np.frombuffer(data, dtype=np.uint8) > 32  # ASCII whitespace is 9-13 and 32
    return int(word[0]) + int(np.count_nonzero(word[1:] & ~word[:-1]))


def _header(data: bytes, path: Path, what: str) -> tuple[int, int]:
    """The size n of the header (checked against the size limits before anything is
    allocated) and the number of tokens of the file."""
    from dmlopt.contract import check_run_size, limits_from

    first = re.match(rb"\s*(\S+)", data)
    if first is None:
        raise InstanceError("file", str(path), "is empty")
    n = _size(first.group(1).decode("ascii"), path)
    check_run_size(f"the QAPLIB {what} {path} (n = {n})", estimate(n), limits_from())
    return n, _count_tokens(data)


def _numbers(tokens: list[bytes], path: Path, what: str) -> np.ndarray:
    try:
        values = np.array([float(t) for t in tokens], dtype=float)
    except ValueError as exc:
        raise InstanceError("file", str(path), f"has a non-numeric {what} entry ({exc})") from None
    if not np.isfinite(values).all():
        bad = tokens[int(np.flatnonzero(~np.isfinite(values))[0])].decode("ascii")
        shown = bad if len(bad) <= 40 else f"{bad[:20]}...({len(bad)} characters)"
        raise InstanceError("file", str(path), f"has a non-finite {what} entry {shown!r} "
                            "(infinite, NaN or too large for a 64-bit float)")
    return values


def _size(token: str, path: Path) -> int:
    try:
        n = int(token)
    except ValueError:
        shown = token if len(token) <= 40 else f"{token[:40]}..."
        raise InstanceError("file", str(path), f"must start with the size n, not {shown!r}"
                            ) from None
    if n < 1:
        raise InstanceError("file", str(path), f"has n = {n}, must be at least 1")
    return n


def read_dat(path: str | Path) -> QAP:
    """Parse a QAPLIB ``.dat`` file into :class:`QAP`.

    Parameters
    ----------
    path : str or pathlib.Path
        The file: the size n, then the n x n matrices A and B.

    Returns
    -------
    QAP
        The two matrices.

    Raises
    ------
    dmlopt.errors.ModelTooLargeError
        The header's n needs more than the size limits allow (checked before anything is
        allocated).
    dmlopt.errors.InstanceError
        Not an ASCII file, a header that is not a size, a count of entries other than 2 n^2
        (the message gives the count), a non-numeric or non-finite entry.
    """
    path = Path(path)
    data = _read_text(path)
    n, count = _header(data, path, "file")
    if count != 1 + 2 * n * n:
        raise InstanceError("file", str(path), f"has {count - 1} matrix entries, "
                            f"expected 2*n*n = {2 * n * n} for n = {n}")
    values = _numbers(data.split()[1:], path, "matrix")
    return QAP(path.stem, values[: n * n].reshape(n, n), values[n * n:].reshape(n, n))


def read_sln(path: str | Path) -> tuple[float, list[int]]:
    """Parse a QAPLIB ``.sln`` file.

    Parameters
    ----------
    path : str or pathlib.Path
        The file: n, the objective, then a permutation of 1..n (or 0..n-1).

    Returns
    -------
    tuple of (float, list of int)
        The objective (finite, >= 0) and the 0-based permutation p, module i -> p[i].

    Raises
    ------
    dmlopt.errors.InstanceError
        Not an ASCII file, a count of entries other than n + 2 (the message gives the count), a
        non-finite or negative objective, or no permutation.
    """
    path = Path(path)
    data = _read_text(path)
    if _count_tokens(data) < 2:
        raise InstanceError("file", str(path), "must hold n and the objective")
    n, count = _header(data, path, "solution")
    if count != 2 + n:
        raise InstanceError("file", str(path), f"has {count - 2} permutation entries, "
                            f"expected n = {n}")
    tokens = data.split()
    objective = float(_numbers(tokens[1:2], path, "objective")[0])
    if objective < 0:
        raise InstanceError("file", str(path), f"has the objective {objective:g}, a QAP of "
                            "non-negative matrices has an objective >= 0")
    perm = _numbers(tokens[2:], path, "permutation")
    if not (perm == np.round(perm)).all() or (np.abs(perm) > n).any():
        raise InstanceError("file", str(path), f"permutation is not a permutation of 1..{n}")
    values = sorted(perm.astype(int))
    if values == list(range(n)):  # QAPLIB's tai40a.sln is 0-based
        return objective, [int(x) for x in perm]
    if values != list(range(1, n + 1)):
        raise InstanceError("file", str(path), f"permutation is not a permutation of 1..{n}")
    return objective, [int(x) - 1 for x in perm]


def _matching(sln: Path, perm: list[int], qap: QAP) -> None:
    """Refuse a ``.sln`` whose size is not its ``.dat``'s."""
    if len(perm) != qap.n:
        raise InstanceError("file", str(sln), f"has n = {len(perm)}, its .dat file has "
                            f"n = {qap.n}")


def _qualifies(b: np.ndarray) -> bool:
    return bool((b == b.T).all() and (np.diag(b) == 0).all() and (b >= 0).all())


def to_instance(qap: QAP):
    """The TAP instance (K = 1) of a QAP: M = A, D = B, or swapped when only A qualifies as D."""
    from dmlopt.models.tap import Instance
    from dmlopt.validation import parse

    if (qap.A < 0).any():
        raise InstanceError("file", qap.name, "has a negative flow entry (TAP needs M >= 0)")
    if _qualifies(qap.B):
        m, d, swapped = qap.A, qap.B, False
    elif _qualifies(qap.A) and (qap.B >= 0).all():
        m, d, swapped = qap.B, qap.A, True
    else:
        raise InstanceError("file", qap.name, "has no symmetric, non-negative matrix with a "
                            "zero diagonal to serve as D")
    name = f"qaplib-{qap.name}" + ("-swapped" if swapped else "")
    return parse(Instance, {"name": name, "M": m.tolist(), "D": d.tolist(), "K": 1})


def _resolve(name_or_path: str | Path, suffix: str) -> Path:
    path = Path(name_or_path)
    if path.suffix == suffix and path.exists():
        return path
    if path.suffix in (".dat", ".sln") and path.with_suffix(suffix).exists():
        return path.with_suffix(suffix)
    shipped = resources.files("dmlopt.data").joinpath("qaplib", f"{path.stem}{suffix}")
    if shipped.is_file():
        return Path(str(shipped))
    raise InstanceError("qaplib", str(name_or_path), f"is neither a {suffix} file nor a shipped "
                        f"QAPLIB name (shipped: {', '.join(names())})")


def load(name_or_path: str | Path):
    """A shipped instance by name (``"nug12"``) or a ``.dat`` path, as a TAP instance."""
    return to_instance(read_dat(_resolve(name_or_path, ".dat")))


def solution(name_or_path: str | Path) -> tuple[float, list[int]]:
    """The published optimum and assignment (module -> VM) of a shipped name or ``.sln`` path.

    The permutation is inverted when the instance's matrices were swapped (see module docs).
    """
    sln = _resolve(name_or_path, ".sln")
    objective, perm = read_sln(sln)
    qap = read_dat(_resolve(name_or_path, ".dat"))
    _matching(sln, perm, qap)
    if not _qualifies(qap.B):
        inverse = [0] * len(perm)
        for i, j in enumerate(perm):
            inverse[j] = i
        perm = inverse
    return objective, perm


def best_known(name_or_path: str | Path) -> float:
    """The reference value of an instance: the smallest of the ``.sln`` objective and the cost of
    its permutation read as facility -> location and as location -> facility.

    Some published files disagree with themselves (see ``data/qaplib/README.md``: kra32 lists
    88900, its permutation costs the optimum 88700); the smallest value is a cost that a
    permutation reaches or the published claim, whichever is lower.
    """
    sln = _resolve(name_or_path, ".sln")
    objective, perm = read_sln(sln)
    qap = read_dat(_resolve(name_or_path, ".dat"))
    _matching(sln, perm, qap)
    p = np.asarray(perm)
    costs = [float((qap.A * qap.B[np.ix_(q, q)]).sum()) for q in (p, np.argsort(p))]
    return min(objective, *costs)


def names() -> list[str]:
    """Names of the shipped QAPLIB instances."""
    root = resources.files("dmlopt.data").joinpath("qaplib")
    if not root.is_dir():
        return []
    return sorted(p.name[:-4] for p in root.iterdir() if p.name.endswith(".dat"))

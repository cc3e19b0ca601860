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

Files are data: parsed as numbers only (no eval), the size is checked before anything large is
allocated (:data:`MAX_N`, :data:`MAX_FILE_BYTES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from dmlopt.errors import InstanceError

#: largest QAP size read
MAX_N = 1000
#: largest file read, in bytes
MAX_FILE_BYTES = 64 * 2**20


@dataclass(frozen=True)
class QAP:
    """A parsed ``.dat`` file: ``A`` (flows) and ``B`` (distances), both ``n x n``."""

    name: str
    A: np.ndarray
    B: np.ndarray

    @property
    def n(self) -> int:
        return int(self.A.shape[0])


def _read_tokens(path: Path) -> list[str]:
    """The whitespace-separated tokens of a regular file of at most :data:`MAX_FILE_BYTES`
    (read by :func:`dmlopt.io.read_bytes`: a FIFO or a device is refused, never waited on)."""
    from dmlopt.io import read_bytes

    data = read_bytes(path, MAX_FILE_BYTES)
    try:
        return data.decode("ascii").split()
    except UnicodeDecodeError as exc:
        raise InstanceError("file", str(path), f"cannot be read ({exc})") from None


def _numbers(tokens: list[str], path: Path, what: str) -> np.ndarray:
    try:
        values = np.array([float(t) for t in tokens], dtype=float)
    except ValueError as exc:
        raise InstanceError("file", str(path), f"has a non-numeric {what} entry ({exc})") from None
    if not np.isfinite(values).all():
        raise InstanceError("file", str(path), f"has a non-finite {what} entry")
    return values


def _size(token: str, path: Path) -> int:
    try:
        n = int(token)
    except ValueError:
        raise InstanceError("file", str(path), f"must start with the size n, not {token!r}"
                            ) from None
    if not 1 <= n <= MAX_N:
        raise InstanceError("file", str(path), f"has n = {n}, outside 1..{MAX_N}")
    return n


def read_dat(path: str | Path) -> QAP:
    """Parse a QAPLIB ``.dat`` file into :class:`QAP` (sizes checked before allocation)."""
    path = Path(path)
    tokens = _read_tokens(path)
    if not tokens:
        raise InstanceError("file", str(path), "is empty")
    n = _size(tokens[0], path)
    if len(tokens) != 1 + 2 * n * n:
        raise InstanceError("file", str(path), f"has {len(tokens) - 1} matrix entries, "
                            f"expected 2*n*n = {2 * n * n} for n = {n}")
    values = _numbers(tokens[1:], path, "matrix")
    return QAP(path.stem, values[: n * n].reshape(n, n), values[n * n:].reshape(n, n))


def read_sln(path: str | Path) -> tuple[float, list[int]]:
    """Parse a QAPLIB ``.sln`` file: (objective, 0-based permutation p, module i -> p[i])."""
    path = Path(path)
    tokens = _read_tokens(path)
    if len(tokens) < 2:
        raise InstanceError("file", str(path), "must hold n and the objective")
    n = _size(tokens[0], path)
    if len(tokens) != 2 + n:
        raise InstanceError("file", str(path), f"has {len(tokens) - 2} permutation entries, "
                            f"expected n = {n}")
    objective = float(_numbers(tokens[1:2], path, "objective")[0])
    perm = _numbers(tokens[2:], path, "permutation")
    if not (perm == np.round(perm)).all():
        raise InstanceError("file", str(path), f"permutation is not a permutation of 1..{n}")
    values = sorted(perm.astype(int))
    if values == list(range(n)):  # QAPLIB's tai40a.sln is 0-based
        return objective, [int(x) for x in perm]
    if values != list(range(1, n + 1)):
        raise InstanceError("file", str(path), f"permutation is not a permutation of 1..{n}")
    return objective, [int(x) - 1 for x in perm]


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
    objective, perm = read_sln(_resolve(name_or_path, ".sln"))
    qap = read_dat(_resolve(name_or_path, ".dat"))
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
    objective, perm = read_sln(_resolve(name_or_path, ".sln"))
    qap = read_dat(_resolve(name_or_path, ".dat"))
    p = np.asarray(perm)
    costs = [float((qap.A * qap.B[np.ix_(q, q)]).sum()) for q in (p, np.argsort(p))]
    return min(objective, *costs)


def names() -> list[str]:
    """Names of the shipped QAPLIB instances."""
    root = resources.files("dmlopt.data").joinpath("qaplib")
    if not root.is_dir():
        return []
    return sorted(p.name[:-4] for p in root.iterdir() if p.name.endswith(".dat"))

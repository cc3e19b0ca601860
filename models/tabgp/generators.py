"""TABGP (paper 004): the generators (er: section 4.1; drift)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pydantic

from dmlopt.contract import Generator, Options, Size
from dmlopt.models.tabgp.instance import Instance
from dmlopt.validation import spec_error

# --------------------------------------------------------------------------------------------
# generators


def capacity(a: float, n: int, l: int) -> int:
    """The capacity ``k = ceil(a n / l)`` of augmentation ``a``, at most n (a cluster never
    holds more than the n vertices; ``a >= l`` gives n without forming ``a n``, which may
    overflow a float).

    Parameters
    ----------
    a : float
        Augmentation, at least 1.
    n, l : int
        Vertices and clusters.

    Returns
    -------
    int
        The capacity, in ``ceil(n / l)..n``.

    References
    ----------
    Paper 004 (Figiel, Nichterlein, Schmid), section 1: k = (1 + eps) n / l.
    """
    return n if a >= l else min(n, math.ceil(a * n / l))


def generate_er(
    *, seed: int = 0, n: int = 12, p: float = 0.5, tau: int = 3, l: int = 4, a: float = 1.0,
    alpha: float = 3.0,
) -> Instance:
    """The paper's synthetic workload (section 4.1): tau independent G(n, p) graphs.

    Parameters
    ----------
    seed : int, optional
        Seed of the graphs (default 0).
    n : int, optional
        Vertices (default 12, the paper's).
    p : float, optional
        Edge probability in [0, 1] (default 0.5; the paper sweeps 0.1..0.9).
    tau : int, optional
        Time steps (default 3, the paper's).
    l : int, optional
        Clusters (default 4).
    a : float, optional
        Augmentation factor >= 1: cluster size k = ceil(a n / l) (default 1.0, the paper's
        synthetic setting; 2.1 for its real traces).
    alpha : float, optional
        Migration cost per vertex move (default 3.0, the paper's).

    Returns
    -------
    Instance
        Named ``er-n<n>-p<p>-tau<tau>-s<seed>``, unweighted edges.

    References
    ----------
    Paper 004 (Figiel, Nichterlein, Schmid), section 4.1 "Workloads" (synthetic Erdos-Renyi
    workload, alpha = 3, k = ceil(n / l)).

    Examples
    --------
    >>> inst = generate_er(n=6, p=0.5, tau=2, l=2, seed=0)
    >>> inst.n, inst.k, inst.l, len(inst.edges)
    (6, 3, 2, 2)
    """
    if not 0 <= p <= 1:
        raise spec_error("p", p, "must be in [0, 1]")
    if n < 1 or tau < 1 or l < 1:
        raise spec_error("n/tau/l", (n, tau, l), "must be positive")
    if a < 1:
        raise spec_error("a", a, "must be >= 1 (augmentation)")
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, k=1)
    edges = []
    for _ in range(tau):
        keep = rng.random(iu.size) < p
        edges.append([(int(u), int(v)) for u, v in zip(iu[keep], ju[keep], strict=True)])
    k = capacity(a, n, l)
    return Instance(name=f"er-n{n}-p{p:g}-tau{tau}-s{seed}", n=n, edges=edges, l=l, k=k,
                    alpha=alpha)


def _check_drift(n: int, tau: int, l: int, m: int, mix: float, drift: float) -> None:
    """The drift generator's rules (an InstanceError naming the first one broken)."""
    if n < 2 or tau < 1 or l < 1 or m < 0:
        raise spec_error("n/tau/l/m", (n, tau, l, m), "must be positive (n >= 2)")
    if m > n * (n - 1) // 2:
        raise spec_error("m", m, f"exceeds the {n * (n - 1) // 2} possible edges")
    if not (0 <= mix <= 1 and 0 <= drift <= 1):
        raise spec_error("mix/drift", (mix, drift), "must be in [0, 1]")


def _drift_steps(seed: int, n: int, tau: int, l: int, m: int, mix: float, drift: float,
                 weighted: bool) -> Any:
    """Per step of the drift generator: the planted group of every vertex, the m edge keys
    (min x n + max) and the weights (None unless ``weighted``), drawn in one random stream."""
    rng = np.random.default_rng(seed)
    group = rng.permutation(n) % l
    for t in range(tau):
        if t:
            movers = rng.random(n) < drift
            group[movers] = rng.integers(0, l, movers.sum())
        members = [np.flatnonzero(group == g) for g in range(l)]
        if mix == 0 and m > _reachable(members, n):
            raise spec_error("m", m, f"exceeds the {_reachable(members, n)} edges mix = 0 can "
                             f"draw at step {t} (pairs inside a group of the drawn groups, or "
                             "at a vertex alone in its group)")
        keys = np.empty(0, dtype=np.int64)
        while keys.size < m:
            need = (m - keys.size) * 2 + 16
            u = rng.integers(0, n, need)
            v = rng.integers(0, n, need)
            inside = rng.random(need) >= mix
            for g in range(l):
                sel = inside & (group[u] == g)
                if sel.any() and members[g].size > 1:
                    v[sel] = members[g][rng.integers(0, members[g].size, sel.sum())]
            ok = u != v
            new = np.minimum(u[ok], v[ok]) * n + np.maximum(u[ok], v[ok])
            keys = np.concatenate([keys, new])
            _, first = np.unique(keys, return_index=True)
            keys = keys[np.sort(first)]
        wts = (np.floor(np.exp(rng.uniform(0, math.log(100), m))).tolist() if weighted
               else None)
        yield group.copy(), keys[:m], wts


def planted_groups(*, seed: int = 0, n: int = 1000, tau: int = 10, l: int = 16, m: int = 5000,
                   mix: float = 0.1, drift: float = 0.05, weighted: bool = False,
                   **_: Any) -> list[list[int]]:
    """The planted group of every vertex at every step of :func:`generate_drift` with the same
    arguments (the groups the instance's edges were drawn from; a group may hold more than the
    capacity k).

    Parameters
    ----------
    seed, n, tau, l, m, mix, drift, weighted
        As for :func:`generate_drift` (other keywords, such as ``a`` and ``alpha``, do not
        change the groups and are ignored).

    Returns
    -------
    list of list of int
        ``groups[t][v]``: the group of vertex v at step t, in 0..l-1.

    Raises
    ------
    InstanceError
        A parameter or the seed breaks the generator's rules (named with its value).
    ModelTooLargeError
        The generator's size estimate is above the size limits in force.

    References
    ----------
    Ours: the ground truth of the drift generator, a scalable stand-in for paper 004's
    section 4.1 traces.
    """
    from dmlopt.api import check_seed
    from dmlopt.contract import check_run_size, limits_from
    from dmlopt.validation import parse

    seed = check_seed(seed)
    params = parse(DriftParams, {"n": n, "tau": tau, "l": l, "m": m, "mix": mix,
                                 "drift": drift, "weighted": weighted})
    n, tau, l, m = params.n, params.tau, params.l, params.m
    check_run_size("the drift groups with these parameters", estimate_drift(params),
                   limits_from())
    _check_drift(n, tau, l, m, mix, drift)
    return [g.tolist() for g, _, _ in _drift_steps(seed, n, tau, l, m, mix, drift, weighted)]


def generate_drift(
    *, seed: int = 0, n: int = 1000, tau: int = 10, l: int = 16, m: int = 5000,
    mix: float = 0.1, drift: float = 0.05, a: float = 1.0, alpha: float = 3.0,
    weighted: bool = False,
) -> Instance:
    """Clustered communication that drifts: l planted groups, ``m`` edges per step.

    Each step draws ``m`` distinct edges, a fraction ``1 - mix`` inside a vertex's current group
    and the rest uniformly at random; between steps a fraction ``drift`` of the vertices joins
    another group. With ``weighted`` every edge gets an integer weight 1..100 (log-uniform).

    Parameters
    ----------
    seed : int, optional
        Seed of the groups, edges, moves and weights (default 0).
    n : int, optional
        Vertices, >= 2 (default 1000).
    tau : int, optional
        Time steps (default 10).
    l : int, optional
        Clusters, and planted groups (default 16).
    m : int, optional
        Distinct edges per step (default 5000).
    mix : float, optional
        Share of edges drawn uniformly instead of inside a group, in [0, 1] (default 0.1).
    drift : float, optional
        Share of vertices that change group between steps, in [0, 1] (default 0.05).
    a : float, optional
        Augmentation factor >= 1: cluster size k = ceil(a n / l) (default 1.0).
    alpha : float, optional
        Migration cost per vertex move (default 3.0).
    weighted : bool, optional
        Integer edge weights 1..100, log-uniform (default False).

    Returns
    -------
    Instance
        Named after its parameters; a workload at scale with a planted good partition.

    References
    ----------
    Ours: a scalable stand-in for the clustered, slowly changing traces of paper 004's section
    4.1 (Facebook, HPC, LLM), with the paper's alpha = 3.
    """
    _check_drift(n, tau, l, m, mix, drift)
    edges: list[list[tuple[int, int]]] = []
    weights: list[list[float]] | None = [] if weighted else None
    for _, keys, wts in _drift_steps(seed, n, tau, l, m, mix, drift, weighted):
        edges.append([(int(x // n), int(x % n)) for x in keys])
        if weights is not None:
            weights.append(wts)
    k = capacity(a, n, l)
    return Instance(name=f"drift-n{n}-tau{tau}-l{l}-m{m}-s{seed}", n=n, edges=edges,
                    weights=weights, l=l, k=k, alpha=alpha)


def _reachable(members: list[np.ndarray], n: int) -> int:
    """Distinct edges the drift generator's in-group draws can reach: the pairs inside each
    group, and every pair at a vertex alone in its group (its partner is drawn uniformly)."""
    alone = sum(1 for g in members if g.size == 1)
    inside = sum(g.size * (g.size - 1) // 2 for g in members)
    return inside + alone * (n - 1) - alone * (alone - 1) // 2


def _fraction(value: object) -> object:
    """A probability or fraction: the rule said with its interval (``p: 2 must be in [0, 1]``)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and not 0 <= value <= 1:
        raise ValueError(f"{value!r} must be in [0, 1]")
    return value


class ErParams(Options):
    """Parameters of the ``er`` generator (section 4.1)."""

    n: int = pydantic.Field(default=12, ge=1, description="number of vertices")
    p: float = pydantic.Field(default=0.5, ge=0, le=1, description="edge probability of each "
                              "step's G(n, p)")
    tau: int = pydantic.Field(default=3, ge=1, description="number of time steps")
    l: int = pydantic.Field(default=4, ge=1, description="number of clusters")
    a: float = pydantic.Field(default=1.0, ge=1, description="augmentation: capacity k = "
                              "ceil(a n / l), at most n")
    alpha: float = pydantic.Field(default=3.0, ge=0, description="migration cost per vertex "
                                  "that changes cluster")

    _p = pydantic.field_validator("p", mode="before")(_fraction)


class DriftParams(Options):
    """Parameters of the ``drift`` generator (planted communities that drift, ours)."""

    n: int = pydantic.Field(default=1000, ge=2, description="number of vertices")
    tau: int = pydantic.Field(default=10, ge=1, description="number of time steps")
    l: int = pydantic.Field(default=16, ge=1, description="number of clusters (and planted "
                            "groups)")
    m: int = pydantic.Field(default=5000, ge=0, description="edges per step (at most "
                            "n (n - 1) / 2)")
    mix: float = pydantic.Field(default=0.1, ge=0, le=1, description="fraction of the edges "
                                "drawn uniformly (the rest inside a group)")
    drift: float = pydantic.Field(default=0.05, ge=0, le=1, description="fraction of the "
                                  "vertices joining another group between steps")
    a: float = pydantic.Field(default=1.0, ge=1, description="augmentation: capacity k = "
                              "ceil(a n / l), at most n")
    alpha: float = pydantic.Field(default=3.0, ge=0, description="migration cost per vertex "
                                  "that changes cluster")
    weighted: bool = pydantic.Field(default=False, description="integer edge weights 1..100 "
                                    "(log-uniform) instead of 1")

    _fractions = pydantic.field_validator("mix", "drift", mode="before")(_fraction)


#: bytes of one edge held as a Python tuple in an edge list, and operations to create and
#: validate it (interpreted code: about a microsecond)
_EDGE_BYTES, _EDGE_OPS = 200.0, 1000.0


def estimate_er(params: ErParams) -> Size:
    """All n (n - 1) / 2 pairs drawn per step (index arrays, uniforms), p of them kept."""
    n, tau = float(params.n), float(params.tau)
    pairs = n * (n - 1) / 2
    edges = params.p * pairs * tau
    return Size(25 * pairs + _EDGE_BYTES * edges + 8 * n,
                6 * pairs * tau + _EDGE_OPS * edges + n)


def estimate_drift(params: DriftParams) -> Size:
    """Per step: group members (l x n), candidate draws per group (about 3 l x 4m), m edges."""
    n, tau, l, m = float(params.n), float(params.tau), float(params.l), float(params.m)
    return Size(_EDGE_BYTES * tau * m + 100 * l + 64 * n + 160 * m,
                tau * (3 * l * (4 * m + 32) + l * n + _EDGE_OPS * m + 20 * n))


GENERATORS: dict[str, Generator] = {
    "er": Generator(generate_er, ErParams, estimate_er,
                    "the paper's synthetic workload: tau independent G(n, p), k = ceil(a n / l)"),
    "drift": Generator(generate_drift, DriftParams, estimate_drift,
                       "planted communities drifting over time, m edges per step (ours)"),
}


#: a tiny ``dmlopt.generate`` spec, 6 vertices, 2 steps, 2 clusters: solves in about a
#: second with every formulation; tests/core/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "er", "n": 6, "p": 0.5, "tau": 2, "l": 2}

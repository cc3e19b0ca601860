"""TAP test helpers: instance families with structure QAPLIB has but the shipped set does not cover
much, for robustness checks of ``rts``, and a small study driver.

Families (K = 1, m = n, so each is a plain QAP; written here, not taken from the package):

* ``tree``: chr-like (Christofides and Benavent 1989): the flow matrix is the adjacency of a
  random spanning tree (random Pruefer code) with integer weights in [1, 100], the distance
  matrix is random symmetric in [1, 100].
* ``sparse``: els-like (Elshafei 1977): sparse flows (each pair with probability ``density``,
  heavy-tailed weights, a few facilities without flow) between the cells of a near-square grid at
  Manhattan distance.
* ``cube``: esc-like (Eschermann and Wunderlich 1990): n = 2^d locations at Hamming distance, a
  sparse 0/1/2 flow matrix on the first ``active`` facilities, the others without any flow (big
  plateaus of equal cost).

Imported as ``from tests.helpers import tap`` (tests/ is a package). Run as a script for the
robustness study (``python tests/helpers/tap.py --help``): rts over seeds against a long run of
itself; the gap is to the best value any run found.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import dmlopt


def tree_flows(rng: np.random.Generator, n: int) -> np.ndarray:
    """Weighted adjacency of a uniformly random labelled tree (Pruefer code), weights 1..100."""
    f = np.zeros((n, n))
    if n < 2:
        return f
    code = rng.integers(0, n, n - 2)
    degree = np.ones(n, dtype=int)
    for x in code:
        degree[x] += 1
    for x in code:
        leaf = int(np.flatnonzero(degree == 1)[0])
        w = int(rng.integers(1, 101))
        f[leaf, x] = f[x, leaf] = w
        degree[leaf] -= 1
        degree[x] -= 1
    u, v = np.flatnonzero(degree == 1)
    f[u, v] = f[v, u] = int(rng.integers(1, 101))
    return f


def random_distance(rng: np.random.Generator, n: int, high: int = 100) -> np.ndarray:
    """Random symmetric integer distances in [1, high], zero diagonal."""
    d = np.triu(rng.integers(1, high + 1, (n, n)), 1).astype(float)
    return d + d.T


def grid_distance(n: int) -> np.ndarray:
    """Manhattan distances between the first n cells of a near-square grid."""
    w = math.ceil(math.sqrt(n))
    xy = np.array([(k // w, k % w) for k in range(n)], dtype=float)
    return np.abs(xy[:, None, :] - xy[None, :, :]).sum(axis=2)


def sparse_flows(rng: np.random.Generator, n: int, density: float = 0.15,
                 isolated: float = 0.1) -> np.ndarray:
    """Symmetric sparse flows with heavy-tailed weights; a fraction of facilities has none."""
    mask = np.triu(rng.random((n, n)) < density, 1)
    weights = np.floor(np.exp(rng.normal(5.0, 2.0, (n, n)))) + 1
    f = np.where(mask, weights, 0.0)
    f = f + f.T
    none = rng.permutation(n)[: int(isolated * n)]
    f[none, :] = 0.0
    f[:, none] = 0.0
    return f


def cube_instance(rng: np.random.Generator, d: int, active: int) -> tuple[np.ndarray, np.ndarray]:
    """esc-like: Hamming distance on {0,1}^d and sparse 0/1/2 flows among ``active`` facilities."""
    n = 2**d
    codes = np.arange(n)
    dist = np.array([[bin(int(a ^ b)).count("1") for b in codes] for a in codes], dtype=float)
    f = np.zeros((n, n))
    sub = np.triu(rng.choice([0.0, 0.0, 0.0, 1.0, 1.0, 2.0], (active, active)), 1)
    f[:active, :active] = sub + sub.T
    perm = rng.permutation(n)
    return f[np.ix_(perm, perm)], dist


def instance(family: str, n: int, seed: int):
    """A TAP instance (K = 1) of a family: ``tree``, ``sparse`` or ``cube`` (n rounded down to a
    power of two, half of the facilities active)."""
    rng = np.random.default_rng(seed)
    if family == "tree":
        f, d = tree_flows(rng, n), random_distance(rng, n)
    elif family == "sparse":
        f, d = sparse_flows(rng, n), grid_distance(n)
    elif family == "cube":
        dim = max(1, int(math.log2(n)))
        f, d = cube_instance(rng, dim, max(2, 2**dim // 2))
    else:
        raise ValueError(f"unknown family {family!r}")
    return dmlopt.load({"problem": "tap", "M": f.tolist(), "D": d.tolist(), "K": 1})


def _study(argv: list[str] | None = None) -> None:
    """Robustness study: rts with the default budget over seeds, and a long run (``--long`` times
    the budget); gap of each run to the best value any run found."""
    from dmlopt.heuristics.tap import robust_tabu as rts

    ap = argparse.ArgumentParser(description=_study.__doc__)
    ap.add_argument("--families", default="tree,sparse,cube")
    ap.add_argument("--sizes", default="20,30,40,60")
    ap.add_argument("--instances", type=int, default=2, help="instances per family and size")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--long", type=float, default=10.0)
    args = ap.parse_args(argv)
    print("family  n  inst  best-value  long-run  gaps of the default runs (%)  spread")
    worst = 0.0
    for family in args.families.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            for k in range(args.instances):
                inst = instance(family, n, 1000 * n + k)
                budget = rts.default_time_limit(inst.n)
                costs = [rts.solve(inst, s, rts.options(clock="cpu"))[1].cost
                         for s in range(args.seeds)]
                long = rts.solve(inst, 99, rts.options(clock="cpu",
                                                       time_limit=args.long * budget))[1].cost
                best = min(costs + [long])
                gaps = [100 * (c - best) / best if best else c for c in costs]
                lg = 100 * (long - best) / best if best else long
                worst = max(worst, *gaps)
                print(f"{family:6s} {inst.n:3d} {k:4d}  {best:10.6g}  {lg:8.3f}  "
                      + " ".join(f"{g:6.3f}" for g in gaps)
                      + f"  {max(gaps) - min(gaps):6.3f}", flush=True)
    print(f"worst gap of a default run: {worst:.3f} %")


if __name__ == "__main__":
    _study()

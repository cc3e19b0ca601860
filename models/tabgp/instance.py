"""TABGP (paper 004): the instance, the solution and the evaluator (section 1)."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Literal

import numpy as np
import pydantic

from dmlopt.evaluation import Evaluation
from dmlopt.models.tabgp.constants import MAX_WEIGHT
from dmlopt.validation import Frozen, rule


class Instance(Frozen):
    """A TABGP instance: ``edges[t]`` is the edge list of step t (0-based), vertices 0..n-1."""

    problem: Literal["tabgp"] = "tabgp"
    name: str = ""
    n: int = pydantic.Field(ge=1, description="number of vertices")
    edges: list[list[tuple[int, int]]] = pydantic.Field(
        min_length=1, description="edge list per time step; tau = len(edges)"
    )
    weights: list[list[float]] | None = pydantic.Field(
        default=None, description="positive weight of every edge, same shape as edges"
    )
    l: int = pydantic.Field(ge=1, description="number of clusters")
    k: int = pydantic.Field(ge=1, description="cluster capacity")
    alpha: float = pydantic.Field(ge=0, le=MAX_WEIGHT, allow_inf_nan=False,
                                  description="migration cost")

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        if self.k * self.l < self.n:
            raise rule("k", self.k, f"is too small: k*l = {self.k * self.l} < n = {self.n} "
                       "(no partition of the vertices fits)")
        if self.weights is not None and len(self.weights) != len(self.edges):
            raise rule("weights", f"{len(self.weights)} steps",
                       f"must have one list per step ({len(self.edges)})")
        # the steps that may break a rule are found for all steps at once (numpy), then checked
        # one by one in order: the same first error as a step-by-step check, without a numpy
        # call per step (a file may hold millions of one-edge steps)
        for t in self._suspect_steps():
            self._check_step(t)
        if self.weights is not None:
            for t, edges in enumerate(self.edges):
                if not edges and self.weights[t]:
                    raise rule(f"weights[{t}]", f"{len(self.weights[t])} weights",
                               "must be empty for a step without edges")
        return self

    def _check_step(self, t: int) -> None:
        """The rules of step t's edges and weights (raises on the first broken one)."""
        edges = self.edges[t]
        arr = np.asarray(edges, dtype=np.int64)
        bad = np.flatnonzero((arr < 0).any(axis=1) | (arr >= self.n).any(axis=1))
        if bad.size:
            j = int(bad[0])
            raise rule(f"edges[{t}][{j}]", edges[j],
                       f"names a vertex outside 0..{self.n - 1}")
        loops = np.flatnonzero(arr[:, 0] == arr[:, 1])
        if loops.size:
            j = int(loops[0])
            raise rule(f"edges[{t}][{j}]", edges[j], "is a self loop")
        # (min, max) rows, not min * n + max: that key overflows int64 for n > 3e9
        pairs = np.stack([arr.min(axis=1), arr.max(axis=1)], axis=1)
        _, inverse, counts = np.unique(pairs, axis=0, return_inverse=True,
                                       return_counts=True)
        if (counts > 1).any():
            js = np.flatnonzero(inverse.reshape(-1) == np.flatnonzero(counts > 1)[0])
            raise rule(f"edges[{t}][{int(js[1])}]", edges[int(js[1])],
                       f"duplicates edges[{t}][{int(js[0])}] (edges are undirected)")
        if self.weights is not None:
            w = self.weights[t]
            if len(w) != len(edges):
                raise rule(f"weights[{t}]", f"{len(w)} weights",
                           f"must have one weight per edge ({len(edges)})")
            wa = np.asarray(w, dtype=float)
            badw = np.flatnonzero(~(np.isfinite(wa) & (wa > 0) & (wa <= MAX_WEIGHT)))
            if badw.size:
                j = int(badw[0])
                raise rule(f"weights[{t}][{j}]", w[j], "must be positive, finite and at "
                           f"most {MAX_WEIGHT:g}")

    def _suspect_steps(self) -> list[int]:
        """Steps with edges where a rule may fail (a superset: :meth:`_check_step` decides)."""
        lens = np.fromiter((len(e) for e in self.edges), dtype=np.int64, count=self.tau)
        if not lens.any():
            return []
        try:
            flat = np.asarray([uv for edges in self.edges for uv in edges],
                              dtype=np.int64).reshape(-1, 2)
        except OverflowError:
            raise rule("edges", "an integer", "is outside the 64-bit range") from None
        step = np.repeat(np.arange(self.tau), lens)
        bad = ((flat < 0) | (flat >= min(self.n, 2**63 - 1))).any(axis=1)
        bad |= flat[:, 0] == flat[:, 1]
        lo, hi = flat.min(axis=1), flat.max(axis=1)
        order = np.lexsort((hi, lo, step))
        so, lo, hi = step[order], lo[order], hi[order]
        same = (so[1:] == so[:-1]) & (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
        suspects = set(step[bad].tolist()) | set(so[1:][same].tolist())
        if self.weights is not None:
            wlens = np.fromiter((len(w) for w in self.weights), dtype=np.int64, count=self.tau)
            suspects |= set(np.flatnonzero(wlens != lens).tolist())
            wa = np.asarray([x for ws in self.weights for x in ws], dtype=float)
            badw = ~(np.isfinite(wa) & (wa > 0) & (wa <= MAX_WEIGHT))
            suspects |= set(np.repeat(np.arange(self.tau), wlens)[badw].tolist())
        return sorted(t for t in suspects if lens[t] > 0)

    @property
    def tau(self) -> int:
        return len(self.edges)

    @cached_property
    def arrays(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per step ``(u, v, w)`` as numpy arrays (int64, int64, float64)."""
        out = []
        for t, edges in enumerate(self.edges):
            arr = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
            if self.weights is None:
                w = np.ones(len(arr))
            else:
                w = np.asarray(self.weights[t], dtype=float)
            out.append((arr[:, 0].copy(), arr[:, 1].copy(), w))
        return out

    def weight(self, t: int, j: int) -> float:
        return 1.0 if self.weights is None else float(self.weights[t][j])


class Solution(Frozen):
    """Cluster of every vertex at every step: ``assignment[t][v]`` in 0..l-1."""

    problem: Literal["tabgp"] = "tabgp"
    assignment: list[list[int]]


def cost_parts(instance: Instance, assign: np.ndarray) -> tuple[float, int]:
    """(weighted cut summed over steps, number of migrations) of a tau x n assignment array."""
    cut = 0.0
    for t, (u, v, w) in enumerate(instance.arrays):
        a = assign[t]
        cut += float(w[a[u] != a[v]].sum())
    migrations = int((assign[1:] != assign[:-1]).sum()) if instance.tau > 1 else 0
    return cut, migrations


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """Objective s of section 1, feasibility (shape, labels, capacity k) and the cost parts."""
    violations: list[str] = []
    rows = solution.assignment
    if len(rows) != instance.tau:
        violations.append(f"assignment: {len(rows)} steps, the instance has {instance.tau}")
        return Evaluation(math.inf, False, tuple(violations))
    for t, row in enumerate(rows):
        if len(row) != instance.n:
            violations.append(f"assignment[{t}]: {len(row)} vertices, the instance has "
                              f"{instance.n}")
    if violations:
        return Evaluation(math.inf, False, tuple(violations))
    assign = np.asarray(rows, dtype=np.int64).reshape(instance.tau, instance.n)
    bad = np.argwhere((assign < 0) | (assign >= instance.l))
    for t, v in bad[:10]:
        violations.append(f"assignment[{t}][{v}]: {int(assign[t, v])} is not a cluster "
                          f"0..{instance.l - 1}")
    if bad.size:
        return Evaluation(math.inf, False, tuple(violations))
    worst = 0
    for t in range(instance.tau):
        # the used labels only: an array of l counters would let l drive the allocation
        labels, sizes = np.unique(assign[t], return_counts=True)
        worst = max(worst, int(sizes.max()))
        for i in np.flatnonzero(sizes > instance.k)[:10]:
            violations.append(f"assignment[{t}]: cluster {int(labels[i])} holds "
                              f"{int(sizes[i])} vertices, above k = {instance.k}")
    cut, migrations = cost_parts(instance, assign)
    migration_cost = instance.alpha * migrations
    return Evaluation(
        objective=cut + migration_cost,
        feasible=not violations,
        violations=tuple(violations),
        metrics={
            "cut_cost": cut,
            "migration_cost": migration_cost,
            "migrations": float(migrations),
            "max_cluster_size": float(worst),
        },
    )

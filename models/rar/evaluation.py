"""RAR (paper 003): the solution and its evaluator (the constraints of section 4, the metrics
of section 6)."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pydantic

from dmlopt.evaluation import Evaluation
from dmlopt.models.rar.constants import SCHEMES
from dmlopt.models.rar.instance import Instance, duration, ring_links, ring_reliability
from dmlopt.validation import Frozen

# --------------------------------------------------------------------------------------------
# solution and evaluator


class Assignment(Frozen):
    """A deployed request: ring, computing nodes, CU ids per node, wavelength, window."""

    ring: list[int] = pydantic.Field(min_length=3, description="ring nodes in cyclic order")
    nodes: list[int] = pydantic.Field(min_length=1, description="computing nodes")
    cus: list[list[int]] = pydantic.Field(description="CU ids used on each computing node")
    wavelength: int = pydantic.Field(ge=0, description="wavelength on every ring link")
    start: int = pydantic.Field(ge=1, description="first slot (1-based)")
    end: int = pydantic.Field(ge=1, description="last slot (inclusive)")


class Solution(Frozen):
    """One entry per request: an :class:`Assignment`, or None if the request is blocked."""

    problem: Literal["rar"] = "rar"
    requests: list[Assignment | None]


def _check_assignment(instance: Instance, j: int, a: Assignment) -> list[str]:
    """Structural rules of one deployed request (section 4.D), empty if it is fine."""
    r = instance.requests[j]
    p = f"requests[{j}]"
    out = []
    n = len(instance.nodes)
    ring = a.ring
    if any(not 0 <= v < n for v in ring):
        return [f"{p}.ring: {ring} names a node outside 0..{n - 1}"]
    if len(set(ring)) != len(ring):
        return [f"{p}.ring: {ring} repeats a node (not a simple cycle)"]
    if not instance.ring_min_nodes <= len(ring) <= instance.ring_max_nodes:
        out.append(f"{p}.ring: {len(ring)} nodes, outside {instance.ring_min_nodes}.."
                   f"{instance.ring_max_nodes}")
    links = ring_links(instance, ring)
    if links is None:
        return out + [f"{p}.ring: {ring} is not a cycle of the network"]
    if r.source not in ring:
        out.append(f"{p}.ring: {ring} does not pass the source {r.source} (eq. 17)")
    if len(set(a.nodes)) != len(a.nodes) or any(v not in ring for v in a.nodes):
        # the per-node rules below index the network by these nodes: stop here
        return out + [f"{p}.nodes: {a.nodes} must be distinct nodes of the ring (eqs. 21-24)"]
    if r.source not in a.nodes:
        out.append(f"{p}.nodes: {a.nodes} lack the source {r.source} (eq. 17)")
    if len(a.nodes) not in r.node_counts:
        out.append(f"{p}.nodes: {len(a.nodes)} computing nodes, allowed {r.node_counts} "
                   "(eqs. 11, 24)")
    if len(a.cus) != len(a.nodes):
        return out + [f"{p}.cus: {len(a.cus)} lists for {len(a.nodes)} computing nodes"]
    if not (r.arrival <= a.start <= a.end <= r.deadline):
        out.append(f"{p}: window [{a.start}, {a.end}] is not inside [t_a, t_d] = "
                   f"[{r.arrival}, {r.deadline}] (eqs. 36-38)")
    gamma = ring_reliability(instance, ring, links)
    if gamma < r.reliability:
        out.append(f"{p}.ring: reliability {gamma:.6f} below r_j = {r.reliability} (eq. 13)")
    for i in links:
        if a.wavelength >= instance.links[i].wavelengths:
            out.append(f"{p}.wavelength: {a.wavelength} does not exist on link {i} "
                       f"({instance.links[i].wavelengths} wavelengths)")
    span = a.end - a.start + 1
    for v, ids in zip(a.nodes, a.cus, strict=True):
        if not ids:
            out.append(f"{p}.cus: node {v} computes with no CU (eq. 16)")
            continue
        if len(set(ids)) != len(ids) or any(not 0 <= c < instance.nodes[v].cus for c in ids):
            out.append(f"{p}.cus: {ids} on node {v} must be distinct ids in "
                       f"0..{instance.nodes[v].cus - 1}")
            continue
        need = duration(instance, j, len(a.nodes), len(ids))
        if span < need:
            out.append(f"{p}: {len(ids)} CUs on node {v} need {need} slots, the window has "
                       f"{span} (eq. 5)")
    return out


def _overloaded(windows: list[tuple[int, int]], limit: int, first: int
                ) -> list[tuple[int, int]]:
    """The first ``first`` slots (ascending) covered by more than ``limit`` of the inclusive
    ``windows`` [start, end], with their counts (a sweep over the window ends)."""
    events: dict[int, int] = {}
    for s_, e_ in windows:
        events[s_] = events.get(s_, 0) + 1
        events[e_ + 1] = events.get(e_ + 1, 0) - 1
    out: list[tuple[int, int]] = []
    times = sorted(events)
    count = 0
    for t0, t1 in zip(times, times[1:], strict=False):
        count += events[t0]
        if count > limit:
            out += [(t, count) for t in range(t0, min(t1, t0 + first - len(out)))]
            if len(out) >= first:
                break
    return out


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """Feasibility (every constraint family of section 4.D), eq. (4) and the paper's metrics.

    Metrics: blocking rate, activated CU ratio, activated wavelength ratio, AOT ratio (eq. 42),
    average reliability and reliability gain (r_ring - r_j) / r_j over deployed requests,
    ``deployed``, ``activated_cus``, ``activated_wavelengths`` and ``objective_<scheme>`` for
    the four schemes of section 4.C.
    """
    nr = len(instance.requests)
    if len(solution.requests) != nr:
        return Evaluation(math.inf, False, (f"requests: {len(solution.requests)} entries, the "
                                            f"instance has {nr}",))
    violations: list[str] = []
    # busy windows per (node, CU id) and per (link, wavelength): what the solution lists, not
    # (CUs x slots) arrays, so the cost follows the file and not the instance's counts
    cu_use: dict[tuple[int, int], list[tuple[int, int]]] = {}
    wl_use: dict[tuple[int, int], list[tuple[int, int]]] = {}
    deployed = 0
    te_ratio = 0.0
    aot = 0.0
    rel_sum = 0.0
    gain_sum = 0.0
    one_minus_gamma = 0.0
    for j, a in enumerate(solution.requests):
        r = instance.requests[j]
        if a is None:
            one_minus_gamma += 1.0  # Gamma_j = 0 for a blocked request (eq. 12)
            continue
        bad = _check_assignment(instance, j, a)
        if bad:
            violations.extend(bad)
            continue
        deployed += 1
        links = ring_links(instance, a.ring)
        assert links is not None
        gamma = ring_reliability(instance, a.ring, links)
        rel_sum += gamma
        gain_sum += (gamma - r.reliability) / r.reliability
        one_minus_gamma += 1.0 - gamma
        te_ratio += a.end / r.deadline
        aot += (r.deadline - a.end) / r.deadline
        for v, ids in zip(a.nodes, a.cus, strict=True):
            for c in ids:
                cu_use.setdefault((v, c), []).append((a.start, a.end))
        for i in links:
            wl_use.setdefault((i, a.wavelength), []).append((a.start, a.end))
    shown: dict[int, int] = {}
    for (v, c), windows in sorted(cu_use.items()):
        left = 5 - shown.get(v, 0)  # the first 5 (CU, slot) cells per node
        for t, k in _overloaded(windows, 1, left) if left > 0 else []:
            violations.append(f"node {v} CU {c} serves {k} requests in slot {t} (eq. 8)")
            shown[v] = shown.get(v, 0) + 1
    for (i, b), windows in sorted(wl_use.items()):
        for t, k in _overloaded(windows, instance.rho, 1):
            violations.append(f"link {i} wavelength {b} carries {k} requests "
                              f"in slot {t}, above rho = {instance.rho} (eq. 9)")
    act_cus = len(cu_use)
    act_wl = len(wl_use)
    blocking = 1.0 - deployed / nr
    zeta = {"MinCU": float(act_cus), "MinW": float(act_wl), "MinT": te_ratio,
            "MaxR": one_minus_gamma}
    objectives = {s: blocking + instance.alpha_of(s) * zeta[s] for s in SCHEMES}
    metrics = {
        "blocking_rate": blocking,
        "deployed": float(deployed),
        "activated_cus": float(act_cus),
        "activated_cu_ratio": act_cus / instance.total_cus,
        "activated_wavelengths": float(act_wl),
        "activated_wavelength_ratio": act_wl / instance.total_wavelengths,
        "aot_ratio": aot / nr,
        "avg_reliability": rel_sum / deployed if deployed else 0.0,
        "reliability_gain": gain_sum / deployed if deployed else 0.0,
    }
    metrics.update({f"objective_{s}": v for s, v in objectives.items()})
    feasible = not violations
    return Evaluation(objectives[instance.scheme] if feasible else math.inf, feasible,
                      tuple(violations), metrics)


def blocked_cost(instance: Instance) -> float:
    """What one blocked request adds to eq. (4) of ``instance`` beyond deploying nothing for it.

    A blocked request raises the blocking term by 1 / |R|; under MaxR it also adds
    ``alpha * 1`` to zeta (Gamma_j = 0, eq. 12), where a deployed request adds ``alpha (1 -
    Gamma_j)``. Under MinCU, MinW and MinT a blocked request adds nothing to zeta. This is the
    unit in which the certified-gap tables state a gap as "blocked requests' worth".

    Parameters
    ----------
    instance : Instance
        The instance (its requests, scheme and alpha, :meth:`Instance.alpha_of`).

    Returns
    -------
    float
        1 / |R|, plus ``instance.alpha_of("MaxR")`` under MaxR.

    References
    ----------
    Paper 003 (Chen et al.), eqs. (4) and (12); the scoring is :func:`evaluate`'s.
    """
    unit = 1.0 / len(instance.requests)
    if instance.scheme == "MaxR":
        unit += instance.alpha_of("MaxR")
    return unit


Plan = tuple[list[int], list[int], int, int]


def assign_cu_ids(instance: Instance, plans: list[Plan | None]) -> list[list[list[int]]]:
    """CU ids for count-based plans: per request (nodes, counts, start, end) or None.

    Per node, requests in order of start take the lowest free ids (interval multicolouring:
    the number of distinct ids equals the peak usage). Raises ``ValueError`` if a node's peak
    exceeds its CUs.
    """
    out: list[list[list[int]]] = [[] for _ in plans]
    per_node: dict[int, list[tuple[int, int, int, int]]] = {}
    for j, plan in enumerate(plans):
        if plan is None:
            continue
        nodes, counts, s, e = plan
        out[j] = [[] for _ in nodes]
        for pos, (v, k) in enumerate(zip(nodes, counts, strict=True)):
            per_node.setdefault(v, []).append((s, e, j, pos, k))  # type: ignore[arg-type]
    for v, items in per_node.items():
        free_at = np.zeros(instance.nodes[v].cus, dtype=np.int64)  # first free slot per CU
        for s, e, j, pos, k in sorted(items):  # type: ignore[misc]
            ids = np.flatnonzero(free_at <= s)[:k]
            if ids.size < k:
                raise ValueError(f"node {v}: more than {instance.nodes[v].cus} CUs in use")
            free_at[ids] = e + 1
            out[j][pos] = [int(c) for c in ids]
    return out

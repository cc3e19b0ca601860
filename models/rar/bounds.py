"""Dual bounds of RAR (paper 003): lower bounds on eq. (4) for every scheme.

``energy`` (:func:`energy_bound`) is an LP over per-request options that drops the time
indexing, the CU ids and the wavelengths of the exact models and keeps what makes requests
block on large instances: CU-slots. A deployed request j with N computing nodes ending by slot
e uses, on each computing node, at least E_j(N, e) = min k d(N, k) CU-slots over the CU counts k
whose duration d(N, k) (eqs. 1, 2, 5) fits in [t_a, e]; those CU-slots lie inside [t_a, e]. For
a set S of nodes (every node, every ring, every cluster of overlapping rings, every request's
reachable nodes) and an interval I = [s, e'] of slots, the CU-slots of the requests placed in I
on S cannot exceed |I| times the activated CUs of S (at most sum_{n in S} |C_n|): an energetic
(interval) relaxation of eq. (8). A request puts at least [s_j in S] + max(0, N - 1 -
|ring \\ S \\ {s_j}|) of its computing nodes in S (eqs. 17, 21-24), minimised over its candidate
rings. The objective is eq. (4): blocking, plus per scheme MinCU's activated CUs (peak >=
mean usage over any interval), MinW's activated wavelengths (every link of a ring carries a
wavelength; a wavelength carries rho requests per slot), MinT's end slots (the option's earliest
end) and MaxR's 1 - reliability (the best candidate ring). Every option relaxes the exact
models' feasible set, so the LP optimum is a lower bound; the value HiGHS reports is moved to
the weak side by :func:`dmlopt.bounds.safe`, and an LP not solved to optimality gives none.

With ``assign`` the LP also places each request's computing nodes (a transportation
relaxation, :func:`_assignment_rows`): per request and node count a ring choice over its
candidate rings, the source computing, the N - 1 others spread over the nodes of the chosen
rings (at most one per node), and per node and interval the CU-slots of the requests inside it
below the interval's length times its activated CUs. The node sets above see a request's
nodes only as the fewest any ring puts in the set; the assignment sees every node's own
capacity, at the price of one column per request, node count and node of its rings.

``node-choice`` (:mod:`dmlopt.models.rar.partial`) keeps integral only what each request
deploys, which nodes compute it and the activated CUs, and relaxes the modes, starts and
wavelengths: a small MIP that on the 6-node network reaches in seconds the bound branch and
bound on ``aggregated`` reaches after minutes. ``mip`` (branch and bound for the time limit) and
``lp`` (root LP) are the generic bounds of
the ``aggregated`` formulation (:mod:`dmlopt.bounds`): stronger on small instances and listed
first, but the formulation exceeds the default size limit on the 38-node network with hundreds
of requests, where :func:`dmlopt.bound` without a method falls through to ``energy``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pydantic

from dmlopt.bounds import lp_relaxation, mip_bound, safe
from dmlopt.contract import Bound, BoundValue, Options, Size
from dmlopt.errors import SolverError
from dmlopt.models.rar.colgen import ColumnsOptions, _estimate_columns, columns_bound
from dmlopt.models.rar.constants import SENSE
from dmlopt.models.rar.instance import Instance, modes


class EnergyOptions(Options):
    """Options of the energetic LP bound."""

    end_step: int = pydantic.Field(2, ge=1, le=10_000,
                                   description="MinT: end slots (MinW: window lengths) are "
                                   "grouped in buckets of this many slots (cost of the "
                                   "bucket's first, CU-slots of its last); 1 is the strongest "
                                   "and largest LP")
    node_sets: bool = pydantic.Field(True, description="add rows for rings, clusters and "
                                     "reachable node sets beside the single nodes")
    assign: bool | None = pydantic.Field(None, description="assign each request's non-source "
                                         "computing nodes to the nodes of its candidate rings "
                                         "(ring choice per node count), with CU-slots per node "
                                         "and interval; None: on under MaxR and MinW, off under "
                                         "MinCU and MinT (where it did not raise the bound)")
    integral: bool = pydantic.Field(False, description="keep each request's acceptance "
                                    "integral (deployed or blocked, its mix of options "
                                    "fractional): a MIP, bounded by HiGHS's dual bound when "
                                    "the time limit stops it")


def _clusters(instance: Instance) -> list[frozenset[int]]:
    """Node sets of the connected components of the rings (rings sharing a node join)."""
    parent = list(range(len(instance.nodes)))

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for ring in instance.rings:
        for v in ring.nodes[1:]:
            parent[find(v)] = find(ring.nodes[0])
    groups: dict[int, set[int]] = {}
    for ring in instance.rings:
        groups.setdefault(find(ring.nodes[0]), set()).update(ring.nodes)
    return [frozenset(g) for g in groups.values()]


def _options(instance: Instance, j: int, step: int) -> list[tuple[int, int, int, float, int]]:
    """Options (N, e_first, e_last, energy per computing node, fewest window slots) of j.

    MinT: ``e_first..e_last`` is a bucket of ``step`` end slots, the energy the fewest CU-slots
    a computing node needs to end by ``e_last``. MinW: a bucket of window lengths L (the last
    field is the bucket's shortest L: slots each ring link is held), the energy the fewest
    CU-slots within its longest L. Otherwise one option per N, ending by t_d.
    """
    inst = instance
    r = inst.requests[j]
    rings = [inst.rings[k] for k in inst.candidate_rings(j)]
    if not rings:
        return []
    reach = {v for ring in rings for v in ring.nodes}
    k_max = max(inst.nodes[v].cus for v in reach)
    biggest = max(ring.size for ring in rings)
    by_n: dict[int, list[tuple[int, int]]] = {}
    for nn, k, d in modes(inst, j, k_max):
        if nn <= biggest:
            by_n.setdefault(nn, []).append((k, d))
    window = r.deadline - r.arrival + 1
    out = []
    for nn, kd in sorted(by_n.items()):
        d_min = min(d for _, d in kd)
        if inst.scheme in ("MinT", "MinW"):
            buckets = [(x, min(x + step - 1, window)) for x in range(d_min, window + 1, step)]
        else:
            buckets = [(d_min, window)]
        for lo, hi in buckets:
            energy = float(min(k * d for k, d in kd if d <= hi))
            if inst.scheme == "MinT":  # ends in [t_a + lo - 1, t_a + hi - 1]
                out.append((nn, r.arrival + lo - 1, r.arrival + hi - 1, energy, d_min))
            else:
                out.append((nn, r.arrival + d_min - 1, r.deadline, energy, lo))
    return out


def _in_set(instance: Instance, j: int, nn: int, nodes: frozenset[int]) -> int:
    """Fewest computing nodes of request j with ``nn`` nodes inside ``nodes`` (any ring)."""
    inst = instance
    s = inst.requests[j].source
    best = nn
    for k in inst.candidate_rings(j):
        ring = inst.rings[k]
        if ring.size < nn:
            continue
        outside = sum(1 for v in ring.nodes if v != s and v not in nodes)
        best = min(best, int(s in nodes) + max(0, nn - 1 - outside))
    return best


def _node_sets(instance: Instance, full: bool) -> list[frozenset[int]]:
    inst = instance
    sets = {frozenset([v]) for v in range(len(inst.nodes))}
    if full:
        sets |= {frozenset(ring.nodes) for ring in inst.rings}
        sets |= set(_clusters(inst))
        for j in range(len(inst.requests)):
            reach = {v for k in inst.candidate_rings(j) for v in inst.rings[k].nodes}
            if reach:
                sets.add(frozenset(reach))
    return sorted(sets, key=lambda x: (len(x), sorted(x)))


def _assign_on(instance: Instance, assign: bool | None) -> bool:
    """``assign`` as given, or by scheme when None: on under MaxR and MinW."""
    return instance.scheme in ("MaxR", "MinW") if assign is None else assign


def build_energy_lp(instance: Instance, end_step: int = 2, node_sets: bool = True,
                    assign: bool | None = None, deadline: float | None = None,
                    integral: bool = False) -> dict[str, Any]:
    """The energetic LP of :func:`energy_bound` as arrays (minimisation, columns and rows).

    Parameters
    ----------
    instance : Instance
        A RAR instance, any scheme.
    end_step : int
        MinT: width of the end-slot buckets, MinW: of the window-length buckets (1: one
        option per end slot or window length).
    node_sets : bool
        Rows for rings, clusters and reachable node sets beside single nodes.
    assign : bool or None
        Add the node assignment of :func:`_assignment_rows` (ring choice per request and node
        count, the non-source computing nodes spread over the ring's nodes, CU-slots per node
        and interval); None: on under MaxR and MinW.
    deadline : float or None
        A ``time.perf_counter()`` instant: the build checks the clock between the intervals of
        its energetic rows and raises :class:`SolverError` ("no bound") past it.
    integral : bool
        Give each request with options a binary acceptance column equal to the sum of its
        option columns (``integer_cols``): the LP becomes a MIP.

    Returns
    -------
    dict
        ``cost``, ``lower``, ``upper`` (columns), ``row_lower``, ``row_upper``, ``rows`` (a
        scipy CSR matrix), ``offset`` (constant of the objective), ``forced_blocked`` (requests
        no candidate ring and mode can serve), ``n_options`` and ``option_cols`` (the option
        columns: one minus their sum per request is its blocked fraction), ``integer_cols``
        (the acceptance columns with ``integral``, else empty).

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003), section 4.D, eqs. (4), (8), (9), (13), (17),
    (21)-(24); Baptiste, Le Pape and Nuijten, *Constraint-Based Scheduling* (2001), chapter 3
    (energetic reasoning over time intervals).
    """
    import scipy.sparse as sp

    inst = instance
    nr, T = len(inst.requests), inst.slots
    alpha = inst.alpha_of()
    scheme = inst.scheme
    block_cost = 1.0 / nr + (alpha if scheme == "MaxR" else 0.0)  # eq. (12): Gamma_j = 0
    sets = _node_sets(inst, node_sets)
    cost: list[float] = []
    lower: list[float] = []
    upper: list[float] = []
    offset = 0.0
    forced = 0

    def col(c: float, lo: float = 0.0, hi: float = 1.0) -> int:
        cost.append(c)
        lower.append(lo)
        upper.append(hi)
        return len(cost) - 1

    # activated CUs per node (MinCU pays for them; otherwise they are the capacity)
    a_col = [col(alpha if scheme == "MinCU" else 0.0, 0.0, float(nd.cus)) for nd in inst.nodes]
    # activated wavelengths per link (MinW)
    w_col: dict[int, int] = {}
    if scheme == "MinW":
        for i, lk in enumerate(inst.links):
            w_col[i] = col(alpha, 0.0, float(lk.wavelengths))
    arrivals = sorted({r.arrival for r in inst.requests})
    opts: list[tuple[int, int, int, int, float, int, int]] = []  # j, nn, e1, e2, E, dmin, col
    for j, r in enumerate(inst.requests):
        _check_clock(deadline)
        offset += block_cost
        options = _options(inst, j, end_step)
        if not options:
            forced += 1
            continue
        best_rel = {}
        for k in inst.candidate_rings(j):
            ring = inst.rings[k]
            for nn in r.node_counts:
                if ring.size >= nn:
                    best_rel[nn] = max(best_rel.get(nn, 0.0), ring.reliability)
        for nn, e1, e2, energy, d_min in options:
            c = -block_cost
            if scheme == "MinT":
                c += alpha * e1 / r.deadline
            elif scheme == "MaxR":
                c += alpha * (1.0 - best_rel[nn])
            opts.append((j, nn, e1, e2, energy, d_min, col(c)))
    ends = sorted({o[3] for o in opts} | {T})
    rows_i: list[int] = []
    rows_j: list[int] = []
    rows_v: list[float] = []
    rlo: list[float] = []
    rhi: list[float] = []

    def row(entries: list[tuple[int, float]], lo: float, hi: float) -> None:
        idx = len(rlo)
        for c, v in entries:
            rows_i.append(idx)
            rows_j.append(c)
            rows_v.append(v)
        rlo.append(lo)
        rhi.append(hi)

    inf = math.inf
    # one option at most per request
    by_req: dict[int, list[int]] = {}
    for o in opts:
        by_req.setdefault(o[0], []).append(o[6])
    accept: list[int] = []
    for cols in by_req.values():
        if integral:  # the request's acceptance y_j = sum of its options, y_j binary
            accept.append(col(0.0))
            row([(c, 1.0) for c in cols] + [(accept[-1], -1.0)], 0.0, 0.0)
        else:
            row([(c, 1.0) for c in cols], -inf, 1.0)
    # energetic rows with prefix columns P[S, s, e'] >= P[S, s, e'_prev] + new CU-slots
    first = opts[0][6] if opts else 0
    assert not accept or accept[0] > opts[-1][6]
    by_set: dict[int, list[tuple[int, int, int, float]]] = {}
    for si, nodes in enumerate(sets):
        _check_clock(deadline)
        share: dict[tuple[int, int], int] = {}
        for idx, (j, nn, _, e2, energy, _, c) in enumerate(opts):
            assert c == first + idx
            if (j, nn) not in share:
                share[j, nn] = _in_set(inst, j, nn, nodes)
            if share[j, nn] > 0:
                by_set.setdefault(si, []).append(
                    (inst.requests[j].arrival, e2, c, share[j, nn] * energy))
    for si, items in by_set.items():
        _capacity_rows(items, [a_col[v] for v in sets[si]], arrivals, ends, col, row, deadline)
    if _assign_on(inst, assign):
        for v, items in _assignment_rows(inst, opts, col, row).items():
            _capacity_rows(items, [a_col[v]], arrivals, ends, col, row, deadline)
    if scheme == "MinW":
        _wavelength_rows(inst, opts, w_col, row)
    n_cols = len(cost)
    mat = sp.csr_matrix((rows_v, (rows_i, rows_j)), shape=(len(rlo), n_cols))
    return {"cost": np.array(cost), "lower": np.array(lower), "upper": np.array(upper),
            "row_lower": np.array(rlo), "row_upper": np.array(rhi), "rows": mat,
            "offset": offset, "forced_blocked": forced, "n_options": len(opts),
            "option_cols": np.array([o[6] for o in opts], dtype=np.int64),
            "integer_cols": np.array(accept, dtype=np.int64)}


def _check_clock(deadline: float | None) -> None:
    """:class:`SolverError` ("no bound") once ``time.perf_counter()`` is past ``deadline``."""
    if deadline is not None and time.perf_counter() > deadline:
        raise SolverError("bound: the energetic LP could not be built within the time limit: "
                          "no bound (a larger time_limit, or a larger end_step or "
                          "node_sets=False for a smaller LP)")


def _capacity_rows(items: list[tuple[int, int, int, float]], a_cols: list[int],
                   arrivals: list[int], ends: list[int], col: Any, row: Any,
                   deadline: float | None = None) -> None:
    """For every interval [s, e] (s an arrival, e in ``ends``): the CU-slots of the items
    (arrival, last end, column, CU-slots) with arrival >= s and last end <= e stay below
    (e - s + 1) times the activated CUs ``a_cols``, through prefix columns
    P[s, e] >= P[s, e_prev] + the items ending at e, P[s, e] <= (e - s + 1) sum A. Past
    ``deadline`` (``time.perf_counter()``), :class:`SolverError`: no bound."""
    inf = math.inf
    by_end: dict[int, list[tuple[int, int, float]]] = {}
    for ta, e2, c, v in items:
        by_end.setdefault(e2, []).append((ta, c, v))
    for s in arrivals:
        _check_clock(deadline)
        prev = None
        for e in ends:
            if e < s:
                continue
            terms = [(c, -v) for ta, c, v in by_end.get(e, ()) if ta >= s]
            if not terms and prev is None:
                continue
            p = col(0.0, 0.0, inf)
            row([(p, 1.0)] + ([(prev, -1.0)] if prev is not None else []) + terms, 0.0, inf)
            row([(p, 1.0)] + [(a, -float(e - s + 1)) for a in a_cols], -inf, 0.0)
            prev = p


def _assignment_rows(inst: Instance, opts: list[tuple[int, int, int, int, float, int, int]],
                     col: Any, row: Any) -> dict[int, list[tuple[int, int, int, float]]]:
    """Node assignment of ``assign``: per node, the items (arrival, last end, column,
    CU-slots) for :func:`_capacity_rows`.

    Per request j and node count N with options O (columns x_o): ring choice y_k >= 0 over the
    candidate rings of j with at least N nodes, sum_k y_k = sum_O x_o; per node n != s_j of
    those rings z_n in [0, 1] with sum_n z_n = (N - 1) sum_O x_o and z_n <= sum_{k ∋ n} y_k.
    Node s_j holds sum_O x_o computing nodes, node n z_n, each with the fewest CU-slots E of
    the options of O (min over O) inside [t_a, last end of O]. MaxR: y_k costs
    alpha (gamma_best(N) - gamma_k) on top of the option's 1 - gamma_best(N).

    Validity: a schedule deploying j with N nodes V (s_j in V) on ring k with window W sets
    the option of W's bucket to 1, y_k = 1 and z_n = 1 for n in V minus s_j (V lies on k,
    which has at least N nodes), all else 0; every row holds, and on each node n of V, j
    spends at least E CU-slots inside W, itself inside [t_a, last end]: those CU-slots lie
    in every interval containing [t_a, last end] and fit under (interval length) x A_n
    (eq. 8), so the capacity rows hold. The cost of the point is the schedule's (MaxR: the
    reliability of k exactly).
    """
    alpha = inst.alpha_of()
    groups: dict[tuple[int, int], list[tuple[int, float, int]]] = {}
    for j, nn, _, e2, energy, _, c in opts:
        groups.setdefault((j, nn), []).append((e2, energy, c))
    per_node: dict[int, list[tuple[int, int, int, float]]] = {}
    for (j, nn), items in groups.items():
        r = inst.requests[j]
        xs = [(c, 1.0) for _, _, c in items]
        energy = min(en for _, en, _ in items)
        last = max(e2 for e2, _, _ in items)
        rings = [inst.rings[k] for k in inst.candidate_rings(j)
                 if inst.rings[k].size >= nn]
        best = max(ring.reliability for ring in rings)
        ys = [col(alpha * (best - ring.reliability) if inst.scheme == "MaxR" else 0.0,
                  0.0, 1.0) for ring in rings]
        row([(y, 1.0) for y in ys] + [(c, -1.0) for c, _ in xs], 0.0, 0.0)
        for c, _ in xs:
            per_node.setdefault(r.source, []).append((r.arrival, last, c, energy))
        if nn == 1:
            continue
        zs = []
        for v in sorted({v for ring in rings for v in ring.nodes} - {r.source}):
            z = col(0.0, 0.0, 1.0)
            zs.append(z)
            row([(z, 1.0)] + [(y, -1.0) for y, ring in zip(ys, rings, strict=True)
                              if v in ring.nodes], -math.inf, 0.0)
            per_node.setdefault(v, []).append((r.arrival, last, z, energy))
        row([(z, 1.0) for z in zs] + [(c, -float(nn - 1)) for c, _ in xs], 0.0, 0.0)
    return per_node


def _wavelength_rows(inst: Instance, opts: list, w_col: dict[int, int], row: Any) -> None:
    """MinW: for a set L of links (all links, each ring's, each cluster's, each request's
    reachable links), a deployed request j holds a wavelength on at least m_j(L) = min over its
    candidate rings of |ring links in L| of them, so sum_{l in L} W_l >= m_j(L) x_j; a
    wavelength carries at most rho requests per slot, so rho |T| sum_{l in L} W_l >= the
    link-slots m_j(L) times the window length of every request."""
    inf = math.inf
    fams = {frozenset(range(len(inst.links)))}
    fams |= {frozenset(ring.links) for ring in inst.rings}
    for nodes in _clusters(inst):
        fams.add(frozenset(i for i, lk in enumerate(inst.links)
                           if lk.u in nodes and lk.v in nodes))
    cand = {j: inst.candidate_rings(j) for j in range(len(inst.requests))}
    for rings in cand.values():
        if rings:
            fams.add(frozenset(i for k in rings for i in inst.rings[k].links))
    by_req: dict[int, list[tuple[int, int]]] = {}
    for o in opts:
        by_req.setdefault(o[0], []).append((o[6], o[5]))
    for links in sorted(fams, key=lambda x: (len(x), sorted(x))):
        ws = [(w_col[i], 1.0) for i in sorted(links)]
        load: list[tuple[int, float]] = []
        for j, items in by_req.items():
            m = min(sum(1 for i in inst.rings[k].links if i in links) for k in cand[j])
            if m > 0:
                row(ws + [(c, -float(m)) for c, _ in items], 0.0, inf)
                load += [(c, -float(m * d)) for c, d in items]
        if load:
            row([(c, inst.rho * float(inst.slots) * v) for c, v in ws] + load, 0.0, inf)


def _solve_lp(lp: dict[str, Any], time_limit: float | None, end: float | None = None
              ) -> tuple[str, float, np.ndarray]:
    """HiGHS on the LP, for ``time_limit`` seconds or until ``end`` (``time.perf_counter()``,
    counted after the arrays are passed), whichever comes first. With ``integer_cols`` (a MIP)
    the value is HiGHS's dual bound, valid at any stop, and the status ``Optimal`` whenever
    that bound is finite."""
    from dmlopt import solvers

    integer = lp.get("integer_cols")
    mask = None
    if integer is not None and len(integer):
        mask = np.zeros(len(lp["cost"]), dtype=bool)
        mask[integer] = True

    solvers.prepare_highs(1)
    h = solvers.highspy_model()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    solvers.add_arrays(h, lp["lower"], lp["upper"], lp["rows"], lp["row_lower"],
                       lp["row_upper"], cost=lp["cost"], integer=mask)
    if end is not None:
        left = max(0.1, end - time.perf_counter())
        time_limit = left if time_limit is None else min(time_limit, left)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    solvers.run_highspy(h)
    status = h.modelStatusToString(h.getModelStatus())
    value = h.getInfo().objective_function_value
    if mask is not None:
        value = h.getInfo().mip_dual_bound
        if status != "Infeasible" and math.isfinite(value):
            status = "Optimal"
    return status, float(value) + lp["offset"], np.asarray(h.getSolution().col_value)


def energy_bound(instance: Instance, *, time_limit: float | None = None, end_step: int = 2,
                 node_sets: bool = True, assign: bool | None = None,
                 integral: bool = False) -> BoundValue:
    """The energetic LP bound on eq. (4) (module docstring), any scheme and size.

    Parameters
    ----------
    instance : Instance
        A RAR instance.
    time_limit : float or None
        Seconds for the build and HiGHS; a build past 80 % of it, or an LP stopped before
        optimality, raises :class:`SolverError` (no bound).
    end_step, node_sets, assign, integral
        See :class:`EnergyOptions`.

    Returns
    -------
    BoundValue
        The LP value moved to the weak side by 1e-6 (relative), with metrics ``lp_value``,
        ``forced_blocked``, ``lp_blocked`` (requests the LP blocks, fractional), ``options``,
        ``rows``, ``columns`` and ``build_seconds``.

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003), section 4.D; Baptiste, Le Pape and Nuijten,
    *Constraint-Based Scheduling* (2001), chapter 3.
    """
    t0 = time.perf_counter()
    # the build stops at 80 % of the limit; HiGHS has what is left of it
    deadline = None if time_limit is None else t0 + 0.8 * time_limit
    end = None if time_limit is None else t0 + time_limit
    lp = build_energy_lp(instance, end_step=end_step, node_sets=node_sets, assign=assign,
                         deadline=deadline, integral=integral)
    built = time.perf_counter() - t0
    status, value, x = _solve_lp(lp, None, end)
    if status != "Optimal" or not math.isfinite(value):
        raise SolverError(f"bound: the energetic LP ended {status!r}: no bound")
    return BoundValue(safe(value, SENSE), metrics={
        "lp_value": value, "forced_blocked": float(lp["forced_blocked"]),
        "lp_blocked": float(len(instance.requests) - x[lp["option_cols"]].sum()),
        "options": float(lp["n_options"]), "rows": float(lp["rows"].shape[0]),
        "columns": float(len(lp["cost"])), "build_seconds": built})


def _estimate_energy(instance: Instance, options: Any) -> Size:
    """Options of the LP from the instance alone; about 30 kB and 1e5 operations per option
    (its matrix entries over node sets and arrival slots, held in Python lists while built).
    With ``assign`` a quarter more memory and five times the work: on cpn38 with 500 requests
    under MinW (seed 0, one thread) the peak resident memory went from 413 to 488 MB and the
    CPU time from 6.2 to 21.2 s; the memory estimate (1.24 GB) stays above the measurement.

    At least as much as the energetic rows take (:func:`_energy_entries`): their matrix
    entries, 200 bytes and 20 operations each (three Python lists, then the CSR matrix and
    HiGHS's copy), which grow with the arrivals times the end slots and not with the options
    (1,000 requests over 2,000 slots: 4.6 GB where the options alone gave 170 MB). O(requests
    + slots + node sets), nothing built."""
    step = getattr(options, "end_step", 2)
    assign = _assign_on(instance, getattr(options, "assign", None))
    mem, work = (1.25, 5.0) if assign else (1.0, 1.0)
    n_opts = 0
    per_request = []
    for r in instance.requests:
        window = r.deadline - r.arrival + 1
        per_n = math.ceil(window / step) if instance.scheme in ("MinT", "MinW") else 1
        per_request.append(len(r.node_counts) * per_n)
        n_opts += per_request[-1]
    entries = _energy_entries(instance, getattr(options, "node_sets", True), per_request)
    return Size(max(50e6 + 30e3 * mem * n_opts, 200.0 * mem * entries),
                max(1e5 * work * n_opts, 20.0 * work * entries))


def _energy_entries(instance: Instance, node_sets: bool, per_request: list[int]) -> float:
    """An upper bound on the matrix entries of the energetic rows of :func:`build_energy_lp`:
    per node set, a prefix column and two rows (its set's CUs, the previous prefix) for every
    interval [s, e] (s an arrival, e a possible last end: a deadline, or under MinT any slot of
    a window, and the horizon), and each option in the rows of the arrivals up to its own, in
    the node sets its request can reach."""
    from bisect import bisect_left, bisect_right

    inst = instance
    T = inst.slots
    sets = _node_sets(inst, node_sets)
    sizes = [len(nodes) for nodes in sets]
    arrivals = sorted({r.arrival for r in inst.requests})
    if inst.scheme == "MinT":  # the end slots of every window
        cover = np.zeros(T + 2, dtype=np.int64)
        for r in inst.requests:
            cover[max(0, min(r.arrival, T + 1))] += 1
            cover[max(0, min(r.deadline + 1, T + 1))] -= 1
        ends = np.flatnonzero(np.cumsum(cover) > 0).tolist()
        ends = sorted(set(ends) | {T})
    else:
        ends = sorted({r.deadline for r in inst.requests} | {T})
    pairs = sum(len(ends) - bisect_left(ends, s) for s in arrivals)
    terms = 0
    for j, (n, r) in enumerate(zip(per_request, inst.requests, strict=True)):
        reach = {v for k in inst.candidate_rings(j) for v in inst.rings[k].nodes}
        touched = sum(1 for nodes in sets if not nodes.isdisjoint(reach))  # share > 0 needs it
        terms += n * bisect_right(arrivals, r.arrival) * touched
    return float(sum(pairs * (4 + size) for size in sizes) + terms)


class NodeChoiceOptions(Options):
    """Options of the node-choice relaxation bound."""

    couple: bool = pydantic.Field(False, description="add w <= q: a request's computing nodes "
                                  "share its (fractional) mix of modes and starts")
    threads: int = pydantic.Field(1, ge=1, le=256, description="HiGHS threads")


def _node_choice(instance: Instance, *, time_limit: float | None = None, couple: bool = False,
                 threads: int = 1) -> BoundValue:
    """Lower bound on eq. (4): the aggregated ILP with only the node choices integral.

    Parameters
    ----------
    instance : Instance
        A RAR instance (any scheme).
    time_limit : float or None, optional
        Seconds (wall clock) of HiGHS; the dual bound at the stop is valid. None (default): 60.
    couple : bool, optional
        Add ``w <= q`` (a request's computing nodes share its mix of modes and starts); default
        False.
    threads : int, optional
        HiGHS threads (default 1).

    Returns
    -------
    BoundValue
        See :func:`~dmlopt.models.rar.partial.node_choice_bound`: the dual bound moved to the
        weak side, metrics ``relaxation_value`` and ``proven``.

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: deployments (eta),
    computing nodes (y) and activated CUs (A) kept integral, modes, starts and wavelengths
    relaxed (:mod:`dmlopt.models.rar.partial`).
    """
    from dmlopt.models.rar.partial import node_choice_bound

    return node_choice_bound(instance, time_limit=60.0 if time_limit is None else time_limit,
                             couple=couple, threads=threads)


BOUNDS: dict[str, Bound] = {
    "node-choice": Bound(function=_node_choice, Options=NodeChoiceOptions,
                         estimate=mip_bound("aggregated").estimate,
                         description="the aggregated ILP with only the node choices, deployments "
                         "and activated CUs integral: its MIP dual bound (HiGHS)"),
    "mip": mip_bound("aggregated"),
    "lp": lp_relaxation("aggregated"),
    "columns": Bound(function=columns_bound, Options=ColumnsOptions,
                     estimate=_estimate_columns,
                     description="column generation on the config LP (per-request "
                     "configurations, CU capacity per node and slot; MinW: link-slot rows "
                     "and activated wavelengths), Lagrangian bound at any stop"),
    "energy": Bound(function=energy_bound, Options=EnergyOptions, estimate=_estimate_energy,
                    description="energetic LP: per-request options (nodes, end, CU-slots), CU "
                    "capacity over node sets and intervals, each scheme's zeta (any size)"),
}

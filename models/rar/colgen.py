"""RAR (paper 003): the column-generation bound ``"columns"``.

The linear relaxation of the configuration formulation (:mod:`dmlopt.models.rar.config`, one
column per request and configuration c = (ring, computing node set S, CU count k, window)),
solved by column generation instead of being built: on the 38-node network with 500 requests it
has 7.7 million configurations (13.4 million counting rings), too many to build.

Master LP (minimised, every row a ``<=`` row except the convexity rows):

* per request j: sum_c z_c + b_j = 1, b_j the blocked share at :func:`~dmlopt.models.rar.
  blocked_cost` (what eq. (4) adds for a blocked request);
* CU capacity per node n and slot t: sum of k_c over the columns computing on n at t <= |C_n|
  (``config``'s ``cap`` rows); under MinCU <= A_n instead, with A_n in [0, |C_n|] at cost alpha,
  plus per request j and node n the sum of k_c over j's columns on n <= A_n (``config``'s
  ``peak`` and ``peak_j`` rows);
* with ``links`` (default: under MinW only) per link l and slot t the requests on l at t <=
  rho |W_l|; under MinW <= rho W_l instead, W_l in [0, |W_l|] at cost alpha (the activated
  wavelengths of l: a wavelength carries rho requests per slot), plus W_l >= the share of each
  request j on l (one wavelength at least on every link a deployed request uses).

Column costs are eq. (4)'s per-request terms: MaxR alpha (1 - gamma_ring), MinT alpha (end
slot) / t_d, MinCU and MinW 0 (their zeta is A and W above). Without ``links``, MinW's zeta is
bounded below by 0 and a configuration's ring is the most reliable candidate ring containing
its node set (the ring changes nothing else once the wavelength rows are dropped): the master
is then ``config``'s LP without its wavelength rows, and with the ``peak`` rows its LP exactly
when wavelengths cannot bind (tests). Dropping rows and the W_l relaxation only lower the LP,
and ``links`` rows hold in every schedule, so the master's optimum is a lower bound on eq. (4).

Pricing: for every request, the least reduced cost over ALL its configurations, vectorised per
(request, node count) as a matrix over (ring and node set) x (CU count, window): window sums of
the capacity duals from prefix sums over slots. The columns of the ``per_request`` most negative
reduced costs below the request's convexity dual enter the master (HiGHS simplex, one thread,
warm started after each addition).

Certification: with duals y <= 0 of the ``<=`` rows (any, here the master's clipped at 0), the
Lagrangian (Farley, Lasdon) bound L(y) = sum_j min(blocked cost, min_c [cost_c - a_c y]) + sum
over A_n, W_l of min(0, reduced cost x upper bound) + y . rhs is a lower bound on the master,
hence on eq. (4); the best L seen is returned, moved to the weak side by
:func:`dmlopt.bounds.safe`. At convergence (no negative reduced cost) it equals the master's LP.
A time limit that stops the loop returns the best L so far; one that stops the first pricing
pass raises :class:`SolverError` (no bound).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pydantic

from dmlopt.bounds import safe
from dmlopt.contract import BoundValue, Options, Size
from dmlopt.errors import SolverError
from dmlopt.models.rar.constants import SENSE
from dmlopt.models.rar.instance import Instance

#: seconds the bound runs when no time limit is given
DEFAULT_SECONDS = 300.0

#: a column enters only below its convexity dual minus this (HiGHS's dual feasibility
#: tolerance: a column already in the master may price this far below 0)
_DUAL_TOL = 1e-7


class ColumnsOptions(Options):
    """Options of the column-generation bound."""

    per_request: int = pydantic.Field(2, ge=1, le=100, description="columns added per "
                                      "request and iteration: those of the most negative "
                                      "reduced costs")
    links: bool | None = pydantic.Field(None, description="per link and slot rows (rho "
                                        "requests per wavelength) and MinW's activated "
                                        "wavelengths W_l; None: on under MinW (without them "
                                        "MinW's zeta is bounded by 0), off otherwise")
    smoothing: float = pydantic.Field(0.0, ge=0.0, le=0.95, description="Wentges dual "
                                      "smoothing: price at this share of the best Lagrangian "
                                      "duals plus the rest of the master's (0: plain column "
                                      "generation)")
    max_iterations: int = pydantic.Field(0, ge=0, le=10**9, description="stop after this many "
                                         "master LPs with the best Lagrangian bound so far "
                                         "(0: until converged or the time limit)")


@dataclass
class _Group:
    """A request's configurations with one node count: pairs (ring, node set) x mode-starts."""

    pairs: np.ndarray  # indices into the request's pairs
    k: np.ndarray  # per mode-start: CUs per computing node
    d: np.ndarray  # duration (slots)
    st: np.ndarray  # first slot (1-based)
    cost: np.ndarray  # MinT: alpha * end / t_d, else 0
    bad: np.ndarray  # (pairs, mode-starts): k above the node set's smallest node


@dataclass
class _Request:
    """Request j's pricing data (static over the iterations)."""

    j: int
    rings: list[int]
    sets: list[tuple[int, ...]]
    node_inc: np.ndarray  # (pairs, nodes) 0/1
    link_inc: np.ndarray | None  # (pairs, links) 0/1 with links
    pair_cost: np.ndarray  # MaxR: alpha (1 - gamma_ring), else 0
    groups: list[_Group]
    configurations: int


def _links_on(instance: Instance, links: bool | None) -> bool:
    """``links`` as given, or on under MinW when None."""
    return instance.scheme == "MinW" if links is None else links


def _prepare(instance: Instance, links: bool, end: float) -> list[_Request]:
    """Every request's pairs (ring, node set) and mode-starts grouped by node count; past
    ``end`` (``time.perf_counter()``) :class:`SolverError`."""
    from dmlopt.models.rar import config, formulations

    inst = instance
    alpha = inst.alpha_of()
    n_nodes, n_links = len(inst.nodes), len(inst.links)
    out = []
    for j, r in enumerate(inst.requests):
        if time.perf_counter() > end:
            raise SolverError("bound: columns could not list the configurations within the "
                              "time limit: no bound (a larger time_limit)")
        pairs = config._ring_node_sets(inst, j, not links)
        by_n: dict[int, list[tuple[int, int, int]]] = {}
        for nn, k, d, st in formulations._mode_starts(inst, j):
            by_n.setdefault(nn, []).append((k, d, st))
        caps = np.array([min(inst.nodes[v].cus for v in s) for _, s in pairs], dtype=np.int64)
        groups = []
        count = 0
        for nn, items in sorted(by_n.items()):
            items.sort()
            arr = np.array(items, dtype=np.int64).reshape(-1, 3)
            idx = np.array([p for p, (_, s) in enumerate(pairs) if len(s) == nn
                            and caps[p] >= arr[0, 0]], dtype=np.int64)
            if not len(idx):
                continue
            k, d, st = arr[:, 0], arr[:, 1], arr[:, 2]
            cost = (alpha * (st + d - 1) / r.deadline if inst.scheme == "MinT"
                    else np.zeros(len(k)))
            bad = caps[idx][:, None] < k[None, :]
            count += int(bad.size - bad.sum())
            groups.append(_Group(idx, k, d, st, cost.astype(float), bad))
        node_inc = np.zeros((len(pairs), n_nodes))
        link_inc = np.zeros((len(pairs), n_links)) if links else None
        pair_cost = np.zeros(len(pairs))
        for p, (kr, s) in enumerate(pairs):
            node_inc[p, list(s)] = 1.0
            if link_inc is not None:
                link_inc[p, list(inst.rings[kr].links)] = 1.0
            if inst.scheme == "MaxR":
                pair_cost[p] = alpha * (1.0 - inst.rings[kr].reliability)
        out.append(_Request(j, [kr for kr, _ in pairs], [s for _, s in pairs], node_inc,
                            link_inc, pair_cost, groups, count))
    return out


@dataclass
class _Duals:
    """Duals of the ``<=`` rows (all <= 0): node-slot ``pi`` (nodes, T), link-slot ``mu``
    (links, T) or None, per request and node ``sig`` (requests, nodes), per request and link
    ``nu`` (requests, links)."""

    pi: np.ndarray
    mu: np.ndarray | None
    sig: np.ndarray
    nu: np.ndarray

    def mix(self, other: _Duals, share: float) -> _Duals:
        """``share`` of self plus the rest of ``other``."""
        def m(a: Any, b: Any) -> Any:
            return None if a is None else share * a + (1.0 - share) * b
        return _Duals(m(self.pi, other.pi), m(self.mu, other.mu), m(self.sig, other.sig),
                      m(self.nu, other.nu))


def _prefix(values: np.ndarray) -> np.ndarray:
    """Prefix sums over slots with a leading 0 column: window [s, e] (1-based) sums to
    P[:, e] - P[:, s - 1]."""
    out = np.zeros((values.shape[0], values.shape[1] + 1))
    np.cumsum(values, axis=1, out=out[:, 1:])
    return out


_Col = tuple[int, int, int, int, int]  # (request, pair, CUs, duration, start)


def _price(reqs: list[_Request], duals: _Duals, thresholds: np.ndarray, per_request: int,
           tol: float, end: float) -> tuple[np.ndarray, list[_Col]] | None:
    """Least reduced cost of every request over all its configurations, and the columns
    (j, pair, k, d, start) of the ``per_request`` most negative ones below ``thresholds[j] -
    tol``; None when ``end`` (``time.perf_counter()``) passes first."""
    best = np.full(len(thresholds), math.inf)
    cands: list[_Col] = []
    for rq in reqs:
        if not rq.groups:
            continue
        if time.perf_counter() > end:
            return None
        j = rq.j
        pn = _prefix(rq.node_inc @ duals.pi)
        sig = rq.node_inc @ duals.sig[j]
        pl = nu = None
        if rq.link_inc is not None and duals.mu is not None:
            pl = _prefix(rq.link_inc @ duals.mu)
            nu = rq.link_inc @ duals.nu[j]
        found: list[tuple[float, int, int, int, int]] = []
        for g in rq.groups:
            e, s = g.st + g.d - 1, g.st - 1
            rows = pn[g.pairs]
            rc = (rq.pair_cost[g.pairs][:, None] + g.cost[None, :]
                  - g.k[None, :] * (rows[:, e] - rows[:, s] + sig[g.pairs][:, None]))
            if pl is not None:
                lrows = pl[g.pairs]
                rc -= lrows[:, e] - lrows[:, s] + nu[g.pairs][:, None]  # type: ignore[index]
            rc[g.bad] = math.inf
            flat = rc.ravel()
            take = min(per_request, flat.size)
            idx = (np.argpartition(flat, take - 1)[:take] if take < flat.size
                   else np.arange(flat.size))
            best[j] = min(best[j], float(flat[idx].min()))
            for i in idx:
                v = float(flat[i])
                if v < thresholds[j] - tol:
                    p, m = divmod(int(i), rc.shape[1])
                    found.append((v, int(g.pairs[p]), int(g.k[m]), int(g.d[m]), int(g.st[m])))
        found.sort()
        cands += [(j, p, k, d, st) for _, p, k, d, st in found[:per_request]]
    return best, cands


@dataclass
class _Master:
    """Row layout of the master LP: convexity rows 0..|R|-1, then node-slot rows, link-slot
    rows (``links``), per (request, node) rows (MinCU) and per (request, link) rows (MinW with
    ``links``); ``rhs`` the upper bounds of the ``<=`` rows (from row |R| on)."""

    nr: int
    T: int
    node0: int
    link0: int
    jn: dict[tuple[int, int], int]
    jl: dict[tuple[int, int], int]
    rhs: np.ndarray
    n_rows: int


def _layout(inst: Instance, reqs: list[_Request], links: bool) -> _Master:
    """Rows of the master (see :class:`_Master`)."""
    nr, T = len(inst.requests), inst.slots
    node0 = nr
    link0 = node0 + len(inst.nodes) * T
    nxt = link0 + (len(inst.links) * T if links else 0)
    jn: dict[tuple[int, int], int] = {}
    jl: dict[tuple[int, int], int] = {}
    if inst.scheme == "MinCU":
        for rq in reqs:
            for n in sorted({v for s in rq.sets for v in s}):
                jn[rq.j, n] = nxt
                nxt += 1
    if links and inst.scheme == "MinW":
        for rq in reqs:
            for i in sorted({i for kr in rq.rings for i in inst.rings[kr].links}):
                jl[rq.j, i] = nxt
                nxt += 1
    rhs = np.zeros(nxt - nr)
    if inst.scheme != "MinCU":
        rhs[: link0 - nr] = np.repeat([float(nd.cus) for nd in inst.nodes], T)
    if links and inst.scheme != "MinW":
        rhs[link0 - nr: link0 - nr + len(inst.links) * T] = np.repeat(
            [float(inst.rho * lk.wavelengths) for lk in inst.links], T)
    return _Master(nr, T, node0, link0, jn, jl, rhs, nxt)


def _columns_arrays(inst: Instance, reqs: list[_Request], lay: _Master,
                    cols: list[tuple[int, int, int, int, int]]) -> tuple[np.ndarray, ...]:
    """Costs and CSC arrays (starts, rows, values) of configuration columns (j, pair, k, d,
    start): eq. (4)'s per-request cost, 1 in j's convexity row, k in the node-slot rows of the
    window, k in the (j, n) rows (MinCU), 1 in the link-slot rows and the (j, l) rows."""
    alpha, T = inst.alpha_of(), lay.T
    costs, starts, rows, vals = [], [0], [], []
    for j, p, k, d, st in cols:
        rq = reqs[j]
        ring = inst.rings[rq.rings[p]]
        nodes = np.array(rq.sets[p])
        slots = np.arange(st - 1, st + d - 1)
        cost = 0.0
        if inst.scheme == "MinT":
            cost = alpha * (st + d - 1) / inst.requests[j].deadline
        elif inst.scheme == "MaxR":
            cost = alpha * (1.0 - ring.reliability)
        costs.append(cost)
        r = [np.array([j]), (lay.node0 + nodes[:, None] * T + slots[None, :]).ravel()]
        v = [np.array([1.0]), np.full(len(nodes) * d, float(k))]
        if lay.jn:
            r.append(np.array([lay.jn[j, n] for n in rq.sets[p]]))
            v.append(np.full(len(nodes), float(k)))
        if lay.link0 < lay.n_rows and rq.link_inc is not None:
            lk = np.array(ring.links)
            r.append((lay.link0 + lk[:, None] * T + slots[None, :]).ravel())
            v.append(np.ones(len(lk) * d))
            if lay.jl:
                r.append(np.array([lay.jl[j, i] for i in ring.links]))
                v.append(np.ones(len(lk)))
        rr, vv = np.concatenate(r), np.concatenate(v)
        rows.append(rr)
        vals.append(vv)
        starts.append(starts[-1] + len(rr))
    return (np.array(costs), np.array(starts[:-1], dtype=np.int32),
            np.concatenate(rows).astype(np.int32), np.concatenate(vals))


def _master(inst: Instance, reqs: list[_Request], lay: _Master, links: bool,
            unit: float) -> tuple[Any, dict[str, np.ndarray]]:
    """The master with b_j, A_n (MinCU) and W_l (MinW with ``links``) and no configuration
    column yet; returns the HiGHS model and the resource columns' data for the Lagrangian."""
    import scipy.sparse as sp

    from dmlopt import solvers

    nr, T = lay.nr, lay.T
    cost = [unit] * nr
    lower = [0.0] * nr
    upper = [1.0] * nr
    ri, ci, vs = list(range(nr)), list(range(nr)), [1.0] * nr
    res: dict[str, np.ndarray] = {}
    alpha = inst.alpha_of()
    if inst.scheme == "MinCU":
        res["A"] = np.array([float(nd.cus) for nd in inst.nodes])
        for n, nd in enumerate(inst.nodes):
            c = len(cost)
            cost.append(alpha)
            lower.append(0.0)
            upper.append(float(nd.cus))
            for t in range(T):
                ri.append(lay.node0 + n * T + t)
                ci.append(c)
                vs.append(-1.0)
        for (_, n), row in lay.jn.items():
            ri.append(row)
            ci.append(nr + n)
            vs.append(-1.0)
    if links and inst.scheme == "MinW":
        res["W"] = np.array([float(lk.wavelengths) for lk in inst.links])
        first = len(cost)
        for i, lk in enumerate(inst.links):
            c = len(cost)
            cost.append(alpha)
            lower.append(0.0)
            upper.append(float(lk.wavelengths))
            for t in range(T):
                ri.append(lay.link0 + i * T + t)
                ci.append(c)
                vs.append(-float(inst.rho))
        for (_, i), row in lay.jl.items():
            ri.append(row)
            ci.append(first + i)
            vs.append(-1.0)
    mat = sp.csr_matrix((vs, (ri, ci)), shape=(lay.n_rows, len(cost)))
    row_lower = np.concatenate([np.ones(nr), np.full(lay.n_rows - nr, -np.inf)])
    row_upper = np.concatenate([np.ones(nr), lay.rhs])
    solvers.prepare_highs(1)
    h = solvers.highspy_model()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("presolve", "off")  # keep the basis between iterations
    h.setOptionValue("simplex_strategy", 4)  # primal: added columns keep the basis feasible
    solvers.add_arrays(h, np.array(lower), np.array(upper), mat, row_lower, row_upper,
                       cost=np.array(cost))
    return h, res


def _duals(inst: Instance, lay: _Master, row_dual: np.ndarray, links: bool) -> _Duals:
    """The master's ``<=`` row duals clipped at 0, by row family."""
    y = np.minimum(np.asarray(row_dual, dtype=float), 0.0)
    nn, nl, T, nr = len(inst.nodes), len(inst.links), lay.T, lay.nr
    pi = y[lay.node0: lay.node0 + nn * T].reshape(nn, T)
    mu = y[lay.link0: lay.link0 + nl * T].reshape(nl, T) if links else None
    sig = np.zeros((nr, nn))
    for (j, n), row in lay.jn.items():
        sig[j, n] = y[row]
    nu = np.zeros((nr, nl))
    for (j, i), row in lay.jl.items():
        nu[j, i] = y[row]
    return _Duals(pi, mu, sig, nu)


def _flat(lay: _Master, du: _Duals) -> np.ndarray:
    """The ``<=`` row duals of ``du`` in row order (from row |R| on)."""
    y = np.zeros(lay.n_rows - lay.nr)
    y[: du.pi.size] = du.pi.ravel()
    if du.mu is not None:
        y[lay.link0 - lay.nr: lay.link0 - lay.nr + du.mu.size] = du.mu.ravel()
    for (j, n), row in lay.jn.items():
        y[row - lay.nr] = du.sig[j, n]
    for (j, i), row in lay.jl.items():
        y[row - lay.nr] = du.nu[j, i]
    return y


def _lagrangian(inst: Instance, lay: _Master, du: _Duals, best_rc: np.ndarray, unit: float,
                res: dict[str, np.ndarray]) -> float:
    """L(y) of the module docstring for duals ``du`` (all <= 0) and the requests' least
    reduced costs ``best_rc`` (inf: no configuration)."""
    value = float(np.minimum(unit, best_rc).sum()) + float(_flat(lay, du) @ lay.rhs)
    alpha = inst.alpha_of()
    if "A" in res:  # A_n: -1 in n's slot rows and in every (j, n) row
        rc = alpha + du.pi.sum(axis=1) + du.sig.sum(axis=0)
        value += float(np.minimum(0.0, rc * res["A"]).sum())
    if "W" in res and du.mu is not None:  # W_l: -rho in l's slot rows, -1 in every (j, l) row
        rc = alpha + inst.rho * du.mu.sum(axis=1) + du.nu.sum(axis=0)
        value += float(np.minimum(0.0, rc * res["W"]).sum())
    return value


@dataclass
class ColumnPool:
    """What column generation leaves behind: the restricted master and its columns.

    ``highs`` is the master (a ``highspy.Highs``): its first |R| columns are the blocked
    shares b_j, then the resource columns (A_n under MinCU, W_l under MinW with ``links``),
    then ``columns`` in the order they entered. A column (j, p, k, d, s) is request j's pair p,
    ring ``requests[j].rings[p]`` and computing node set ``requests[j].sets[p]``, with k CUs
    on each node over slots s..s + d - 1 (1-based); ``layout`` gives the master's rows.
    """

    highs: Any
    requests: list[_Request]
    layout: _Master
    columns: list[_Col]
    first_column: int


def columns_bound(instance: Instance, *, time_limit: float | None = None,
                  per_request: int = 2, links: bool | None = None,
                  smoothing: float = 0.0, max_iterations: int = 0) -> BoundValue:
    """Column generation on ``config``'s LP relaxation (module docstring), any scheme.

    Parameters
    ----------
    instance : Instance
        A RAR instance.
    time_limit : float or None
        Seconds for the whole method (None: :data:`DEFAULT_SECONDS`); the best Lagrangian
        bound at the stop is returned. A limit that ends before the first pricing pass raises
        :class:`SolverError` (no bound).
    per_request, links, smoothing, max_iterations
        See :class:`ColumnsOptions`.

    Returns
    -------
    BoundValue
        The best Lagrangian bound moved to the weak side by 1e-6 (relative), with metrics
        ``iterations``, ``columns`` (in the master), ``configurations`` (priced),
        ``master_lp`` (the last master LP value, absent before the first), ``lagrangian``
        (unmoved), ``converged`` (1: no negative reduced cost left), ``master_blocked``
        (requests the master blocks, fractional), ``seconds_pricing``, ``seconds_master``
        and after Ctrl-C ``interrupted`` (1.0: the bound so far, still valid; the API raises
        :class:`~dmlopt.errors.Interrupted` carrying it).

    References
    ----------
    Dantzig and Wolfe, Oper. Res. 8(1), 1960 (the master over configurations); Lasdon,
    *Optimization Theory for Large Systems* (1970) and Farley, Oper. Res. 38(5), 1990 (the
    Lagrangian bound at any iteration); Wentges, Int. Trans. Oper. Res. 4(2), 1997 (dual
    smoothing); paper 003 (Chen et al., JOCN 16(5), 2024), eqs. (4), (8), (9).
    """
    return column_generation(instance, time_limit=time_limit, per_request=per_request,
                             links=links, smoothing=smoothing, max_iterations=max_iterations)[0]


def column_generation(instance: Instance, *, time_limit: float | None = None,
                      per_request: int = 2, links: bool | None = None,
                      smoothing: float = 0.0, max_iterations: int = 0
                      ) -> tuple[BoundValue, ColumnPool]:
    """:func:`columns_bound`, also returning the restricted master and its columns.

    Parameters
    ----------
    instance : Instance
        A RAR instance.
    time_limit, per_request, links, smoothing, max_iterations
        As :func:`columns_bound`.

    Returns
    -------
    tuple of BoundValue and ColumnPool
        :func:`columns_bound`'s value, and the master as the loop left it (its last LP solved
        when ``metrics["iterations"]`` > 0), for a caller that goes on with it (e.g. solves it
        as a MIP over the generated columns: price-and-branch, a primal method).

    References
    ----------
    As :func:`columns_bound`.
    """
    from dmlopt import solvers
    from dmlopt.models.rar.evaluation import blocked_cost

    inst = instance
    t0 = time.perf_counter()
    end = t0 + (DEFAULT_SECONDS if time_limit is None else float(time_limit))
    on = _links_on(inst, links)
    unit = blocked_cost(inst)
    tol = max(1e-9 * unit, _DUAL_TOL)
    reqs_all = _prepare(inst, on, end)
    reqs = [rq for rq in reqs_all if rq.groups]
    lay = _layout(inst, reqs_all, on)
    nr = len(inst.requests)
    zero = _Duals(np.zeros((len(inst.nodes), inst.slots)),
                  np.zeros((len(inst.links), inst.slots)) if on else None,
                  np.zeros((nr, len(inst.nodes))), np.zeros((nr, len(inst.links))))
    priced = _price(reqs, zero, np.full(nr, unit), per_request, tol, end)
    if priced is None:
        raise SolverError("bound: columns could not price every request once within the "
                          "time limit: no bound (a larger time_limit)")
    h, res = _master(inst, reqs_all, lay, on, unit)
    best_rc, cands = priced
    best = _lagrangian(inst, lay, zero, best_rc, unit, res)
    best_duals = zero
    seen: set[tuple[int, int, int, int, int]] = set()
    added: list[_Col] = []
    first_column = int(h.getNumCol())
    n_cols = iterations = 0
    converged = False
    lp_value = blocked = 0.0
    t_price = t_master = 0.0
    interrupted = False
    try:
        while True:
            if not cands:  # no negative reduced cost at the master's duals (or at 0)
                converged = True
                break
            cands = [c for c in cands if c not in seen]
            if not cands:  # only columns already in: converged within HiGHS's tolerances
                converged = True
                break
            seen.update(cands)
            added += cands
            costs, starts, rows, vals = _columns_arrays(inst, reqs_all, lay, cands)
            h.addCols(len(cands), costs, np.zeros(len(cands)), np.ones(len(cands)), len(rows),
                      starts, rows, vals)
            n_cols += len(cands)
            left = end - time.perf_counter()
            if left <= 0 or (max_iterations and iterations >= max_iterations):
                break
            # HiGHS's limit counts its run clock, which adds up over the runs of one model
            h.setOptionValue("time_limit", float(h.getRunTime()) + float(left))
            t1 = time.perf_counter()
            solvers.run_highspy(h)
            if (h.modelStatusToString(h.getModelStatus()) == "Unknown"
                    and time.perf_counter() < end):
                # primal simplex without presolve can stall on numerics: dual simplex from here
                h.setOptionValue("simplex_strategy", 1)
                solvers.run_highspy(h)
                h.setOptionValue("simplex_strategy", 4)
            t_master += time.perf_counter() - t1
            if h.modelStatusToString(h.getModelStatus()) != "Optimal":
                break
            iterations += 1
            lp_value = float(h.getInfo().objective_function_value)
            sol = h.getSolution()
            blocked = float(np.sum(np.asarray(sol.col_value)[:nr]))
            row_dual = np.asarray(sol.row_dual)
            du = _duals(inst, lay, row_dual, on)
            conv = row_dual[:nr]
            t1 = time.perf_counter()
            price_at = du if smoothing == 0.0 else best_duals.mix(du, smoothing)
            priced = _price(reqs, price_at, conv, per_request, tol, end)
            t_price += time.perf_counter() - t1
            if priced is None:
                break
            best_rc, cands = priced
            value = _lagrangian(inst, lay, price_at, best_rc, unit, res)
            if value > best:
                best, best_duals = value, price_at
            if best >= lp_value - 1e-9 * max(1.0, abs(lp_value)):
                converged = True
                break
            if not cands and price_at is not du:  # a mispricing: price at the master's duals
                priced = _price(reqs, du, conv, per_request, tol, end)
                if priced is None:
                    break
                best_rc, cands = priced
                value = _lagrangian(inst, lay, du, best_rc, unit, res)
                if value > best:
                    best, best_duals = value, du
    except KeyboardInterrupt:  # Ctrl-C: the best Lagrangian bound so far is valid
        interrupted = True
    if not math.isfinite(best):
        raise SolverError("bound: columns found no finite Lagrangian value: no bound")
    metrics = {"iterations": float(iterations), "columns": float(n_cols),
               "configurations": float(sum(rq.configurations for rq in reqs_all)),
               "lagrangian": best, "converged": float(converged),
               "seconds_pricing": t_price, "seconds_master": t_master}
    if iterations:
        metrics |= {"master_lp": lp_value, "master_blocked": blocked}
    if interrupted:
        metrics["interrupted"] = 1.0
    pool = ColumnPool(h, reqs_all, lay, added, first_column)
    return BoundValue(safe(best, SENSE), metrics=metrics), pool


def _estimate_columns(instance: Instance, options: Any) -> Size:
    """Memory and work of the listing and the first pricing pass (the loop after it stops at
    the time limit): an upper bound on the configurations, per request the node sets of its
    candidate rings with each allowed node count times w (w + 1) / 2 windows of its w slots.
    About 3 bytes and 40 operations per configuration (the 0/1 masks kept, one pricing
    matrix at a time), plus the master's rows and 200 MB for its columns: on cpn38 with 500
    requests under MinW (13.4 million configurations, seed 0) the resident memory grew by
    141 MB in 40 s; the estimate there is 370 MB."""
    inst = instance
    on = _links_on(inst, getattr(options, "links", None))
    total = largest = 0.0
    for j, r in enumerate(inst.requests):
        w = r.deadline - r.arrival + 1
        sets = 0
        for k in inst.candidate_rings(j):
            size = inst.rings[k].size
            sets += sum(math.comb(size - 1, nn - 1) for nn in set(r.node_counts) if nn <= size)
        n = float(sets) * w * (w + 1) / 2
        total += n
        largest = max(largest, n)
    rows = len(inst.requests) * (1 + len(inst.nodes) + len(inst.links)) + inst.slots * (
        len(inst.nodes) + (len(inst.links) if on else 0))
    return Size(200e6 + 3.0 * total + 64.0 * largest + 2e3 * rows,
                1e4 * len(inst.requests) + 40.0 * total)

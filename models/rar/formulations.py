"""RAR (paper 003): the ILP (eqs. 4-41), the aggregated formulation, decoding and warm starts."""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlopt.contract import Formulation
from dmlopt.models.rar import config as _rar_config
from dmlopt.models.rar import dominance as _rar_dominance
from dmlopt.models.rar.evaluation import Assignment, Solution, assign_cu_ids
from dmlopt.models.rar.instance import Instance, modes
from dmlopt.models.rar.paper import (  # noqa: F401 (re-exported)
    _objective_expr,
    _PaperSets,
    _ring_sets,
    _size_paper,
    build_paper,
)

# --------------------------------------------------------------------------------------------
# exact formulations (the paper's ILP: dmlopt.models.rar.paper)


def _mode_starts(instance: Instance, j: int) -> list[tuple[int, int, int, int]]:
    """(N, k, d, start) of request j: every mode whose window fits in [t_a, t_d]."""
    r = instance.requests[j]
    k_max = max(nd.cus for nd in instance.nodes)
    out = []
    for nn, k, d in modes(instance, j, k_max):
        for s in range(r.arrival, r.deadline - d + 2):
            out.append((nn, k, d, s))
    return out


def build_aggregated(instance: Instance) -> Any:
    """The aggregated ILP: per request a mode (N, k, d) and a start instead of per-CU and
    per-slot binaries, integer CU usage per node and slot (formulation "aggregated").

    A mode is N computing nodes with k CUs each for d slots (d = :func:`duration` of k; k the
    fewest CUs giving that duration), a start any slot with the window inside [t_a, t_d]. Per
    request: a ring through the source (``a``), one mode and start (``q``), its computing nodes
    (``w``, ``y``) and one wavelength on every ring link (``g``, wavelengths renumbered by
    first use when all links have the same count; no wavelength variables at all when
    wavelengths cannot bind, :func:`_wavelengths_never_bind`).

    Parameters
    ----------
    instance : Instance
        The RAR instance: network, enumerated rings, requests, slots, rho and the scheme
        (MinCU, MinW, MinT or MaxR) that sets zeta and alpha of eq. (4).

    Returns
    -------
    pyomo.environ.ConcreteModel
        Binaries ``eta[j]``, ``a[j, k]``, ``q[j, q]``, ``w[j, n, q]``, ``y[j, n]``,
        ``g[j, b]``; the linearised loads ``h[j, l, b]`` and ``f[j, l, b, t]`` in [0, 1];
        constraints ``cap`` (CUs per node and slot), ``rho`` (requests per wavelength and
        slot); objective ``obj`` (eq. 4, minimised). ``m._rar_modes`` keeps the (N, k, d,
        start) of every ``q`` for :func:`decode` and :func:`warm_start`.

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: the same schedules as
    eqs. (4)-(41) (ring choice (7), reliability (12)-(13) through the rings offered, CU capacity
    (8) and wavelength load (9) aggregated per slot, computing nodes on the ring (17),
    (21)-(24)). It adds the modes and starts in place of the per-CU binaries (identical CUs
    are symmetric; :func:`assign_cu_ids` turns peak usage into CU ids), MinCU's activated CUs
    as the peak usage (:func:`activated_cus`) and wavelength symmetry breaking; fewer CUs and
    a shorter window never worsen eq. (4), so no optimum is lost (tests/rar/test_config.py
    proves the optima equal to the paper ILP's).
    """
    import pyomo.environ as pyo

    inst = instance
    nr, T = len(inst.requests), inst.slots
    J = range(nr)
    TT = range(1, T + 1)
    P = {j: inst.candidate_rings(j) for j in J}
    ms = {j: _mode_starts(inst, j) for j in J}
    ring_nodes = {j: sorted({v for k in P[j] for v in inst.rings[k].nodes}) for j in J}
    ring_links_ = {j: sorted({i for k in P[j] for i in inst.rings[k].links}) for j in J}
    m = pyo.ConcreteModel(name=f"rar_aggregated_{inst.name}")
    JK = [(j, k) for j in J for k in P[j]]
    JQ = [(j, q) for j in J for q in range(len(ms[j]))]
    JNQ = [(j, n, q) for j in J for q, (nn, k, d, s) in enumerate(ms[j])
           for n in ring_nodes[j] if inst.nodes[n].cus >= k]
    uniform_w = len({lk.wavelengths for lk in inst.links}) == 1
    w_min = min(lk.wavelengths for lk in inst.links)
    free_wl = _wavelengths_never_bind(inst)
    JB = [(j, b) for j in J for b in range(w_min)
          if (not uniform_w or b <= j) and not free_wl]
    m.eta = pyo.Var(J, domain=pyo.Binary)
    m.a = pyo.Var(JK, domain=pyo.Binary)  # ring choice (S_k^j)
    m.q = pyo.Var(JQ, domain=pyo.Binary)  # mode and start
    m.w = pyo.Var(JNQ, domain=pyo.Binary)  # node n computes in mode/start q
    m.g = pyo.Var(JB, domain=pyo.Binary)  # wavelength b (same on every ring link)
    m.eta_def = pyo.Constraint(J, rule=lambda m, j: sum(
        m.q[j, q] for q in range(len(ms[j]))) == m.eta[j])
    m.ring_one = pyo.Constraint(J, rule=lambda m, j: sum(m.a[j, k] for k in P[j]) == m.eta[j])
    if not free_wl:
        m.wl_one = pyo.Constraint(J, rule=lambda m, j: sum(
            m.g[jj, b] for jj, b in JB if jj == j) == m.eta[j])
    w_by_jq: dict[tuple[int, int], list[int]] = {}
    w_by_jn: dict[tuple[int, int], list[int]] = {}
    for j, n, q in JNQ:
        w_by_jq.setdefault((j, q), []).append(n)
        w_by_jn.setdefault((j, n), []).append(q)
    # N computing nodes in the chosen mode (eq. 24)
    m.n_nodes = pyo.Constraint(JQ, rule=lambda m, j, q: sum(
        m.w[j, n, q] for n in w_by_jq.get((j, q), [])) == ms[j][q][0] * m.q[j, q])

    # explicit node choice y_{j,n} = sum_q w (a better branching variable than the w's)
    JN = [(j, n) for j in J for n in ring_nodes[j]]
    m.y = pyo.Var(JN, domain=pyo.Binary)
    m.y_def = pyo.Constraint(JN, rule=lambda m, j, n: m.y[j, n] == sum(
        m.w[j, n, q] for q in w_by_jn.get((j, n), [])))

    def y(j, n):
        return m.y[j, n] if (j, n) in m.y else 0  # noqa: SIM401 (pyomo component)

    # computing nodes on the chosen ring (eqs. 21-23), the source computes (eq. 17)
    m.on_ring = pyo.Constraint([(j, n) for j in J for n in ring_nodes[j]],
                               rule=lambda m, j, n: y(j, n) <= sum(
                                   m.a[j, k] for k in P[j] if n in inst.rings[k].nodes))
    m.source = pyo.Constraint(J, rule=lambda m, j: y(j, inst.requests[j].source) == m.eta[j])
    # CU capacity per node and slot (eq. 8 aggregated) and activated CUs as peak usage
    usage: dict[tuple[int, int], list] = {}
    for j, n, q in JNQ:
        _, k, d, s = ms[j][q]
        for t in range(s, s + d):
            usage.setdefault((n, t), []).append(k * m.w[j, n, q])
    NT = sorted(usage)
    m.cap = pyo.Constraint(NT, rule=lambda m, n, t: sum(usage[n, t]) <= inst.nodes[n].cus)
    # occupancy of request j at slot t
    occ: dict[tuple[int, int], list] = {}
    for j, q in JQ:
        _, _, d, s = ms[j][q]
        for t in range(s, s + d):
            occ.setdefault((j, t), []).append(m.q[j, q])
    # h_{j,l,b} = g_{j,b} * [l on the ring of j], linearised by sum_b h = on-ring, h <= g
    def on_link(j, l):
        return sum(m.a[j, k] for k in P[j] if l in inst.rings[k].links)

    JLB = [(j, l, b) for j, b in JB for l in ring_links_[j]]
    m.h = pyo.Var(JLB, bounds=(0, 1))
    m.h_g = pyo.Constraint(JLB, rule=lambda m, j, l, b: m.h[j, l, b] <= m.g[j, b])
    JL = sorted({(j, l) for j, l, _ in JLB})
    bs_of = {j: [b for jj, b in JB if jj == j] for j in J}
    m.h_on = pyo.Constraint(JL, rule=lambda m, j, l: sum(
        m.h[j, l, b] for b in bs_of[j]) == on_link(j, l))
    # wavelength load per link, wavelength and slot (eq. 9): f >= h + occ - 1
    JLBT = [(j, l, b, t) for j, l, b in JLB for t in TT if (j, t) in occ]
    m.f = pyo.Var(JLBT, bounds=(0, 1))
    m.f_def = pyo.Constraint(JLBT, rule=lambda m, j, l, b, t: m.f[j, l, b, t]
                             >= m.h[j, l, b] + sum(occ[j, t]) - 1)
    load: dict[tuple[int, int, int], list] = {}
    for j, l, b, t in JLBT:
        load.setdefault((l, b, t), []).append(m.f[j, l, b, t])
    m.rho = pyo.Constraint(
        [key for key, v in load.items() if len(v) > inst.rho],
        rule=lambda m, l, b, t: sum(load[l, b, t]) <= inst.rho)
    # objective (4)
    if inst.scheme == "MinCU":
        per_jn: dict[tuple[int, int], list] = {}
        for j, n, q in JNQ:
            per_jn.setdefault((j, n), []).append(ms[j][q][1] * m.w[j, n, q])
        zeta = activated_cus(m, inst, usage, per_jn)
    elif inst.scheme == "MinW":
        zeta = activated_wavelengths(m, JLB)
    elif inst.scheme == "MinT":
        zeta = sum((ms[j][q][3] + ms[j][q][2] - 1) / inst.requests[j].deadline * m.q[j, q]
                   for j, q in JQ)
    else:
        zeta = sum(1 - sum(inst.rings[k].reliability * m.a[j, k] for k in P[j]) for j in J)
    m.obj = pyo.Objective(expr=_objective_expr(inst, m.eta, zeta), sense=pyo.minimize)
    m._rar = "aggregated"
    m._rar_modes = ms
    return m


def activated_cus(m: Any, inst: Instance, usage: dict[tuple[int, int], list],
                  per_jn: dict[tuple[int, int], list]) -> Any:
    """MinCU's zeta_1 (eq. 4): integer activated CUs ``m.A[n]`` >= the usage of node n in every
    slot (``usage[n, t]``: CU terms), plus the valid cut ``m.A[n]`` >= the CUs request j takes
    on node n, whatever its window (``per_jn[j, n]``). Shared by ``aggregated`` and ``config``.
    """
    import pyomo.environ as pyo

    m.A = pyo.Var(range(len(inst.nodes)), domain=pyo.NonNegativeIntegers,
                  bounds=lambda m, n: (0, inst.nodes[n].cus))
    m.peak = pyo.Constraint(sorted(usage), rule=lambda m, n, t: m.A[n] >= sum(usage[n, t]))
    m.peak_j = pyo.Constraint(sorted(per_jn), rule=lambda m, j, n: m.A[n] >= sum(per_jn[j, n]))
    return sum(m.A[n] for n in range(len(inst.nodes)))


def activated_wavelengths(m: Any, JLB: list[tuple[int, int, int]]) -> Any:
    """MinW's zeta_2 (eq. 4): ``m.Ow[l, b]`` >= ``m.h[j, l, b]`` (request j holds wavelength b on
    link l) for the (j, l, b) in ``JLB``. Shared by ``aggregated`` and ``config``."""
    import pyomo.environ as pyo

    LB = sorted({(l, b) for _, l, b in JLB})
    m.Ow = pyo.Var(LB, bounds=(0, 1))
    m.ow_def = pyo.Constraint(JLB, rule=lambda m, j, l, b: m.Ow[l, b] >= m.h[j, l, b])
    return sum(m.Ow[l, b] for l, b in LB)


def _wavelengths_never_bind(instance: Instance) -> bool:
    """True if wavelengths cannot matter: not MinW and |R| <= rho min_l |W_l|.

    Then wavelength floor(i / rho) for the i-th deployed request loads no (link, wavelength,
    slot) above rho, whatever the rings and windows, and no other term of eq. (4) sees
    wavelengths; the aggregated model then has no wavelength variables (decode assigns them).
    """
    w_min = min(lk.wavelengths for lk in instance.links)
    return instance.scheme != "MinW" and len(instance.requests) <= instance.rho * w_min


def _size_aggregated(instance: Instance) -> tuple[int, int]:
    inst = instance
    nr, T = len(inst.requests), inst.slots
    n_vars = n_cons = 0
    wmin = min(lk.wavelengths for lk in inst.links)
    for j in range(nr):
        r = inst.requests[j]
        window = r.deadline - r.arrival + 1
        nq = len(r.node_counts) * window * (window + 1) // 2  # upper bound on mode-starts
        rings = inst.candidate_rings(j)
        nodes = len({v for k in rings for v in inst.rings[k].nodes})
        links = len({i for k in rings for i in inst.rings[k].links})
        nb = min(wmin, j + 1)
        n_vars += 1 + len(rings) + nq + nq * nodes + nodes + nb + links * nb * (window + 1)
        n_cons += 4 + nq + 2 * nodes + links * nb * (window + 2) + links
    n_cons += len(inst.nodes) * T * 2 + inst.total_wavelengths * T
    n_vars += len(inst.nodes) + inst.total_wavelengths
    return n_vars, n_cons


def _size_semiactive(instance: Instance) -> tuple[int, int]:
    n_vars, n_cons = _size_aggregated(instance)
    return n_vars, n_cons + sum(r.deadline - r.arrival for r in instance.requests)


#: the exact models (module docstring); "config" decodes and warm-starts with its own
FORMULATIONS: dict[str, Formulation] = {
    "paper": Formulation(build_paper, _size_paper,
                         "the ILP of section 4.D (eqs. 4-41) over the enumerated rings"),
    "aggregated": Formulation(build_aggregated, _size_aggregated,
                              "ours: modes (node count, CUs, duration) and start slots instead "
                              "of per-slot CU variables, symmetry breaking"),
    "semiactive": Formulation(_rar_dominance.build_semiactive, _size_semiactive,
                              "ours: aggregated restricted to semi-active schedules (every "
                              "request starts at its arrival or right after another ends on "
                              "a shared node or link)",
                              warm_start=_rar_dominance.warm_start_semiactive,
                              # HiGHS 1.16's presolve cuts off the optimum of some
                              # semiactive models (docs/rar.md, semi-active starts)
                              solver_options={"highs": {"presolve": "off"}}),
    "config": Formulation(_rar_config.build_config, _rar_config.size_config,
                          "ours: one binary per (ring, node set, CUs, window) configuration",
                          decode=_rar_config.decode_config,
                          warm_start=_rar_config.warm_start_config),
}


def build(instance: Instance, formulation: str = "paper") -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (see :data:`FORMULATIONS`)."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "paper") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it (upper bounds)."""
    return FORMULATIONS[formulation].estimate_size(instance)


def _val(var: Any) -> float:
    v = var.value
    return 0.0 if v is None else float(v)


def decode(model: Any, instance: Instance) -> Solution:
    """The Solution of a solved paper or aggregated model.

    A request served (eta_j = 1) takes exactly one ring, one mode and one wavelength, as the
    model's rows say; values that give it none or two (a file not solving this model) raise
    ValueError naming the request and the choice, never the first one found.
    """
    inst = instance

    def one(j: int, what: str, choices: Any) -> Any:
        found = list(choices)
        if len(found) != 1:
            raise ValueError(f"request {j} is served (eta = 1) with {len(found)} {what} chosen, "
                             "the model's rows allow exactly one")
        return found[0]

    out: list[Assignment | None] = []
    if model._rar == "config":
        return _rar_config.decode_config(model, instance)
    if model._rar == "paper":
        for j, r in enumerate(inst.requests):
            if _val(model.eta[j]) < 0.5:
                out.append(None)
                continue
            k = one(j, "rings", (k for k in inst.candidate_rings(j) if _val(model.S[j, k]) > 0.5))
            ring = inst.rings[k]
            nodes = [v for v in ring.nodes if _val(model.On[j, v]) > 0.5]
            cus = [[c for c in range(inst.nodes[v].cus) if _val(model.Ojc[j, v, c]) > 0.5]
                   for v in nodes]
            l0 = ring.links[0]
            b = one(j, "wavelengths", (b for b in range(inst.links[l0].wavelengths)
                                       if _val(model.Ojw[j, l0, b]) > 0.5))
            busy = [t for t in range(1, inst.slots + 1) if _val(model.Ont[j, r.source, t]) > 0.5]
            if not busy:
                raise ValueError(f"request {j} is served (eta = 1) in no time slot")
            out.append(Assignment(ring=list(ring.nodes), nodes=nodes, cus=cus, wavelength=b,
                                  start=min(busy), end=max(busy)))
        return Solution(requests=out)
    ms = model._rar_modes
    plans: list[tuple[list[int], list[int], int, int] | None] = []
    rings: list[tuple[int, ...] | None] = []
    waves: list[int] = []
    for j in range(len(inst.requests)):
        if _val(model.eta[j]) < 0.5:
            plans.append(None)
            rings.append(None)
            waves.append(-1)
            continue
        k = one(j, "rings", (k for k in inst.candidate_rings(j) if _val(model.a[j, k]) > 0.5))
        q = one(j, "modes", (q for q in range(len(ms[j])) if _val(model.q[j, q]) > 0.5))
        _, kk, d, s = ms[j][q]
        nodes = [v for v in inst.rings[k].nodes
                 if (j, v, q) in model.w and _val(model.w[j, v, q]) > 0.5]
        if _wavelengths_never_bind(inst):
            b = sum(1 for p in plans if p is not None) // inst.rho
        else:
            b = one(j, "wavelengths", (b for (jj, b) in model.g
                                       if jj == j and _val(model.g[jj, b]) > 0.5))
        plans.append((nodes, [kk] * len(nodes), s, s + d - 1))
        rings.append(inst.rings[k].nodes)
        waves.append(b)
    ids = assign_cu_ids(inst, plans)
    for j, plan in enumerate(plans):
        if plan is None:
            out.append(None)
            continue
        nodes, _, s, e = plan
        out.append(Assignment(ring=list(rings[j]), nodes=nodes, cus=ids[j],  # type: ignore[arg-type]
                              wavelength=waves[j], start=s, end=e))
    return Solution(requests=out)


def _canon_ring(nodes: list[int]) -> tuple[int, ...]:
    """The cyclic order of ``nodes`` as :func:`enumerate_rings` stores it."""
    i = nodes.index(min(nodes))
    rot = nodes[i:] + nodes[:i]
    if rot[1] > rot[-1]:
        rot = [rot[0]] + rot[1:][::-1]
    return tuple(rot)


def wavelength_relabel(instance: Instance, solution: Solution) -> dict[int, int]:
    """Wavelengths renumbered in order of first use (b <= j, the symmetry breaking of the
    ``aggregated`` and ``config`` models) when all links have the same count; else empty."""
    relabel: dict[int, int] = {}
    if len({lk.wavelengths for lk in instance.links}) == 1:
        for a in solution.requests:
            if a is not None and a.wavelength not in relabel:
                relabel[a.wavelength] = len(relabel)
    return relabel


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    """Set the model's variables from ``solution`` (paper model: eta and S only).

    Aggregated model: every variable is set (rings, modes, nodes, wavelengths relabelled in
    order of first use when the symmetry breaking is on, the linearised loads, activated CUs and
    wavelengths). A request whose window is longer than its mode's duration or whose CU counts
    are not the fewest for it cannot be expressed and is left unset (the start is then partial).
    """
    inst = instance
    if model._rar == "config":
        _rar_config.warm_start_config(model, instance, solution)
        return
    ring_index = {ring.nodes: k for k, ring in enumerate(inst.rings)}
    if model._rar == "paper":
        for j, a in enumerate(solution.requests):
            model.eta[j].set_value(0.0 if a is None else 1.0)
            k = None if a is None else ring_index.get(_canon_ring(a.ring))
            for (jj, kk), var in model.S.items():
                if jj == j and not var.fixed:
                    var.set_value(1.0 if kk == k else 0.0)
        return
    ms = model._rar_modes
    relabel = wavelength_relabel(inst, solution)
    import pyomo.environ as pyo

    for var in model.component_data_objects(pyo.Var):
        var.set_value(0.0)
    occ: dict[tuple[int, int], int] = {}
    on_link: dict[tuple[int, int], int] = {}
    for j, a in enumerate(solution.requests):
        if a is None:
            continue
        k = ring_index.get(_canon_ring(a.ring))
        hit = None
        ks = {len(c) for c in a.cus}
        for q, (nn, kk, d, st) in enumerate(ms[j]):
            if nn == len(a.nodes) and ks == {kk} and st == a.start and st + d - 1 == a.end:
                hit = q
        if k is None or (j, k) not in model.a or hit is None:
            continue
        model.eta[j].set_value(1.0)
        model.a[j, k].set_value(1.0)
        model.q[j, hit].set_value(1.0)
        for n in a.nodes:
            model.w[j, n, hit].set_value(1.0)
            model.y[j, n].set_value(1.0)
        b = relabel.get(a.wavelength, a.wavelength)
        if (j, b) in model.g:
            model.g[j, b].set_value(1.0)
        for t in range(a.start, a.end + 1):
            occ[j, t] = 1
        for i in inst.rings[k].links:
            on_link[j, i] = b
    for (j, l, b), var in model.h.items():
        var.set_value(1.0 if on_link.get((j, l)) == b else 0.0)
    if hasattr(model, "f"):
        for (j, l, b, t), var in model.f.items():
            var.set_value(1.0 if on_link.get((j, l)) == b and occ.get((j, t)) else 0.0)
    if hasattr(model, "Ow"):
        for (l, b), var in model.Ow.items():
            var.set_value(1.0 if any(on_link.get((j, l)) == b
                                     for j in range(len(inst.requests))) else 0.0)
    if hasattr(model, "A"):
        use = np.zeros((len(inst.nodes), inst.slots + 1), dtype=np.int64)
        for (j, n, q), var in model.w.items():
            if var.value:
                _, kk, d, st = ms[j][q]
                use[n, st:st + d] += kk
        for n, var in model.A.items():
            var.set_value(float(use[n].max()))

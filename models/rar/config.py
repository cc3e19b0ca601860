"""RAR (paper 003): the configuration formulation ``"config"``.

One binary per request and configuration c = (ring, computing node set S, CU count k, window
[s, s + d - 1]) instead of separate ring, mode, node and start variables (``"aggregated"``,
:mod:`dmlopt.models.rar`). The duration d is the shared CU-slot function
:func:`~dmlopt.models.rar.duration` (modes of :func:`~dmlopt.models.rar.modes`: for each window
length the fewest CUs, which loses no optimum). Everything else is exact:

* CU capacity per node and slot (eq. 8 aggregated): sum of k over the configurations active at
  that node and slot <= |C_n|.
* Wavelengths: one wavelength g_{j,b} per deployed request, the same on every ring link (eq. 25
  as read in the module docstring of ``rar``); per link, wavelength and slot at most rho requests
  (eq. 9), linearised by f_{j,l,b,t} >= g_{j,b} + x_{j,l,t} - 1 where x_{j,l,t} (a sum of
  configuration binaries) is 1 iff request j uses link l in slot t - tighter than the product of
  a link and a slot indicator. Symmetry breaking as in ``aggregated`` (request j takes a wavelength
  index <= j when all links carry the same number; wavelengths below the smallest link count).
  When wavelengths cannot bind (not MinW and |R| <= rho min |W_l|) they are left out and the ring
  of a node set is chosen afterwards: the most reliable candidate ring containing S (only MaxR
  sees the ring otherwise).
* MinCU: activated CUs A_n (integer) >= the CUs in use at n in every slot (the peak, which an
  interval multicolouring reaches, :func:`~dmlopt.models.rar.assign_cu_ids`), plus the valid
  inequality A_n >= sum over request j's configurations using n of k_c z_c (every request's
  CUs are activated whatever its window).
* MinW: O_{l,b} >= h_{j,l,b}, h the wavelength-on-link product (sum_b h = x_{j,l}, h <= g).

Tests prove it equal to ``aggregated``, ``paper`` and a brute force on random small instances.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any


def configurations(instance: Any, j: int, free_wl: bool) -> list[tuple]:
    """Configurations of request j: (ring index, node set, N, k, d, start).

    With ``free_wl`` the ring is the most reliable candidate ring containing the node set
    (one configuration per node set, mode and start); otherwise one per candidate ring.
    """
    from dmlopt.models.rar import formulations

    inst = instance
    ms = formulations._mode_starts(inst, j)
    out = []
    for k, s in _ring_node_sets(inst, j, free_wl):
        cap = min(inst.nodes[v].cus for v in s)
        for nn, kk, d, st in ms:
            if nn == len(s) and kk <= cap:
                out.append((k, s, nn, kk, d, st))
    return out


def count_configurations(instance: Any, j: int, free_wl: bool) -> int:
    """``len(configurations(instance, j, free_wl))`` without listing them: a mode (N, k, d)
    has t_d - t_a - d + 2 starts, so the count costs the modes, not modes x starts (a window
    of 10,000 slots has about 5e7 mode-starts)."""
    from dmlopt.models import rar

    inst = instance
    r = inst.requests[j]
    k_max = max(nd.cus for nd in inst.nodes)
    modes = rar.modes(inst, j, k_max)
    total = 0
    for _, s in _ring_node_sets(inst, j, free_wl):
        cap = min(inst.nodes[v].cus for v in s)
        total += sum(max(0, r.deadline - d + 2 - r.arrival)
                     for nn, kk, d in modes if nn == len(s) and kk <= cap)
    return total


def _ring_node_sets(instance: Any, j: int, free_wl: bool) -> list[tuple[int, tuple[int, ...]]]:
    """(ring index, computing node set) pairs of request j's configurations (see
    :func:`configurations`)."""
    inst = instance
    r = inst.requests[j]
    by_set: dict[tuple[int, ...], int] = {}
    pairs: list[tuple[int, tuple[int, ...]]] = []
    for k in inst.candidate_rings(j):
        ring = inst.rings[k]
        others = [v for v in ring.nodes if v != r.source]
        for nn in sorted(set(r.node_counts)):
            if nn > ring.size:
                continue
            for rest in combinations(others, nn - 1):
                s = tuple(sorted((r.source, *rest)))
                if free_wl:
                    old = by_set.get(s)
                    if old is None or ring.reliability > inst.rings[old].reliability:
                        by_set[s] = k
                else:
                    pairs.append((k, s))
    if free_wl:
        pairs = sorted((k, s) for s, k in by_set.items())
    return pairs


def build_config(instance: Any) -> Any:
    """The configuration formulation: one binary per request and configuration.

    A configuration is (ring, computing node set, CU count, window); capacities, wavelengths
    and the schemes' objectives are written over them as described in
    :mod:`dmlopt.models.rar.config`.

    Parameters
    ----------
    instance : Instance
        The RAR instance (:class:`dmlopt.models.rar.Instance`); its ``scheme`` sets eq. (4).

    Returns
    -------
    pyomo.environ.ConcreteModel
        A MILP with the optimum of the paper's ILP (tests: equal to ``aggregated``, ``paper``
        and a brute force); decoded by :func:`decode_config`, warm-started by
        :func:`warm_start_config`.

    References
    ----------
    Ours, on paper 003 (Chen et al.), section 5, eqs. (4)-(41): a Dantzig-Wolfe style
    reformulation (configurations as columns, enumerated) with the tighter linearisation of
    eq. (9) described in the module docstring.
    """
    import pyomo.environ as pyo

    from dmlopt.models import rar
    from dmlopt.models.rar import formulations

    inst = instance
    nr = len(inst.requests)
    J = range(nr)
    free_wl = formulations._wavelengths_never_bind(inst)
    cf = {j: configurations(inst, j, free_wl) for j in J}
    JC = [(j, c) for j in J for c in range(len(cf[j]))]
    m = pyo.ConcreteModel(name=f"rar_config_{inst.name}")
    m.eta = pyo.Var(J, domain=pyo.Binary)
    m.z = pyo.Var(JC, domain=pyo.Binary)
    m.one = pyo.Constraint(J, rule=lambda m, j: sum(
        m.z[j, c] for c in range(len(cf[j]))) == m.eta[j])
    # CU usage per node and slot
    usage: dict[tuple[int, int], list] = {}
    per_jn: dict[tuple[int, int], list] = {}
    for j, c in JC:
        _, s, _, kk, d, st = cf[j][c]
        for n in s:
            per_jn.setdefault((j, n), []).append(kk * m.z[j, c])
            for t in range(st, st + d):
                usage.setdefault((n, t), []).append(kk * m.z[j, c])
    NT = sorted(usage)
    m.cap = pyo.Constraint(NT, rule=lambda m, n, t: sum(usage[n, t]) <= inst.nodes[n].cus)
    # wavelengths (eq. 9) when they can bind
    JB: list[tuple[int, int]] = []
    JLB: list[tuple[int, int, int]] = []
    if not free_wl:
        uniform_w = len({lk.wavelengths for lk in inst.links}) == 1
        w_min = min(lk.wavelengths for lk in inst.links)
        JB = [(j, b) for j in J for b in range(w_min) if not uniform_w or b <= j]
        m.g = pyo.Var(JB, domain=pyo.Binary)
        m.wl_one = pyo.Constraint(J, rule=lambda m, j: sum(
            m.g[jj, b] for jj, b in JB if jj == j) == m.eta[j])
        x_l: dict[tuple[int, int], list] = {}
        x_lt: dict[tuple[int, int, int], list] = {}
        for j, c in JC:
            k, _, _, _, d, st = cf[j][c]
            for i in inst.rings[k].links:
                x_l.setdefault((j, i), []).append(m.z[j, c])
                for t in range(st, st + d):
                    x_lt.setdefault((j, i, t), []).append(m.z[j, c])
        bs_of = {j: [b for jj, b in JB if jj == j] for j in J}
        JLB = [(j, i, b) for (j, i) in sorted(x_l) for b in bs_of[j]]
        m.h = pyo.Var(JLB, bounds=(0, 1))
        m.h_g = pyo.Constraint(JLB, rule=lambda m, j, i, b: m.h[j, i, b] <= m.g[j, b])
        m.h_on = pyo.Constraint(sorted(x_l), rule=lambda m, j, i: sum(
            m.h[j, i, b] for b in bs_of[j]) == sum(x_l[j, i]))
        JLBT = [(j, i, b, t) for (j, i, t) in sorted(x_lt) for b in bs_of[j]]
        m.f = pyo.Var(JLBT, bounds=(0, 1))
        m.f_def = pyo.Constraint(JLBT, rule=lambda m, j, i, b, t: m.f[j, i, b, t]
                                 >= m.g[j, b] + sum(x_lt[j, i, t]) - 1)
        load: dict[tuple[int, int, int], list] = {}
        for j, i, b, t in JLBT:
            load.setdefault((i, b, t), []).append(m.f[j, i, b, t])
        m.rho = pyo.Constraint([key for key, v in load.items() if len(v) > inst.rho],
                               rule=lambda m, i, b, t: sum(load[i, b, t]) <= inst.rho)
    # objective (4)
    if inst.scheme == "MinCU":
        zeta = rar.activated_cus(m, inst, usage, per_jn)
    elif inst.scheme == "MinW":
        zeta = rar.activated_wavelengths(m, JLB)
    elif inst.scheme == "MinT":
        zeta = sum((cf[j][c][5] + cf[j][c][4] - 1) / inst.requests[j].deadline * m.z[j, c]
                   for j, c in JC)
    else:
        zeta = sum(1 - sum(inst.rings[cf[j][c][0]].reliability * m.z[j, c]
                           for c in range(len(cf[j]))) for j in J)
    m.obj = pyo.Objective(expr=formulations._objective_expr(inst, m.eta, zeta), sense=pyo.minimize)
    m._rar = "config"
    m._rar_configs = cf
    m._rar_free_wl = free_wl
    return m


def size_config(instance: Any) -> tuple[int, int]:
    """(variables, constraints) upper bounds without building (configurations are counted)."""
    from dmlopt.models.rar import formulations

    inst = instance
    free_wl = formulations._wavelengths_never_bind(inst)
    w_min = min(lk.wavelengths for lk in inst.links)
    n_vars = n_cons = 0
    for j in range(len(inst.requests)):
        r = inst.requests[j]
        nc = count_configurations(inst, j, free_wl)
        window = r.deadline - r.arrival + 1
        n_vars += 1 + nc
        n_cons += 1
        if not free_wl:
            links = len({i for k in inst.candidate_rings(j) for i in inst.rings[k].links})
            nb = min(w_min, j + 1)
            n_vars += nb + links * nb * (window + 1)
            n_cons += 1 + links * nb * (window + 1) + links
    n_cons += len(inst.nodes) * inst.slots * 2 + len(inst.nodes) * len(inst.requests)
    n_cons += inst.total_wavelengths * inst.slots
    n_vars += len(inst.nodes) + inst.total_wavelengths
    return n_vars, n_cons


def _one(j: int, what: str, choices: Any) -> Any:
    """The one choice of a served request; none or two (a file not solving this model) raise
    ValueError naming the request, as :func:`formulations.decode` does."""
    found = list(choices)
    if len(found) != 1:
        raise ValueError(f"request {j} is served (eta = 1) with {len(found)} {what} chosen, "
                         "the model's rows allow exactly one")
    return found[0]


def decode_config(model: Any, instance: Any) -> Any:
    """The Solution of a solved configuration model."""
    from dmlopt.models import rar
    from dmlopt.models.rar import formulations

    inst = instance
    cf = model._rar_configs
    plans: list[tuple[list[int], list[int], int, int] | None] = []
    rings: list[tuple[int, ...] | None] = []
    waves: list[int] = []
    for j in range(len(inst.requests)):
        if formulations._val(model.eta[j]) < 0.5:
            plans.append(None)
            rings.append(None)
            waves.append(-1)
            continue
        c = _one(j, "configurations",
                 (c for c in range(len(cf[j])) if formulations._val(model.z[j, c]) > 0.5))
        k, s, _, kk, d, st = cf[j][c]
        ring = inst.rings[k].nodes
        nodes = [v for v in ring if v in s]
        if model._rar_free_wl:
            b = sum(1 for p in plans if p is not None) // inst.rho
        else:
            b = _one(j, "wavelengths", (b for (jj, b) in model.g
                                         if jj == j and formulations._val(model.g[jj, b]) > 0.5))
        plans.append((nodes, [kk] * len(nodes), st, st + d - 1))
        rings.append(ring)
        waves.append(b)
    ids = rar.assign_cu_ids(inst, plans)
    out: list[Any] = []
    for j, plan in enumerate(plans):
        if plan is None:
            out.append(None)
            continue
        nodes, _, st, e = plan
        out.append(rar.Assignment(ring=list(rings[j]), nodes=nodes,  # type: ignore[arg-type]
                                  cus=ids[j], wavelength=waves[j], start=st, end=e))
    return rar.Solution(requests=out)


def warm_start_config(model: Any, instance: Any, solution: Any) -> None:
    """Set the configuration model's variables from ``solution``.

    A request whose (ring, node set, CU count, window) is not a configuration (a longer window
    than its mode needs, CU counts that are not the fewest, or with free wavelengths a ring that
    is not the most reliable for its node set - then the node set's configuration is used) is
    left blocked in the start (HiGHS repairs or discards a partial start).
    """
    import numpy as np
    import pyomo.environ as pyo

    from dmlopt.models import rar
    from dmlopt.models.rar import formulations

    inst = instance
    cf = model._rar_configs
    ring_index = {ring.nodes: k for k, ring in enumerate(inst.rings)}
    relabel = rar.wavelength_relabel(inst, solution)
    for var in model.component_data_objects(pyo.Var):
        var.set_value(0.0)
    chosen: dict[int, tuple[int, int]] = {}  # j -> (config, wavelength)
    for j, a in enumerate(solution.requests):
        if a is None:
            continue
        k = ring_index.get(formulations._canon_ring(list(a.ring)))
        ks = {len(x) for x in a.cus}
        s = tuple(sorted(a.nodes))
        hit = None
        for c, (kc, sc, _, kk, d, st) in enumerate(cf[j]):
            if (sc == s and ks == {kk} and st == a.start and st + d - 1 == a.end
                    and (kc == k or model._rar_free_wl)):
                hit = c
                break
        if hit is None:
            continue
        b = relabel.get(a.wavelength, a.wavelength)
        if not model._rar_free_wl and (j, b) not in model.g:
            continue
        chosen[j] = (hit, b)
        model.eta[j].set_value(1.0)
        model.z[j, hit].set_value(1.0)
    if not model._rar_free_wl:
        for j, (_, b) in chosen.items():
            model.g[j, b].set_value(1.0)
        for (j, i, b), var in model.h.items():
            on = j in chosen and chosen[j][1] == b and i in inst.rings[cf[j][chosen[j][0]][0]].links
            var.set_value(1.0 if on else 0.0)
        for (j, i, b, t), var in model.f.items():
            if j in chosen and chosen[j][1] == b:
                k, _, _, _, d, st = cf[j][chosen[j][0]]
                on = i in inst.rings[k].links and st <= t < st + d
                var.set_value(1.0 if on else 0.0)
        if hasattr(model, "Ow"):
            for (i, b), var in model.Ow.items():
                var.set_value(max((model.h[j, i, b].value or 0.0 for j in range(len(cf))
                                   if (j, i, b) in model.h), default=0.0))
    if hasattr(model, "A"):
        use = np.zeros((len(inst.nodes), inst.slots + 1), dtype=np.int64)
        for j, (c, _) in chosen.items():
            _, s, _, kk, d, st = cf[j][c]
            for n in s:
                use[n, st:st + d] += kk
        for n, var in model.A.items():
            var.set_value(float(use[n].max()))

"""The RAR paper ILP split by the paper's equation groups writes the same model as the single
builder it replaced: the LP files of both agree character for character on seeded instances of
every scheme, with one and with several allowed node counts.

``_old_build_paper`` is the previous implementation, kept verbatim as the reference.
"""

from __future__ import annotations

from typing import Any

import pytest

import dmlopt
from dmlopt.models.rar.formulations import _objective_expr, _ring_sets, build_paper
from dmlopt.models.rar.instance import Instance, node_work


def _old_build_paper(instance: Instance) -> Any:
    """Eqs. (4)-(41) with per-CU and per-wavelength binaries over time (module docstring)."""
    import pyomo.environ as pyo

    inst = instance
    nr, T = len(inst.requests), inst.slots
    J = range(nr)
    TT = range(1, T + 1)
    Nn = range(len(inst.nodes))
    Ll = range(len(inst.links))
    P = _ring_sets(inst)
    m = pyo.ConcreteModel(name=f"rar_paper_{inst.name}")
    JNC = [(j, n, c) for j in J for n in Nn for c in range(inst.nodes[n].cus)]
    JLB = [(j, l, b) for j in J for l in Ll for b in range(inst.links[l].wavelengths)]
    NC = [(n, c) for n in Nn for c in range(inst.nodes[n].cus)]
    LB = [(l, b) for l in Ll for b in range(inst.links[l].wavelengths)]
    JK = [(j, k) for j in J for k in P[j]]
    JKN = [(j, k, n) for j, k in JK for n in inst.rings[k].nodes]
    JM = [(j, nn) for j in J for nn in inst.requests[j].node_counts]
    m.eta = pyo.Var(J, domain=pyo.Binary)
    m.C = pyo.Var([(j, t, n, c) for j, n, c in JNC for t in TT], domain=pyo.Binary)
    m.f = pyo.Var([(j, t, l, b) for j, l, b in JLB for t in TT], domain=pyo.Binary)
    m.S = pyo.Var(JK, domain=pyo.Binary)
    m.On = pyo.Var(J, Nn, domain=pyo.Binary)  # O_n^j
    m.Oc = pyo.Var(NC, domain=pyo.Binary)  # O_{n,c}
    m.Ow = pyo.Var(LB, domain=pyo.Binary)  # O_{l,b}
    m.Ojc = pyo.Var(JNC, domain=pyo.Binary)  # O_{n,c}^j
    m.Ojw = pyo.Var(JLB, domain=pyo.Binary)  # O_{l,b}^j
    m.Ont = pyo.Var(J, Nn, TT, domain=pyo.Binary)  # O_{n,t}^j
    m.Olt = pyo.Var(J, Ll, TT, domain=pyo.Binary)  # O_{l,t}^j
    m.y = pyo.Var(JKN, domain=pyo.Binary)  # y_{k,n}^j (eq. 21: only n in k)
    m.Gamma = pyo.Var(J, bounds=(0, 1))
    m.ON = pyo.Var(J, Nn, domain=pyo.NonNegativeIntegers,
                   bounds=lambda m, j, n: (0, inst.nodes[n].cus))
    m.Tsn = pyo.Var(J, Nn, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    m.Ten = pyo.Var(J, Nn, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    m.Tsl = pyo.Var(J, Ll, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    m.Tel = pyo.Var(J, Ll, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    multi = {j: len(inst.requests[j].node_counts) > 1 for j in J}
    m.mode = pyo.Var(JM, domain=pyo.Binary)  # N_j choice (one value: equals eta_j)

    def n_expr(j):  # N_j eta_j, or sum_N N mode_{j,N}
        return sum(nn * m.mode[j, nn] for nn in inst.requests[j].node_counts)

    m.mode_sum = pyo.Constraint(J, rule=lambda m, j: sum(
        m.mode[j, nn] for nn in inst.requests[j].node_counts) == m.eta[j])

    # (4) objective, zeta and alpha of section 4.C
    if inst.scheme == "MinCU":
        zeta = sum(m.Oc[n, c] for n, c in NC)
    elif inst.scheme == "MinW":
        zeta = sum(m.Ow[l, b] for l, b in LB)
    elif inst.scheme == "MinT":
        zeta = sum(m.Ten[j, inst.requests[j].source] / inst.requests[j].deadline for j in J)
    else:
        zeta = sum(1 - m.Gamma[j] for j in J)
    m.obj = pyo.Objective(expr=_objective_expr(inst, m.eta, zeta), sense=pyo.minimize)

    # (5) CU-slots per node (module docstring); one row per allowed N
    m.c5 = pyo.ConstraintList()
    for j in J:
        for n in Nn:
            used = sum(m.C[j, t, n, c] for t in TT for c in range(inst.nodes[n].cus))
            for nn in inst.requests[j].node_counts:
                a, b = node_work(inst, j, nn)
                if multi[j]:
                    big = a + b * inst.nodes[n].cus
                    m.c5.add(used >= a * m.On[j, n] + b * m.ON[j, n]
                             - big * (1 - m.mode[j, nn]))
                else:
                    m.c5.add(used >= a * m.On[j, n] + b * m.ON[j, n])
    # (6) wavelength resources on the selected ring
    m.c6 = pyo.Constraint(JK, rule=lambda m, j, k: sum(
        m.Ojw[j, l, b] for l in Ll for b in range(inst.links[l].wavelengths))
        >= m.S[j, k] * inst.rings[k].size)
    # (7) one ring per deployed request
    m.c7 = pyo.Constraint(J, rule=lambda m, j: sum(m.S[j, k] for k in P[j]) == m.eta[j])
    # (8) a CU serves one request per slot
    m.c8 = pyo.Constraint(NC, TT, rule=lambda m, n, c, t: sum(m.C[j, t, n, c] for j in J) <= 1)
    # (9) a wavelength carries at most rho requests per slot
    m.c9 = pyo.Constraint(LB, TT, rule=lambda m, l, b, t: sum(
        m.f[j, t, l, b] for j in J) <= inst.rho)
    # (10) one wavelength per request, link and slot
    m.c10 = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: sum(
        m.f[j, t, l, b] for b in range(inst.links[l].wavelengths)) <= 1)
    # (11) ring size >= N_j
    m.c11 = pyo.Constraint(J, rule=lambda m, j: sum(
        m.S[j, k] * inst.rings[k].size for k in P[j]) >= n_expr(j))
    # (12)-(13) reliability; rings below r_j fixed to 0 (implied by 12-13)
    m.c12 = pyo.Constraint(J, rule=lambda m, j: m.Gamma[j] == sum(
        m.S[j, k] * inst.rings[k].reliability for k in P[j]))
    m.c13 = pyo.Constraint(J, rule=lambda m, j: m.Gamma[j] >= m.eta[j]
                           * inst.requests[j].reliability)
    for j, k in JK:
        if inst.rings[k].reliability < inst.requests[j].reliability:
            m.S[j, k].fix(0)
    # (14) O_{n,c}^j
    m.c14a = pyo.Constraint(JNC, rule=lambda m, j, n, c: m.Ojc[j, n, c] <= sum(
        m.C[j, t, n, c] for t in TT))
    m.c14b = pyo.Constraint(JNC, rule=lambda m, j, n, c: sum(
        m.C[j, t, n, c] for t in TT) <= T * m.Ojc[j, n, c])
    # (15) ON_n^j
    m.c15 = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.ON[j, n] == sum(
        m.Ojc[j, n, c] for c in range(inst.nodes[n].cus)))
    # (16) O_n^j
    m.c16a = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.On[j, n] <= m.ON[j, n])
    m.c16b = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.ON[j, n]
                            <= inst.nodes[n].cus * m.On[j, n])
    # (17) the source computes
    m.c17 = pyo.Constraint(J, rule=lambda m, j: m.On[j, inst.requests[j].source] == m.eta[j])
    # (18) O_{l,b}^j
    m.c18a = pyo.Constraint(JLB, rule=lambda m, j, l, b: m.Ojw[j, l, b] <= sum(
        m.f[j, t, l, b] for t in TT))
    m.c18b = pyo.Constraint(JLB, rule=lambda m, j, l, b: sum(
        m.f[j, t, l, b] for t in TT) <= T * m.Ojw[j, l, b])
    # (19) no wavelength off the selected ring; (20) one on each ring link
    m.c19 = pyo.ConstraintList()
    m.c20 = pyo.ConstraintList()
    for j, k in JK:
        on = set(inst.rings[k].links)
        for l in Ll:
            w = sum(m.Ojw[j, l, b] for b in range(inst.links[l].wavelengths))
            if l in on:
                m.c20.add(m.S[j, k] <= w)
            else:
                m.c19.add(w <= inst.links[l].wavelengths * (1 - m.S[j, k]))
    # one wavelength per request and link (fix of 25, see docstring)
    m.c10b = pyo.Constraint(J, Ll, rule=lambda m, j, l: sum(
        m.Ojw[j, l, b] for b in range(inst.links[l].wavelengths)) <= 1)
    # (22)-(24) nodes of the ring; computing nodes are the y's (fix)
    m.c22 = pyo.Constraint(JKN, rule=lambda m, j, k, n: m.y[j, k, n] <= m.S[j, k])
    m.c23 = pyo.Constraint(JKN, rule=lambda m, j, k, n: m.y[j, k, n] <= m.On[j, n])
    if all(not multi[j] for j in J):
        m.c24 = pyo.Constraint(JK, rule=lambda m, j, k: sum(
            m.y[j, k, n] for n in inst.rings[k].nodes)
            == m.S[j, k] * inst.requests[j].node_counts[0])
    else:
        m.c24 = pyo.Constraint(J, rule=lambda m, j: sum(
            m.y[j, k, n] for k in P[j] for n in inst.rings[k].nodes) == n_expr(j))
    m.c24b = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.On[j, n] == sum(
        m.y[j, k, n] for k in P[j] if n in inst.rings[k].nodes))
    # (25) wavelength continuity along the ring (fix: one wavelength on all its links)
    m.c25 = pyo.ConstraintList()
    for j, k in JK:
        lk = inst.rings[k].links
        for l1, l2 in zip(lk, (*lk[1:], lk[0]), strict=True):
            for b in range(max(inst.links[l1].wavelengths, inst.links[l2].wavelengths)):
                x1 = m.Ojw[j, l1, b] if b < inst.links[l1].wavelengths else 0
                x2 = m.Ojw[j, l2, b] if b < inst.links[l2].wavelengths else 0
                m.c25.add(x1 - x2 <= 1 - m.S[j, k])
                m.c25.add(x2 - x1 <= 1 - m.S[j, k])
    # (26)-(27) activated CUs and wavelengths
    m.c26a = pyo.Constraint(NC, rule=lambda m, n, c: m.Oc[n, c] <= sum(
        m.Ojc[j, n, c] for j in J))
    m.c26b = pyo.Constraint(NC, rule=lambda m, n, c: sum(
        m.Ojc[j, n, c] for j in J) <= nr * m.Oc[n, c])
    m.c27a = pyo.Constraint(LB, rule=lambda m, l, b: m.Ow[l, b] <= sum(
        m.Ojw[j, l, b] for j in J))
    m.c27b = pyo.Constraint(LB, rule=lambda m, l, b: sum(
        m.Ojw[j, l, b] for j in J) <= nr * m.Ow[l, b])
    # (28)-(29) occupancy of nodes and links per slot
    m.c28a = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: m.Ont[j, n, t] <= sum(
        m.C[j, t, n, c] for c in range(inst.nodes[n].cus)))
    m.c28b = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: sum(
        m.C[j, t, n, c] for c in range(inst.nodes[n].cus))
        <= inst.nodes[n].cus * m.Ont[j, n, t])
    m.c29a = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: m.Olt[j, l, t] <= sum(
        m.f[j, t, l, b] for b in range(inst.links[l].wavelengths)))
    m.c29b = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: sum(
        m.f[j, t, l, b] for b in range(inst.links[l].wavelengths)) <= m.Olt[j, l, t])
    # held CUs (fix, see docstring): a used CU serves every slot of the node's window
    m.held = pyo.Constraint([(j, t, n, c) for j, n, c in JNC for t in TT],
                            rule=lambda m, j, t, n, c: m.C[j, t, n, c]
                            >= m.Ojc[j, n, c] + m.Ont[j, n, t] - 1)
    # (30)-(31) window bounds where occupied
    m.c30a = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: m.Tsn[j, n]
                            <= t + T * (1 - m.Ont[j, n, t]))
    m.c30b = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: m.Ten[j, n]
                            >= t - T * (1 - m.Ont[j, n, t]))
    m.c31a = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: m.Tsl[j, l]
                            <= t + T * (1 - m.Olt[j, l, t]))
    m.c31b = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: m.Tel[j, l]
                            >= t - T * (1 - m.Olt[j, l, t]))

    # (32)-(33) contiguity per CU and per wavelength
    def c32(m, j, t, n, c):
        later = sum(m.C[j, t1, n, c] for t1 in range(t + 2, T + 1))
        return later <= (1 - m.C[j, t, n, c] + m.C[j, t + 1, n, c]) * (T - t - 1)

    def c33(m, j, t, l, b):
        later = sum(m.f[j, t1, l, b] for t1 in range(t + 2, T + 1))
        return later <= (1 - m.f[j, t, l, b] + m.f[j, t + 1, l, b]) * (T - t - 1)

    T2 = range(1, T - 1)
    m.c32 = pyo.Constraint([(j, t, n, c) for j, n, c in JNC for t in T2], rule=c32)
    m.c33 = pyo.Constraint([(j, t, l, b) for j, l, b in JLB for t in T2], rule=c33)
    # (34)-(35) window length equals the occupied slots
    big = 2 * T + 1
    m.c34 = pyo.ConstraintList()
    for j in J:
        for n in Nn:
            d = sum(m.Ont[j, n, t] for t in TT) - (m.Ten[j, n] - m.Tsn[j, n] + 1)
            m.c34.add(d <= big * (1 - m.On[j, n]))
            m.c34.add(d >= -big * (1 - m.On[j, n]))
    m.c35 = pyo.ConstraintList()
    for j, k in JK:
        for l in inst.rings[k].links:
            d = sum(m.Olt[j, l, t] for t in TT) - (m.Tel[j, l] - m.Tsl[j, l] + 1)
            m.c35.add(d <= big * (1 - m.S[j, k]))
            m.c35.add(d >= -big * (1 - m.S[j, k]))
    # (36)-(37) nothing outside [t_a, t_d]
    for j in J:
        r = inst.requests[j]
        for t in TT:
            if not r.arrival <= t <= r.deadline:
                for n in Nn:
                    m.Ont[j, n, t].fix(0)
                for l in Ll:
                    m.Olt[j, l, t].fix(0)
    # (38) window of the source inside [t_a, t_d]; a blocked request ends at 0
    m.c38 = pyo.ConstraintList()
    for j in J:
        r, s = inst.requests[j], inst.requests[j].source
        m.c38.add(m.Tsn[j, s] >= r.arrival * m.eta[j])
        m.c38.add(m.Tsn[j, s] <= m.Ten[j, s])
        m.c38.add(m.Ten[j, s] <= r.deadline + T * (1 - m.eta[j]))
        m.c38.add(m.Ten[j, s] <= T * m.eta[j])
    # (39)-(40) every computing node and ring link shares the source's window
    m.c39 = pyo.ConstraintList()
    for j in J:
        s = inst.requests[j].source
        for n in Nn:
            if n == s:
                continue
            for var_n, var_s in ((m.Tsn[j, n], m.Tsn[j, s]), (m.Ten[j, n], m.Ten[j, s])):
                m.c39.add(var_n - var_s <= T * (1 - m.On[j, n]))
                m.c39.add(var_s - var_n <= T * (1 - m.On[j, n]))
    m.c40 = pyo.ConstraintList()
    m.c41 = pyo.ConstraintList()
    for j, k in JK:
        s = inst.requests[j].source
        for l in inst.rings[k].links:
            for var_l, var_s in ((m.Tsl[j, l], m.Tsn[j, s]), (m.Tel[j, l], m.Ten[j, s])):
                m.c40.add(var_l - var_s <= T * (1 - m.S[j, k]))
                m.c40.add(var_s - var_l <= T * (1 - m.S[j, k]))
            # (41) ring links are lit whenever the source computes
            for t in TT:
                m.c41.add(m.S[j, k] + m.Ont[j, s, t] - 1 <= m.Olt[j, l, t])
    m._rar = "paper"
    return m



def _lp(model: Any, path) -> str:
    model.write(str(path), format="lp", io_options={"symbolic_solver_labels": True})
    return path.read_text()


@pytest.mark.parametrize("scheme", ["MinCU", "MinW", "MinT", "MaxR"])
@pytest.mark.parametrize(("seed", "flexible"), [(0, False), (1, True), (2, True)])
def test_paper_model_is_unchanged(tmp_path, scheme, seed, flexible):
    inst = dmlopt.generate("rar", {"generator": "random", "requests": 3, "slots": 5, "cus": 2,
                                   "extra_links": 2, "scheme": scheme, "flexible": flexible},
                           seed=seed)
    new = _lp(build_paper(inst), tmp_path / "new.lp")
    old = _lp(_old_build_paper(inst), tmp_path / "old.lp")
    assert new == old
    assert "c41" in new and "c5" in new


def test_paper_model_is_unchanged_on_cpn6(tmp_path):
    """The 6-node network of section 6 (several rings per source, rings below a request's
    reliability fixed to 0, requests outside their [t_a, t_d])."""
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 2, "slots": 6}, seed=4)
    assert _lp(build_paper(inst), tmp_path / "new.lp") == _lp(_old_build_paper(inst),
                                                               tmp_path / "old.lp")

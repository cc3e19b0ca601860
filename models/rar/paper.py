"""RAR (paper 003): the ILP of the paper (eqs. 4-41), formulation ``paper``.

Registered in :data:`dmlopt.models.rar.formulations.FORMULATIONS`, which re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dmlopt.exact import ModelSize
from dmlopt.models.rar.instance import Instance, node_work


def _ring_sets(instance: Instance) -> dict[int, list[int]]:
    """Request -> rings offered (through s_j with room for the fewest nodes; P_j)."""
    out = {}
    for j, r in enumerate(instance.requests):
        need = min(r.node_counts)
        out[j] = [k for k in instance.rings_through[r.source] if instance.rings[k].size >= need]
    return out


def _objective_expr(instance: Instance, eta, zeta):
    """Eq. (4): (1 - sum eta / |R|) + alpha zeta."""
    nr = len(instance.requests)
    return (1 - sum(eta[j] for j in range(nr)) / nr) + instance.alpha_of() * zeta


def build_paper(instance: Instance) -> Any:
    """The ILP of section 4.D, eqs. (4)-(41), with per-CU and per-wavelength binaries over
    time and the fixes of the module docstring.

    Built by the paper's equation groups, in this order: variables, objective (4), resources
    (5)-(13), usage indicators (14)-(20), ring nodes (22)-(25), activation and occupancy
    (26)-(29), windows (30)-(35), time frame (36)-(41).

    Parameters
    ----------
    instance : Instance
        The RAR instance: network, enumerated rings, requests, slots, rho and the scheme
        (MinCU, MinW, MinT or MaxR) that sets zeta and alpha of eq. (4).

    Returns
    -------
    pyomo.environ.ConcreteModel
        Binaries ``eta[j]`` (deployed), ``C[j, t, n, c]`` (CU c of node n serves j in slot t),
        ``f[j, t, l, b]`` (wavelength b of link l), ``S[j, k]`` (ring k), the indicators
        ``On``, ``Oc``, ``Ow``, ``Ojc``, ``Ojw``, ``Ont``, ``Olt``, ``y``, integer ``ON`` (CUs
        per node) and the window bounds ``Tsn``, ``Ten``, ``Tsl``, ``Tel`` (slots 1..|T|);
        objective ``obj`` (eq. 4, minimised); constraints ``c5`` ... ``c41`` named by
        equation.

    References
    ----------
    Paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D, equations (4)-(41), with the
    objective terms of section 4.C. The fixes (held CUs, one wavelength on every ring link,
    computing nodes on the selected ring, eq. (30) per slot, smallest big-M constants) are
    listed in :mod:`dmlopt.models.rar`'s docstring and tested against a brute force.
    """
    import pyomo.environ as pyo

    ix = _paper_sets(instance)
    m = pyo.ConcreteModel(name=f"rar_paper_{instance.name}")
    _paper_variables(m, instance, ix)
    _paper_objective(m, instance, ix)
    _paper_resources(m, instance, ix)
    _paper_indicators(m, instance, ix)
    _paper_ring_nodes(m, instance, ix)
    _paper_occupancy(m, instance, ix)
    _paper_windows(m, instance, ix)
    _paper_time_frame(m, instance, ix)
    m._rar = "paper"
    return m


@dataclass(frozen=True)
class _PaperSets:
    """Index sets of the paper ILP: requests J, slots TT = 1..T, nodes Nn, links Ll, the rings
    P[j] offered to request j, the (request, node, CU), (request, link, wavelength), (node,
    CU), (link, wavelength), (request, ring), (request, ring, node) and (request, node count)
    tuples, and which requests allow several node counts."""

    nr: int
    T: int
    J: range
    TT: range
    Nn: range
    Ll: range
    P: dict[int, list[int]]
    JNC: list[tuple[int, int, int]]
    JLB: list[tuple[int, int, int]]
    NC: list[tuple[int, int]]
    LB: list[tuple[int, int]]
    JK: list[tuple[int, int]]
    JKN: list[tuple[int, int, int]]
    JM: list[tuple[int, int]]
    multi: dict[int, bool]


def _paper_sets(inst: Instance) -> _PaperSets:
    """The index sets of :func:`build_paper`."""
    nr, T = len(inst.requests), inst.slots
    J = range(nr)
    Nn = range(len(inst.nodes))
    Ll = range(len(inst.links))
    P = _ring_sets(inst)
    JK = [(j, k) for j in J for k in P[j]]
    return _PaperSets(
        nr=nr, T=T, J=J, TT=range(1, T + 1), Nn=Nn, Ll=Ll, P=P,
        JNC=[(j, n, c) for j in J for n in Nn for c in range(inst.nodes[n].cus)],
        JLB=[(j, l, b) for j in J for l in Ll for b in range(inst.links[l].wavelengths)],
        NC=[(n, c) for n in Nn for c in range(inst.nodes[n].cus)],
        LB=[(l, b) for l in Ll for b in range(inst.links[l].wavelengths)],
        JK=JK, JKN=[(j, k, n) for j, k in JK for n in inst.rings[k].nodes],
        JM=[(j, nn) for j in J for nn in inst.requests[j].node_counts],
        multi={j: len(inst.requests[j].node_counts) > 1 for j in J})


def _n_expr(m: Any, inst: Instance, j: int) -> Any:
    """N_j eta_j, or sum_N N mode_{j,N} (the computing nodes of request j)."""
    return sum(nn * m.mode[j, nn] for nn in inst.requests[j].node_counts)



def _paper_variables(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """The variables of section 4.D (the binaries over time, indicators, windows) and the
    choice of N_j among the allowed node counts (ours: ``mode``)."""
    import pyomo.environ as pyo

    T, J, TT, Nn, Ll, JNC = ix.T, ix.J, ix.TT, ix.Nn, ix.Ll, ix.JNC
    JLB, NC, LB, JK, JKN, JM = ix.JLB, ix.NC, ix.LB, ix.JK, ix.JKN, ix.JM
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
    m.mode = pyo.Var(JM, domain=pyo.Binary)  # N_j choice (one value: equals eta_j)


def _paper_objective(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """Eq. (4): blocking rate + alpha zeta, zeta and alpha of the scheme (section 4.C);
    ``mode_sum``: one node count per deployed request."""
    import pyomo.environ as pyo

    J, NC, LB = ix.J, ix.NC, ix.LB
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


def _paper_resources(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """Eqs. (5)-(13): CU-slots per node, wavelengths on the ring, one ring per deployed
    request, a CU serves one request and a wavelength at most rho per slot, ring size and
    reliability."""
    import pyomo.environ as pyo

    J, TT, Nn, Ll = ix.J, ix.TT, ix.Nn, ix.Ll
    P, NC, LB, JK, multi = ix.P, ix.NC, ix.LB, ix.JK, ix.multi
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
        m.S[j, k] * inst.rings[k].size for k in P[j]) >= _n_expr(m, inst, j))
    # (12)-(13) reliability; rings below r_j fixed to 0 (implied by 12-13)
    m.c12 = pyo.Constraint(J, rule=lambda m, j: m.Gamma[j] == sum(
        m.S[j, k] * inst.rings[k].reliability for k in P[j]))
    m.c13 = pyo.Constraint(J, rule=lambda m, j: m.Gamma[j] >= m.eta[j]
                           * inst.requests[j].reliability)
    for j, k in JK:
        if inst.rings[k].reliability < inst.requests[j].reliability:
            m.S[j, k].fix(0)


def _paper_indicators(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """Eqs. (14)-(20): the indicators O of CUs, nodes and wavelengths used by a request, the
    source computes, no wavelength off the selected ring and one on each of its links."""
    import pyomo.environ as pyo

    T, J, TT, Nn, Ll, JNC, JLB, JK = ix.T, ix.J, ix.TT, ix.Nn, ix.Ll, ix.JNC, ix.JLB, ix.JK
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


def _paper_ring_nodes(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """Eqs. (22)-(25): the computing nodes lie on the selected ring (the y's, fix), N_j of
    them, and one wavelength along the whole ring (fix of eq. 25)."""
    import pyomo.environ as pyo

    J, Nn, P, JK, JKN, multi = ix.J, ix.Nn, ix.P, ix.JK, ix.JKN, ix.multi
    # (22)-(24) nodes of the ring; computing nodes are the y's (fix)
    m.c22 = pyo.Constraint(JKN, rule=lambda m, j, k, n: m.y[j, k, n] <= m.S[j, k])
    m.c23 = pyo.Constraint(JKN, rule=lambda m, j, k, n: m.y[j, k, n] <= m.On[j, n])
    if all(not multi[j] for j in J):
        m.c24 = pyo.Constraint(JK, rule=lambda m, j, k: sum(
            m.y[j, k, n] for n in inst.rings[k].nodes)
            == m.S[j, k] * inst.requests[j].node_counts[0])
    else:
        m.c24 = pyo.Constraint(J, rule=lambda m, j: sum(
            m.y[j, k, n] for k in P[j] for n in inst.rings[k].nodes) == _n_expr(m, inst, j))
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


def _paper_occupancy(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """Eqs. (26)-(29): activated CUs and wavelengths, occupancy of nodes and links per slot;
    and the held CUs (fix: a used CU serves every slot of its node's window)."""
    import pyomo.environ as pyo

    nr, J, TT, Nn, Ll, JNC, NC, LB = ix.nr, ix.J, ix.TT, ix.Nn, ix.Ll, ix.JNC, ix.NC, ix.LB
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


def _paper_windows(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """Eqs. (30)-(35): the windows of nodes and links bound the occupied slots, are
    contiguous per CU and per wavelength, and their lengths equal the occupied slots."""
    import pyomo.environ as pyo

    T, J, TT, Nn, Ll = ix.T, ix.J, ix.TT, ix.Nn, ix.Ll
    JNC, JLB, JK = ix.JNC, ix.JLB, ix.JK
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


def _paper_time_frame(m: Any, inst: Instance, ix: _PaperSets) -> None:
    """Eqs. (36)-(41): nothing outside [t_a, t_d], the source's window inside it, every
    computing node and ring link shares the source's window and ring links are lit whenever
    the source computes."""
    import pyomo.environ as pyo

    T, J, TT, Nn, Ll, JK = ix.T, ix.J, ix.TT, ix.Nn, ix.Ll, ix.JK
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


def _size_paper(instance: Instance) -> ModelSize:
    """Variables and constraints of :func:`build_paper` (an upper bound), with its nonzeros
    (:func:`_nonzeros_paper`) as ``nonzeros``: the windows' rows (32)-(33) are |T| long, so
    the model grows as |T|^2 where its rows grow as |T|."""
    inst = instance
    nr, T = len(inst.requests), inst.slots
    nn, nl = len(inst.nodes), len(inst.links)
    sc, sw = inst.total_cus, inst.total_wavelengths
    P = _ring_sets(inst)
    nk = sum(len(v) for v in P.values())
    nkn = sum(inst.rings[k].size for v in P.values() for k in v)
    n_vars = (nr * T * (sc + sw) + nr * (sc + sw) + sc + sw + nr * T * (nn + nl)
              + nk + nkn + nr * (2 + 4 * nn + 2 * nl)
              + sum(len(r.node_counts) for r in inst.requests))
    n_cons = (3 * nr * T * sc + 2 * nr * T * sw + T * (sc + sw) + 2 * nr * (sc + sw)
              + 6 * nr * T * (nn + nl) + nk * (nl + 4 * T + 4 * nl) + 2 * nk * 20
              + 3 * nkn + nr * (10 + 8 * nn) + 2 * (sc + sw))
    return ModelSize(n_vars, n_cons, _nonzeros_paper(inst, P))


def _nonzeros_paper(inst: Instance, P: dict[int, list[int]]) -> int:
    """Nonzeros of :func:`build_paper`'s constraints (an upper bound: fixed variables
    counted), equation group by group; eqs. (32)-(33) dominate with |R| (CUs + wavelengths)
    |T| (|T| + 1) / 2."""
    nr, T = len(inst.requests), inst.slots
    nn, nl = len(inst.nodes), len(inst.links)
    sc, sw = inst.total_cus, inst.total_wavelengths
    nk = sum(len(v) for v in P.values())
    nkn = sum(inst.rings[k].size for v in P.values() for k in v)
    nkl = sum(len(inst.rings[k].links) for v in P.values() for k in v)
    ncount = sum(len(r.node_counts) for r in inst.requests)
    maxw = max(lk.wavelengths for lk in inst.links)
    windows = nr * (sc + sw) * (T * (T + 1) // 2)  # (32)-(33)
    # (5), (8)-(10), (28)-(31), the held CUs, (34)
    per_slot = nr * T * (sc + 3 * sw + 2 * (sc + nn) + 2 * (sw + nl) + 3 * sc + 4 * (nn + nl)
                         + 2 * nn) + ncount * T * sc
    per_ring = (nk * (2 * sw + nl + 3) + 6 * nkl * maxw + nkl * (3 * T + 2 * T + 18)
                + 6 * nkn)  # (6)-(7), (19)-(20), (22)-(25), (35), (40)-(41)
    rest = (2 * nr * (sc + sw) * (T + 1) + 2 * (sc + sw) * (nr + 1) + ncount * 4
            + nr * (sc + 20 * nn + 30))  # (11)-(18), (26)-(27), (38)-(39), mode_sum
    return windows + per_slot + per_ring + rest

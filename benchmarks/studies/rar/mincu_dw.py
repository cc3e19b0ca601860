"""RAR MinCU (paper 003): the Dantzig-Wolfe bound with per-node schedule columns.

Does per-node packing explain MinCU's gap at 10 requests? This script answers it by column
generation. The master is the LP relaxation of the ``aggregated`` formulation (request side:
mode and start, ring, computing nodes, source; eqs. 17, 21-24) in which every node's activated
CUs come from one convex combination of *node schedules*: a set of (request, mode, start) items
run on that node, costing its peak CU usage (eqs. 8 and 4 with zeta_1). The pricing problem of
node n is a small MIP (at most one item per request, peak >= usage in every slot, peak <= |C_n|)
solved by HiGHS. At convergence the master value is the Dantzig-Wolfe bound: the intersection of
the per-node integer hulls with the request-side LP. If it stays at the LP bound, no per-node
cut or column generation can prove the optimum and the gap lies in how requests couple nodes.
Wavelengths are left out: the bound stays valid (a relaxation), and on ``cpn6`` with 10 requests
they cannot bind anyway (|R| <= rho min_l |W_l|, so ``aggregated`` has no wavelength rows).

    python -m benchmarks.studies.rar.mincu_dw -o DIR --seed 0 --requests 10

Prints the master value and the Lagrangian bound per round, in CUs (objective x sum |C_n|).
"""

from __future__ import annotations

import argparse
import time

import highspy
import numpy as np

from dmlopt import solvers
from dmlopt.models import rar
from dmlopt.models.rar.formulations import _mode_starts

from .. import ArgumentParser, output_dir, tee

INF = highspy.kHighsInf


class Master:
    """The restricted master LP, built with highspy (rows and columns by name)."""

    def __init__(self, inst: rar.Instance) -> None:
        self.inst = inst
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("threads", 1)
        self.col: dict[tuple, int] = {}
        self.row: dict[tuple, int] = {}
        self.patterns: dict[int, set[frozenset]] = {n: set() for n in range(len(inst.nodes))}
        J = range(len(inst.requests))
        self.ms = {j: _mode_starts(inst, j) for j in J}
        self.rings = {j: inst.candidate_rings(j) for j in J}
        self.nodes = {j: sorted({v for k in self.rings[j] for v in inst.rings[k].nodes})
                      for j in J}
        scale = 1.0 / inst.alpha_of()  # objective in CUs: sum A + scale / |R| per blocked
        block = scale / len(inst.requests)
        self.h.changeObjectiveOffset(block * len(inst.requests))
        for j in J:
            self._var(("eta", j), -block)
            for k in self.rings[j]:
                self._var(("a", j, k))
            for q in range(len(self.ms[j])):
                self._var(("q", j, q))
            for n in self.nodes[j]:
                self._var(("y", j, n))
                for q, (_, k, _, _) in enumerate(self.ms[j]):
                    if inst.nodes[n].cus >= k:
                        self._var(("w", j, n, q))
        for j in J:
            qs = range(len(self.ms[j]))
            self._row(("mode", j), 0, 0, [(("q", j, q), 1) for q in qs] + [(("eta", j), -1)])
            self._row(("ring", j), 0, 0, [(("a", j, k), 1) for k in self.rings[j]]
                      + [(("eta", j), -1)])
            for q, (nn, _, _, _) in enumerate(self.ms[j]):  # eq. (24): N_j computing nodes
                self._row(("count", j, q), 0, 0, [(("w", j, n, q), 1) for n in self.nodes[j]
                                                  if ("w", j, n, q) in self.col]
                          + [(("q", j, q), -nn)])
            for n in self.nodes[j]:
                self._row(("y", j, n), 0, 0, [(("w", j, n, q), 1) for q in qs
                                              if ("w", j, n, q) in self.col]
                          + [(("y", j, n), -1)])
                self._row(("on_ring", j, n), -INF, 0, [(("y", j, n), 1)] + [
                    (("a", j, k), -1) for k in self.rings[j] if n in inst.rings[k].nodes])
            src = inst.requests[j].source  # eq. (17); no ring through it: blocked
            self._row(("source", j), 0, 0, ([(("y", j, src), 1)] if src in self.nodes[j] else [])
                      + [(("eta", j), -1)])
        for n in range(len(inst.nodes)):  # convexity, then "columns cover w" per item
            self._row(("convex", n), 1, 1, [])
            for j in J:
                for q in range(len(self.ms[j])):
                    if ("w", j, n, q) in self.col:
                        self._row(("cover", j, n, q), 0, INF, [(("w", j, n, q), -1)])
            self.add_column(n, [])

    def run(self) -> None:
        """Solve the restricted master LP (one thread: HiGHS's scheduler is process-wide)."""
        solvers.prepare_highs(1)
        self.h.run()

    def _var(self, name: tuple, cost: float = 0.0) -> None:
        self.col[name] = self.h.getNumCol()
        self.h.addVar(0, 1)
        self.h.changeColCost(self.col[name], cost)

    def _row(self, name: tuple, lo: float, hi: float, terms: list) -> None:
        idx = np.array([self.col[t] for t, _ in terms], dtype=np.int32)
        val = np.array([float(v) for _, v in terms])
        self.row[name] = self.h.getNumRow()
        self.h.addRow(lo, hi, len(idx), idx, val)

    def items(self, n: int) -> list[tuple[int, int]]:
        """(request, mode-start) pairs node n may run."""
        return [(j, q) for j in range(len(self.inst.requests)) for q in range(len(self.ms[j]))
                if ("cover", j, n, q) in self.row]

    def peak(self, items: list[tuple[int, int]]) -> int:
        use = np.zeros(self.inst.slots + 2, dtype=np.int64)
        for j, q in items:
            _, k, d, s = self.ms[j][q]
            use[s:s + d] += k
        return int(use.max())

    def add_column(self, n: int, items: list[tuple[int, int]]) -> bool:
        key = frozenset(items)
        if key in self.patterns[n]:
            return False
        self.patterns[n].add(key)
        idx = [self.row[("convex", n)]] + [self.row[("cover", j, n, q)] for j, q in items]
        self.h.addCol(float(self.peak(items)), 0, INF, len(idx),
                      np.array(idx, dtype=np.int32), np.ones(len(idx)))
        return True


def price(master: Master, n: int, dual: np.ndarray) -> tuple[list[tuple[int, int]], float]:
    """The node-n schedule of least reduced cost (peak - duals of its items), by a HiGHS MIP."""
    inst, ms = master.inst, master.ms
    cand = [(j, q) for j, q in master.items(n) if dual[master.row[("cover", j, n, q)]] > 1e-9]
    if not cand:
        return [], 0.0
    mu = [dual[master.row[("cover", j, n, q)]] for j, q in cand]
    p = highspy.Highs()
    p.setOptionValue("output_flag", False)
    p.setOptionValue("threads", 1)
    p.setOptionValue("mip_rel_gap", 0.0)
    for i in range(len(cand)):
        p.addVar(0, 1)
        p.changeColCost(i, -mu[i])
        p.changeColIntegrality(i, highspy.HighsVarType.kInteger)
    peak = len(cand)
    p.addVar(0, inst.nodes[n].cus)
    p.changeColCost(peak, 1.0)
    p.changeColIntegrality(peak, highspy.HighsVarType.kInteger)
    by_request: dict[int, list[int]] = {}
    for i, (j, _) in enumerate(cand):
        by_request.setdefault(j, []).append(i)
    for idx in by_request.values():  # one mode-start per request on this node
        p.addRow(-INF, 1, len(idx), np.array(idx, dtype=np.int32), np.ones(len(idx)))
    for t in range(1, inst.slots + 1):  # peak >= usage in slot t
        idx = [i for i, (j, q) in enumerate(cand) if ms[j][q][3] <= t < ms[j][q][3] + ms[j][q][2]]
        if idx:
            val = [float(ms[cand[i][0]][cand[i][1]][1]) for i in idx] + [-1.0]
            p.addRow(-INF, 0, len(idx) + 1, np.array(idx + [peak], dtype=np.int32),
                     np.array(val))
    solvers.prepare_highs(1)  # HiGHS's process-wide scheduler: one thread count at a time
    p.run()
    x = p.getSolution().col_value
    return [cand[i] for i in range(len(cand)) if x[i] > 0.5], p.getInfo().objective_function_value


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.rar.mincu_dw",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (NAME.md) and writes (created)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--max-rounds", type=int, default=500)
    args = ap.parse_args(argv)
    out = output_dir(args.out)
    with tee(out / "rar_mincu_dw.md"):
        _run(args)


def _run(args: argparse.Namespace) -> None:
    inst = rar.generate_cpn6(seed=args.seed, requests=args.requests, scheme="MinCU")
    master = Master(inst)
    t0 = time.time()
    value = lagrange = float("nan")
    for rnd in range(1, args.max_rounds + 1):
        master.run()
        value = master.h.getInfo().objective_function_value
        dual = np.asarray(master.h.getSolution().row_dual)
        lagrange, added = value, 0
        for n in range(len(inst.nodes)):
            items, reduced = price(master, n, dual)
            reduced -= dual[master.row[("convex", n)]]
            if reduced < -1e-6:
                lagrange += reduced
                added += master.add_column(n, items)
        print(f"round {rnd}: master {value:.4f} CUs, Lagrangian bound {lagrange:.4f}, "
              f"columns {sum(map(len, master.patterns.values()))}, {time.time() - t0:.1f} s",
              flush=True)
        if not added:
            break
    print(f"seed {args.seed}, {args.requests} requests: Dantzig-Wolfe bound {value:.4f} CUs "
          f"(objective {value * inst.alpha_of():.5f}), {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()

"""Validity sweep: every exact formulation, bound method and heuristic on unseen small instances.

For each problem with an objective (tap, nara, inc_oxc, rar, tabgp) and each seed of
``--seeds``, it draws one small instance per case of :data:`CASES` (every generator of the
problem, with sizes, densities, schemes and edge cases drawn from the seed) and checks:

* ``solve``: each exact formulation with each solver it offers (HiGHS, SCIP when installed) and
  the default ``dmlopt.solve`` (which runs a bound method declared exact first), also cut
  short at 0.01 s and 0.3 s; an ``optimal`` status must come with a feasible solution whose
  objective ``dmlopt.evaluate`` reproduces;
* ``agree``: all proven optima agree within the optimality gap (1e-4 relative);
* ``brute``: on tiny instances an enumeration written here, without the package's scoring
  helpers, equals the proven optimum;
* ``bound``: every registered bound method with default options at ``--time-limit`` and at
  1e-3 s, and the dual bound of every exact solve: on the right side of every feasible objective
  found on the instance (lower bound of a minimum, upper bound of a maximum; 1e-6 relative
  slack); its own ``objective``, if any, re-evaluated;
* ``heuristic``: every heuristic (short time budgets), its solution feasible by the evaluator,
  its objective the evaluator's and never better than the proven optimum;
* ``hang``: generating an instance and all its checks end within ``--watchdog`` seconds
  (default 40 times ``--time-limit``; SIGALRM, so a loop in Python code is caught);
* ``crash``: where there is ``os.fork``, each instance is checked in a child process, so a
  solver that ends the process (a segmentation fault in its C code) becomes a violation row
  naming the signal and the sweep goes on with the next instance.

A bound or optimum valid only for a sub-model is compared only with solutions of that
sub-model (INC/OXC: ``jobs``, ``bisection``, ``placements-static`` and the MILPs hold for static
OXC port pairings, so a heuristic returning a time-shared ``oxc_schedule`` is compared only
with the bounds valid for every solution; Nara's ``request`` formulation models request 0 alone
and is left out).

Writes ``checks.csv`` (one line per problem, instance and check, flushed at once, so Ctrl-C
loses no finished line) and ``log.txt`` under DIR; prints a summary (checks and violations per
problem and kind); exits 1 when any check is violated.

    python -m benchmarks.studies.harness.validity -o DIR [--problems tap rar ...]
        [--seeds 7000-7009] [--time-limit 20]
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import dmlopt
from dmlopt import registry, solvers
from dmlopt.errors import DmloptError, Interrupted, ObjectiveMismatchError

from .. import ArgumentParser, output_dir, tee

#: the problems swept by default (those with exact formulations and bounds)
PROBLEMS = ("tap", "nara", "inc_oxc", "rar", "tabgp")

#: formulations left out: they model a sub-problem (their optimum is not the problem's)
SUBPROBLEM = {"nara": ("request",)}

#: bound methods (and formulations) valid only for a sub-model, and the test of whether a
#: solution lies in that sub-model (INC/OXC: static OXC port pairings)
RESTRICTED = {
    "inc_oxc": (("jobs", "bisection", "placements-static"),
                lambda sol: not getattr(sol, "oxc_schedule", None)),
}

#: heuristic options that keep a run short on a tiny instance (defaults otherwise)
HEURISTIC_OPTIONS = {
    "nara": {"offline-search": {"time_limit": 2.0, "iterations": 300},
             "milp": {"time_limit": 5.0}},
    "inc_oxc": {"wcg-ls": {"time_limit": 0.5}, "wcg-lns": {"time_limit": 2.0, "ls_time": 0.5,
                                                           "milp_time": 1.0}},
    "tap": {"rts": {"time_limit": 0.5}},
    "tabgp": {"ils": {"iterations": 20}, "best": {"iterations": 20}},
}

#: relative slack of a bound against a feasible objective (bounds move 1e-6 to the weak side)
BOUND_SLACK = 1e-6
#: the short time limit every bound method must also survive (seconds)
SHORT_LIMIT = 1e-3
#: short time limits of the default solve (its exact bound method and MIP cut short: a status
#: ``optimal`` must still be proven)
SHORT_SOLVES = (0.01, 0.3)

FIELDS = ("problem", "instance", "seed", "spec", "check", "method", "status", "value",
          "reference", "excess", "violation", "detail", "seconds")


# --- instance cases: one function per (problem, case), a spec from a seeded Random ---------------

def _tap_cases() -> dict[str, Callable[[random.Random], dict]]:
    return {
        "mixed": lambda r: {"generator": "random", "m": r.randint(2, 5), "n": r.randint(2, 5),
                            "K": r.choice([1, 1, 2, 3]), "density": r.choice([0.0, 0.3, 0.6, 1.0]),
                            "max_weight": r.choice([1, 3, 10]), "max_dist": r.choice([1, 2, 5])},
        "single": lambda r: {"generator": "random", "m": 1, "n": r.randint(1, 3)},
        "ties": lambda r: {"generator": "random", "m": r.randint(3, 6), "n": r.randint(3, 6),
                           "K": 2, "density": 1.0, "max_weight": 1, "max_dist": 1},
        "dc-fat-tree": lambda r: {"generator": "dc", "topology": "fat-tree", "k": 4,
                                  "overlay": r.choice(["ps", "allreduce", "ring", "random"]),
                                  "modules": r.randint(3, 6), "vms": r.randint(4, 7),
                                  "K": r.choice([1, 2])},
        "dc-leaf-spine": lambda r: {"generator": "dc", "topology": "leaf-spine", "leaves": 2,
                                    "spines": 1, "servers_per_leaf": 3,
                                    "overlay": r.choice(["ps", "ring", "random"]),
                                    "modules": r.randint(2, 6), "K": r.choice([1, 2])},
        "dc-dcell": lambda r: {"generator": "dc", "topology": "dcell", "dcell_n": 2,
                               "dcell_level": 1, "overlay": r.choice(["allreduce", "random"]),
                               "modules": r.randint(2, 6), "K": r.choice([1, 2])},
    }


def _nara_cases() -> dict[str, Callable[[random.Random], dict]]:
    def gen(name: str) -> Callable[[random.Random], dict]:
        def spec(r: random.Random) -> dict:
            out = {"generator": name, "topology": r.choice(["alpha", "beta"]),
                   "n_requests": r.randint(1, 6), "load": r.choice([None, 0.5, 2.0, 8.0]),
                   "k": r.choice([1, 3])}
            if name == "uniform":
                out["max_units"] = r.choice([1, 10, 50, 100])
            return out
        return spec
    return {name: gen(name) for name in ("uniform", "azure", "alibaba")}


def _inc_oxc_cases() -> dict[str, Callable[[random.Random], dict]]:
    return {
        "small": lambda r: {"generator": "small", "racks": r.randint(1, 3),
                            "jobs": r.randint(1, 3), "inc": r.random() < 0.7,
                            "alpha": r.choice([0.0, 0.5, 2.0])},
        "large": lambda r: {"generator": "large", "racks": r.randint(2, 3), "jobs": r.randint(1, 2),
                            "workers": [1, r.randint(1, 4)], "inc": r.random() < 0.7},
        "dcn": lambda r: {"generator": "dcn", "racks": r.randint(2, 3), "jobs": r.randint(1, 3),
                          "ports": r.randint(1, 3), "workers": [1, r.randint(1, 3)],
                          "pdp_fraction": r.choice([0.0, 0.5, 1.0]),
                          "ps_per_switch": r.choice([0, 1, 2]),
                          "data": r.choice([[100, 100], [92, 552]]),
                          "inc": r.random() < 0.7, "alpha": r.choice([0.0, 0.5])},
    }


def _rar_cases() -> dict[str, Callable[[random.Random], dict]]:
    schemes = ["MinCU", "MinW", "MinT", "MaxR"]
    return {
        "random": lambda r: {"generator": "random", "nodes": r.randint(3, 5),
                             "extra_links": r.randint(0, 2), "requests": r.randint(1, 3),
                             "slots": r.randint(2, 5), "cus": r.randint(1, 3),
                             "wavelengths": r.randint(1, 2), "rho": r.randint(1, 2),
                             "scheme": r.choice(schemes), "flexible": r.random() < 0.3},
        "tiny": lambda r: {"generator": "random", "nodes": 4, "extra_links": r.randint(1, 2),
                           "requests": 2, "slots": 3, "cus": 2, "wavelengths": r.randint(1, 2),
                           "rho": 1, "scheme": r.choice(schemes)},
        "cpn6": lambda r: {"generator": "cpn6", "requests": r.randint(1, 3),
                           "slots": r.randint(6, 8), "scheme": r.choice(schemes)},
    }


def _tabgp_cases() -> dict[str, Callable[[random.Random], dict]]:
    return {
        "er": lambda r: {"generator": "er", "n": r.randint(2, 7),
                         "p": r.choice([0.0, 0.3, 0.6, 1.0]), "tau": r.randint(1, 3),
                         "l": r.randint(1, 3), "a": r.choice([1.0, 1.0, 1.5, 3.0]),
                         "alpha": r.choice([0.0, 0.5, 3.0])},
        "tiny": lambda r: {"generator": "er", "n": r.randint(3, 5), "p": 0.5,
                           "tau": r.randint(2, 3), "l": 2, "alpha": r.choice([0.0, 1.0, 3.0])},
        "drift": lambda r: {"generator": "drift", "n": r.randint(4, 7), "tau": r.randint(1, 3),
                            "l": r.randint(2, 3), "m": r.randint(0, 8),
                            "mix": r.choice([0.0, 0.5]), "drift": r.choice([0.0, 0.3]),
                            "a": r.choice([1.0, 1.5]), "alpha": r.choice([0.0, 1.0, 3.0]),
                            "weighted": r.random() < 0.5},
    }


CASES: dict[str, Callable[[], dict[str, Callable[[random.Random], dict]]]] = {
    "tap": _tap_cases, "nara": _nara_cases, "inc_oxc": _inc_oxc_cases, "rar": _rar_cases,
    "tabgp": _tabgp_cases,
}


def instances(problem: str, seeds: range | list[int]) -> Iterator[tuple[str, dict, int]]:
    """(label, spec, seed) of every case of ``problem`` and seed (the instance is
    ``dmlopt.generate(problem, spec, seed=seed)``)."""
    for seed in seeds:
        for idx, (case, draw) in enumerate(CASES[problem]().items()):
            yield f"{case}-s{seed}", draw(random.Random(seed * 1009 + idx)), seed


class Hang(Exception):
    """An instance's generation and checks ran past the watchdog (a loop that ignores every
    time limit)."""


def _hang(signum: int, frame: Any) -> None:
    raise Hang


# --- brute forces: plain Python enumerations, no scoring helper of the package ------------------

def brute_tap(inst: Any, cap: int = 20000) -> float | None:
    """min over assignments of sum_{i,i'} M[i][i'] D[a_i][a_i'] with at most K modules per VM."""
    m, n = inst.m, inst.n
    if n ** m > cap:
        return None
    traffic = [[float(x) for x in row] for row in inst.M]
    dist = np.asarray(inst.distance, dtype=float).tolist()
    best = math.inf
    for a in itertools.product(range(n), repeat=m):
        if max(a.count(j) for j in set(a)) > inst.K:
            continue
        best = min(best, sum(traffic[i][h] * dist[a[i]][a[h]]
                             for i in range(m) for h in range(m) if traffic[i][h]))
    return best


def brute_tabgp(inst: Any, cap: int = 300) -> float | None:
    """min of sum_t cut_t + alpha * migrations over labellings with at most k per label (DP)."""
    n, lab, k = inst.n, inst.l, inst.k
    if lab ** n > cap:
        return None
    weights = inst.weights or [[1.0] * len(step) for step in inst.edges]
    labellings = [a for a in itertools.product(range(lab), repeat=n)
                  if max(a.count(i) for i in range(lab)) <= k]
    best: list[float] | None = None
    for step, w in zip(inst.edges, weights, strict=True):
        cut = [sum(x for (u, v), x in zip(step, w, strict=True) if a[u] != a[v])
               for a in labellings]
        if best is None:
            best = cut
            continue
        prev = best
        best = [cut[j] + min(prev[i] + inst.alpha * sum(x != y for x, y in zip(a, b, strict=True))
                             for i, a in enumerate(labellings))
                for j, b in enumerate(labellings)]
    return min(best) if best else None


def _rar_options(inst: Any, j: int, cap: int) -> list[tuple] | None:
    """Every deployment of request j: ring, node tuple, CUs per node, window, wavelength (None
    when there are more than ``cap``)."""
    from dmlopt.models import rar

    r = inst.requests[j]
    out = []
    for ring in inst.rings:
        if r.source not in ring.nodes or ring.reliability < r.reliability:
            continue
        others = [v for v in ring.nodes if v != r.source]
        for nn in r.node_counts:
            for rest in itertools.combinations(others, nn - 1):
                nodes = (r.source, *rest)
                if math.prod(inst.nodes[v].cus for v in nodes) > cap:
                    return None
                for ks in itertools.product(*(range(1, inst.nodes[v].cus + 1) for v in nodes)):
                    if len(out) > cap:
                        return None
                    need = max(rar.duration(inst, j, nn, k) for k in ks)
                    for s in range(r.arrival, r.deadline + 1):
                        for e in range(s + need - 1, r.deadline + 1):
                            for b in range(min(inst.links[i].wavelengths for i in ring.links)):
                                out.append((ring, nodes, ks, s, e, b))
    return out


def brute_rar(inst: Any, cap: int = 200000) -> float | None:
    """min of eq. (4) for the instance's scheme over every combination of deployments (or
    blocking) per request; activated CUs are the per-node peak usage (own bookkeeping)."""
    nr, slots = len(inst.requests), inst.slots
    opts = []
    for j in range(nr):
        own = _rar_options(inst, j, cap)
        if own is None:
            return None
        opts.append([None, *own])
    if math.prod(len(o) for o in opts) > cap:
        return None
    caps = [nd.cus for nd in inst.nodes]
    scheme = inst.scheme
    best = math.inf
    for combo in itertools.product(*opts):
        use = [[0] * (slots + 1) for _ in caps]
        load: dict[tuple[int, int], list[int]] = {}
        ok = True
        for opt in combo:
            if opt is None:
                continue
            ring, nodes, ks, s, e, b = opt
            for v, k in zip(nodes, ks, strict=True):
                for t in range(s, e + 1):
                    use[v][t] += k
            for i in ring.links:
                arr = load.setdefault((i, b), [0] * (slots + 1))
                for t in range(s, e + 1):
                    arr[t] += 1
                    ok &= arr[t] <= inst.rho
        if not ok or any(max(u) > c for u, c in zip(use, caps, strict=True)):
            continue
        deployed = [(j, o) for j, o in enumerate(combo) if o is not None]
        zeta = {"MinCU": sum(max(u) for u in use), "MinW": len(load),
                "MinT": sum(o[4] / inst.requests[j].deadline for j, o in deployed),
                "MaxR": sum(1 - (o[0].reliability if o else 0.0) for o in combo)}[scheme]
        best = min(best, 1 - len(deployed) / nr + inst.alpha_of(scheme) * zeta)
    return best


BRUTE = {"tap": brute_tap, "tabgp": brute_tabgp, "rar": brute_rar}


# --- the checks ----------------------------------------------------------------------------------

def _ctx(problem: str, label: str, seed: int, spec: dict) -> dict:
    """The columns naming an instance in every row of the CSV."""
    return {"problem": problem, "instance": label, "seed": seed,
            "spec": json.dumps(spec, sort_keys=True)}


class Sweep:
    """The checks of one run: writes each row to the CSV at once and counts violations."""

    def __init__(self, path: Path, time_limit: float, brute: bool = True):
        self.fh = open(path, "w", newline="")  # noqa: SIM115 (closed by close())
        self.writer = csv.DictWriter(self.fh, fieldnames=FIELDS)
        self.writer.writeheader()
        self.fh.flush()
        self.time_limit = time_limit
        self.brute = brute
        self.checks: Counter = Counter()
        self.violations: list[dict] = []
        self.instances: Counter = Counter()

    def close(self) -> None:
        self.fh.close()

    def row(self, ctx: dict, check: str, method: str, *, status: str = "", value: Any = None,
            reference: Any = None, excess: float | None = None, violation: bool = False,
            detail: str = "", seconds: float = 0.0) -> None:
        """One line of the CSV (flushed); a violation is printed and kept for the summary."""
        row = {**ctx, "check": check, "method": method, "status": status,
               "value": "" if value is None else repr(float(value)),
               "reference": "" if reference is None else repr(float(reference)),
               "excess": "" if excess is None else f"{excess:.3g}",
               "violation": int(violation), "detail": detail[:500], "seconds": f"{seconds:.3f}"}
        self.writer.writerow(row)
        self.fh.flush()
        self.checks[ctx["problem"], check] += 1
        if violation:
            self.violations.append(row)
            print(f"  VIOLATION {ctx['problem']} {ctx['instance']} {check} {method}: {detail}",
                  flush=True)

    # -- one instance ---------------------------------------------------------------------------

    def instance(self, problem: str, label: str, spec: dict, seed: int, inst: Any) -> None:
        """Every check of one instance (solves, agreement, brute force, bounds, heuristics)."""
        ctx = _ctx(problem, label, seed, spec)
        prob = registry.get(problem)
        sign = 1.0 if prob.sense == "min" else -1.0
        restricted, in_sub = RESTRICTED.get(problem, ((), lambda sol: True))
        t0 = time.perf_counter()
        feasible: list[tuple[str, float, bool]] = []  # (method, objective, in the sub-model)
        optima: list[tuple[str, float]] = []
        bounds: list[tuple[str, float, bool]] = []  # (method, bound, valid for every solution)
        for method, res, _sec in self._solves(ctx, prob, inst):
            if res.objective is not None and res.feasible:
                feasible.append((method, res.objective, in_sub(res.solution)))
            if res.status == "optimal":
                optima.append((method, res.objective))
            if res.bound is not None and math.isfinite(res.bound):
                bounds.append((method, res.bound, False))
        self._agree(ctx, optima, sign)
        opt = min((sign * o for _, o in optima), default=None)
        opt = None if opt is None else sign * opt
        if self.brute and problem in BRUTE:
            self._brute(ctx, problem, inst, opt)
        for method, b, obj, sol in self._bounds(ctx, prob, inst, restricted):
            bounds.append((method, b, method.split("@")[0].removeprefix("bound:")
                           not in restricted))
            if obj is not None:
                feasible.append((method, obj, in_sub(sol)))
        for method, obj, sol in self._heuristics(ctx, prob, inst, opt, sign, in_sub):
            feasible.append((method, obj, in_sub(sol)))
        self._bound_sides(ctx, feasible, bounds, sign)
        self.instances[problem] += 1
        print(f"{problem:8s} {label:22s} optima {len(optima)} bounds {len(bounds)} feasible "
              f"{len(feasible)} opt {opt!r} {time.perf_counter() - t0:6.1f} s", flush=True)

    def _solves(self, ctx: dict, prob: Any, inst: Any) -> Iterator[tuple[str, Any, float]]:
        """Each exact formulation x solver, then the default solve; the optimal ones checked."""
        have = solvers.available()
        runs: list[tuple[str | None, str]] = []
        for name, entry in prob.formulation_entries.items():
            if name in SUBPROBLEM.get(prob.name, ()):
                continue
            for solver in ("highs", "scip"):
                if solver in have and (entry.solvers is None or solver in entry.solvers):
                    runs.append((name, solver))
        runs += [(None, "highs")] + [(None, f"highs@{t:g}") for t in SHORT_SOLVES]
        for name, solver in runs:
            method = f"{solver}:{name or 'default'}"
            solver, _, limit = solver.partition("@")
            t0 = time.perf_counter()
            try:
                res = dmlopt.solve(inst, solver, formulation=name, threads=1,
                                   time_limit=float(limit) if limit else self.time_limit)
            except ObjectiveMismatchError as exc:
                self.row(ctx, "solve", method, status="mismatch", violation=True,
                         detail=str(exc), seconds=time.perf_counter() - t0)
                continue
            except DmloptError as exc:
                self.row(ctx, "solve", method, status="refused", detail=str(exc),
                         seconds=time.perf_counter() - t0)
                continue
            except Exception as exc:  # noqa: BLE001 (a crash on a valid instance is a finding)
                self.row(ctx, "solve", method, status="crash", violation=True,
                         detail=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)
                continue
            sec = time.perf_counter() - t0
            bad, detail = False, ""
            if res.status == "optimal":
                ev = dmlopt.evaluate(inst, res.solution) if res.solution is not None else None
                if ev is None or not ev.feasible:
                    bad, detail = True, "optimal without a feasible solution"
                elif not _close(ev.objective, res.objective, 1e-9):
                    bad, detail = True, (f"optimal objective {res.objective!r}, evaluator "
                                         f"{ev.objective!r}")
            self.row(ctx, "solve", method, status=res.status, value=res.objective,
                     reference=res.bound, violation=bad, detail=detail or res.message,
                     seconds=sec)
            yield method, res, sec

    def _agree(self, ctx: dict, optima: list[tuple[str, float]], sign: float) -> None:
        """All proven optima within the optimality gap of the best of them."""
        if len(optima) < 2:
            return
        best = min(sign * o for _, o in optima) * sign
        for method, o in optima:
            excess = abs(o - best) / max(abs(best), 1e-9) if o != best else 0.0
            bad = excess > solvers.OPTIMALITY_GAP and abs(o - best) > solvers.OPTIMALITY_ABS_GAP
            self.row(ctx, "agree", method, status="optimal", value=o, reference=best,
                     excess=excess, violation=bad,
                     detail="proven optima disagree" if bad else "")

    def _brute(self, ctx: dict, problem: str, inst: Any, opt: float | None) -> None:
        t0 = time.perf_counter()
        bf = BRUTE[problem](inst)
        if bf is None:
            return
        sec = time.perf_counter() - t0
        if opt is None:
            self.row(ctx, "brute", "enumeration", status="no optimum", value=bf, seconds=sec)
            return
        excess = abs(opt - bf) / max(abs(bf), 1e-9) if opt != bf else 0.0
        bad = excess > solvers.OPTIMALITY_GAP and abs(opt - bf) > solvers.OPTIMALITY_ABS_GAP
        self.row(ctx, "brute", "enumeration", status="optimal", value=opt, reference=bf,
                 excess=excess, violation=bad,
                 detail="proven optimum differs from the enumeration" if bad else "",
                 seconds=sec)

    def _bounds(self, ctx: dict, prob: Any, inst: Any, restricted: tuple
                ) -> Iterator[tuple[str, float, float | None, Any]]:
        """Every bound method at the sweep's limit and at SHORT_LIMIT; its objective checked."""
        for name in prob.bound_entries:
            for limit in (self.time_limit, SHORT_LIMIT):
                method = f"bound:{name}@{limit:g}"
                t0 = time.perf_counter()
                try:
                    res = dmlopt.bound(inst, name, time_limit=limit)
                except ObjectiveMismatchError as exc:
                    self.row(ctx, "bound", method, status="mismatch", violation=True,
                             detail=str(exc), seconds=time.perf_counter() - t0)
                    continue
                except DmloptError as exc:
                    self.row(ctx, "bound", method, status="refused", detail=str(exc),
                             seconds=time.perf_counter() - t0)
                    continue
                except Exception as exc:  # noqa: BLE001
                    self.row(ctx, "bound", method, status="crash", violation=True,
                             detail=f"{type(exc).__name__}: {exc}",
                             seconds=time.perf_counter() - t0)
                    continue
                sec = time.perf_counter() - t0
                bad, detail = False, ""
                if res.objective is not None:
                    ev = dmlopt.evaluate(inst, res.solution)
                    if not ev.feasible or not _close(ev.objective, res.objective, 1e-9):
                        bad, detail = True, (f"objective {res.objective!r}, evaluator "
                                             f"{ev.objective!r} feasible {ev.feasible}")
                self.row(ctx, "bound-run", method, status=res.status, value=res.bound,
                         reference=res.objective, violation=bad, detail=detail, seconds=sec)
                yield method, res.bound, (res.objective if not bad else None), res.solution

    def _heuristics(self, ctx: dict, prob: Any, inst: Any, opt: float | None, sign: float,
                    in_sub: Callable[[Any], bool]) -> Iterator[tuple[str, float, Any]]:
        """Every heuristic: feasible, objective the evaluator's, never better than the optimum."""
        extra = HEURISTIC_OPTIONS.get(prob.name, {})
        for name in sorted(prob.heuristics):
            method = f"heuristic:{name}"
            t0 = time.perf_counter()
            try:
                res = dmlopt.heuristic(inst, name, seed=ctx["seed"], **extra.get(name, {}))
            except DmloptError as exc:
                self.row(ctx, "heuristic", method, status="refused", detail=str(exc),
                         seconds=time.perf_counter() - t0)
                continue
            except Exception as exc:  # noqa: BLE001
                self.row(ctx, "heuristic", method, status="crash", violation=True,
                         detail=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)
                continue
            sec = time.perf_counter() - t0
            if res.solution is None:
                self.row(ctx, "heuristic", method, status=res.status, detail="no solution",
                         seconds=sec)
                continue
            ev = dmlopt.evaluate(inst, res.solution)
            bad, detail, excess = False, "", None
            if not ev.feasible:
                bad, detail = True, "infeasible: " + "; ".join(ev.violations[:3])
            elif not _close(ev.objective, res.objective, 1e-9):
                bad, detail = True, f"objective {res.objective!r}, evaluator {ev.objective!r}"
            elif opt is not None and in_sub(res.solution):
                excess = sign * (opt - ev.objective) / max(abs(opt), 1e-9)
                if excess > solvers.OPTIMALITY_GAP and \
                        abs(opt - ev.objective) > solvers.OPTIMALITY_ABS_GAP:
                    bad, detail = True, "better than the proven optimum"
            elif opt is not None:
                detail = "outside the sub-model of the optimum: not compared"
            self.row(ctx, "heuristic", method, status=res.status, value=ev.objective,
                     reference=opt, excess=excess, violation=bad, detail=detail, seconds=sec)
            if ev.feasible and not bad:
                yield method, ev.objective, res.solution

    def _bound_sides(self, ctx: dict, feasible: list[tuple[str, float, bool]],
                     bounds: list[tuple[str, float, bool]], sign: float) -> None:
        """Every bound on the right side of every feasible objective it applies to."""
        for method, b, general in bounds:
            pool = [(m, o) for m, o, sub in feasible if general or sub]
            if not pool:
                self.row(ctx, "bound", method, status="bound", value=b,
                         detail="no feasible solution to compare with")
                continue
            who, best = min(pool, key=lambda mo: sign * mo[1])
            excess = sign * (b - best) / max(abs(best), 1.0)
            bad = excess > BOUND_SLACK
            self.row(ctx, "bound", method, status="bound", value=b, reference=best,
                     excess=excess, violation=bad,
                     detail=f"past the objective of {who}" if bad else f"best: {who}")


def _close(a: float | None, b: float | None, rel: float) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def _seeds(text: str) -> range:
    try:
        lo, _, hi = text.partition("-")
        a, b = int(lo), int(hi or lo)
    except ValueError:
        print(f"error: --seeds: {text!r} is not A-B (two integers)", file=sys.stderr)
        sys.exit(2)
    if b < a or a < 0:
        print(f"error: --seeds: {text!r} must be A-B with 0 <= A <= B", file=sys.stderr)
        sys.exit(2)
    return range(a, b + 1)


def summary(sweep: Sweep, seconds: float) -> str:
    """Counts of instances, checks and violations per problem and check kind."""
    lines = ["| problem | instances | check | checks | violations |", "|---|---|---|---|---|"]
    bad = Counter((v["problem"], v["check"]) for v in sweep.violations)
    for (problem, check), n in sorted(sweep.checks.items()):
        lines.append(f"| {problem} | {sweep.instances[problem]} | {check} | {n} | "
                     f"{bad[problem, check]} |")
    total = sum(sweep.checks.values())
    lines.append(f"\n{sum(sweep.instances.values())} instances, {total} checks, "
                 f"{len(sweep.violations)} violations, {seconds:.0f} s")
    for v in sweep.violations:
        lines.append(f"VIOLATION {v['problem']} {v['instance']} (seed {v['seed']}, spec "
                     f"{v['spec']}) {v['check']} {v['method']}: {v['detail']}")
    return "\n".join(lines)


def _one(sweep: Sweep, problem: str, label: str, spec: dict, seed: int, watchdog: float
         ) -> None:
    """Generate one instance and run its checks under the watchdog (SIGALRM where there is
    one); a generator refusing the spec is skipped, a hang is a violation."""
    ctx = _ctx(problem, label, seed, spec)
    timer = hasattr(signal, "SIGALRM") and watchdog > 0
    if timer:
        old = signal.signal(signal.SIGALRM, _hang)
        signal.setitimer(signal.ITIMER_REAL, watchdog)
    t0 = time.perf_counter()
    try:
        try:
            inst = dmlopt.generate(problem, spec, seed=seed)
        except DmloptError as exc:
            print(f"{problem} {label}: skipped ({exc})", flush=True)
            return
        sweep.instance(problem, label, spec, seed, inst)
    except Hang:
        sweep.row(ctx, "hang", "watchdog", status="hang", violation=True,
                  detail=f"generation and checks still running after {watchdog:g} s",
                  seconds=time.perf_counter() - t0)
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def _isolated(sweep: Sweep, problem: str, label: str, spec: dict, seed: int, watchdog: float
              ) -> None:
    """:func:`_one` in a forked child (``dmlopt.solvers.forked``) where there is ``os.fork``:
    a solver ending the process (a signal such as SIGSEGV) becomes a ``crash`` violation row,
    and the sweep goes on.

    The child writes its CSV rows through the inherited, flushed file; its counts, violations
    and printed lines come back with its result. Ctrl-C is passed on."""
    if not hasattr(os, "fork"):
        _one(sweep, problem, label, spec, seed, watchdog)
        return

    def child() -> tuple[Counter, list[dict], Counter]:
        sweep.checks, sweep.violations, sweep.instances = Counter(), [], Counter()
        try:
            _one(sweep, problem, label, spec, seed, watchdog)
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as exc:  # noqa: BLE001 (reported as a row, the sweep goes on)
            sweep.row(_ctx(problem, label, seed, spec), "crash", "exception", status="error",
                      violation=True, detail=f"{type(exc).__name__}: {exc}")
        sweep.fh.flush()
        return sweep.checks, sweep.violations, sweep.instances

    sweep.fh.flush()
    try:
        checks, violations, counted = solvers.forked(child, "the checks of this instance")
    except solvers.Crashed as exc:
        sweep.instances[problem] += 1
        sweep.row(_ctx(problem, label, seed, spec), "crash", "process", status="crash",
                  violation=True, detail=str(exc))
        return
    sweep.checks.update(checks)
    sweep.violations.extend(violations)
    sweep.instances.update(counted)


def main(argv: list[str] | None = None) -> int:
    """Run the sweep (see the module docstring); returns the exit code (1: a violation)."""
    ap = ArgumentParser(prog="python -m benchmarks.studies.harness.validity",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    ap.add_argument("--problems", nargs="*", default=list(PROBLEMS), choices=PROBLEMS,
                    help="problems to sweep (default: all five)")
    ap.add_argument("--seeds", default="7000-7001", help="seeds A-B (default 7000-7001)")
    ap.add_argument("--time-limit", type=float, default=20.0,
                    help="seconds per exact solve and per bound run (default 20)")
    ap.add_argument("--cases", nargs="*", help="only these cases (e.g. random tiny)")
    ap.add_argument("--no-brute", action="store_true", help="skip the brute forces")
    ap.add_argument("--watchdog", type=float, default=None,
                    help="seconds one instance may take in all before it is a hang "
                         "(default 40 x --time-limit; 0: none)")
    args = ap.parse_args(argv)
    if not 0 < args.time_limit < math.inf:
        print(f"error: --time-limit: {args.time_limit} must be a number of seconds > 0",
              file=sys.stderr)
        return 2
    if args.watchdog is None:
        args.watchdog = 40 * args.time_limit
    seeds = _seeds(args.seeds)
    out = output_dir(args.out)
    sweep = Sweep(out / "checks.csv", args.time_limit, brute=not args.no_brute)
    t0 = time.perf_counter()
    interrupted = False
    with tee(out / "log.txt"):
        try:
            print(f"seeds {seeds.start}-{seeds.stop - 1}, time limit {args.time_limit:g} s, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
            for one, problem in itertools.product(seeds, args.problems):
                for label, spec, seed in instances(problem, [one]):
                    if args.cases and label.rsplit("-s", 1)[0] not in args.cases:
                        continue
                    _isolated(sweep, problem, label, spec, seed, args.watchdog)
        except (KeyboardInterrupt, Interrupted):
            interrupted = True
            print("interrupted: the summary of the checks finished so far", flush=True)
        finally:
            sweep.close()
        print(summary(sweep, time.perf_counter() - t0))
        print(f"load {os.getloadavg()[0]:.2f}")
    if interrupted:
        return 130
    return 1 if sweep.violations else 0


if __name__ == "__main__":
    raise SystemExit(main())

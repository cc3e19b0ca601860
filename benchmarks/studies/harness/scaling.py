"""Scaling exponents of the heuristics: time ~ size^b between two sizes, measured in one process.

For each case both sizes are generated with the same seed, then timed interleaved (small,
large, small, large, ...) ``--repeats`` times; b = log(median large / median small) /
log(size ratio). Each case also prints the heuristic's size estimate (``Heuristic.estimate``)
beside the measured peak memory (tracemalloc, one extra run of the large size) and the estimated
work per measured second. BLAS runs on one thread (the command re-runs itself with
``OPENBLAS_NUM_THREADS=1`` and friends when they are not set).

    python -m benchmarks.studies.harness.scaling -o DIR [--repeats 3] [--only NAME ...]
        [--seed S]

Cases (names for ``--only``):

* ``inc_oxc-swg``, ``inc_oxc-rwp``: large generator, 64 -> 128 racks, the heuristic and the
  evaluator of its (time-shared) schedule;
* ``inc_oxc-wcg-ls``: 256 racks, wcg-ls with time_limit 0.5 against wcg (the overrun);
* ``tap-local-search``: fat-tree k = 16, random overlay, 64 -> 128 modules on 2m VMs;
* ``rar-rdda``: cpn38, MinCU, 250 -> 500 requests, slots 0.48 x requests.
* ``tabgp-best``: drift, m = 5n, tau 10, l 16, n = 1000 -> 2000; also ``dense-refine`` at both
  sizes (time ratio best / dense-refine and both objectives at the large size);
* ``nara-netfit-probe``: alpha/uniform, 256 -> 1024 requests;
* ``nara-topologies``: uniform, the paper's episode per topology, gamma (640 servers, 896
  requests) against delta (2560, 4096): the time ratio of ``netfit-probe``, ``nara`` and
  ``nara-netfit``.

Writes DIR/scaling.md (what it printed). The machine's other load enters every figure: the
exponents are ratios within one run, the absolute times are not comparable across machines.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from .. import ArgumentParser, output_dir, tee

_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _timed(fn: Callable[[], Any]) -> float:
    """CPU seconds of ``fn()`` (process time: one thread, so the machine's other load does
    not enter as it does into wall time)."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _peak(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        return float(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def _exponent(problem: str, method: str, sizes: tuple[float, float], specs: tuple[dict, dict],
              repeats: int, options: dict | None = None, evaluate: bool = False,
              seed: int = 0) -> None:
    import dmlopt
    from dmlopt.registry import get as get_problem

    entry = get_problem(problem).heuristics[method]
    opts = entry.Options(**(options or {}))
    insts = [dmlopt.generate(problem, spec, seed=seed) for spec in specs]
    times: list[list[float]] = [[], []]
    evals: list[list[float]] = [[], []]
    for _ in range(repeats):
        for k, inst in enumerate(insts):
            out: dict = {}
            times[k].append(_timed(lambda i=inst, o=out: o.setdefault(
                "sol", entry.function(i, seed=0, **opts.model_dump()))))
            if evaluate:
                evals[k].append(_timed(lambda i=inst, s=out["sol"]: dmlopt.evaluate(i, s)))
    ratio = sizes[1] / sizes[0]
    t = [statistics.median(x) for x in times]
    print(f"{problem} {method}: {sizes[0]:g} -> {sizes[1]:g}: {t[0]:.2f} s -> {t[1]:.2f} s, "
          f"b = {math.log(t[1] / t[0]) / math.log(ratio):.2f}")
    if evaluate:
        e = [statistics.median(x) for x in evals]
        print(f"  evaluator: {e[0]:.3f} s -> {e[1]:.3f} s, "
              f"b = {math.log(e[1] / e[0]) / math.log(ratio):.2f}")
    size = entry.estimate(insts[1], opts)
    peak = _peak(lambda: entry.function(insts[1], seed=0, **opts.model_dump()))
    print(f"  estimate at {sizes[1]:g}: memory {size.memory / 2**20:.1f} MiB (measured peak "
          f"{peak / 2**20:.1f} MiB, ratio {size.memory / max(peak, 1.0):.2f}), work "
          f"{size.work:.3g} ({size.work / t[1]:.3g} per measured second)")


def _wcg_ls(repeats: int, seed: int = 0) -> None:
    import dmlopt
    from dmlopt.registry import get as get_problem

    h = get_problem("inc_oxc").heuristics
    inst = dmlopt.generate("inc_oxc", {"generator": "large", "racks": 256}, seed=seed)
    base, ls = [], []
    for _ in range(repeats):
        base.append(_timed(lambda: h["wcg"].function(inst, seed=0)))
        ls.append(_timed(lambda: h["wcg-ls"].function(inst, seed=0, time_limit=0.5)))
    b, s = statistics.median(base), statistics.median(ls)
    print(f"inc_oxc wcg-ls at 256 racks, time_limit 0.5: wcg {b:.2f} s, wcg-ls {s:.2f} s, "
          f"wcg-ls - wcg = {s - b:+.2f} s")


def _tabgp_best(repeats: int, seed: int = 0) -> None:
    import dmlopt
    from dmlopt.registry import get as get_problem

    h = get_problem("tabgp").heuristics
    sizes = (1000, 2000)
    insts = [dmlopt.generate("tabgp", {"generator": "drift", "n": n, "m": 5 * n, "tau": 10,
                                       "l": 16}, seed=seed) for n in sizes]
    from dmlopt.heuristics.tabgp.ls import work

    times: dict[tuple[str, int], list[float]] = {}
    objs: dict[tuple[str, int], float] = {}
    units: dict[tuple[str, int], float] = {}
    for _ in range(repeats):
        for k, inst in enumerate(insts):
            for name in ("dense-refine", "best"):
                out: dict = {}
                before = work()
                times.setdefault((name, k), []).append(_timed(lambda i=inst, o=out, f=h[name]
                                                              .function: o.setdefault(
                                                                  "s", f(i, seed=0))))
                units[name, k] = work() - before
                objs[name, k] = dmlopt.evaluate(inst, out["s"]).objective
    t = {key: statistics.median(v) for key, v in times.items()}
    for name in ("dense-refine", "best"):
        print(f"tabgp {name}: n {sizes[0]} -> {sizes[1]}: {t[name, 0]:.2f} s -> "
              f"{t[name, 1]:.2f} s, b = {math.log(t[name, 1] / t[name, 0]) / math.log(2):.2f}; "
              f"objective {objs[name, 0]:g} -> {objs[name, 1]:g}")
    print(f"  best / dense-refine at n = {sizes[1]}: {t['best', 1] / t['dense-refine', 1]:.1f}x")
    for name in ("dense-refine", "best"):
        print(f"  {name}: local-search work units (about a microsecond each) per CPU "
              f"microsecond: " + ", ".join(f"{units[name, k] / (t[name, k] * 1e6):.2f} at "
                                          f"n = {n}" for k, n in enumerate(sizes)))
    for name in ("dense-refine", "best"):
        entry = h[name]
        opts = entry.Options()
        size = entry.estimate(insts[1], opts)
        peak = _peak(lambda e=entry: e.function(insts[1], seed=0))
        print(f"  {name} estimate at n = {sizes[1]}: memory {size.memory / 2**20:.1f} MiB "
              f"(measured peak {peak / 2**20:.1f} MiB, ratio {size.memory / max(peak, 1):.2f}), "
              f"work {size.work:.3g} ({size.work / t[name, 1]:.3g} per measured second)")


def _nara_topologies(repeats: int, seed: int = 0) -> None:
    import dmlopt
    from dmlopt.registry import get as get_problem

    h = get_problem("nara").heuristics
    insts = [dmlopt.generate("nara", {"generator": "uniform", "topology": top}, seed=seed)
             for top in ("gamma", "delta")]
    for name in ("netfit-probe", "nara", "nara-netfit"):
        entry = h[name]
        times: list[list[float]] = [[], []]
        for _ in range(repeats):
            for k, inst in enumerate(insts):
                times[k].append(_timed(lambda i=inst, e=entry: e.function(i, seed=0)))
        t = [statistics.median(x) for x in times]
        size = entry.estimate(insts[1], entry.Options())
        peak = _peak(lambda e=entry: e.function(insts[1], seed=0))
        print(f"nara {name}: gamma {t[0]:.2f} s -> delta {t[1]:.2f} s, ratio "
              f"{t[1] / t[0]:.1f}")
        print(f"  estimate on delta: memory {size.memory / 2**20:.1f} MiB (measured peak "
              f"{peak / 2**20:.1f} MiB, ratio {size.memory / max(peak, 1):.2f}), work "
              f"{size.work:.3g} ({size.work / t[1]:.3g} per measured second)")


def _cases(repeats: int, seed: int = 0) -> dict[str, Callable[[], None]]:
    def inc(method: str) -> Callable[[], None]:
        return lambda: _exponent("inc_oxc", method, (64, 128),
                                 ({"generator": "large", "racks": 64},
                                  {"generator": "large", "racks": 128}), repeats,
                                 evaluate=True, seed=seed)

    def tap_spec(m: int) -> dict:
        return {"generator": "dc", "topology": "fat-tree", "k": 16, "modules": m,
                "vms": 2 * m, "overlay": "random"}

    def rar_spec(n: int) -> dict:
        return {"generator": "cpn38", "requests": n, "slots": round(0.48 * n),
                "scheme": "MinCU"}

    return {
        "inc_oxc-swg": inc("swg"),
        "inc_oxc-rwp": inc("rwp"),
        "inc_oxc-wcg-ls": lambda: _wcg_ls(repeats, seed),
        "tap-local-search": lambda: _exponent("tap", "local-search", (64, 128),
                                              (tap_spec(64), tap_spec(128)), repeats,
                                              seed=seed),
        "rar-rdda": lambda: _exponent("rar", "rdda", (250, 500),
                                      (rar_spec(250), rar_spec(500)), repeats, seed=seed),
        "tabgp-best": lambda: _tabgp_best(repeats, seed),
        "nara-netfit-probe": lambda: _exponent(
            "nara", "netfit-probe", (256, 1024),
            tuple({"generator": "uniform", "topology": "alpha", "n_requests": n}
                  for n in (256, 1024)), repeats, seed=seed),
        "nara-topologies": lambda: _nara_topologies(repeats, seed),
    }


def run(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.harness.scaling",
                        description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per size (median)")
    ap.add_argument("--only", nargs="*", metavar="NAME", help="run only these cases")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of every generated instance (default 0; heuristics use seed 0)")
    args = ap.parse_args(argv)
    if args.seed < 0 or args.repeats < 1:
        print(f"error: --seed {args.seed} must be >= 0 and --repeats {args.repeats} >= 1",
              file=sys.stderr)
        sys.exit(2)
    if any(os.environ.get(v) != "1" for v in _THREADS):
        env = {**os.environ, **{v: "1" for v in _THREADS}}
        os.execve(sys.executable, [sys.executable, "-m", __spec__.name,
                                   *(sys.argv[1:] if argv is None else argv)], env)
    out = output_dir(args.out)
    cases = _cases(args.repeats, args.seed)
    unknown = set(args.only or []) - set(cases)
    if unknown:
        print(f"error: --only: unknown case(s) {', '.join(sorted(unknown))} (one of "
              f"{', '.join(cases)})", file=sys.stderr)
        sys.exit(2)
    with tee(out / "scaling.md"):
        print(f"# Scaling exponents (one thread, median of {args.repeats}, interleaved, "
              f"instances of seed {args.seed})\n")
        for name, case in cases.items():
            if not args.only or name in args.only:
                case()


if __name__ == "__main__":
    run()

"""Cost growth of every heuristic of a paper (``dmlopt reproduce PAPER growth``, ours; ``scale`` is
TABGP's table of the heuristics on 10,000 vertices).

Per heuristic (default options, seed 0; a heuristic with a ``clock`` option, whose default time
budget is wall-clock seconds, runs with ``clock="cpu"``, so that its budget is spent in the CPU
seconds measured whatever the machine's load): CPU seconds over a size series (doubling sizes of
one generator, the same for every heuristic of the paper), the exponent b of time ~ size^b
between the two largest sizes measured, the largest size within 60 s (measured, or extrapolated
with b and marked ``~``), and the heuristic's size estimate (:attr:`Heuristic.estimate`, what
the size limit refuses by) against what was measured:

* memory: the estimate over the peak of Python allocations (tracemalloc) of one run at the
  largest size measured in at most :attr:`Plan.peak_seconds`;
* work: the estimate over CPU seconds x :data:`OPS_PER_SECOND` at the largest size measured
  (a numpy element operation costs about a nanosecond, the unit the estimates count in).

Both ratios should be in [1, 4]: never below the measurement (a refusal then means the run
would not fit) and at most 4 times above (a refusal does not turn away runs that would fit).
Ratios are given where the measurement is large enough to mean something
(:data:`MIN_PEAK` bytes, :data:`MIN_SECONDS`).

A series stops at the first size whose run took more than :attr:`Plan.cap` CPU seconds or that
the previous two sizes predict above it; the command runs the heuristics in its own process
(run it with ``OPENBLAS_NUM_THREADS=1``: CPU time then counts one thread; the table states the
setting) and keeps every measurement
in ``DIR/PAPER[-quick]/stores/scale.json`` as soon as it is made: an interrupted run resumes
where it stopped.
"""

from __future__ import annotations

import json
import math
import os
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dmlopt.benchmarks.papers import Plan
from dmlopt.benchmarks.tables import Table, md_table

#: operations per CPU second the work estimates are compared at (one per nanosecond)
OPS_PER_SECOND = 1e9
#: measurements too small to compare an estimate with: peak bytes, CPU seconds (below a second
#: per-call overheads, and on a loaded machine the contention, dominate the time)
MIN_PEAK = 2**20
MIN_SECONDS = 1.0
#: the time the "largest size within" column is about
WITHIN = 60.0


def plan_of(paper: str) -> Plan:
    """The size series of ``paper``'s growth table (its ``Paper.growth``).

    Parameters
    ----------
    paper : a registered paper key (:mod:`dmlopt.benchmarks.papers`).

    Returns
    -------
    Plan

    Raises
    ------
    DmloptError
        The paper is unknown or declares no growth series.
    """
    from dmlopt.benchmarks import papers
    from dmlopt.errors import DmloptError

    found = papers.get(paper).growth
    if found is None:
        raise DmloptError(f"reproduce: paper {paper!r} declares no growth series")
    return found


def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _save(path: Path, data: dict) -> None:
    from dmlopt import io

    path.parent.mkdir(parents=True, exist_ok=True)
    io.atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))


class _Overrun(Exception):
    """A run went on far beyond the series' cap (wall clock)."""


def _alarm(seconds: float):
    """A context in which SIGALRM raises :class:`_Overrun` after ``seconds`` (wall clock)."""
    import contextlib
    import signal

    @contextlib.contextmanager
    def guard():
        if not hasattr(signal, "SIGALRM"):  # pragma: no cover - not on POSIX
            yield
            return

        def fire(*_: Any) -> None:
            raise _Overrun

        old = signal.signal(signal.SIGALRM, fire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return guard()


def measure(paper: str, outdir: Path, quick: bool, names: list[str] | None = None) -> dict:
    """Run (or resume) the series of every heuristic of ``paper``; the measurements.

    Parameters
    ----------
    paper : a registered paper key with a growth series (:func:`plan_of`).
    outdir : where ``stores/scale.json`` keeps the measurements.
    quick : the quick series (:attr:`Plan.quick_sizes`, :attr:`Plan.quick_cap`).
    names : heuristics to run (default: every registered one).

    Returns
    -------
    dict
        ``{heuristic: {"runs": {size: {"seconds", "peak"?}}, "error"?: text}}``; before its
        first size each heuristic runs once untimed (imports, the instance's cached arrays).
    """
    import dmlopt
    from dmlopt.registry import get as get_problem

    plan = plan_of(paper)
    sizes = plan.quick_sizes if quick else plan.sizes
    cap = plan.quick_cap if quick else plan.cap
    peak_cap = min(plan.peak_seconds, cap)
    store = outdir / "stores" / "scale.json"
    data = _load(store)
    heur = get_problem(paper).heuristics
    insts: dict[int, Any] = {}

    def inst_of(size: int) -> Any:
        if size not in insts:
            insts[size] = dmlopt.generate(paper, plan.spec(size), seed=0)
        return insts[size]

    for name in names or list(heur):
        rec = data.setdefault(name, {"runs": {}})
        if name in plan.skip:
            rec["error"] = plan.skip[name]
        if rec.get("done") or rec.get("error"):
            continue
        entry = heur[name]
        opts = entry.Options().model_dump()
        if opts.get("clock") == "wall":  # a time budget spent in CPU seconds, as measured
            opts["clock"] = "cpu"
        for i, size in enumerate(sizes):
            if str(size) in rec["runs"]:
                continue
            done = sorted((int(k), v) for k, v in rec["runs"].items())
            if done and done[-1][1]["seconds"] > cap:
                break
            if len(done) >= 2 and done[-1][1]["seconds"] > MIN_SECONDS / 4:
                b = _exponent(done[-2], done[-1])
                if done[-1][1]["seconds"] * (size / done[-1][0]) ** max(b, 1.0) > 2 * cap:
                    break
            inst = inst_of(size)
            try:
                with _alarm(60 * cap):
                    if i == 0:
                        entry.function(inst, seed=0, **opts)   # warm-up, untimed
                    t0 = time.process_time()
                    entry.function(inst, seed=0, **opts)
                    secs = time.process_time() - t0
            except _Overrun:
                rec["error"] = f"stopped at {size:,}: over {60 * cap:g} s wall clock"
                break
            except Exception as exc:  # noqa: BLE001 - a heuristic that cannot run is shown
                rec["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                break
            run = {"seconds": secs}
            if secs <= peak_cap:
                tracemalloc.start()
                try:
                    entry.function(inst, seed=0, **opts)
                    run["peak"] = float(tracemalloc.get_traced_memory()[1])
                finally:
                    tracemalloc.stop()
            rec["runs"][str(size)] = run
            _save(store, data)
        rec["done"] = True
        _save(store, data)
    return data


def estimates(paper: str, data: dict) -> None:
    """Add each heuristic's size estimate (``memory_est``, ``work_est``) at every size measured
    (computed now: an estimate changed after the runs shows in the table re-rendered)."""
    import dmlopt
    from dmlopt.registry import get as get_problem

    plan = plan_of(paper)
    heur = get_problem(paper).heuristics
    insts: dict[int, Any] = {}
    for name, rec in data.items():
        if name not in heur:
            continue
        opts = heur[name].Options()
        for size, run in rec.get("runs", {}).items():
            n = int(size)
            if n not in insts:
                insts[n] = dmlopt.generate(paper, plan.spec(n), seed=0)
            est = heur[name].estimate(insts[n], opts)
            run["memory_est"], run["work_est"] = float(est.memory), float(est.work)


def _exponent(a: tuple[int, dict], b: tuple[int, dict]) -> float:
    ta, tb = max(a[1]["seconds"], 1e-6), max(b[1]["seconds"], 1e-6)
    return math.log(tb / ta) / math.log(b[0] / a[0])


def ratios(rec: dict) -> tuple[tuple[int, float] | None, tuple[int, float] | None]:
    """(size, estimate / measured) for memory and for work, or None where not measurable:
    memory at the largest size with a peak of at least :data:`MIN_PEAK`, work at the largest
    size that took at least :data:`MIN_SECONDS`."""
    runs = sorted((int(k), v) for k, v in rec.get("runs", {}).items())
    mem = [(s, r["memory_est"] / r["peak"]) for s, r in runs
           if r.get("peak", 0) >= MIN_PEAK and r.get("memory_est") is not None]
    work = [(s, r["work_est"] / (r["seconds"] * OPS_PER_SECOND)) for s, r in runs
            if r.get("seconds", 0) >= MIN_SECONDS and r.get("work_est") is not None]
    return (mem[-1] if mem else None), (work[-1] if work else None)


def _fmt_ratio(x: tuple[int, float] | None) -> str:
    if x is None:
        return "-"
    flag = "" if 1 <= x[1] <= 4 else " (!)"
    return f"{x[1]:.2g} at {x[0]:,}{flag}"


def _within(runs: list[tuple[int, dict]], b: float | None) -> str:
    ok = [s for s, r in runs if r["seconds"] <= WITHIN]
    if not runs:
        return "-"
    last, t = runs[-1][0], runs[-1][1]["seconds"]
    if t > WITHIN:
        return f"{ok[-1]:,}" if ok else f"< {runs[0][0]:,}"
    if b is None or b < 0.2 or t < MIN_SECONDS:
        return f"> {last:,}"
    return f"~{last * (WITHIN / t) ** (1 / b):,.0f}"


def render_data(paper: str, data: dict, quick: bool) -> str:
    """The Markdown of a scale table from the measurements of :func:`measure`."""
    plan = plan_of(paper)
    sizes = plan.quick_sizes if quick else plan.sizes
    cap = plan.quick_cap if quick else plan.cap
    header = ["heuristic", *[f"{s:,}" for s in sizes], "b", f"largest within {WITHIN:g} s",
              "memory estimate / measured", "work estimate / measured"]
    from dmlopt.registry import get as get_problem

    order = {name: i for i, name in enumerate(get_problem(paper).heuristics)}
    rows = []
    # the registry's order, whether the measurements are fresh or resumed from the store
    for name, rec in sorted(data.items(), key=lambda kv: order.get(kv[0], len(order))):
        runs = sorted((int(k), v) for k, v in rec.get("runs", {}).items())
        if not runs and not rec.get("error"):
            continue
        times = {s: f"{r['seconds']:.2f}" for s, r in runs}
        b = _exponent(runs[-2], runs[-1]) if len(runs) >= 2 else None
        mem, work = ratios(rec)
        rows.append([f"`{name}`", *[times.get(s, "-") for s in sizes],
                     "-" if b is None else f"{b:.2f}",
                     rec["error"] if rec.get("error") else _within(runs, b),
                     _fmt_ratio(mem), _fmt_ratio(work)])
    text = (f"CPU seconds per run over the {plan.unit} (generator spec "
            f"`{json.dumps(plan.spec(sizes[-1]))}` at the largest size; default options, except "
            f"that a heuristic with a `clock` option spends its time budget in CPU seconds; "
            f"seed 0, one run per size in one process); a series stops after a run "
            f"above {cap:g} s. b: time ~ size^b between the two largest sizes run. Largest "
            f"within {WITHIN:g} s: measured, or `~` extrapolated with b. Estimate / measured: "
            f"the heuristic's size estimate (what `--size-limit` refuses by) over the peak of "
            f"Python allocations (tracemalloc) and over CPU seconds x {OPS_PER_SECOND:.0e} "
            f"operations; (!) outside [1, 4]. `-`: not run or too small to compare (peak below "
            f"{MIN_PEAK / 2**20:g} MiB, time below {MIN_SECONDS:g} s).")
    return text + "\n\n" + md_table(header, rows) + "\n"


def _render(paper: str) -> Callable[[Any, Path], str]:
    def render(runs: Any, outdir: Path) -> str:
        del runs  # no suites: the table measures in this process
        quick = outdir.name.endswith("-quick")
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        data = measure(paper, outdir, quick)
        estimates(paper, data)
        blas = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
        return (render_data(paper, data, quick).rstrip()
                + f"\n\nLoad average when the table was rendered: {load:.1f} (2 cores); "
                f"OPENBLAS_NUM_THREADS={blas}.\n")
    return render


def _title(paper: str) -> str:
    return (f"Cost growth: every heuristic over a series of {plan_of(paper).unit} (time "
            "exponent, largest size within 60 s, size estimates against measurements)")


def growth_table(paper: str) -> Table:
    """The ``growth`` table of ``paper`` (measured in the command's own process, no suites).

    Parameters
    ----------
    paper : a registered paper key with a growth series (:func:`plan_of`).

    Returns
    -------
    Table
        Named ``growth``, with the minutes of the paper's :class:`Plan`.
    """
    found = plan_of(paper)
    return Table(paper, "growth", _title(paper), (), (), _render(paper), found.minutes,
                 found.quick_minutes)

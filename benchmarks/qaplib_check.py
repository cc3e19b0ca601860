"""Check ``rts`` on a folder of QAPLIB files: every ``NAME.dat`` run over seeds with
the default budget, gap to the published value.

The shipped 76 instances are benchmarked by the ``tap-qaplib`` suite (``dmlopt reproduce tap
qaplib``); this is for the QAPLIB files that are not shipped (other members of the families,
other families), the held-out check of the goals set for ``rts``: on every TAP-compatible
instance with n <= 100, mean gap <= 0.3 % and max gap <= 1 % within ``max(1, 10 (n/100)^2)``
seconds on one
core; beyond, the published value on every run with n <= 30.

    python -m dmlopt.benchmarks.qaplib_check DIR [--seeds 4] [--workers 2] [-o runs.csv]

The published value of ``NAME`` is the ``best_known`` column of ``--values CSV`` (columns
``name,best_known``) when given, else :func:`dmlopt.models.tap.qaplib.best_known` of
``NAME.sln`` beside the ``.dat``; an instance with neither is still run, its gaps taken to the
best value of its runs (marked ``no published value``). Files that are not a TAP (no symmetric,
zero-diagonal, non-negative matrix, such as bur26*) are listed as skipped with the reason.

Each run is ``dmlopt.heuristic(instance, "rts", seed=s, clock="cpu")``: the budget counts CPU
seconds (one core's worth of work on a shared machine) and the objective is re-scored by the TAP
evaluator. ``-o`` is rewritten atomically after every instance, so an interrupted check keeps
what it finished.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import os
import sys
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from dmlopt.errors import DmloptError
from dmlopt.io import check_output as io_check_output


@dataclass(frozen=True)
class Run:
    """One run of ``rts``: instance name, size, seed, re-scored objective, wall seconds, status."""

    name: str
    n: int
    seed: int
    objective: float
    seconds: float
    status: str


#: the largest --values file read, in bytes
MAX_VALUES_BYTES = 16 * 2**20
#: the longest field of a --values file, in characters
MAX_FIELD = 1000


def read_values(path: Path) -> dict[str, float]:
    """Published values from a CSV file with the columns ``name,best_known``.

    Parameters
    ----------
    path : pathlib.Path
        A regular UTF-8 file of at most :data:`MAX_VALUES_BYTES` bytes (read without blocking).

    Returns
    -------
    dict of str to float
        ``name -> best_known``, every value finite and >= 0.

    Raises
    ------
    dmlopt.errors.DmloptError
        One line naming the file, the line and the rule: not a regular file, not UTF-8, a field
        longer than :data:`MAX_FIELD` characters, missing columns, or a value that is not a
        finite number >= 0 (``1e999`` overflows to infinity: refused).
    """
    from dmlopt.io import read_bytes

    if not path.is_file():
        raise DmloptError(f"--values: {path} is not an existing CSV file")
    try:
        data = read_bytes(path, MAX_VALUES_BYTES)
    except DmloptError as exc:
        raise DmloptError(f"--values: {' '.join(str(exc).split())}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DmloptError(f"--values: {path} is not UTF-8 text (byte {exc.start})") from None
    values: dict[str, float] = {}
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        fields = reader.fieldnames
        if not fields or not {"name", "best_known"} <= set(fields):
            raise DmloptError(f"--values: {path} must have the columns name,best_known")
        for row in reader:
            k = reader.line_num
            raw = row["best_known"]
            long = [f for f in (raw, row["name"]) if f is not None and len(f) > MAX_FIELD]
            if long:
                raise DmloptError(f"--values: {path} line {k}: a field of {len(long[0])} "
                                  f"characters (at most {MAX_FIELD})")
            try:
                value = float(raw)
            except (TypeError, ValueError):
                value = math.nan
            if not math.isfinite(value) or value < 0:
                raise DmloptError(f"--values: {path} line {k}: best_known {raw!r} is not a "
                                  "finite number >= 0")
            values[str(row["name"]).strip()] = value
    except csv.Error as exc:
        raise DmloptError(f"--values: {path} line {reader.line_num}: {exc}") from None
    return values


def find(folder: Path, only: list[str] | None) -> list[Path]:
    """The ``.dat`` files of ``folder`` (or only the named ones), smallest first."""
    if not folder.is_dir():
        raise DmloptError(f"folder: {folder} is not an existing directory")
    files = {p.stem: p for p in folder.glob("*.dat") if p.is_file()}
    if only:
        missing = [x for x in only if x not in files]
        if missing:
            raise DmloptError(f"--only: {', '.join(missing)} not in {folder} (no NAME.dat)")
        files = {k: files[k] for k in only}
    if not files:
        raise DmloptError(f"folder: {folder} holds no .dat file (regular files only)")
    return sorted(files.values(), key=lambda p: (p.stat().st_size, p.stem))


def _one(job: tuple[str, int]) -> Run:
    """Run ``rts`` on one file with one seed (in a worker process, one thread)."""
    import dmlopt
    from dmlopt.models.tap import qaplib

    path, seed = job
    inst = qaplib.load(path)
    res = dmlopt.heuristic(inst, "rts", seed=seed, clock="cpu")
    return Run(Path(path).stem, inst.n, seed, float(res.objective), float(res.seconds),
               res.status)


def reference(path: Path, values: dict[str, float]) -> float | None:
    """The published value of ``path``: ``values`` first, else its ``.sln``, else None."""
    from dmlopt.models.tap import qaplib

    if path.stem in values:
        return values[path.stem]
    if path.with_suffix(".sln").is_file():
        return qaplib.best_known(path)
    return None


def gap(objective: float, ref: float) -> float:
    """Gap in percent of ``objective`` above ``ref`` (0 when both are 0)."""
    if ref == 0:
        return 0.0 if objective == 0 else math.inf
    return 100.0 * ((objective - ref) / abs(ref))  # divided first: no overflow near 1e308


def _csv(rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    cols = ["name", "n", "seed", "objective", "reference", "gap_pct", "seconds", "status"]
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def check(files: list[Path], values: dict[str, float], seeds: int, workers: int,
          out: Path | None, say=print) -> dict[str, float]:
    """Run every file over ``seeds`` seeds; print a line per instance and a summary; return the
    summary (``mean``, ``max`` gap, ``runs``, ``hits_small``/``runs_small`` for n <= 30)."""
    from dmlopt.io import atomic_write_text
    from dmlopt.models.tap import qaplib

    todo: list[tuple[Path, float | None]] = []
    skipped: list[str] = []
    for path in files:
        try:
            qaplib.load(path)
        except DmloptError as exc:
            skipped.append(f"{path.stem}: {' '.join(str(exc).split())}")
            continue
        todo.append((path, reference(path, values)))
    if not todo:
        raise DmloptError("folder: no file is a TAP-compatible QAPLIB instance ("
                          + "; ".join(skipped)[:500] + ")")
    for line in skipped:  # not a result: stderr
        print(f"skipped {line}", file=sys.stderr)
    rows: list[dict[str, object]] = []
    gaps: list[float] = []
    small = [0, 0]
    jobs = [(str(p), s) for p, _ in todo for s in range(seeds)]
    refs = {p.stem: r for p, r in todo}
    done: dict[str, list[Run]] = {}
    for run in _runs(jobs, workers):
        done.setdefault(run.name, []).append(run)
        runs = done[run.name]
        if len(runs) < seeds:
            continue
        ref = refs[run.name]
        note = ""
        if ref is None:
            ref, note = min(r.objective for r in runs), "  (no published value: gap to "\
                "the best run)"
        g = [gap(r.objective, ref) for r in runs]
        if not all(math.isfinite(x) for x in g):
            raise DmloptError(f"{run.name}: the reference value {ref!r} gives no finite gap for "
                              f"the objectives {sorted({r.objective for r in runs})} (a "
                              "reference of 0 or near 0 for a positive objective)")
        gaps += g
        if run.n <= 30 and not note:  # only against a published value
            small[0] += sum(1 for r in runs if r.objective <= ref + 1e-9 * max(1, abs(ref)))
            small[1] += len(runs)
        bad = [r for r in runs if r.status != "feasible"]
        if bad:
            note += f"  ({len(bad)} run(s) failed the evaluator)"
        say(f"{run.name:12s} n={run.n:3d}  mean {sum(g) / len(g):6.3f} %  max {max(g):6.3f} %"
            f"  wall s {max(r.seconds for r in runs):5.2f}  gaps "
            + " ".join(f"{x:.3f}" for x in g) + note)
        rows += [{"name": r.name, "n": r.n, "seed": r.seed, "objective": r.objective,
                  "reference": ref, "gap_pct": round(x, 6), "seconds": round(r.seconds, 3),
                  "status": r.status} for r, x in zip(runs, g, strict=True)]
        if out is not None:
            atomic_write_text(out, _csv(rows))
    summary = {"mean": sum(gaps) / len(gaps), "max": max(gaps), "runs": float(len(gaps)),
               "hits_small": float(small[0]), "runs_small": float(small[1])}
    say(f"{len(done)} instances, {len(gaps)} runs: mean gap {summary['mean']:.4f} % "
        f"(goal <= 0.3), max {summary['max']:.3f} % (goal <= 1); published value reached on "
        f"{small[0]} of {small[1]} runs with n <= 30")
    return summary


def _runs(jobs: list[tuple[str, int]], workers: int) -> Any:
    """The runs of ``jobs`` in order, in ``workers`` spawned processes. A pool whose workers die
    (e.g. a script that calls this without an ``if __name__ == "__main__":`` guard, whose
    children re-run it while they start) fails at once with one line, never respawns."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn"),
                                 initializer=_single_thread) as pool:
            yield from pool.map(_one, jobs)
    except BrokenProcessPool:
        raise DmloptError("workers: the worker processes died while starting; when calling "
                          "this from a script, put the call under `if __name__ == "
                          "'__main__':` (worker processes import the script)") from None


def _single_thread() -> None:
    os.environ["NUMBA_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dmlopt.benchmarks.qaplib_check",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", metavar="DIR", help="folder of QAPLIB NAME.dat (and NAME.sln)")
    ap.add_argument("--seeds", type=int, default=4, help="seeds 0..N-1 per instance (default 4)")
    ap.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--values", default=None, metavar="CSV",
                    help="published values, columns name,best_known (default: the .sln files)")
    ap.add_argument("--only", nargs="*", default=None, metavar="NAME", help="only these names")
    ap.add_argument("-o", "--output", default=None, metavar="CSV",
                    help="write every run here (rewritten atomically after each instance)")
    args = ap.parse_args(argv)
    try:
        for flag, value, top in (("--seeds", args.seeds, 1000), ("--workers", args.workers, 64)):
            if not 1 <= value <= top:
                raise DmloptError(f"{flag}: {value} (must be 1..{top})")
        out = io_check_output(args.output, "--output") if args.output else None
        if out is not None and not out.parent.is_dir():
            raise DmloptError(f"--output: {out.parent} is not an existing directory")
        values = read_values(Path(args.values)) if args.values else {}
        files = find(Path(args.folder), args.only)
        check(files, values, args.seeds, args.workers, out)
    except DmloptError as exc:  # bad input: one line, exit 2 (README, "Errors and limits")
        print(f"qaplib_check: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("qaplib_check: interrupted (the instances finished are in --output)",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

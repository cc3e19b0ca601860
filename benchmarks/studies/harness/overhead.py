"""Harness overhead per run: wall time of a row minus the method's own time.

Runs a TABGP suite of 40 heuristic runs (the method takes well under a millisecond, so nearly all
of the row's wall time is harness) and 4 exact runs through the local pool (forkserver) and,
with ``--dask``, through a Dask LocalCluster (a fresh ``python -m dmlopt.benchmarks.child`` per
run), then prints mean / median / max of ``wall_seconds - seconds`` per path and kind.

    python -m benchmarks.studies.harness.overhead -o DIR [--workers 1] [--dask]

Writes the suite file and the stores under DIR only (re-running resumes them: use a new DIR for
a new measurement).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from dmlopt.benchmarks import store
from dmlopt.cli import main as dmlopt_main

from .. import ArgumentParser, output_dir

SUITE = """\
name = "overhead"
description = "harness overhead measurement"
[[groups]]
problem = "tabgp"
instances = [
  { generator = "er", params = { n = 8, p = 0.4, tau = 2, l = 2 }, seeds = [0, 1, 2, 3] },
]
methods = [
  { solver = "highs", formulation = "paper", time_limit = 30 },
  { heuristic = "random", seeds = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] },
]
"""


def measure(tmp: Path, workers: int, dask: bool) -> None:
    suite = tmp / "overhead.toml"
    suite.write_text(SUITE)
    out = tmp / f"overhead-{'dask' if dask else 'local'}.sqlite"
    argv = ["bench", str(suite), "-o", str(out), "--workers", str(workers)]
    if dask:
        argv += ["--dask", "local"]
    t0 = time.perf_counter()
    code = dmlopt_main(argv)
    wall = time.perf_counter() - t0
    if code:
        sys.exit(code)
    rows = store.read(out)
    print(f"\n{'dask LocalCluster' if dask else 'local pool'}, {workers} worker(s): "
          f"{len(rows)} runs in {wall:.2f} s (command wall time, incl. suite validation)")
    for kind in ("heuristic", "exact"):
        over = [r["wall_seconds"] - r["seconds"] for r in rows if r["kind"] == kind]
        meth = [r["seconds"] for r in rows if r["kind"] == kind]
        print(f"  {kind:9s} n={len(over):2d}  method mean {statistics.mean(meth):.4f} s  "
              f"overhead mean {statistics.mean(over):.3f} s  median "
              f"{statistics.median(over):.3f} s  max {max(over):.3f} s")


def run(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.harness.overhead",
                        description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for the suite file and the stores (created)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--dask", action="store_true", help="also measure the Dask path")
    args = ap.parse_args(argv)
    out = output_dir(args.out)
    measure(out, args.workers, dask=False)
    if args.dask:
        measure(out, args.workers, dask=True)


if __name__ == "__main__":
    run()

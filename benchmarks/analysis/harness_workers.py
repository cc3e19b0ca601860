"""Wall time of the ``quick`` suite with 1 and 2 local workers and on a Dask LocalCluster, and
whether the three stores hold the same rows (problem, instance, method, options, seed, status,
objective), with the harness overhead per run (``wall_seconds - seconds``) of each.

    python -m dmlopt.benchmarks.analysis.harness_workers -o DIR [--suite quick]

Writes the three stores under DIR only.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .. import store
from . import ArgumentParser, output_dir


def bench(suite: str, out: Path, extra: list[str]) -> float:
    cmd = [sys.executable, "-m", "dmlopt", "bench", suite, "-o", str(out), *extra]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env={**os.environ, "CI": "true"},
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def comparable(path: Path) -> list[tuple]:
    return sorted((r["problem"], r["instance"], r["method"], r["options"], r["seed"],
                   r["status"], r["objective"]) for r in store.read(path))


def run(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m dmlopt.benchmarks.analysis.harness_workers",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for the stores (created)")
    ap.add_argument("--suite", default="quick")
    args = ap.parse_args(argv)
    tmp = output_dir(args.out)
    setups = {"1 worker": ["--workers", "1"], "2 workers": ["--workers", "2"],
              "dask local, 2 threads": ["--workers", "2", "--dask", "local"]}
    stores = {}
    for name, extra in setups.items():
        out = Path(tmp) / f"{len(stores)}.sqlite"
        wall = bench(args.suite, out, extra)
        rows = store.read(out)
        over = [r["wall_seconds"] - r["seconds"] for r in rows]
        print(f"{args.suite} on {name}: {len(rows)} runs, command wall {wall:.1f} s; "
              f"overhead per run mean {statistics.mean(over):.3f} s, median "
              f"{statistics.median(over):.3f} s, max {max(over):.3f} s")
        stores[name] = comparable(out)
    ref = stores["1 worker"]
    for name, rows in stores.items():
        print(f"rows of {name} == rows of 1 worker: {rows == ref}")


if __name__ == "__main__":
    run()

"""Paper 003, Table 2 (ILP side): time to prove optimality on the 6-node network.

Prints wall and CPU seconds (HiGHS runs in this process; on a shared machine the CPU time is the
stable figure, the time limit is wall-clock).

For each scheme and request count, solves the ``cpn6`` instance (seed ``--seed``) with each
formulation (HiGHS, 1 thread, wall-clock limit) and prints one markdown row: status, objective,
bound, gap, seconds, blocking rate, and RDDA's objective on the same instance.

    python -m benchmarks.studies.rar.exact -o DIR --requests 2,6,10 \\
        --formulations aggregated,paper \\
        --time-limit 600 --seed 0
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import dmlopt
from dmlopt.errors import ModelTooLargeError
from dmlopt.models import rar

from .. import ArgumentParser, output_dir, tee


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.rar.exact",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (NAME.md) and writes (created)")
    ap.add_argument("--requests", default="2,6,10")
    ap.add_argument("--schemes", default=",".join(rar.SCHEMES))
    ap.add_argument("--formulations", default="aggregated,paper")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--solver", default="highs")
    ap.add_argument("--warm-start", default=None, help="heuristic name, e.g. rdda")
    args = ap.parse_args(argv)
    out = output_dir(args.out)
    args.jsonl = out / "rar_exact.jsonl"  # one JSON row per run, appended
    with tee(out / "rar_exact.md"):
        _run(args)


def _run(args: argparse.Namespace) -> None:
    print("| requests | scheme | formulation | status | objective | bound | gap | wall s | CPU s "
          "| blocking | RDDA objective |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.requests.split(",")):
        for scheme in args.schemes.split(","):
            inst = rar.generate_cpn6(seed=args.seed, requests=n, scheme=scheme)
            h = dmlopt.heuristic(inst, "rdda")
            for form in args.formulations.split(","):
                t0 = time.process_time()
                try:
                    res = dmlopt.solve(inst, solver=args.solver, formulation=form,
                                       time_limit=args.time_limit, threads=1,
                                       warm_start=args.warm_start)
                except ModelTooLargeError as exc:
                    print(f"| {n} | {scheme} | {form} | refused: {exc} |||||||")
                    continue
                cpu = time.process_time() - t0  # HiGHS runs in this process
                row = res.as_dict() if hasattr(res, "as_dict") else {}
                obj = "-" if res.objective is None else f"{res.objective:.5f}"
                bound = "-" if res.bound is None else f"{res.bound:.5f}"
                gap = "-" if res.gap is None else f"{res.gap:.2%}"
                blk = res.metrics.get("blocking_rate", float("nan"))
                print(f"| {n} | {scheme} | {form} | {res.status} | {obj} | {bound} | {gap} "
                      f"| {res.seconds:.1f} | {cpu:.1f} | {blk:.2f} | {h.objective:.5f} |",
                      flush=True)
                if args.jsonl:
                    rec = {"requests": n, "scheme": scheme, "formulation": form,
                           "seed": args.seed, "status": res.status, "objective": res.objective,
                           "bound": res.bound, "seconds": res.seconds, "cpu": cpu,
                           "metrics": res.metrics, "rdda": h.objective,
                           "rdda_metrics": h.metrics, "row": {k: str(v) for k, v in row.items()}}
                    with open(args.jsonl, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

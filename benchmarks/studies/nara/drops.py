"""Drop causes of the Nara allocators (paper 001): why each allocator loses requests.

Usage: python -m benchmarks.studies.nara.drops -o DIR [--topology alpha]
       [--dist uniform] [--seeds 0 1 2 3 4] [--n 128] [--exact] [--param max_units=100]

Per allocator, summed over the seeds: accepted requests, drops because the DC's total free CPU
or memory was short ("capacity"), because a pick broke constraint 3 ("path"), because the
allocator stopped without a failing pick ("exhausted"), and with --exact how many of the
path/exhausted drops had an allocation in that state (per-request MILP, HiGHS); mean servers
per accepted request. Every solution is re-scored by the evaluator.
"""

from __future__ import annotations

import argparse
import json

import dmlopt
from dmlopt.models import nara

from .. import ArgumentParser, output_dir, tee
from .diag import drop_causes

METHODS = ["random", "tetris", "tetris:check_paths=false", "nalb", "nulb", "netfit",
           "netfit-probe"]


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.nara.drops",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (nara_drops.md; created)")
    ap.add_argument("--topology", default="alpha")
    ap.add_argument("--dist", default="uniform")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--param", nargs="*", default=[], help="extra generator params KEY=VALUE")
    ap.add_argument("--methods", nargs="+", default=METHODS)
    args = ap.parse_args(argv)
    with tee(output_dir(args.out) / "nara_drops.md"):
        _run(args)


def _run(args: argparse.Namespace) -> None:
    spec = {"generator": args.dist, "topology": args.topology, "n_requests": args.n}
    for kv in args.param:
        key, _, val = kv.partition("=")
        spec[key] = json.loads(val)
    insts = [dmlopt.generate("nara", spec, seed=s) for s in args.seeds]
    print(f"{'method':26} {'accepted':>8} {'capacity':>8} {'path':>6} {'exhaust':>7} "
          f"{'placeable':>9} {'srv/acc':>7}")
    for meth in args.methods:
        name, _, rest = meth.partition(":")
        opts = {k: json.loads(v) for k, _, v in
                (item.partition("=") for item in filter(None, rest.split(",")))}
        tot = {"accepted": 0, "capacity": 0, "path": 0, "exhausted": 0, "placeable": 0}
        srv = 0.0
        for inst in insts:
            d = drop_causes(inst, name, exact=args.exact, **opts)
            ev = nara.evaluate(inst, d["solution"])
            assert ev.feasible and ev.objective == d["accepted"], ev.violations
            for k in tot:
                tot[k] += d[k] or 0
            srv += d["servers_per_accepted"] * d["accepted"]
        print(f"{meth:26} {tot['accepted']:8d} {tot['capacity']:8d} {tot['path']:6d} "
              f"{tot['exhausted']:7d} {tot['placeable'] if args.exact else '-':>9} "
              f"{srv / max(tot['accepted'], 1):7.2f}", flush=True)


if __name__ == "__main__":
    main()

"""RAR (paper 003): RDDA's certified gap against the energetic LP bound on the 38-node network.

For each scheme and seed: the instance ``cpn38`` with ``--requests`` requests, RDDA with the
instance's scheme, the ``energy`` bound through :func:`dmlopt.bound` (HiGHS, one thread) and the
certified gap |RDDA - bound| / |bound| (absolute where the bound is 0). Also prints the blocked
requests of RDDA and of the bound's LP, to show which part of eq. (4) the gap comes from, and
RDDA's CU-slots over the fewest its deployed requests need with the same node counts (1.0: no
CU-slot is spent beyond the minimum; above: RDDA trades CU-slots for earlier ends).

    python -m dmlopt.benchmarks.analysis.rar_bounds -o DIR --seeds 0-9 --requests 500
"""

from __future__ import annotations

import argparse
import time

import dmlopt
from dmlopt.models import rar

from . import output_dir, tee


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line: ``-o DIR --seeds 0-9 --requests 500 --schemes MinCU,MinW,MinT,MaxR``.

    Parameters
    ----------
    argv : list of str or None
        Arguments (default: sys.argv).

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003), section 6 (the 38-node network, 500 requests).
    """
    ap = argparse.ArgumentParser(prog="python -m dmlopt.benchmarks.analysis.rar_bounds",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (rar_bounds.md, created)")
    ap.add_argument("--seeds", default="0-9", help="e.g. 0-9 or 0,3,5")
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--schemes", default="MinCU,MinW,MinT,MaxR")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--end-step", type=int, default=2)
    args = ap.parse_args(argv)
    out = output_dir(args.out)
    with tee(out / "rar_bounds.md"):
        print("| scheme | seed | RDDA | blocked (RDDA) | RDDA CU-slots / fewest | bound | "
              "blocked (LP) | gap | seconds |")
        print("|---|---|---|---|---|---|---|---|---|")
        for scheme in args.schemes.split(","):
            for seed in _seeds(args.seeds):
                _row(scheme, seed, args)


def _row(scheme: str, seed: int, args: argparse.Namespace) -> None:
    inst = dmlopt.generate("rar", {"generator": "cpn38", "requests": args.requests,
                                   "scheme": scheme}, seed=seed)
    heur = dmlopt.heuristic(inst, "rdda")
    t0 = time.perf_counter()
    res = dmlopt.bound(inst, "energy", time_limit=args.time_limit, end_step=args.end_step)
    seconds = time.perf_counter() - t0
    b = res.bound
    gap = abs(heur.objective - b) / abs(b) if abs(b) > 1e-12 else abs(heur.objective - b)
    blocked = round(heur.metrics["blocking_rate"] * args.requests)
    lp_blocked = res.metrics.get("lp_blocked", float("nan"))
    print(f"| {scheme} | {seed} | {heur.objective:.4f} | {blocked} | {_excess(inst, heur):.2f} "
          f"| {b:.4f} | "
          f"{lp_blocked:.1f} | {100 * gap:.1f} % | {seconds:.0f} |", flush=True)


def _excess(inst: rar.Instance, heur: dmlopt.Result) -> float:
    """RDDA's CU-slots over the fewest CU-slots of the same deployments (same N, any k)."""
    k_max = max(nd.cus for nd in inst.nodes)
    used = fewest = 0.0
    for j, a in enumerate(heur.solution.requests):
        if a is None:
            continue
        nn = len(a.nodes)
        used += sum(len(ids) for ids in a.cus) * (a.end - a.start + 1)
        fewest += nn * min(k * d for n2, k, d in rar.modes(inst, j, k_max) if n2 == nn)
    return used / fewest if fewest else 1.0


if __name__ == "__main__":
    main()

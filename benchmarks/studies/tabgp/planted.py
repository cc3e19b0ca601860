"""TABGP drift: the planted groups as a solution, against the heuristics and the spectral bound.

The ``drift`` generator draws each step's edges from planted groups
(:func:`dmlopt.models.tabgp.generators.planted_groups`). The groups are a good partition by
construction, but a group may hold more than the capacity k. This study repairs that and scores
the result with the evaluator. Per step, while a group is over k, its vertex with the fewest
neighbours in it moves to the group with room that holds the most of its neighbours. It prints
that cost beside ``best`` and ``dense-refine`` (seed 0 of each heuristic). Where the heuristics
beat the planted solution, their certified gap is mostly the bound's, not theirs.

    python -m benchmarks.studies.tabgp.planted -o DIR [--seeds 0-2] [--n 1000]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import dmlopt
from dmlopt.models.tabgp.generators import planted_groups

from .. import ArgumentParser, output_dir, parse_seeds, tee

#: the drift setting of the certified-gap table (docs/tabgp.md)
SPEC = {"generator": "drift", "tau": 10, "l": 16}


def repaired(instance, groups: list[list[int]]) -> list[list[int]]:
    """The planted groups with every group brought down to the capacity (module docstring).

    Parameters
    ----------
    instance : Instance
        A TABGP instance made by the drift generator.
    groups : list of list of int
        Its planted groups, ``groups[t][v]``.

    Returns
    -------
    list of list of int
        Labels within the capacity at every step.

    References
    ----------
    Ours, on paper 004's objective (section 2: cut plus migration).
    """
    n, l, k = instance.n, instance.l, instance.k
    out = []
    for t, step in enumerate(groups):
        g = np.array(step)
        adj: list[list[int]] = [[] for _ in range(n)]
        for u, v in instance.edges[t]:
            adj[u].append(v)
            adj[v].append(u)
        sizes = np.bincount(g, minlength=l)
        for grp in range(l):
            while sizes[grp] > k:
                mem = np.flatnonzero(g == grp)
                inside = [sum(int(g[w] == grp) for w in adj[v]) for v in mem]
                v = int(mem[int(np.argmin(inside))])
                room = [h for h in range(l) if sizes[h] < k]
                to = max(room, key=lambda h: sum(int(g[w] == h) for w in adj[v]))
                g[v] = to
                sizes[grp] -= 1
                sizes[to] += 1
        out.append(g.tolist())
    return out


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.tabgp.planted",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (tabgp_planted.md, created)")
    ap.add_argument("--seeds", default="0-2", help="drift seeds, as 0-2 or 0,3 (default 0-2)")
    ap.add_argument("--n", type=int, default=1000, help="vertices (m = 5n; default 1000)")
    args = ap.parse_args(argv)
    if args.n < 16:
        print(f"error: --n: {args.n} must be at least 16 (l = 16 groups)", file=sys.stderr)
        sys.exit(2)
    seeds = parse_seeds(args.seeds)
    spec = {**SPEC, "n": args.n, "m": 5 * args.n}
    try:  # the generator's rules and size limit, before anything is written
        dmlopt.generate("tabgp", spec, seed=seeds[0])
    except dmlopt.DmloptError as err:
        print(f"error: --n: {args.n}: {err}", file=sys.stderr)
        sys.exit(2)
    out = output_dir(args.out)
    with tee(out / "tabgp_planted.md"):
        print(f"drift {spec}, seeds {args.seeds}")
        print("| seed | planted, repaired | `best` | `dense-refine` | best below planted | s |")
        print("|---|---|---|---|---|---|")
        for seed in seeds:
            t0 = time.process_time()
            inst = dmlopt.generate("tabgp", spec, seed=seed)
            params = {k: v for k, v in spec.items() if k != "generator"}
            labels = repaired(inst, planted_groups(seed=seed, **params))
            planted = dmlopt.evaluate(inst, {"assignment": labels}).objective
            best = dmlopt.heuristic(inst, "best", seed=0).objective
            dense = dmlopt.heuristic(inst, "dense-refine", seed=0).objective
            low = min(best, dense)
            print(f"| {seed} | {planted:g} | {best:g} | {dense:g} | "
                  f"{100 * (planted - low) / planted:.1f} % | {time.process_time() - t0:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()

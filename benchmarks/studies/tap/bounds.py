"""TAP lower bounds (paper 000) on the shipped QAPLIB instances and the ``dc`` generator.

For every shipped QAPLIB instance (K = 1) it runs ``glb`` and ``hahn-grant`` (``--time-limit``
seconds each, one thread) and prints the certified gap ``(best known - bound) / best known`` of
QAPLIB's published value; for the paper-size ``dc`` instances (section V-C: 8 modules, K = 1,
fat-tree and DCell, ps and all-reduce, ``--vms`` VMs drawn at random) the gap to the best of
``rts`` (seed 0, default budget). Writes ``runs.csv`` (one line per instance and method) and
``table.md`` (per family: median and max gap, mean seconds) under DIR.

    python -m benchmarks.studies.tap.bounds -o DIR --time-limit 60 [--only nug12 ...]
"""

from __future__ import annotations

import csv
import re
import statistics
import time

import dmlopt
from dmlopt.models.tap import qaplib

from .. import ArgumentParser, output_dir, tee

METHODS = ("glb", "hahn-grant")


def family(name: str) -> str:
    """QAPLIB family of an instance name (tai and lipa split by their a/b variant)."""
    match = re.match(r"([a-z]+)\d+([a-z]?)", name)
    if match is None:
        return name
    base, variant = match.groups()
    return f"{base}*{variant}" if base in ("tai", "lipa") else base


def _bound(inst, method: str, time_limit: float) -> tuple[float, float, dict]:
    t0 = time.perf_counter()
    res = dmlopt.bound(inst, method, time_limit=time_limit)
    return float(res.bound), time.perf_counter() - t0, res.metrics


def main(argv: list[str] | None = None) -> int:
    """Run the study (see the module docstring); returns the exit code."""
    ap = ArgumentParser(prog="python -m benchmarks.studies.tap.bounds",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per bound run")
    ap.add_argument("--only", nargs="*", help="QAPLIB names (default: all shipped)")
    ap.add_argument("--no-dc", action="store_true", help="skip the dc instances")
    ap.add_argument("--methods", default=",".join(METHODS), help="bound methods, comma separated")
    ap.add_argument("--vms", default="8,12,16,20", help="VM counts of the dc instances")
    args = ap.parse_args(argv)
    methods = tuple(args.methods.split(","))
    out = output_dir(args.out)
    rows: list[dict] = []
    with tee(out / "log.txt"):
        names = args.only or sorted(qaplib.names(), key=lambda s: (qaplib.load(s).n, s))
        for name in names:
            inst = qaplib.load(name)
            ub = qaplib.best_known(name)
            for method in methods:
                lb, sec, met = _bound(inst, method, args.time_limit)
                gap = 100.0 * (ub - lb) / ub if ub > 0 else 0.0
                rows.append({"instance": name, "family": family(name), "n": inst.n,
                             "method": method, "bound": lb, "best_known": ub, "gap": gap,
                             "seconds": sec, "rounds": met.get("rounds", 1)})
                print(f"{name:10s} n={inst.n:3d} {method:10s} bound {lb:14.1f} best {ub:14.1f} "
                      f"gap {gap:6.2f} % {sec:7.2f} s", flush=True)
        if not args.no_dc:
            for topo in ("fat-tree", "dcell"):
                for overlay in ("ps", "allreduce"):
                    for vms in (int(v) for v in args.vms.split(",")):
                        spec = {"generator": "dc", "topology": topo, "overlay": overlay,
                                "modules": 8, "vms": vms}
                        try:
                            inst = dmlopt.generate("tap", spec, seed=0)
                        except dmlopt.errors.DmloptError as exc:
                            print(f"dc {topo} {overlay} {vms}: skipped ({exc})")
                            continue
                        ub = float(dmlopt.heuristic(inst, "rts", seed=0).objective)
                        name = f"dc-{topo}-{overlay}-{vms}"
                        for method in methods:
                            lb, sec, met = _bound(inst, method, args.time_limit)
                            gap = 100.0 * (ub - lb) / ub if ub > 0 else 0.0
                            rows.append({"instance": name, "family": f"dc {topo} {overlay}",
                                         "n": inst.n, "method": method, "bound": lb,
                                         "best_known": ub, "gap": gap, "seconds": sec,
                                         "rounds": met.get("rounds", 1)})
                            print(f"{name:24s} {method:10s} bound {lb:8.1f} rts {ub:8.1f} "
                                  f"gap {gap:6.2f} % {sec:6.2f} s", flush=True)
    with open(out / "runs.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "table.md").write_text(table(rows, methods))
    print(table(rows, methods))
    return 0


def table(rows: list[dict], methods: tuple[str, ...] = METHODS) -> str:
    """Markdown table: per family, instances, n range, then per method median / max gap % and
    mean seconds; a last line over every QAPLIB instance."""
    fams: dict[str, list[dict]] = {}
    for r in rows:
        fams.setdefault(r["family"], []).append(r)
    head = "| family | instances | n | " + " | ".join(f"`{m}`" for m in methods) + " |"
    lines = [head, "|" + "---|" * (3 + len(methods))]

    def cells(group: list[dict]) -> str:
        parts = []
        for m in methods:
            sel = [r for r in group if r["method"] == m]
            gaps = [r["gap"] for r in sel]
            secs = [r["seconds"] for r in sel]
            parts.append(f"{statistics.median(gaps):.1f} / {max(gaps):.1f} / "
                         f"{statistics.mean(secs):.2f}")
        return " | ".join(parts)

    qap = [r for r in rows if not r["family"].startswith("dc")]
    for fam in sorted(fams, key=lambda f: (f.startswith("dc"), f)):
        group = fams[fam]
        ns = [r["n"] for r in group]
        count = len({r["instance"] for r in group})
        lines.append(f"| {fam} | {count} | {min(ns)}-{max(ns)} | {cells(group)} |")
    if qap:
        ns = [r["n"] for r in qap]
        lines.append(f"| **QAPLIB, all** | {len({r['instance'] for r in qap})} | "
                     f"{min(ns)}-{max(ns)} | {cells(qap)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())

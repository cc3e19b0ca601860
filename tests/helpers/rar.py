"""RAR test helpers shared by several test files: a brute force written without the package's
evaluator (its own CU and wavelength bookkeeping) and the tiny instances it can enumerate.

Imported as ``from tests.helpers.rar import ...`` (tests/ is a package).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from pathlib import Path

import numpy as np

import dmlopt
from dmlopt.io import instance_hash
from dmlopt.models import rar


def _options(inst: rar.Instance, j: int):
    """Every deployment of request j, independently of the ILPs: per-node counts, any window."""
    r = inst.requests[j]
    out = []
    for ring in inst.rings:
        if r.source not in ring.nodes or ring.reliability < r.reliability:
            continue
        others = [v for v in ring.nodes if v != r.source]
        for nn in r.node_counts:
            for rest in itertools.combinations(others, nn - 1):
                nodes = (r.source, *rest)
                for ks in itertools.product(*(range(1, inst.nodes[v].cus + 1) for v in nodes)):
                    need = max(rar.duration(inst, j, nn, k) for k in ks)
                    for s in range(r.arrival, r.deadline + 1):
                        for e in range(s + need - 1, r.deadline + 1):
                            for b in range(min(inst.links[i].wavelengths for i in ring.links)):
                                out.append((ring, nodes, ks, s, e, b))
    return out


#: brute-force optima already enumerated in this process, by the instance's JSON without its
#: scheme: a dozen test files check their bounds against the same tiny instances' optima (1-2 s
#: each), one instance per scheme; :func:`_enumerate` gives every scheme's optimum at once and
#: reads the instance's own scheme only through an ``alpha`` override (then kept in the key)
_OPTIMA: dict[str, dict[str, float]] = {}

#: :func:`_enumerate`'s results on the instances the tests enumerate most (the TINY ones, 2 CPU
#: s per test process, and a few more), by the sha256 of the key of :data:`_OPTIMA`; written by
#: the brute force itself: ``DMLOPT_WRITE_BRUTE=1`` and ``-n 0`` on the test files that use it
#: (an instance missing from it is enumerated, so a changed generator is never compared
#: against a stale value)
GOLDEN_BRUTE = Path(__file__).parents[1] / "rar" / "golden" / "brute_force.json"
_GOLDEN_BRUTE: dict[str, dict[str, float]] = (json.loads(GOLDEN_BRUTE.read_text())
                                              if GOLDEN_BRUTE.exists() else {})


def _brute_force(inst: rar.Instance) -> dict[str, float]:
    """min eq. (4) per scheme over all combinations (:func:`_enumerate`), once per process for
    an instance whatever its scheme (from :data:`GOLDEN_BRUTE` when it holds the instance)."""
    key = inst.model_dump_json(exclude={"scheme"} if inst.alpha is None else None)
    if key not in _OPTIMA:
        digest = hashlib.sha256(key.encode()).hexdigest()
        if digest in _GOLDEN_BRUTE:
            _OPTIMA[key] = dict(_GOLDEN_BRUTE[digest])
        else:
            _OPTIMA[key] = _enumerate(inst)
            if os.environ.get("DMLOPT_WRITE_BRUTE") == "1":
                _GOLDEN_BRUTE[digest] = {k: float(v) for k, v in _OPTIMA[key].items()}
                GOLDEN_BRUTE.write_text(json.dumps(_GOLDEN_BRUTE, indent=0, sort_keys=True)
                                        + "\n")
    return dict(_OPTIMA[key])


def _enumerate(inst: rar.Instance) -> dict[str, float]:
    """min eq. (4) per scheme over all combinations; activated CUs = per-node peak usage."""
    nr, T = len(inst.requests), inst.slots
    caps = np.array([nd.cus for nd in inst.nodes])
    best = dict.fromkeys(rar.SCHEMES, math.inf)
    for combo in itertools.product(*([None, *_options(inst, j)] for j in range(nr))):
        use = np.zeros((len(inst.nodes), T + 1), dtype=int)
        load: dict[tuple[int, int], np.ndarray] = {}
        ok = True
        for opt in combo:
            if opt is None:
                continue
            ring, nodes, ks, s, e, b = opt
            for v, k in zip(nodes, ks, strict=True):
                use[v, s:e + 1] += k
            for i in ring.links:
                arr = load.setdefault((i, b), np.zeros(T + 1, dtype=int))
                arr[s:e + 1] += 1
                ok &= arr.max() <= inst.rho
        if not ok or (use.max(axis=1) > caps).any():
            continue
        deployed = [(j, o) for j, o in enumerate(combo) if o is not None]
        blocking = 1 - len(deployed) / nr
        zeta = {
            "MinCU": use.max(axis=1).sum(),
            "MinW": len(load),
            "MinT": sum(o[4] / inst.requests[j].deadline for j, o in deployed),
            "MaxR": sum(1 - (o[0].reliability if o else 0.0) for o in combo),
        }
        for scheme in rar.SCHEMES:
            value = blocking + inst.alpha_of(scheme) * zeta[scheme]
            best[scheme] = min(best[scheme], value)
    return best


TINY = [
    dict(seed=1, nodes=4, extra_links=1, requests=2, slots=3, cus=2, wavelengths=1, rho=1),
    dict(seed=2, nodes=4, extra_links=1, requests=2, slots=3, cus=2, wavelengths=2, rho=1),
    dict(seed=6, nodes=4, extra_links=2, requests=2, slots=3, cus=2, wavelengths=1, rho=1),
]


#: optima ``dmlopt.solve`` proved (status optimal) with a reference formulation, by
#: "formulation:mip_gap:instance hash": recorded by running the tests that use
#: :func:`proven_optimum` with ``DMLOPT_WRITE_GOLDEN=1`` and ``-n 0``; an instance missing from
#: it (a changed generator, a fresh hypothesis draw) is solved in the test instead
GOLDEN_OPTIMA = Path(__file__).parents[1] / "rar" / "golden" / "proven_optima.json"
_PROVEN: dict[str, float] = (json.loads(GOLDEN_OPTIMA.read_text())
                             if GOLDEN_OPTIMA.exists() else {})


def proven_optimum(inst: rar.Instance, formulation: str = "aggregated",
                   mip_gap: float | None = None, **options) -> float:
    """The optimum ``dmlopt.solve(inst, formulation=..., mip_gap=..., **options)`` proves
    (asserted optimal), taken from :data:`GOLDEN_OPTIMA` when it holds the instance; the
    reference formulations are not the code a test using it checks."""
    key = f"{formulation}:{mip_gap}:{instance_hash(inst)}"
    if key not in _PROVEN:
        res = dmlopt.solve(inst, formulation=formulation, mip_gap=mip_gap, **options)
        assert res.status == "optimal", (formulation, res.status)
        _PROVEN[key] = res.objective
        if os.environ.get("DMLOPT_WRITE_GOLDEN") == "1":
            GOLDEN_OPTIMA.write_text(json.dumps(_PROVEN, indent=0, sort_keys=True) + "\n")
    return _PROVEN[key]

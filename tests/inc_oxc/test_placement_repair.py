"""INC/OXC heuristics never leave a rack over its capacity where moves and swaps fix it.

On these small, tightly packed instances (found by scanning the validity sweep's generators)
the placement rules used to strand a worker or a PS server and return a rack over its CPU or
GPU capacity. The capacity check here is our own sum over the solution, not the evaluator's.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlopt

CASES = [
    ({"generator": "small", "racks": 2, "jobs": 3, "inc": False, "alpha": 0.5}, 7028,
     ("wcg-literal", "wcg-opt")),
    ({"generator": "small", "racks": 2, "jobs": 3, "inc": False, "alpha": 0.5}, 204,
     ("wcg-literal", "wcg-opt")),
    ({"generator": "small", "racks": 2, "jobs": 3, "inc": True, "alpha": 2.0}, 273, ("swg",)),
    ({"generator": "dcn", "racks": 2, "jobs": 3, "ports": 2, "workers": [1, 3],
      "pdp_fraction": 0.0, "ps_per_switch": 2, "data": [92, 552], "inc": False, "alpha": 0.0},
     141, ("wcg",)),
    ({"generator": "dcn", "racks": 3, "jobs": 3, "ports": 3, "workers": [1, 2],
      "pdp_fraction": 0.5, "ps_per_switch": 0, "data": [100, 100], "inc": False, "alpha": 0.5},
     154, ("wcg",)),
]


def _within_capacity(inst, sol) -> bool:
    used = np.zeros((inst.n_racks, 3))
    for job, racks in zip(inst.jobs, sol.workers, strict=True):
        for w, k in zip(job.workers, racks, strict=True):
            used[k] += (w.cpu, w.gpu, w.mem)
    for job, (k, kind) in zip(inst.jobs, sol.ps, strict=True):
        if kind == "server":
            used[k] += (job.ps_cpu, 0.0, job.ps_mem)
    cap = np.array([(p.cpu, p.gpu, p.mem) for p in inst.racks])
    return bool((used <= cap * (1 + 1e-9) + 1e-9).all())


@pytest.mark.parametrize(("spec", "seed", "names"), CASES)
def test_tight_instances_get_a_feasible_placement(spec, seed, names):
    inst = dmlopt.generate("inc_oxc", spec, seed=seed)
    for name in (*names, "wcg", "wcg-literal", "swg", "rwp"):
        res = dmlopt.heuristic(inst, name)
        assert res.status == "feasible", (name, res.message)
        assert _within_capacity(inst, res.solution), name

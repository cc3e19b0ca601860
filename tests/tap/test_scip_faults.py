"""SCIP on the TAP formulations: the default options that avoid SCIP 10.0's faults
(models/tap module docstring, "SCIP").

Each solve runs in a subprocess: with the faulty settings SCIP ends its process with a
segmentation fault, which must fail this test rather than end the test run. The reference
optimum comes from HiGHS on the ``class`` formulation, another model and solver.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import dmlopt

pytest.importorskip("pyscipopt")

CRASH = ({"generator": "dc", "topology": "fat-tree", "k": 4, "overlay": "random", "modules": 4,
          "vms": 6, "K": 1}, 7113)
RESTART = ({"generator": "dc", "topology": "fat-tree", "k": 4, "overlay": "ring", "modules": 3,
            "vms": 6, "K": 2}, 7112)

_SOLVE = """
import json, sys, dmlopt
spec, seed, formulation = json.loads(sys.argv[1])
inst = dmlopt.generate("tap", spec, seed=seed)
try:
    res = dmlopt.solve(inst, "scip", formulation=formulation, threads=1, time_limit=60)
    print(json.dumps([res.status, res.objective]))
except dmlopt.ObjectiveMismatchError as exc:
    print(json.dumps(["mismatch", str(exc)]))
"""


def _scip(spec: dict, seed: int, formulation: str) -> list:
    out = subprocess.run([sys.executable, "-c", _SOLVE, json.dumps([spec, seed, formulation])],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"SCIP ended the process: return code {out.returncode}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("case", "formulation"),
                         [(CRASH, "paper"), (CRASH, "rlt"), (RESTART, "paper")])
def test_scip_reaches_the_optimum_without_crash_or_false_optimum(case, formulation):
    spec, seed = case
    ref = dmlopt.solve(dmlopt.generate("tap", spec, seed=seed), "highs", formulation="class")
    assert ref.status == "optimal"
    status, objective = _scip(spec, seed, formulation)
    assert status == "optimal", objective
    assert objective == pytest.approx(ref.objective, rel=1e-9)

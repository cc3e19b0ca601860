"""Nara ``netfit-probe``'s faster probe statistics and candidates allocate exactly as before.

``probe_speed_reference.json`` holds the allocations the previous implementation of
:mod:`dmlopt.heuristics.nara.probe` and :mod:`dmlopt.heuristics.nara.netfit` (dmlopt main at
commit a52f627) made on a few seeded episodes (alpha and beta with the three request sets,
gamma with uniform requests; default options and two variants). It was written by
``python -m tests.nara.test_probe_speed --write`` at that commit; an allocation that differs in
any server of any request fails here.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

import dmlopt
from dmlopt.heuristics import nara as H

REFERENCE = Path(__file__).with_name("probe_speed_reference.json")

#: (generator spec, seed, heuristic, options)
CASES = [
    ({"generator": "uniform", "topology": "alpha", "n_requests": 256}, 1, "netfit-probe", {}),
    ({"generator": "azure", "topology": "alpha", "n_requests": 200}, 2, "netfit-probe", {}),
    ({"generator": "alibaba", "topology": "beta", "n_requests": 200}, 3, "netfit-probe", {}),
    ({"generator": "uniform", "topology": "beta", "n_requests": 200}, 4, "netfit-probe",
     {"n_probe": 8, "max_cand": 2, "select": False}),
    ({"generator": "uniform", "topology": "gamma", "n_requests": 896}, 5, "netfit-probe", {}),
    ({"generator": "uniform", "topology": "gamma", "n_requests": 896}, 7, "netfit", {}),
    ({"generator": "azure", "topology": "alpha", "n_requests": 200}, 6, "netfit", {}),
]


def _name(case: tuple) -> str:
    spec, seed, heur, opts = case
    return "-".join([spec["generator"], spec["topology"], str(spec["n_requests"]), str(seed),
                     heur, *(f"{k}={v}" for k, v in sorted(opts.items()))])


def _run(case: tuple) -> dict:
    spec, seed, heur, opts = case
    inst = dmlopt.generate("nara", spec, seed=seed)
    sol = H.HEURISTICS[heur].function(inst, seed=seed, **opts)
    full = json.dumps(sol.model_dump(mode="json"), separators=(",", ":"), sort_keys=True)
    return {"accepted": sum(a is not None for a in sol.allocations),
            "sha256": hashlib.sha256(full.encode()).hexdigest()}


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_same_allocations_as_before(case, reference) -> None:
    """Catches a fast path that changes any allocation (a probe statistic off by a server or
    a rack, a stale cached table, a candidate order changed)."""
    got, want = _run(case), reference[_name(case)]
    assert got["accepted"] == want["accepted"]
    assert got["sha256"] == want["sha256"]
    assert want["accepted"] > 0


if __name__ == "__main__" and "--write" in sys.argv:
    REFERENCE.write_text(json.dumps({_name(c): _run(c) for c in CASES}, indent=1,
                                    sort_keys=True) + "\n")

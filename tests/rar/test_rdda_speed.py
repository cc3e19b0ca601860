"""RAR rdda's fast hot path deploys exactly as the code before it.

``rdda_speed_reference.json`` holds the solutions the previous implementation of
:class:`dmlopt.heuristics.rar._Packer` (dmlopt main at commit a52f627) gave on a few seeded
cpn38 and cpn6 instances, for every scheme with both ``block`` values and for ``rdda-ls``
(whose keys "early", "late" and "valley" run through the same code). It was written by
``python -m tests.rar.test_rdda_speed --write`` at that commit; the cases of the 250-request
instance were added from the code of commit eaf040e (every usable window scored, before the
window lengths were scored in batches and skipped by a bound). A placement that differs in any
ring, node, CU id, wavelength, start or end fails here.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from pathlib import Path

import pytest

import dmlopt
from dmlopt.heuristics import rar as H

REFERENCE = Path(__file__).with_name("rdda_speed_reference.json")

#: (generator spec, runs): seeded instances, slots 0.48 x requests as the growth plan for cpn38
INSTANCES = [
    {"generator": "cpn38", "requests": 60, "slots": 29, "scheme": "MinCU", "seed": 1},
    {"generator": "cpn38", "requests": 120, "slots": 58, "scheme": "MinCU", "seed": 2},
    {"generator": "cpn38", "requests": 40, "slots": 48, "scheme": "MinCU", "seed": 3},
    {"generator": "cpn6", "requests": 20, "slots": 12, "scheme": "MinCU", "seed": 4},
    {"generator": "cpn6", "requests": 40, "slots": 16, "scheme": "MinCU", "seed": 5},
    {"generator": "cpn38", "requests": 250, "slots": 120, "scheme": "MinCU", "seed": 8},
]
#: instances run with a few (scheme, block) pairs only (wide windows: several batches of
#: window lengths per request), with their pairs
FEW = {5: (("MinCU", "never"), ("MinCU", "break-even"), ("MinW", "never"))}
#: instances rdda-ls runs on (indexes into INSTANCES; it costs about 40 rdda runs)
LS_ON = (2, 3)


def _cases() -> list[tuple[int, str, dict]]:
    out = []
    for i, _ in enumerate(INSTANCES):
        pairs = FEW.get(i, itertools.product(H.SCHEMES, H.BLOCKS))
        for scheme, block in pairs:
            out.append((i, "rdda", {"scheme": scheme, "block": block}))
    out += [(i, "rdda-ls", {}) for i in LS_ON]
    return out


def _name(case: tuple[int, str, dict]) -> str:
    i, heur, opts = case
    return f"{i}-{heur}-" + "-".join(str(v) for v in opts.values())


def _run(case: tuple[int, str, dict]) -> dict:
    i, heur, opts = case
    spec = dict(INSTANCES[i])
    inst = dmlopt.generate("rar", spec, seed=spec.pop("seed"))
    sol = H.rdda(inst, **opts) if heur == "rdda" else H.rdda_ls(inst, **opts)
    full = json.dumps(sol.model_dump(mode="json"), separators=(",", ":"), sort_keys=True)
    # per request (ring, nodes, CUs per node, wavelength, start, end), None if blocked, and a
    # digest of the whole solution (CU ids included)
    plans = [None if a is None else [a.ring, a.nodes, len(a.cus[0]), a.wavelength, a.start,
                                     a.end] for a in sol.requests]
    return {"plans": plans, "sha256": hashlib.sha256(full.encode()).hexdigest()}


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize("case", _cases(), ids=_name)
def test_same_deployments_as_before(case, reference) -> None:
    """Catches a fast path that changes any placement (a window dropped that could win, a
    tie broken differently, a wrong window maximum, a wavelength check on the wrong slots)."""
    got = _run(case)
    want = reference[_name(case)]
    assert got["plans"] == want["plans"]
    assert got["sha256"] == want["sha256"]
    # the reference deploys something, so the comparison is not between two empty schedules
    assert any(a is not None for a in want["plans"])


if __name__ == "__main__" and "--write" in sys.argv:
    REFERENCE.write_text(json.dumps({_name(c): _run(c) for c in _cases()},
                                    separators=(",", ":"), sort_keys=True) + "\n")

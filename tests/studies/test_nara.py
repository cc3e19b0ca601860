"""Smoke tests of the Nara studies (benchmarks/studies/nara/, paper 001): the drop causes of an
allocator add up, replay to the heuristic's own run and are recounted from the free
capacities; the drops script prints them for a tiny episode."""

from __future__ import annotations

import pytest

import dmlopt
from benchmarks.studies.nara import diag, drops
from dmlopt.models import nara
from dmlopt.models.nara.sim import State


@pytest.mark.parametrize("name", ["tetris", "netfit"])
def test_drop_causes_add_up_and_replay(name):
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 48}, seed=4)
    d = diag.drop_causes(inst, name)
    sol = d["solution"]
    assert d["accepted"] + d["capacity"] + d["path"] + d["exhausted"] == 48
    ev = nara.evaluate(inst, sol)
    assert ev.feasible and ev.objective == d["accepted"]
    assert dmlopt.heuristic(inst, name).solution == sol
    # recount "capacity" from the replay: total free CPU/memory below the request at arrival
    st = State(inst)
    short = 0
    for j, (req, al) in enumerate(zip(inst.requests, sol.allocations, strict=True)):
        st.begin(j)
        if al is None:
            short += req.c > st.cpu_free.sum() or req.m > st.mem_free.sum()
            st.drop()
        else:
            st.commit(al)
    assert short == d["capacity"]
    assert d["path"] == 0  # both check constraint 3 before every pick


def test_drop_causes_exact_placeable_is_bounded():
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 24}, seed=1)
    d = diag.drop_causes(inst, "nulb", exact=True)
    assert 0 <= d["placeable"] <= d["path"] + d["exhausted"]


def test_drops_script(tmp_path):
    drops.main(["-o", str(tmp_path), "--seeds", "0", "--n", "16", "--methods", "tetris"])
    rows = (tmp_path / "nara_drops.md").read_text().splitlines()
    cells = rows[-1].split()
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 16}, seed=0)
    assert cells[0] == "tetris"
    assert int(cells[1]) == dmlopt.heuristic(inst, "tetris").objective
    assert sum(int(c) for c in cells[1:5]) == 16

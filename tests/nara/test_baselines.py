"""Nara (paper 001): the baselines' rules and the request generator's bound (the drop causes
of the allocators are a study: tests/studies/test_nara.py).

Independent checks: hand-built states whose right pick is known and the evaluator's replay.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics import nara as H
from dmlopt.models import nara
from dmlopt.models.nara import topology as topo
from dmlopt.models.nara.sim import State


def tiny(reqs: list[tuple[int, int, float, float]]) -> nara.Instance:
    t = topo.fabric(racks=4, servers_per_rack=2, pods=2, fabrics_per_pod=1, spines_per_plane=1,
                    name="tiny")
    return nara.Instance(topology=t, requests=[{"c": c, "m": m, "b": b, "t": t_}
                                               for c, m, b, t_ in reqs])


def _prefilled(last: tuple[int, int, float, float]) -> State:
    """Servers 0, 1 hold a balanced request with b = 0.7 (free (9, 9), access 0.3 free), servers
    2..7 a CPU-only one with b = 0.1 (free (9, 10)); ``last`` is then pending."""
    inst = tiny([(2, 2, 0.7, 10), (6, 0, 0.1, 10), last])
    st = State(inst)
    st.begin(0)
    st.commit(nara.Allocation(servers=[0, 1], cpu=[1, 1], mem=[1, 1], routes=[0]))
    st.begin(1)
    st.commit(nara.Allocation(servers=list(range(2, 8)), cpu=[1] * 6, mem=[0] * 6,
                              routes=[0] * 15))
    st.begin(2)
    return st


def test_tetris_first_pick_needs_access_bandwidth_when_not_alone():
    # request (15, 15): servers 0, 1 have cosine 1 (the best), the others 0.9986; but their
    # access links have 0.3 < 0.5 free and the request needs two servers
    st = _prefilled((15, 15, 0.5, 10))
    assert not st.access_now[0] and not st.access_now[1] and st.access_now[2:].all()
    assert st.feasible()[0]  # the plain mask allows server 0 as a first pick...
    assert H._tetris_choose(0.9, True)(st, np.random.default_rng(0)) is True
    assert st.covered and 0 not in st.selected and 1 not in st.selected  # ...Tetris does not
    # without the path check Tetris starts on server 0 and the request is lost
    st = _prefilled((15, 15, 0.5, 10))
    assert H._tetris_choose(0.9, False)(st, np.random.default_rng(0)) is False
    assert st.selected[0] == 0
    # a request one server holds may still go to server 0 (no link is charged)
    st = _prefilled((5, 5, 0.9, 10))
    assert H._tetris_choose(0.9, True)(st, np.random.default_rng(0)) is True
    assert st.selected == [0]


def test_uniform_generator_bound():
    inst = nara.generate_uniform(n_requests=300, seed=3)
    c, m = inst.arrays[:2]
    assert c.min() >= 1 and m.min() >= 1 and c.max() <= 50 and m.max() <= 50
    wide = nara.generate_uniform(n_requests=300, seed=3, max_units=100)
    assert wide.arrays[0].max() > 50
    # the paper's reading: every request fits 5 empty servers
    assert (np.maximum(np.ceil(c / 10), np.ceil(m / 10)) <= 5).all()
    with pytest.raises(InstanceError, match="max_units"):
        dmlopt.generate("nara", {"generator": "uniform", "max_units": 101}, seed=0)

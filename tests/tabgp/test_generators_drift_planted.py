"""The drift generator's planted groups (``planted_groups``) are the groups its edges came from.

Independent checks, without the generator's code: with mix = 0 every edge joins two vertices of
one planted group (groups of one vertex excepted), with drift = 0 no vertex changes group, and at
step 0 the group sizes differ by at most one. A function that drew the groups from another point
of the random stream (or ignored the weights' draws) fails the first check.
"""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt.models.tabgp import planted_groups


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 5])
def test_edges_stay_inside_the_planted_groups(seed, weighted):
    spec = {"n": 60, "tau": 4, "l": 4, "m": 150, "mix": 0.0, "drift": 0.2, "weighted": weighted}
    inst = dmlopt.generate("tabgp", {"generator": "drift", **spec}, seed=seed)
    groups = planted_groups(seed=seed, **spec)
    assert len(groups) == 4 and all(len(g) == 60 for g in groups)
    moved = 0
    for t, edges in enumerate(inst.edges):
        g = groups[t]
        size = {x: g.count(x) for x in set(g)}
        for u, v in edges:
            assert g[u] == g[v] or size[g[u]] == 1 or size[g[v]] == 1, (t, u, v)
        if t:
            moved += sum(a != b for a, b in zip(groups[t - 1], g, strict=True))
    assert moved > 0


def test_no_drift_keeps_balanced_groups():
    spec = {"n": 50, "tau": 3, "l": 6, "m": 100, "drift": 0.0}
    groups = planted_groups(seed=3, **spec)
    assert groups[0] == groups[1] == groups[2]
    sizes = [groups[0].count(x) for x in range(6)]
    assert max(sizes) - min(sizes) <= 1


def test_bad_parameters_are_refused_like_the_generator():
    with pytest.raises(dmlopt.InstanceError, match="mix"):
        planted_groups(seed=0, n=20, l=2, m=10, mix=2.0)


@pytest.mark.parametrize(("kw", "error"), [
    ({"seed": -1}, dmlopt.InstanceError), ({"mix": float("nan")}, dmlopt.InstanceError),
    ({"n": "x"}, dmlopt.InstanceError), ({"tau": 0}, dmlopt.InstanceError),
    ({"n": 10**12}, dmlopt.ModelTooLargeError)])
def test_hostile_parameters_are_refused_by_name(kw, error):
    with pytest.raises(error, match=next(iter(kw)) if error is dmlopt.InstanceError else "large"):
        planted_groups(**({"n": 20, "m": 30, "l": 2} | kw))

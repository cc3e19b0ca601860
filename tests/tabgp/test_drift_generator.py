"""The drift generator with mix = 0 draws edges inside the planted groups only: asking for more
edges than those groups hold is refused naming m, instead of drawing for ever."""

from __future__ import annotations

import signal

import numpy as np
import pytest

import dmlopt


@pytest.fixture
def alarm():
    """Fail a test that runs longer than 20 s (the refused spec used to loop for ever)."""
    def boom(signum, frame):
        raise TimeoutError("the generator did not return within 20 s")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_more_edges_than_the_groups_hold_is_refused(alarm):
    """Catches the rejection loop that never ends: n = 6 in l = 3 groups of 2 holds 3 pairs
    inside the groups, and m = 4 was asked with mix = 0 (drift = 0: the same groups)."""
    spec = {"generator": "drift", "n": 6, "tau": 2, "l": 3, "m": 4, "mix": 0.0, "drift": 0.0}
    with pytest.raises(dmlopt.InstanceError, match="m: 4.*3 edges mix = 0 can draw"):
        dmlopt.generate("tabgp", spec, seed=7006)


def _reachable_by_hand(groups: list[int], n: int) -> set[tuple[int, int]]:
    """Pairs inside a group, or at a vertex alone in its group (written without the package)."""
    size = {g: groups.count(g) for g in groups}
    return {(u, v) for u in range(n) for v in range(u + 1, n)
            if groups[u] == groups[v] or size[groups[u]] == 1 or size[groups[v]] == 1}


@pytest.mark.parametrize("n,l", [(6, 3), (5, 3), (7, 4), (4, 4)])
def test_exactly_the_reachable_edges_are_drawn(alarm, n, l):
    """Catches a cap below or above what mix = 0 reaches: asking for all of them returns every
    reachable pair (and one more is refused)."""
    rng = np.random.default_rng(7006)  # the generator's own first draw: its groups
    groups = [int(g) for g in rng.permutation(n) % l]
    pairs = _reachable_by_hand(groups, n)
    spec = {"generator": "drift", "n": n, "tau": 1, "l": l, "m": len(pairs), "mix": 0.0}
    inst = dmlopt.generate("tabgp", spec, seed=7006)
    assert {tuple(sorted(e)) for e in inst.edges[0]} == pairs
    with pytest.raises(dmlopt.InstanceError, match="m: "):
        dmlopt.generate("tabgp", spec | {"m": len(pairs) + 1}, seed=7006)

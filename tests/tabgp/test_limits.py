"""Limits that hold at every size (issue 51, item 3), TABGP: the ``enum`` size estimate is a
float count computed in O(n), never a big-integer product, exact where it counts below 1e300,
monotone, and refused before anything is built; the certification of the ``spectral`` bound
stops at its deadline with a bound it can still certify."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

import dmlopt
from dmlopt.errors import ModelTooLargeError
from dmlopt.models.tabgp import enumeration as E


@pytest.mark.parametrize(("n", "l", "k"), [(5, 2, 3), (6, 3, 2), (7, 3, 3), (20, 4, 6),
                                           (40, 40, 40), (100, 2, 60), (9, 1, 9), (9, 2, 4)])
def test_float_count_equals_the_exact_one(n, l, k):
    exact = E._n_partitions(n, l, k)
    assert E.partition_count(n, l, k) == pytest.approx(exact, rel=1e-10, abs=0)


def test_count_monotone_and_capped():
    """More vertices (room kept), more clusters or a larger capacity never count fewer; a count
    beyond 1e300 is 1e300, reached through the O(n) lower bound."""
    for l, k in itertools.product((2, 3, 5), (3, 7)):
        counts = [E.partition_count(n, l, k) for n in range(1, l * k + 1)]
        assert all(b >= a * (1 - 1e-12) for a, b in itertools.pairwise(counts)), counts
    assert E.partition_count(30, 3, 10) <= E.partition_count(30, 4, 10) \
        <= E.partition_count(30, 4, 11)
    for n in (1_000, 3_000, 100_000, 10**7):
        assert E.partition_count(n, 4, n // 4 + 1) == E.HUGE
        assert E.partition_count(n, n, n) == E.HUGE
    assert E.partition_count(10**7, 1, 10**7) == 1.0  # one cluster: one partition
    assert E.partition_count(10, 2, 4) == 0.0  # the vertices do not fit


def test_estimate_takes_no_big_integers(monkeypatch):
    """The estimate never calls the big-integer recurrence, at any size."""
    def boom(*_a):
        raise AssertionError("big-integer count called")

    monkeypatch.setattr(E, "_n_partitions", boom)
    for n in (12, 3_000, 100_000):
        size = E.estimate_enum(SimpleNamespace(n=n, l=4, k=n // 4 + 1, tau=2), None)
        assert size.work == (E.HUGE if n > 12 else E.partition_count(12, 4, 4) * 12 * 2)


def test_refused_before_anything_is_built(monkeypatch):
    """At n = 3,000 the bound is refused by the estimate, before the enumeration starts."""
    n = 3000
    edges = [[[v, v + 1] for v in range(n - 1)] for _ in range(2)]
    inst = dmlopt.load({"problem": "tabgp", "n": n, "edges": edges, "l": 4, "k": 751,
                        "alpha": 3.0})

    def boom(*_a, **_k):
        raise AssertionError("the enumeration ran")

    monkeypatch.setattr(E, "weight_matrices", boom)
    with pytest.raises(ModelTooLargeError, match="enum bound"):
        dmlopt.bound(inst, "enum", time_limit=5)


def test_spectral_certifies_only_what_fits(monkeypatch):
    """A window whose certification (a dense eigenvalue pass) would end past the time limit
    counts 0, which is still a bound; the time per window is probed on the machine."""
    from dmlopt.models.tabgp import bounds as TB

    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 30, "p": 0.2, "tau": 2, "l": 3},
                           seed=2)
    free = TB.spectral_bound(inst, time_limit=None, iterations=20)
    assert free.bound > 0 and free.metrics["uncertified_windows"] == 0
    monkeypatch.setattr(TB, "_certify_speed", lambda order, probe=200: 1e9)
    slow = TB.spectral_bound(inst, time_limit=1.0, iterations=20)
    assert slow.bound == 0.0 and slow.metrics["uncertified_windows"] == slow.metrics["windows"]
    monkeypatch.setattr(TB, "_certify_speed", lambda order, probe=200: 0.0)
    fits = TB.spectral_bound(inst, time_limit=30.0, iterations=20)
    assert fits.bound > 0 and fits.metrics["uncertified_windows"] == 0


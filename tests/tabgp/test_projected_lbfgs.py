"""The projected L-BFGS of the spectral bound's pair stage
(:func:`dmlopt.models.tabgp.bounds._projected_lbfgs`) against the optimum of bound-constrained
convex quadratics found by enumerating the variables held at 0 (written here, not the
package's code)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dmlopt.models.tabgp.bounds import _projected_lbfgs


def _quadratic(seed: int, n: int):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, n))
    q = m @ m.T + 0.5 * np.eye(n)
    b = rng.normal(size=n) * 3.0
    lower = rng.random(n) < 0.6
    return q, b, lower


def _enumerated_minimum(q: np.ndarray, b: np.ndarray, lower: np.ndarray) -> float:
    """min 0.5 x'Qx - b'x over x[lower] >= 0: every set of bounded variables held at 0,
    the rest solved as a linear system, the best feasible point kept (the optimum is one of
    them: its own held set)."""
    idx = np.flatnonzero(lower)
    best = np.inf
    for k in range(idx.size + 1):
        for held in itertools.combinations(idx.tolist(), k):
            free = np.setdiff1d(np.arange(b.size), held)
            x = np.zeros(b.size)
            if free.size:
                x[free] = np.linalg.solve(q[np.ix_(free, free)], b[free])
            if (x[lower] >= -1e-12).all():
                best = min(best, 0.5 * x @ q @ x - b @ x)
    return best


@pytest.mark.parametrize("seed", range(8))
def test_reaches_the_enumerated_optimum_and_stays_feasible(seed) -> None:
    q, b, lower = _quadratic(seed, 8)
    calls = []

    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        calls.append(x.copy())
        return 0.5 * x @ q @ x - b @ x, q @ x - b

    x0 = np.random.default_rng(seed + 100).normal(size=8)
    _projected_lbfgs(f, x0, lower, 500)
    # every point it asked for is feasible (catches a step without the projection)
    assert all((x[lower] >= 0.0).all() for x in calls)
    got = min(0.5 * x @ q @ x - b @ x for x in calls)
    want = _enumerated_minimum(q, b, lower)
    assert got == pytest.approx(want, abs=1e-7 * max(1.0, abs(want)))


def test_stops_on_a_raise_and_on_its_iteration_count() -> None:
    q, b, lower = _quadratic(0, 6)
    count = 0

    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        nonlocal count
        count += 1
        return 0.5 * x @ q @ x - b @ x, q @ x - b

    _projected_lbfgs(f, np.zeros(6), lower, 0)
    assert count == 1            # the start only

    class Stop(Exception):
        pass

    def g(x: np.ndarray) -> tuple[float, np.ndarray]:
        nonlocal count
        count += 1
        if count > 3:
            raise Stop
        return 0.5 * x @ q @ x - b @ x, q @ x - b

    count = 0
    with pytest.raises(Stop):
        _projected_lbfgs(g, np.zeros(6), lower, 100)
    assert count == 4


def test_spectral_size_estimate_covers_the_pair_stage_memory() -> None:
    """The spectral bound's memory estimate (what ``size_limit`` refuses by) is at least the
    traced peak of a run with the pair stage, and within 4 times it."""
    import tracemalloc

    import dmlopt
    from dmlopt.models.tabgp import bounds as B

    warm = dmlopt.generate("tabgp", {"generator": "er", "n": 20, "p": 0.3, "tau": 3, "l": 2},
                           seed=1)
    B.spectral_bound(warm, iterations=5, window=3)    # imports outside the measurement
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 80, "p": 0.05, "tau": 3, "l": 4},
                           seed=2)
    est = B._estimate_spectral(inst, B.SpectralOptions(window=3, iterations=20)).memory
    tracemalloc.start()
    try:
        res = B.spectral_bound(inst, iterations=20, window=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.metrics["pairs"] == 1.0
    assert peak <= est <= 4 * peak, (peak, est)

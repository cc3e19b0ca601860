"""``faq-2opt``: scipy's QAP heuristics as a TAP peer baseline (not ours, not the paper's).

``scipy.optimize.quadratic_assignment`` with method "faq" (Fast Approximate QAP: Frank-Wolfe on
the doubly-stochastic relaxation, then projection to a permutation; Vogelstein et al. 2015) from
a random doubly-stochastic start, then method "2opt" (pairwise-exchange descent) from the FAQ
permutation; ``restarts`` times, the best permutation kept. It runs on the padded QAP of
:mod:`dmlopt.heuristics.tap.search` (N = n min(K, m) slots, dummy modules in the free slots), so
K > 1 and m < n work as for the other TAP heuristics.

References
----------
* J. T. Vogelstein et al.: Fast approximate quadratic programming for graph matching. PLoS ONE
  10 (2015) e0121002.
* SciPy ``scipy.optimize.quadratic_assignment`` (methods "faq" and "2opt").
"""

from __future__ import annotations

import time

import numpy as np
import pydantic

from dmlopt.contract import Options as ContractOptions
from dmlopt.contract import Size
from dmlopt.errors import InstanceError
from dmlopt.heuristics.tap import search as ts
from dmlopt.models.tap import Instance, Solution
from dmlopt.validation import time_limit_field


class Options(ContractOptions):
    """Options of ``faq-2opt``."""

    restarts: int = pydantic.Field(default=10, ge=1, description="FAQ + 2-opt runs, best kept")
    time_limit: float | None = time_limit_field(
        None, "seconds (at most a day), checked between restarts (None: no limit)")


#: operations per element of an N x N objective evaluation in scipy's 2-opt
#: (``sum(A * B[perm][:, perm])``: two gathers, a product, a sum); measured 3.0-3.2 ns per
#: element at N = 64 and 128
EVAL_OPS = 3.0
#: scipy's 2-opt takes the first improving swap and scans again from the first pair, so the
#: evaluations grow faster than the N^2 / 2 pairs of one pass: measured 1.1-1.9 N^2 at N = 64
#: and 1.5-3.4 N^2 at N = 128 (growth series, seeds 0 and 1, from FAQ's permutation); we
#: charge N^3 / EVALS_DIV (1.6 N^2 at N = 64, 3.2 N^2 at N = 128)
EVALS_DIV = 25.0


def estimate(instance: Instance, opts: Options | None = None) -> Size:
    """(memory bytes, work operations) of the ``restarts`` runs: FAQ is 30 Frank-Wolfe steps of
    O(N^3) at most; scipy's 2-opt evaluates the full objective (:data:`EVAL_OPS` N^2) for each
    pair it tries, about N^3 / :data:`EVALS_DIV` pairs (first improvement, the scan restarted
    after each one)."""
    opts = opts or Options()
    size = float(instance.n * min(instance.K, instance.m))
    two_opt = EVAL_OPS * size * size * size**3 / EVALS_DIV
    return Size(8.0 * 8 * size * size, float(opts.restarts) * (30 * size**3 + two_opt))


def faq_2opt(instance: Instance, *, seed: int = 0, restarts: int = 10,
             time_limit: float | None = None) -> Solution:
    """FAQ from a random start, then 2-opt from its result, ``restarts`` times (best kept).

    Parameters
    ----------
    instance : Instance
        The TAP instance (solved as its padded QAP).
    seed : int, optional
        Seed of the random doubly-stochastic starts and of 2-opt (default 0).
    restarts : int, optional
        FAQ + 2-opt runs (default 10, >= 1).
    time_limit : float or None, optional
        Seconds (wall clock), checked between runs; None (default): no limit.

    Returns
    -------
    Solution
        The best assignment of all runs.

    References
    ----------
    J. T. Vogelstein et al., Fast approximate quadratic programming for graph matching, PLoS
    ONE 10 (2015) e0121002; SciPy's ``scipy.optimize.quadratic_assignment`` (methods "faq" and
    "2opt"). A peer baseline, not from paper 000.
    """
    from scipy.optimize import quadratic_assignment

    try:
        opts = Options(restarts=restarts, time_limit=time_limit)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        raise InstanceError(".".join(str(x) for x in err["loc"]), err.get("input"),
                            err["msg"]) from None
    t0 = time.perf_counter()
    qap = ts.padded(instance.traffic, instance.distance, instance.K)
    a, b = qap.F, qap.B
    rng = np.random.default_rng(seed)
    best, best_perm = np.inf, np.arange(qap.size)
    ar = np.arange(qap.size)
    for _ in range(opts.restarts):
        faq = quadratic_assignment(a, b, method="faq", options={"P0": "randomized", "rng": rng})
        guess = np.column_stack([ar, faq.col_ind])
        two = quadratic_assignment(a, b, method="2opt",
                                   options={"partial_guess": guess, "rng": rng})
        for res in (faq, two):
            if res.fun < best:
                best, best_perm = float(res.fun), np.asarray(res.col_ind, dtype=np.int64)
        if opts.time_limit is not None and time.perf_counter() - t0 > opts.time_limit:
            break
    return Solution(assignment=ts.to_assignment(qap, best_perm))

"""Allocators of paper 000, section V-C (Fig. 11), run on the inferred (or the true) topology.

Each heuristic allocates on :attr:`dmlopt.models.infer_tap.Instance.inferred` (``on =
"inferred"``, the default) or on :attr:`~dmlopt.models.infer_tap.Instance.truth` (``on =
"truth"``, the reference) and returns the assignment; the ``infer_tap`` evaluator scores it on the
truth. ``exact`` solves TAP's ``class`` formulation with HiGHS (one thread, ``time_limit``
seconds): the paper's MINLP, exact for the matrix it sees (Pyomo is imported only when it runs);
the others are TAP's heuristics of :mod:`dmlopt.heuristics.tap`.
"""

from __future__ import annotations

from functools import partial

from dmlopt.heuristics.tap import HEURISTICS as TAP_HEURISTICS
from dmlopt.models.infer_tap import Instance, Solution

ON = ("inferred", "truth")


def _target(instance: Instance, on: str):
    if on not in ON:
        from dmlopt.errors import InstanceError

        raise InstanceError("on", on, f"is not one of {', '.join(ON)}")
    return instance.inferred if on == "inferred" else instance.truth


def exact(instance: Instance, *, seed: int = 0, on: str = "inferred",
          time_limit: float = 60.0) -> Solution:
    """TAP's ``class`` formulation by HiGHS on the chosen hop matrix."""
    import dmlopt

    res = dmlopt.solve(_target(instance, on), "highs", formulation="class",
                       time_limit=time_limit, threads=1)
    if res.solution is None:
        from dmlopt.errors import SolverError

        raise SolverError(f"exact: HiGHS found no allocation ({res.status}: {res.message})")
    return Solution(assignment=list(res.solution.assignment))


def _tap(name: str, instance: Instance, *, seed: int = 0, on: str = "inferred") -> Solution:
    sol = TAP_HEURISTICS[name](_target(instance, on), seed=seed)
    return Solution(assignment=list(sol.assignment))


HEURISTICS = {"exact": exact, **{name: partial(_tap, name) for name in
                                 ("cle", "abm", "random", "local-search", "abm-ls")}}

"""Allocators of paper 000, section V-C (Fig. 11), run on the inferred (or the true) topology.

Each heuristic allocates on :attr:`dmlopt.models.infer_tap.Instance.inferred` (``on =
"inferred"``, the default) or on :attr:`~dmlopt.models.infer_tap.Instance.truth` (``on =
"truth"``, the reference) and returns the assignment; the ``infer_tap`` evaluator scores it on the
truth. ``exact`` solves TAP's ``class`` formulation with HiGHS (one thread, ``time_limit``
seconds): the paper's MINLP, exact for the matrix it sees (Pyomo is imported only when it runs);
the others are TAP's heuristics of :mod:`dmlopt.heuristics.tap`.
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic

from dmlopt.contract import Heuristic, Options, Size
from dmlopt.heuristics.tap import HEURISTICS as TAP_HEURISTICS
from dmlopt.models.infer_tap import Instance, Solution
from dmlopt.validation import time_limit_field

ON = ("inferred", "truth")


def _target(instance: Instance, on: str):
    if on not in ON:
        from dmlopt.errors import InstanceError

        raise InstanceError("on", on, f"is not one of {', '.join(ON)}")
    return instance.inferred if on == "inferred" else instance.truth


def exact(instance: Instance, *, seed: int = 0, on: str = "inferred",
          time_limit: float = 60.0) -> Solution:
    """TAP's ``class`` formulation solved by HiGHS on the chosen hop matrix.

    Exact for the matrix it sees: on the inferred one, the paper's "MINLP on the inferred
    topology"; on the truth, the best allocation there is. Pyomo is imported only when it runs.

    Parameters
    ----------
    instance : Instance
        An ``infer_tap`` instance (the inferred and the true TAP instances).
    seed : int, optional
        Unused (the solve is deterministic); default 0.
    on : {"inferred", "truth"}, optional
        Allocate on the inferred hop matrix (default, the paper) or on the true one.
    time_limit : float, optional
        Seconds HiGHS may run (default 60, one thread); the incumbent at the limit is returned.

    Returns
    -------
    Solution
        The assignment (module -> VM index); :class:`~dmlopt.errors.SolverError` when HiGHS
        found none.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C, Fig. 11 (the MINLP (8)-(12) on the inferred
    topology), solved through :func:`dmlopt.models.tap.build_class`.
    """
    import dmlopt

    res = dmlopt.solve(_target(instance, on), "highs", formulation="class",
                       time_limit=time_limit, threads=1)
    if res.solution is None:
        from dmlopt.errors import SolverError

        raise SolverError(f"exact: HiGHS found no allocation ({res.status}: {res.message})")
    return Solution(assignment=list(res.solution.assignment))


def _tap(name: str, instance: Instance, *, seed: int = 0, on: str = "inferred") -> Solution:
    """TAP's heuristic ``name`` (``cle``, ``abm``, ``random``, ``local-search``, ``abm-ls``) on
    the chosen hop matrix.

    Parameters
    ----------
    name : str
        The TAP heuristic (a name in :data:`dmlopt.heuristics.tap.HEURISTICS`).
    instance : Instance
        An ``infer_tap`` instance.
    seed : int, optional
        Passed to the TAP heuristic (default 0).
    on : {"inferred", "truth"}, optional
        Allocate on the inferred hop matrix (default, the paper) or on the true one.

    Returns
    -------
    Solution
        The assignment, scored by the ``infer_tap`` evaluator on the truth.

    References
    ----------
    Paper 000, section V-C, Fig. 11 (CLE and ABM on the inferred topology); the heuristics'
    own references are in :mod:`dmlopt.heuristics.tap`.
    """
    sol = TAP_HEURISTICS[name].function(_target(instance, on), seed=seed)
    return Solution(assignment=list(sol.assignment))


def cle(instance: Instance, *, seed: int = 0, on: str = "inferred") -> Solution:
    """TAP's ``cle`` (Cluster Embedding: heavy overlay links inside one cluster of VMs) on the
    chosen hop matrix.

    Parameters
    ----------
    instance : Instance
        An ``infer_tap`` instance (the inferred and the true TAP instances).
    seed : int, optional
        Passed to TAP's ``cle`` (default 0).
    on : {"inferred", "truth"}, optional
        Allocate on the inferred hop matrix (default, the paper) or on the true one.

    Returns
    -------
    Solution
        The assignment (module -> VM index), scored by the ``infer_tap`` evaluator on the truth.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C, Fig. 11; the heuristic's own references are in
    :mod:`dmlopt.heuristics.tap` (``cle``).
    """
    return _tap("cle", instance, seed=seed, on=on)


def abm(instance: Instance, *, seed: int = 0, on: str = "inferred") -> Solution:
    """TAP's ``abm`` (Average-Based Matching: the heaviest-talking modules on the most central
    VMs) on the chosen hop matrix.

    Parameters
    ----------
    instance : Instance
        An ``infer_tap`` instance (the inferred and the true TAP instances).
    seed : int, optional
        Passed to TAP's ``abm`` (default 0).
    on : {"inferred", "truth"}, optional
        Allocate on the inferred hop matrix (default, the paper) or on the true one.

    Returns
    -------
    Solution
        The assignment (module -> VM index), scored by the ``infer_tap`` evaluator on the truth.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C, Fig. 11; the heuristic's own references are in
    :mod:`dmlopt.heuristics.tap` (``abm``).
    """
    return _tap("abm", instance, seed=seed, on=on)


def random_allocation(instance: Instance, *, seed: int = 0, on: str = "inferred") -> Solution:
    """TAP's ``random`` (the random allocation, the baseline) on the chosen hop matrix.

    Parameters
    ----------
    instance : Instance
        An ``infer_tap`` instance (the inferred and the true TAP instances).
    seed : int, optional
        Passed to TAP's ``random`` (default 0).
    on : {"inferred", "truth"}, optional
        Allocate on the inferred hop matrix (default, the paper) or on the true one.

    Returns
    -------
    Solution
        The assignment (module -> VM index), scored by the ``infer_tap`` evaluator on the truth.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C, Fig. 11; the heuristic's own references are in
    :mod:`dmlopt.heuristics.tap` (``random``).
    """
    return _tap("random", instance, seed=seed, on=on)


def local_search(instance: Instance, *, seed: int = 0, on: str = "inferred") -> Solution:
    """TAP's ``local-search`` (the local search from a start) on the chosen hop matrix.

    Parameters
    ----------
    instance : Instance
        An ``infer_tap`` instance (the inferred and the true TAP instances).
    seed : int, optional
        Passed to TAP's ``local-search`` (default 0).
    on : {"inferred", "truth"}, optional
        Allocate on the inferred hop matrix (default, the paper) or on the true one.

    Returns
    -------
    Solution
        The assignment (module -> VM index), scored by the ``infer_tap`` evaluator on the truth.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C, Fig. 11; the heuristic's own references are in
    :mod:`dmlopt.heuristics.tap` (``local-search``).
    """
    return _tap("local-search", instance, seed=seed, on=on)


def abm_ls(instance: Instance, *, seed: int = 0, on: str = "inferred") -> Solution:
    """TAP's ``abm-ls`` (ABM followed by the local search) on the chosen hop matrix.

    Parameters
    ----------
    instance : Instance
        An ``infer_tap`` instance (the inferred and the true TAP instances).
    seed : int, optional
        Passed to TAP's ``abm-ls`` (default 0).
    on : {"inferred", "truth"}, optional
        Allocate on the inferred hop matrix (default, the paper) or on the true one.

    Returns
    -------
    Solution
        The assignment (module -> VM index), scored by the ``infer_tap`` evaluator on the truth.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C, Fig. 11; the heuristic's own references are in
    :mod:`dmlopt.heuristics.tap` (``abm-ls``).
    """
    return _tap("abm-ls", instance, seed=seed, on=on)


class OnOptions(Options):
    """Options of the TAP heuristics run on an inferred topology."""

    on: Literal["inferred", "truth"] = pydantic.Field(
        default="inferred", description="allocate on the inferred hop matrix (the paper) or on "
        "the true one (the reference)")


class ExactOptions(OnOptions):
    """Options of ``exact``."""

    time_limit: float = time_limit_field(60.0, "HiGHS time limit in seconds (at most a day)")


def _tap_estimate(name: str):
    def estimate(instance: Instance, options: Any) -> Size:
        entry = TAP_HEURISTICS[name]
        return entry.estimate(_target(instance, options.on), entry.Options())
    estimate.__doc__ = f"TAP's estimate of ``{name}`` (default options) on the chosen matrix."
    return estimate


def estimate_exact(instance: Instance, options: ExactOptions) -> Size:
    """Building TAP's ``class`` model (about 2 KB and 10^4 operations per variable or
    constraint in Pyomo); the solver itself stops at ``time_limit``."""
    from dmlopt.models import tap

    n_vars, n_cons = tap.estimate_size(_target(instance, options.on), "class")
    return Size(2e3 * (n_vars + n_cons), 1e4 * (n_vars + n_cons))


#: TAP's heuristics run on the chosen matrix, by registry name
_TAP_FUNCTIONS = {"cle": cle, "abm": abm, "random": random_allocation,
                  "local-search": local_search, "abm-ls": abm_ls}

HEURISTICS: dict[str, Heuristic] = {
    "exact": Heuristic(exact, ExactOptions, estimate_exact,
                       "TAP's class formulation by HiGHS (one thread) on the chosen matrix"),
    **{name: Heuristic(function, OnOptions, _tap_estimate(name),
                       f"TAP's {name} on the chosen hop matrix: "
                       f"{TAP_HEURISTICS[name].description}")
       for name, function in _TAP_FUNCTIONS.items()},
}

#: the heuristic to use (docs/infer_tap.md: the lowest cost on the truth of the fast ones)
RECOMMENDED = "local-search"

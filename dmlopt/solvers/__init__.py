"""Solvers: HiGHS (default), SCIP, Gurobi, CPLEX, Xpress and COPT through Pyomo 6.10 (COPT
through dmlopt's own interface), and direct ``highspy`` models.

One module per job; every name is importable from ``dmlopt.solvers`` as before:

- :mod:`~dmlopt.solvers.base`: ``NAMED``, ``PACKAGES``, ``ALIASES`` (dmlopt's solver names ->
  Pyomo's), ``canonical`` and ``SolverRun``, the run every back end returns;
- :mod:`~dmlopt.solvers.backends`: ``run`` (a Pyomo model solved by HiGHS, SCIP or an opted-in
  Pyomo solver), ``version``; the place of a back end added by name;
- :mod:`~dmlopt.solvers.commercial`: Gurobi, CPLEX, Xpress and COPT by name (settings
  mapped, licence limits worded), :mod:`~dmlopt.solvers.copt` COPT's interface;
- :mod:`~dmlopt.solvers.fork`: ``forked``, a solver run in a forked child (SCIP), ``Crashed``;
- :mod:`~dmlopt.solvers.options`: the allow-list (``check``, ``allowed``, ``available``), the
  settings and solver options checked before a build, ``OPTIMALITY_GAP``;
- :mod:`~dmlopt.solvers.timing`: ``build_deadline``, ``build_seconds``, ``check_pass_time``;
- :mod:`~dmlopt.solvers.direct`: direct ``highspy`` models (``highspy_model``, ``add_arrays``,
  ``triplet_model``, ``run_highspy``) and HiGHS's process-wide scheduler (``prepare_highs``).

A module-level setting is read in the module that defines it: to change one in a test, patch
that module (``dmlopt.solvers.timing.PASS_PER_BUILD``), not this package.
"""

from __future__ import annotations

from dmlopt.solvers.backends import SCIP_MAX_SECONDS, run, version
from dmlopt.solvers.base import ALIASES, NAMED, PACKAGES, SolverRun, canonical
from dmlopt.solvers.direct import (
    DUAL_BOUND_STATUSES,
    add_arrays,
    highspy_model,
    pass_model,
    prepare_highs,
    reset_highs_scheduler,
    run_highspy,
    triplet_model,
)
from dmlopt.solvers.fork import Crashed, forked
from dmlopt.solvers.options import (
    MAX_THREADS,
    OPT_IN_ENV,
    OPTIMALITY_ABS_GAP,
    OPTIMALITY_GAP,
    allowed,
    available,
    check,
    check_options,
    check_settings,
    installed,
    writes_files,
)
from dmlopt.solvers.timing import PASS_PER_BUILD, build_deadline, build_seconds, check_pass_time

__all__ = [
    "ALIASES", "DUAL_BOUND_STATUSES", "NAMED", "PACKAGES", "canonical", "installed",
    "MAX_THREADS", "OPTIMALITY_ABS_GAP", "OPTIMALITY_GAP",
    "OPT_IN_ENV", "PASS_PER_BUILD", "SCIP_MAX_SECONDS", "Crashed", "SolverRun", "add_arrays",
    "allowed", "available", "build_deadline", "build_seconds", "check", "check_options",
    "check_pass_time", "check_settings", "forked", "highspy_model", "pass_model",
    "prepare_highs", "reset_highs_scheduler", "run", "run_highspy", "triplet_model", "version",
    "writes_files",
]

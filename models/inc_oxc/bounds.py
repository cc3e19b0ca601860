"""INC/OXC (paper 002): the registry of dual bounds (upper bounds on f = 1 / longest JCT).

The methods live by job: the per-job bounds in :mod:`dmlopt.models.inc_oxc.jobs` (``jobs``,
``jobs-timeshared``; its docstring derives them), the configuration LP in
:mod:`dmlopt.models.inc_oxc.configs` (``configs``) and the fixed-f feasibility MILP with its
bisection in :mod:`dmlopt.models.inc_oxc.placements` (``placements``, ``placements-static``).
Every name they define that other code uses is re-exported here.
"""

from __future__ import annotations

from dmlopt.bounds import lp_relaxation
from dmlopt.contract import Bound
from dmlopt.models.inc_oxc.configs import (  # noqa: F401 (re-exported)
    ConfigsOptions,
    ConfigurationLP,
    _configs_estimate,
    _configs_function,
    configs_bound,
)
from dmlopt.models.inc_oxc.jobs import (  # noqa: F401 (re-exported)
    _ABS,
    _BISECT_REL,
    _BISECT_STEPS,
    JobsOptions,
    _Job,
    _jobs_estimate,
    _jobs_function,
    fit_counts,
    job_bounds,
    jobs_bound,
)
from dmlopt.models.inc_oxc.placements import (  # noqa: F401 (re-exported)
    PlacementsOptions,
    _placements_estimate,
    _placements_function,
    _reached,
    fixed_f_model,
    placements_bound,
)

#: bound methods, strongest first (``dmlopt.bound``)
BOUNDS: dict[str, Bound] = {
    # first (the default): valid for every solution the evaluator accepts, time-shared OXC
    # schedules included; "jobs" is stronger but holds only for static port pairings
    "jobs-timeshared": Bound(_jobs_function(False), JobsOptions, _jobs_estimate(False),
                             "each job alone in the DCN with fractional (time-shared) OXC "
                             "circuits, PDP slots, pool links: valid for every solution"),
    "jobs": Bound(_jobs_function(True), JobsOptions, _jobs_estimate(True),
                  "as 'jobs-timeshared' with integer OXC circuits: valid for static port "
                  "pairings only (the paper's model, both MILPs, every heuristic returning "
                  "`oxc`)"),
    "configs": Bound(_configs_function, ConfigsOptions, _configs_estimate,
                     "configuration LP over the shared resources (column generation), "
                     "bisection on f: valid for every solution"),
    "placements": Bound(_placements_function(False), PlacementsOptions,
                        _placements_estimate, "fixed-f feasibility MILP, bisection on f, "
                        "fractional circuits: valid for every solution (small instances)"),
    "placements-static": Bound(_placements_function(True), PlacementsOptions,
                               _placements_estimate, "as 'placements' with integer circuits: "
                               "static port pairings only; exact for the paper's model "
                               "(each MILP to its end; dmlopt.solve runs 'bisection')",
                               exact=("paper", "strong")),
    "lp": lp_relaxation("strong"),
}

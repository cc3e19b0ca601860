"""Shared fixtures and settings for every test file.

- tests/ is a package (``tests.core``, ``tests.<problem>``, ``tests.helpers``): pytest puts the
  repository root on ``sys.path`` (importmode "prepend", the root being the first directory
  above tests/ without an ``__init__.py``), so a test imports the shared helpers as
  ``from tests.helpers.rar import ...`` under ``pytest``, ``python -m pytest`` and from any
  working directory;
- a hypothesis profile "ci" (the default): derandomised, so every run draws the same examples,
  no deadline (a solver call's time is not the property under test), at most 20 examples per
  test (a test's own ``@settings(max_examples=...)`` lowers it); ``HYPOTHESIS_PROFILE=dev``
  draws fresh random examples;
- a hypothesis profile "fast" (``make test-fast``): as "ci" with at most 5 examples per test;
- the tiers: ``make test`` runs every test, ``make test-fast`` runs ``-m "not slow"``: the
  modules in :data:`FAST` (contracts, the boundary, docs) and in each problem folder's ``FAST``
  (``tests/<problem>/__init__.py``: its evaluator's tests, one small case), less those listed
  in :data:`SLOW` or marked ``@pytest.mark.slow``; every other test is marked ``slow`` at
  collection (a new test file is slow until it is named in a ``FAST``);
- the toy problem fixture registers tests/helpers/toy_problem.py as problem "toy" for one test;
- Ctrl-C reaches the commands the tests start: a shell starts a background job (``make test
  &``, ``nohup``) with SIGINT ignored, which every child would inherit, so the tests that send a
  real SIGINT would wait for a command that never sees it. A handler installed here is reset
  to the default in every child at exec, so each child's Python raises KeyboardInterrupt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

import numpy  # noqa: F401  (loads numpy's OpenBLAS before the thread limit below)
import pytest
import scipy.linalg  # noqa: F401  (loads scipy's OpenBLAS before the thread limit below)
from hypothesis import HealthCheck, settings
from threadpoolctl import threadpool_limits

from dmlopt import registry

settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=20, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fast", derandomize=True, deadline=None, max_examples=5, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# one BLAS thread in the test processes (not in the commands they start: their environment is
# left as it is). OpenBLAS's second thread spins while waiting: on 2 cores shared by three
# xdist workers it made the 120-node dense eigenvalue search of tests/tabgp/test_bounds.py
# 20 times slower (16.6 s against 0.8 s); a method that sets its own count (``spectral``'s
# ``threads``) still does, inside its own threadpool_limits
# (a limit reaches only the libraries loaded: numpy's and scipy's OpenBLAS, imported above)
_ONE_BLAS_THREAD = threadpool_limits(limits=1, user_api="blas")

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    with contextlib.suppress(ValueError):  # not the main thread: children inherit ours
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: the test modules of ``make test-fast`` outside the problem folders (paths under tests/):
#: contracts, the boundary, docs; a problem folder declares its own (``FAST`` in its
#: ``__init__.py``: its evaluator's tests and one small case of the problem)
FAST = frozenset({
    "core/test_contract.py", "core/test_contract_entries.py", "core/test_core.py",
    "core/test_boundary.py", "bench/test_boundary.py", "core/test_docs_registry.py",
    "core/test_doctests.py", "core/test_readme.py", "core/test_house.py",
    "core/test_reference_pages.py", "core/test_validation_rows.py",
})


def _fast(rel: str, item) -> bool:
    """Whether the module at ``rel`` (a path under tests/) belongs to the fast tier."""
    if rel in FAST:
        return True
    package = sys.modules.get(getattr(item.module, "__package__", None) or "")
    return rel.rsplit("/", 1)[-1] in getattr(package, "FAST", ())


#: the tests of the fast modules left to ``make test`` (module -> test ids): those that took
#: over 3 s in a fast-tier run on the loaded 2-core machine (load 10-12)
SLOW = {
    "bench/test_boundary.py": (
        "test_detached_grandchildren_are_killed_at_the_limit_and_after_a_run",
        "test_report_is_read_only_and_writes_only_under_dir",
    ),
    "core/test_boundary.py": (
        "test_an_infeasible_warm_start_is_refused[tap-spec0-<lambda>-is not a VM]",
        "test_fifo_and_devices_are_refused_without_blocking",
        "test_fuzz_instances_and_solutions[inc_oxc]",
    ),
    "core/test_contract.py": (
        "test_every_formulation_reaches_the_same_optimum[nara]",
        "test_every_formulation_reaches_the_same_optimum[tabgp]",
        "test_export_is_read_back_by_highs_at_the_optimum[nara-offline-mps]",
        "test_export_is_read_back_by_highs_at_the_optimum[nara-request-mps]",
        "test_heuristic_is_feasible_and_evaluated[inc_oxc-wcg-lns]",
        "test_heuristic_is_feasible_and_evaluated[nara-random]",
        "test_heuristic_is_feasible_and_evaluated[tabgp-memetic]",
        "test_warm_start_reaches_the_solver[inc_oxc-paper-highs]",
        "test_warm_start_reaches_the_solver[inc_oxc-paper-scip]",
        "test_warm_start_reaches_the_solver[nara-offline-basic-highs]",
        "test_warm_start_reaches_the_solver[nara-offline-basic-scip]",
        "test_warm_start_reaches_the_solver[nara-offline-plain-scip]",
        "test_warm_start_reaches_the_solver[nara-offline-scip]",
        "test_warm_start_reaches_the_solver[tabgp-paper-highs]",
        "test_warm_start_reaches_the_solver[tabgp-pairs-highs]",
    ),
    "core/test_contract_entries.py": (
        "test_heuristic_estimates_of_paper_instances_well_under_the_limits",
        "test_inc_oxc_racks_bounded_by_the_instance",
        "test_infer_tap_hop_correlation_work_is_bounded_at_validation",
    ),
    "core/test_core.py": (
        "test_node_budget_stops_the_solver_at_the_warm_start_or_better",
        "test_problems_come_from_entry_points_not_from_the_core",
        "test_the_default_formulation_is_the_declared_fastest_and_proves_the_papers_optimum",
    ),
    "core/test_house.py": (
        "test_all_lists_public_names_only[models/inc_oxc/bounds.py]",
        "test_benchmarks_modules_import_no_cycle",
        "test_models_do_not_import_heuristics[models/infer/measurement.py]",
        "test_no_new_long_function",
    ),
    "core/test_readme.py": (
        "test_cli_examples_run[README.md]",
        "test_cli_examples_run[docs/benchmarks.md]",
        "test_cli_examples_run[docs/inc_oxc.md]",
        "test_cli_examples_run[docs/infer.md]",
        "test_cli_examples_run[docs/rar.md]",
        "test_cli_examples_run[docs/references.md]",
        "test_cli_examples_run[docs/tap.md]",
        "test_python_examples_run[README.md]",
        "test_python_examples_run[docs/inc_oxc.md]",
        "test_python_examples_run[docs/interop.md]",
        "test_python_examples_run[docs/nara.md]",
        "test_python_examples_run[docs/rar.md]",
        "test_python_examples_run[docs/tabgp.md]",
        "test_python_examples_run[docs/tap.md]",
    ),
    "inc_oxc/test_inc_oxc.py": (
        "test_heuristics_pass_evaluator[spec1]",
        "test_heuristics_pass_evaluator[spec2]",
        "test_heuristics_pass_evaluator[spec3]",
        "test_heuristics_pass_evaluator[spec4]",
        "test_local_search_closes_the_gap_of_its_start[1]",
        "test_local_search_closes_the_gap_of_its_start[2]",
        "test_local_search_closes_the_gap_of_its_start[3]",
        "test_local_search_closes_the_gap_of_its_start[7]",
    ),
    "infer/test_problem.py": (
        "test_tiny_suite_runs_end_to_end",
    ),
    "nara/test_nara.py": (
        "test_allocator_solutions_satisfy_every_offline_constraint[netfit]",
        "test_every_allocator_respects_capacities[0]",
        "test_every_allocator_respects_capacities[1]",
        "test_every_allocator_respects_capacities[2]",
        "test_every_allocator_respects_capacities[3]",
        "test_offline_bound_dominates_online_allocators[0]",
        "test_offline_bound_dominates_online_allocators[1]",
        "test_offline_bound_dominates_online_allocators[2]",
        "test_per_request_milp_matches_brute_force",
    ),
    "rar/test_rar.py": (
        "test_brute_force_equals_both_ilps[spec0]",
        "test_brute_force_equals_both_ilps[spec1]",
        "test_brute_force_equals_both_ilps[spec2]",
        "test_estimate_size_bounds_the_built_model",
        "test_fig2_optimal_schemes[paper]",
        "test_formulations_equal_on_random_instances",
        "test_lp_export_round_trip",
        "test_rdda_always_passes_the_evaluator",
        "test_rdda_warm_start_is_accepted",
    ),
    "tabgp/test_model.py": (
        "test_estimate_size_is_exact[triples]",
        "test_export_read_back_by_highspy[paper-.lp]",
        "test_formulations_agree_on_random_instances",
        "test_warm_start_by_heuristic_name",
        "test_warm_start_is_complete_and_feasible[triples]",
    ),
    "tap/test_tap.py": (
        "test_formulations_equal_brute_force[class-scip-6]",
        "test_formulations_equal_brute_force[rlt-scip-1]",
        "test_formulations_equal_brute_force[rlt-scip-4]",
        "test_formulations_equal_brute_force[rlt-scip-6]",
        "test_heuristics_feasible_and_never_below_optimum[rts]",
        "test_search_heuristics_find_tiny_optima",
    ),
}


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` every test outside the fast modules (:data:`FAST` and each problem folder's
    ``FAST``) and those of :data:`SLOW`
    (``make test-fast`` runs ``-m "not slow"``, ``make test`` everything)."""
    root = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        rel = os.path.relpath(str(item.path), root).replace(os.sep, "/")
        if not _fast(rel, item) or item.name in SLOW.get(rel, ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def toy(monkeypatch):
    """Register tests/helpers/toy_problem.py as problem "toy" for one test."""
    toy_problem = "tests.helpers.toy_problem"
    monkeypatch.setitem(registry._PROBLEMS, "toy", (toy_problem, toy_problem))
    registry.get.cache_clear()
    yield registry.get("toy")
    registry.get.cache_clear()

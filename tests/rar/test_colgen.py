"""RAR bound ``columns`` (models/rar/colgen.py): column generation on the ``config`` LP.

Independent values: the LP relaxation of ``config`` built by Pyomo and solved by HiGHS
(:func:`dmlopt.bounds.lp_relaxation`, no code of the column generation), the brute force of
tests/helpers/rar.py and the pinned optima of tests/rar/test_bounds.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt import registry
from dmlopt.bounds import lp_relaxation
from dmlopt.contract import Bound, BoundValue
from dmlopt.errors import ObjectiveMismatchError, SolverError
from dmlopt.io import instance_hash
from dmlopt.models import rar
from dmlopt.models.rar import colgen, config, formulations
from tests.helpers.rar import TINY, _brute_force
from tests.rar.test_bounds import CPN6_OPTIMA

SCHEMES = rar.SCHEMES


#: the config LPs of the instances below by instance hash, written by ``python -m
#: tests.rar.test_colgen --write`` (lp_relaxation("config"): Pyomo and HiGHS, no code of the
#: column generation); an instance missing from it (a changed generator) is solved here
GOLDEN = Path(__file__).parent / "golden" / "colgen_config_lp.json"
_LP: dict[str, float] = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}

#: converged ``columns`` bounds already solved in this process, by instance JSON (two tests
#: compare to the same scaled-down instance's)
_SOLVED: dict[tuple[str, str], float] = {}


def _config_lp(inst: rar.Instance) -> float:
    """The LP relaxation of ``config`` (Pyomo model, HiGHS), before any safety shift."""
    key = instance_hash(inst)
    if key not in _LP:
        _LP[key] = lp_relaxation("config").function(inst).metrics["lp_value"]
    return _LP[key]


def _converged(inst: rar.Instance) -> float:
    """``columns_bound`` with its default options run to convergence (asserted)."""
    key = ("columns", inst.model_dump_json())
    if key not in _SOLVED:
        full = colgen.columns_bound(inst, time_limit=60)
        assert full.metrics["converged"] == 1.0
        _SOLVED[key] = full.bound
    return _SOLVED[key]


def _scaled(scheme: str, seed: int) -> rar.Instance:
    """The scaled-down 38-node setting of issue 55 (16 requests, 12 slots, CUs x 0.12)."""
    return dmlopt.generate("rar", {"generator": "cpn38", "requests": 16, "scheme": scheme,
                                   "slots": 12, "cu_scale": 0.12}, seed=seed)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_converged_bound_is_the_config_lp_cpn6(scheme: str, seed: int) -> None:
    """cpn6, 3 requests: wavelengths cannot bind except under MinW, so without ``links`` the
    converged master is ``config``'s LP (MinCU with its peak rows), and under MinW (zeta
    bounded by 0 without ``links``) it is below it. A capacity row one slot short, a
    column cost or a blocked cost off would move the value."""
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 3, "scheme": scheme},
                           seed=seed)
    lp = _config_lp(inst)
    bv = colgen.columns_bound(inst, links=False, time_limit=60)
    assert bv.metrics["converged"] == 1.0
    if formulations._wavelengths_never_bind(inst):
        assert bv.bound == pytest.approx(lp, rel=1e-5, abs=1e-6)
    else:
        assert scheme == "MinW"
        assert bv.bound <= lp + 1e-9


@pytest.mark.parametrize("scheme", ["MaxR", "MinT", "MinCU"])
def test_converged_bound_is_the_config_lp_scaled_cpn38(scheme: str) -> None:
    """The scaled-down 38-node instance (seed 1; wavelengths cannot bind with 16 requests):
    the converged bound is ``config``'s LP, well above the ``energy`` bound under MaxR and
    MinT (issue 55: MaxR 25.62 against 14.02, 1.8 blocked requests)."""
    inst = _scaled(scheme, 1)
    assert formulations._wavelengths_never_bind(inst)
    bv = dmlopt.bound(inst, "columns", time_limit=60)
    assert bv.metrics["converged"] == 1.0
    assert bv.bound == pytest.approx(_config_lp(inst), rel=1e-5)
    if scheme != "MinCU":
        assert bv.bound > dmlopt.bound(inst, "energy").bound + 1.5 * rar.blocked_cost(inst)


@pytest.mark.parametrize("spec", TINY)
@pytest.mark.parametrize("links", [None, True, False])
def test_columns_below_brute_force(spec: dict, links: bool | None) -> None:
    """Tiny random networks where one wavelength (rho 1) binds: every scheme, with and
    without the link rows, stays below the brute force (its own bookkeeping, no ILP)."""
    best = _brute_force(rar.generate_random(**spec))
    for scheme in SCHEMES:
        inst = rar.generate_random(scheme=scheme, **spec)
        value = colgen.columns_bound(inst, links=links, per_request=1).bound
        assert value <= best[scheme] + 1e-9, (scheme, value, best[scheme])


def test_a_tightened_bound_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """cpn6 MaxR seed 0: the bound is within 1e-5 of the pinned optimum, so a bound 1 % too
    strong fails test_every_method_below_optimum_cpn6; the core also refuses it given the
    optimal solution (its evaluated objective is below the bound)."""
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 3, "scheme": "MaxR"},
                           seed=0)
    opt = CPN6_OPTIMA["MaxR", 0][0]
    bound = dmlopt.bound(inst, "columns").bound
    assert opt - 1e-5 <= bound <= opt + 1e-9
    tight = 1.01 * bound
    assert tight > opt
    solution = dmlopt.solve(inst, formulation="config", threads=1, time_limit=60).solution
    assert rar.evaluate(inst, solution).objective == pytest.approx(opt, abs=1e-9)

    def tightened(instance, *, time_limit=None, **options):
        return BoundValue(tight, solution=solution)

    problem = registry.of(inst)
    entry = problem.bound("columns")
    fake = Bound(function=tightened, Options=entry.Options, estimate=entry.estimate,
                 description="columns plus 1 %")
    monkeypatch.setitem(problem.model.BOUNDS, "columns", fake)
    with pytest.raises(ObjectiveMismatchError):
        dmlopt.bound(inst, "columns")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_lagrangian_below_the_lp_for_any_duals(scheme: str) -> None:
    """Weak duality of the certificate: L(y) for random duals y <= 0 (capacity, link, peak
    and wavelength rows) never exceeds ``config``'s LP (MinW: without the link rows, or the
    optimum with them), and L(0) is the sum of the requests' cheapest options."""
    inst = _scaled(scheme, 0) if scheme != "MinW" else dmlopt.generate(
        "rar", {"generator": "cpn6", "requests": 3, "scheme": "MinW"}, seed=0)
    ref = CPN6_OPTIMA["MinW", 0][0] if scheme == "MinW" else _config_lp(inst)
    rng = np.random.default_rng(0)
    unit = rar.blocked_cost(inst)
    for links in (False, True):
        reqs = colgen._prepare(inst, links, float("inf"))
        lay = colgen._layout(inst, reqs, links)
        _, res = colgen._master(inst, reqs, lay, links, unit)
        nr = len(inst.requests)
        live = [rq for rq in reqs if rq.groups]
        values = []
        for scale in (0.0, 0.01, 0.1, 1.0):
            # random duals on every row, mapped to the row families as the master's are
            row_dual = -scale * unit * rng.random(lay.n_rows)
            row_dual[lay.node0: lay.link0] /= np.repeat(
                [float(nd.cus) for nd in inst.nodes], inst.slots)
            du = colgen._duals(inst, lay, row_dual, links)
            best, _ = colgen._price(live, du, np.full(nr, unit), 1, 0.0, float("inf"))
            value = colgen._lagrangian(inst, lay, du, best, unit, res)
            assert value <= ref + 1e-9, (links, scale, value, ref)
            values.append(value)
        # at y = 0: each request's cheapest configuration or blocking, computed by hand
        cheapest = 0.0
        for j, r in enumerate(inst.requests):
            costs = [unit]
            for kr, _, _, _, d, st in config.configurations(inst, j, not links):
                if inst.scheme == "MaxR":
                    costs.append(inst.alpha_of() * (1 - inst.rings[kr].reliability))
                elif inst.scheme == "MinT":
                    costs.append(inst.alpha_of() * (st + d - 1) / r.deadline)
                else:
                    costs.append(0.0)
            cheapest += min(costs)
        assert values[0] == pytest.approx(cheapest, rel=1e-12, abs=1e-12)


def test_time_limited_stops_stay_valid() -> None:
    """Stopped after 1, 2, ... master LPs (``max_iterations``) the bound never exceeds the
    converged one (the config LP) and never decreases with more iterations; a limit that
    ends before the first pricing pass raises SolverError (no bound)."""
    inst = _scaled("MinCU", 0)
    full = _converged(inst)
    lp = _config_lp(inst)
    assert full <= lp + 1e-9
    stops = []
    for it in (1, 2, 4, 8):
        part = colgen.columns_bound(inst, time_limit=60, max_iterations=it)
        assert part.metrics["iterations"] <= it
        assert part.bound <= full + 1e-9
        assert not stops or part.bound >= stops[-1] - 1e-12
        stops.append(part.bound)
    assert stops[0] < full - 0.1  # the stops were early ones (0.56 against 0.82)
    with pytest.raises(SolverError):
        colgen.columns_bound(inst, time_limit=1e-9)
    for limit in (0.02, 0.2):  # wall-clock stops: a valid bound or no bound
        try:
            value = dmlopt.bound(inst, "columns", time_limit=limit).bound
        except SolverError:
            continue
        assert value <= full + 1e-9


@pytest.mark.parametrize("scheme", SCHEMES)
def test_columns_estimate_admits_the_paper_scale(scheme: str) -> None:
    """cpn38 with 500 requests: the estimate stays under the default limits (measured peak
    resident memory under MinW, the largest: see the estimate's docstring)."""
    from dmlopt.contract import DEFAULT_LIMITS, check_run_size

    inst = dmlopt.generate("rar", {"generator": "cpn38", "requests": 500, "scheme": scheme},
                           seed=0)
    check_run_size("columns", colgen._estimate_columns(inst, colgen.ColumnsOptions()),
                   DEFAULT_LIMITS)


def test_ctrl_c_returns_the_bound_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C during the third master LP: the best Lagrangian bound so far comes back with
    ``interrupted`` (the API raises Interrupted carrying it), below the converged bound."""
    from dmlopt import solvers

    inst = _scaled("MinCU", 0)
    full = _converged(inst)  # the default time limit is not reached (converged, 60 s)
    calls = []
    run = solvers.run_highspy

    def interrupted(h):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        run(h)

    monkeypatch.setattr(solvers, "run_highspy", interrupted)
    bv = colgen.columns_bound(inst)
    assert bv.metrics["interrupted"] == 1.0 and bv.metrics["iterations"] == 2.0
    assert bv.bound <= full - 0.1
    with pytest.raises(dmlopt.errors.Interrupted):
        calls.clear()
        dmlopt.bound(inst, "columns")


@pytest.mark.parametrize("scheme", ["MinT", "MaxR"])
def test_column_pool_is_the_master_the_bound_came_from(scheme: str) -> None:
    """``column_generation`` returns ``columns_bound``'s value and the master it solved: its
    columns are configurations of ``config`` (listed apart), and its LP solved again is the
    reported master LP."""
    inst = _scaled(scheme, 0)
    bv, pool = colgen.column_generation(inst, links=False, time_limit=60)
    assert bv.bound == pytest.approx(
        colgen.columns_bound(inst, links=False, time_limit=60).bound, rel=1e-12)
    assert len(pool.columns) == bv.metrics["columns"] > 0
    assert pool.highs.getNumCol() == pool.first_column + len(pool.columns)
    listed = {j: set(config.configurations(inst, j, True)) for j in range(len(inst.requests))}
    for j, p, k, d, st in pool.columns:
        rq = pool.requests[j]
        ring, sub = rq.rings[p], rq.sets[p]
        assert (ring, sub, len(sub), k, d, st) in listed[j]
    pool.highs.run()
    assert pool.highs.getInfo().objective_function_value == pytest.approx(
        bv.metrics["master_lp"], rel=1e-7, abs=1e-9)


if __name__ == "__main__" and "--write" in sys.argv:
    _LP.clear()
    for _scheme in SCHEMES:
        for _seed in (0, 1):
            _config_lp(dmlopt.generate("rar", {"generator": "cpn6", "requests": 3,
                                               "scheme": _scheme}, seed=_seed))
            if _scheme != "MinW":
                _config_lp(_scaled(_scheme, _seed))
    GOLDEN.write_text(json.dumps(_LP, indent=0, sort_keys=True) + "\n")

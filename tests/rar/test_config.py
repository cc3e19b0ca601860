"""RAR (paper 003): the configuration formulation equals the brute force and the other two."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlopt
from dmlopt.errors import ModelTooLargeError
from dmlopt.models import rar
from dmlopt.models.rar import config as _rar_config
from dmlopt.models.rar import formulations as rar_formulations
from tests.helpers.rar import TINY, _brute_force, proven_optimum


@pytest.mark.parametrize("spec", TINY)
def test_brute_force_equals_config(spec):
    expected = _brute_force(rar.generate_random(**spec))
    for scheme in rar.SCHEMES:
        inst = rar.generate_random(scheme=scheme, **spec)
        res = dmlopt.solve(inst, formulation="config", threads=1)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(expected[scheme], abs=1e-7), scheme


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), scheme=st.sampled_from(rar.SCHEMES),
       flexible=st.booleans(), rho=st.sampled_from([1, 2]))
def test_config_equals_aggregated_and_paper(seed, scheme, flexible, rho):
    # rho = 1 with 2 wavelengths and 3 requests: wavelengths can bind (g, h, f variables);
    # rho = 2: they cannot (unless MinW), the ring is chosen after the node set
    inst = rar.generate_random(seed=seed, nodes=5, extra_links=2, requests=3, slots=4, cus=3,
                               wavelengths=2, rho=rho, scheme=scheme, flexible=flexible)
    # mip_gap 0: the optima are compared to 1e-6, closer than HiGHS's default 1e-4 gap
    # the aggregated and paper optima of the (derandomised) draws come from the golden file of
    # tests/helpers/rar.py (proven_optimum: solved by those formulations, not by config)
    cfg = dmlopt.solve(inst, formulation="config", threads=1, time_limit=60, mip_gap=0.0)
    agg = proven_optimum(inst, "aggregated", mip_gap=0.0, threads=1, time_limit=60)
    assert cfg.status == "optimal"
    assert cfg.objective == pytest.approx(agg, abs=1e-6)
    if seed % 3 == 0:  # the paper model is the slow one: a third of the draws
        paper = proven_optimum(inst, "paper", mip_gap=0.0, threads=1, time_limit=60)
        assert cfg.objective == pytest.approx(paper, abs=1e-6)


@pytest.mark.parametrize("scheme", rar.SCHEMES)
def test_config_on_cpn6_with_rdda_start(scheme):
    inst = rar.generate_cpn6(seed=2, requests=2, scheme=scheme)
    h = dmlopt.heuristic(inst, "rdda")
    cfg = dmlopt.solve(inst, formulation="config", warm_start="rdda", threads=1)
    agg = proven_optimum(inst, "aggregated", threads=1)  # golden file, by instance hash
    assert cfg.status == "optimal"
    assert cfg.objective == pytest.approx(agg, abs=1e-7)
    assert cfg.objective <= h.objective + 1e-9


def test_warm_start_sets_a_feasible_point():
    """The warm start of an RDDA solution reproduces its objective in the model."""
    import pyomo.environ as pyo

    for scheme in rar.SCHEMES:
        inst = rar.generate_random(seed=4, nodes=5, extra_links=2, requests=3, slots=5, cus=3,
                                   wavelengths=1, rho=1, scheme=scheme)
        h = dmlopt.heuristic(inst, "rdda")
        model = rar.build(inst, "config")
        rar.warm_start(model, inst, h.solution)
        deployed = [j for j, a in enumerate(h.solution.requests) if a is not None]
        if all(model.eta[j].value == 1 for j in deployed):  # every request was expressible
            assert pyo.value(model.obj) == pytest.approx(h.objective, abs=1e-9), scheme
            for con in model.component_data_objects(pyo.Constraint, active=True):
                body = pyo.value(con.body)
                assert con.lower is None or body >= pyo.value(con.lower) - 1e-9, con.name
                assert con.upper is None or body <= pyo.value(con.upper) + 1e-9, con.name


def test_configurations_cover_node_sets_with_the_most_reliable_ring():
    inst = rar.generate_cpn6(seed=0, requests=3, scheme="MaxR")
    for j, r in enumerate(inst.requests):
        cf = _rar_config.configurations(inst, j, free_wl=True)
        assert cf and all(r.source in s and len(s) in r.node_counts for _, s, *_ in cf)
        for k, s, *_ in cf:
            best = max(inst.rings[kk].reliability for kk in inst.candidate_rings(j)
                       if set(s) <= set(inst.rings[kk].nodes))
            assert inst.rings[k].reliability == best


def test_estimate_size_bounds_the_built_config_model():
    import pyomo.environ as pyo

    for inst in (rar.generate_cpn6(seed=0, requests=2, scheme="MinCU"),
                 rar.generate_random(seed=1, nodes=5, extra_links=2, requests=3, slots=4,
                                     cus=3, wavelengths=1, rho=1, scheme="MinW")):
        model = rar.build(inst, "config")
        n_vars = sum(1 for _ in model.component_data_objects(pyo.Var))
        n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint))
        est = rar.estimate_size(inst, "config")
        assert n_vars <= est[0] and n_cons <= est[1], (n_vars, n_cons, est)


def test_size_guard_refuses_paper_without_building(monkeypatch):
    inst = rar.generate_cpn38(seed=0, requests=100)

    def boom(_):
        raise AssertionError("the paper model was built")

    monkeypatch.setitem(rar.FORMULATIONS, "paper", (boom, rar_formulations._size_paper))
    with pytest.raises(ModelTooLargeError, match="paper"):
        dmlopt.solve(inst, formulation="paper")

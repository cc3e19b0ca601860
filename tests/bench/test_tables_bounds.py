"""The ``bounds`` tables of ``dmlopt reproduce`` (certified gaps to bound runs) on hand-made
stores: every gap below is computed by hand from the objectives and bounds of the runs."""

from __future__ import annotations

import json
import math

import pytest

from dmlopt.benchmarks import papers, reproduce
from dmlopt.benchmarks.tables import (
    certified,
    inc_oxc_bounds,
    nara_bounds,
    rar_bounds,
    rows,
    tabgp_bounds,
    tap_bounds,
)


def heur(problem, instance, method, objective, *, status="feasible", seconds=1.0):
    return {"problem": problem, "instance": instance, "instance_hash": instance,
            "kind": "heuristic", "method": method, "options": "{}", "seed": 0,
            "status": status, "objective": objective, "bound": None, "seconds": seconds,
            "wall_seconds": seconds, "metrics": {}}


def bound(problem, instance, name, value, *, seconds=2.0, status="bound", options=None,
          time_limit=300.0):
    payload = json.dumps({"bound": name, "options": json.loads(options or "{}"),
                          "time_limit": time_limit})
    return {"problem": problem, "instance": instance, "instance_hash": instance,
            "kind": "bound", "method": f"bound:{name}", "options": payload, "seed": 0,
            "status": status, "objective": None,
            "bound": value if status == "bound" else None, "seconds": seconds,
            "wall_seconds": seconds, "metrics": {}}


def test_gap_min_max_and_zero_bound():
    assert certified.gap(110.0, 100.0, "min") == pytest.approx((10.0, 10.0))
    assert certified.gap(90.0, 100.0, "max") == pytest.approx((10.0, 10.0))
    pct, diff = certified.gap(14.0, 0.0, "min")  # no relative gap: the absolute one
    assert math.isnan(pct) and diff == 14.0
    assert all(math.isnan(x) for x in certified.gap(math.nan, 1.0, "min"))


def test_parse_id_keeps_list_parameters():
    assert certified.parse_id("large(racks=64,workers=[16,64])#3") == (
        "large", {"racks": "64", "workers": "[16,64]"}, 3)
    assert certified.parse_id("some-file.json") is None
    assert certified.seeds_text(range(10)) == "0-9"
    assert certified.seeds_text([1, 0]) == "0 and 1"


def test_rar_gap_per_scheme_and_goal(tmp_path):
    a, b = "cpn38(requests=500,scheme=MinCU)#0", "cpn38(requests=500,scheme=MinCU)#1"
    c = "cpn38(requests=500,scheme=MinW)#0"
    df = rows([heur("rar", a, "rdda", 1.1), bound("rar", a, "energy", 1.0, seconds=6.0),
               heur("rar", b, "rdda", 1.02), bound("rar", b, "energy", 1.0, seconds=10.0),
               heur("rar", c, "rdda", 0.3), bound("rar", c, "energy", None, status="killed")])
    text = rar_bounds.bounds(df, tmp_path)
    # MinCU: gaps 10 % and 2 %: mean 6 %, max 10 %, one seed within 5 %; seconds 8 / 10
    assert ("| 500 requests, MinCU | `energy` | 2 of 2 | `rdda` (2) | 1.06 | 1 | 6.0 % | 10.0 % "
            "| 1 of 2 | 8 / 10 | - |") in text
    assert "| 500 requests, MinW | `energy` | 0 of 1 (1 killed) |" in text
    assert text.index("MinCU |") < text.index("MinW |")  # the paper's scheme order
    assert "0: 1.1 / 1 (10.0 %); 1: 1.02 / 1 (2.0 %)" in text
    assert "time limit 300 s" in text
    assert rar_bounds.TABLES[0].title_of(df).endswith(
        "(38-node network, 500 requests, seeds 0 and 1)")


def test_rar_best_heuristic_is_rdda_ls_where_it_is_lower(tmp_path):
    """MinCU rows of rdda and rdda-ls: the table grades the lower one (catches a table that
    reads rdda only); the MinW instance has rdda alone."""
    a = "cpn38(requests=500,scheme=MinCU)#0"
    c = "cpn38(requests=500,scheme=MinW)#0"
    df = rows([heur("rar", a, "rdda", 1.1), heur("rar", a, "rdda-ls", 1.04),
               bound("rar", a, "energy", 1.0, seconds=6.0),
               heur("rar", c, "rdda", 0.3), bound("rar", c, "energy", 0.2, seconds=4.0)])
    text = rar_bounds.bounds(df, tmp_path)
    assert ("| 500 requests, MinCU | `energy` | 1 of 1 | `rdda-ls` (1) | 1.04 | 1 | 4.0 % "
            "| 4.0 % | 1 of 1 |") in text
    assert "| 500 requests, MinW | `energy` | 1 of 1 | `rdda` (1) | 0.3 | 0.2 | 50.0 % " in text


def test_inc_oxc_both_bounds_better_heuristic(tmp_path):
    inst = "large(racks=64,workers=[16,64])#0"
    df = rows([heur("inc_oxc", inst, "wcg", 0.8), heur("inc_oxc", inst, "wcg-ls", 0.9),
               bound("inc_oxc", inst, "jobs-timeshared", 1.0),
               bound("inc_oxc", inst, "jobs", 0.9)])
    text = inc_oxc_bounds.bounds(df, tmp_path)
    # f is maximised: (1.0 - 0.9) / 1.0 = 10 % (within the goal), (0.9 - 0.9) / 0.9 = 0 %
    assert "| 64 racks, workers [16, 64] | `jobs-timeshared` | 1 of 1 | `wcg-ls` (1) | 0.9 | 1 " \
        "| 10.0 % | 10.0 % | 1 of 1 |" in text
    assert "| `jobs` (static pairings only) | 1 of 1 | `wcg-ls` (1) | 0.9 | 0.9 | 0.0 % |" in text
    assert "(64 racks, workers [16, 64] per job, seeds 0)" in inc_oxc_bounds.TABLES[0].title_of(df)


def test_nara_ties_go_to_the_first_heuristic_and_zero_bound_is_absolute(tmp_path):
    u, z = "uniform(topology=alpha,n_requests=128)#0", "azure(topology=alpha,n_requests=128)#0"
    df = rows([heur("nara", u, "tetris", 90), heur("nara", u, "nara", 100),
               heur("nara", u, "netfit-probe", 100),
               bound("nara", u, "aggregate", 125, options='{"primal":false}'),
               heur("nara", z, "nara", 0), bound("nara", z, "aggregate", 0)])
    text = nara_bounds.bounds(df, tmp_path)
    # (125 - 100) / 125 = 20 %; netfit-probe ties with nara and is listed first
    assert "| alpha, 128 requests, uniform | `aggregate` | 1 of 1 | `netfit-probe` (1) | 100 | " \
        "125 | 20.0 % | 20.0 % | 0 of 1 |" in text
    # a bound of 0 met by the allocator: no relative gap, absolute 0, within the goal
    assert "| alpha, 128 requests, Azure-like | `aggregate` | 1 of 1 | `nara` (1) | 0 | 0 | - | " \
        "- | 1 of 1 | 2 / 2 | 0 / 0 (1) |" in text


def test_nara_cover_rows_only_where_cover_ran(tmp_path):
    """cover has rows of its own on the setting it ran on; a setting where only aggregate ran
    gets no cover row (neither a missing bound nor a count of 0 of N)."""
    u, z = "uniform(topology=alpha,n_requests=128)#0", "azure(topology=alpha,n_requests=128)#0"
    df = rows([heur("nara", u, "tetris", 90), bound("nara", u, "aggregate", 115),
               bound("nara", u, "cover", 100, time_limit=120.0),
               heur("nara", z, "nara", 40), bound("nara", z, "aggregate", 50)])
    text = nara_bounds.bounds(df, tmp_path)
    # (115 - 90) / 115 = 21.7 %; (100 - 90) / 100 = 10.0 %
    assert "| alpha, 128 requests, uniform | `aggregate` | 1 of 1 | `tetris` (1) | 90 | 115 | " \
        "21.7 % | 21.7 % | 0 of 1 |" in text
    assert "| alpha, 128 requests, uniform | `cover` | 1 of 1 | `tetris` (1) | 90 | 100 | " \
        "10.0 % | 10.0 % | 1 of 1 |" in text
    assert "Azure-like | `cover`" not in text and "Azure-like | `aggregate` | 1 of 1" in text
    assert "`cover` (`aggregate` with cover cuts of active sets proven not to fit), time " \
        "limit 120 s" in text


def test_tabgp_windows_and_failed_bound(tmp_path):
    e0, e1 = "er(n=300,p=0.05,tau=3,l=6)#0", "er(n=300,p=0.05,tau=3,l=6)#1"
    d0 = "drift(n=1000,tau=10,l=16,m=5000)#0"
    df = rows([heur("tabgp", e0, "dense-refine", 4752), heur("tabgp", e0, "best", 4704),
               bound("tabgp", e0, "spectral", 3920, options='{"window":1}'),
               heur("tabgp", e1, "dense-refine", 4718),
               bound("tabgp", e1, "spectral", None, status="killed", options='{"window":1}'),
               heur("tabgp", d0, "best", 7809),
               bound("tabgp", d0, "spectral", 6507.5, options='{"window":2}')])
    text = tabgp_bounds.bounds(df, tmp_path)
    # (4704 - 3920) / 3920 = 20 %: within the goal; (7809 - 6507.5) / 6507.5 = 20.0 %
    assert "| er, n = 300, p = 0.05, tau = 3, l = 6 (window 1) | `spectral` | 1 of 2 (1 killed) " \
        "| `best` (1), `dense-refine` (1) |" in text
    assert "| 20.0 % | 20.0 % | 1 of 1 |" in text
    assert "| drift, n = 1000, tau = 10, l = 16, m = 5000 (window 2) |" in text
    assert "e1" not in text and "1: 4718 / - (killed)" in text
    assert tabgp_bounds.TABLES[0].title_of(df).endswith("(er n = 300 and drift n = 1,000, "
                                                        "seeds 0 and 1)")


def test_tap_family_medians_best_of_both_and_goal(tmp_path):
    def q(name):
        return f"qaplib(name={name})#0"

    df = rows([heur("tap", q("nug12"), "rts", 578), bound("tap", q("nug12"), "hahn-grant", 500),
               bound("tap", q("nug12"), "glb", 493, seconds=0.5),
               heur("tap", q("nug14"), "rts", 1014), bound("tap", q("nug14"), "hahn-grant", 845),
               bound("tap", q("nug14"), "glb", 869, seconds=0.5),
               heur("tap", q("esc16i"), "rts", 14), bound("tap", q("esc16i"), "hahn-grant", 0),
               bound("tap", q("esc16i"), "glb", 0, seconds=0.5)])
    text = tap_bounds.bounds(df, tmp_path)
    # nug12: hahn-grant 15.6 %, glb 17.24 %, best 15.6 %; nug14: hahn-grant 20.0 %, glb
    # 16.69 %, best (869) 16.69 %; medians of two: (15.6 + 20) / 2, (17.24 + 16.69) / 2, ...
    assert "| nug | 2 | 12-14 | 17.8 / 20.0 | 17.0 / 17.2 | 16.1 / 16.7 | 2 / 2 | 0.5 / 0.5 |" \
        in text
    assert "| esc | 1 | 16-16 | - (bound 0 on 1: absolute gap up to 14) |" not in text
    assert "| esc | 1 | 16-16 | -; bound 0 on 1: absolute gap up to 14 |" in text
    # over all three: 15.6, 16.69 and infinite (bound 0 below 14): median 16.7 %, met
    assert "with a bound (the better of both; a bound of 0 below a positive objective counts " \
        "as infinite): 16.7 %; goal (median <= 20 %): **met**" in text
    assert tap_bounds.TABLES[0].title_of(df).endswith("(3 instances, n = 12-16)")


def test_bound_tables_are_registered_with_shipped_suites():
    """Every registered paper has a certified-gap table ``bounds`` on its own bound suites."""
    for paper in papers.names():
        t = {x.name: x for x in reproduce.tables(paper)}["bounds"]
        assert t.suites == (f"paper-{paper}-bounds",) and t.quick == (f"quick-{paper}-bounds",)
        assert t.render(rows([]), None).strip() == "_no runs_"

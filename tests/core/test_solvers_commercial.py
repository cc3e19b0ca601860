"""Gurobi, CPLEX, Xpress and COPT by name (issue 54 item 1, issue 51's licence item).

Run against the size-limited licences of the pip packages (``pip install 'dmlopt[solvers]'``,
which ``make test`` installs): each solver solves a tiny MILP and TAP's quadratic ``paper``
model to the optimum HiGHS or SCIP proves, takes a time limit, a MIP gap and its own options,
records its version, and refuses a model beyond its licence in one line naming the limit. A
solver whose package is not installed is skipped, saying which package to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dmlopt
from dmlopt import solvers
from dmlopt.errors import InstanceError, SolverError
from dmlopt.solvers import commercial

NAMES = ("gurobi", "cplex", "xpress", "copt")


def _needs(name: str) -> None:
    if not solvers.installed(name):
        pytest.skip(f"{name}: its package {solvers.PACKAGES[name]} is not installed (pip "
                    "install 'dmlopt[solvers]', or `make test`, which installs it)")


@pytest.fixture(params=NAMES)
def name(request):
    _needs(request.param)
    return request.param


@pytest.fixture(scope="module")
def tiny():
    return dmlopt.generate("tap", {"generator": "random", "m": 4, "n": 4}, seed=1)


@pytest.fixture(scope="module")
def tabgp():
    return dmlopt.generate("tabgp", {"n": 6, "p": 0.5, "tau": 2, "l": 2}, seed=0)


@pytest.fixture(scope="module")
def hard():
    # TAP's quadratic paper model at m = n = 9 (81 binaries, 18 rows): every solver needs
    # seconds to prove it (its bound is 0 for the first tenths of a second)
    return dmlopt.generate("tap", {"generator": "random", "m": 9, "n": 9}, seed=1)


@pytest.fixture(scope="module")
def large():
    # 5,071 variables and 1,012 constraints in the 'rlt' model: beyond each pip licence
    # (Gurobi 2,000, CPLEX 1,000, Xpress 5,000 rows and columns, COPT's size limit)
    return dmlopt.generate("tap", {"generator": "random", "m": 11, "n": 11}, seed=1)


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dmlopt", *argv], capture_output=True,
                          text=True, timeout=300)


def test_a_tiny_milp_solves_to_highss_optimum(name, tiny, tabgp):
    for inst, form in ((tiny, "class"), (tabgp, None)):
        ref = dmlopt.solve(inst, "highs", formulation=form, threads=1)
        res = dmlopt.solve(inst, name, formulation=form, threads=1, time_limit=60)
        assert ref.status == res.status == "optimal"
        assert res.method.startswith(f"{name}:") and res.method.endswith(ref.method[6:])
        assert res.objective == pytest.approx(ref.objective, rel=1e-9)
        assert res.bound == pytest.approx(ref.objective, rel=1e-4) and res.gap <= 1e-4


def test_taps_quadratic_paper_model_solves_to_scips_optimum(name, tiny):
    ref = dmlopt.solve(tiny, "scip", formulation="paper", threads=1)
    res = dmlopt.solve(tiny, name, formulation="paper", threads=1, time_limit=60)
    assert ref.status == res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)
    # the paper's optimum is the linear 'class' model's (a different model, HiGHS)
    assert res.objective == pytest.approx(dmlopt.solve(tiny, "highs").objective, rel=1e-9)


def test_a_time_limit_stops_the_run_with_the_proof_rule(name, hard):
    res = dmlopt.solve(hard, name, formulation="paper", threads=1, time_limit=0.2)
    assert res.status == "time_limit" and res.seconds < 20
    assert res.message == "maxTimeLimit"
    if res.objective is not None:  # an incumbent: evaluated, feasible, its gap from the bound
        assert res.feasible and dmlopt.evaluate(hard, res.solution).objective == res.objective
        assert res.bound is None or res.bound <= res.objective


def test_a_mip_gap_is_taken_and_optimal_means_proven(name):
    inst = dmlopt.generate("tap", {"generator": "random", "m": 6, "n": 6}, seed=2)
    res = dmlopt.solve(inst, name, formulation="paper", threads=1, mip_gap=0.3, time_limit=120)
    assert res.status in ("optimal", "feasible") and res.gap is not None
    assert res.gap <= 0.3 + 1e-9
    if res.status == "optimal":
        assert res.gap <= solvers.OPTIMALITY_GAP
    else:
        assert "optimal means proven" in res.message


def test_settings_map_to_parameters_the_solver_accepts(name):
    # every name dmlopt maps time_limit, mip_gap and threads to is set on the solver itself
    for key, value in zip(commercial.SETTINGS[name], (12.5, 0.01, 2), strict=True):
        commercial.check_option(name, key, value)
    params = commercial.native_options(name, 1e300, 0.01, 2, {})
    assert max(v for v in params.values() if isinstance(v, float)) <= commercial.MAX_SECONDS


def test_solver_options_are_checked_against_the_solvers_own_list(name, tiny):
    with pytest.raises(InstanceError, match=r"solver_options\.NoSuchParam: 1 is not an? "):
        dmlopt.solve(tiny, name, solver_options={"NoSuchParam": 1})
    threads = commercial.SETTINGS[name][2]
    with pytest.raises(InstanceError, match=rf"solver_options\.{threads}: 'x' is refused by"):
        dmlopt.solve(tiny, name, solver_options={threads: "x"})


def test_a_solver_option_reaches_the_solver_from_the_cli(name, hard, tmp_path):
    path = tmp_path / "hard.json"
    path.write_text(hard.model_dump_json())
    key = commercial.SETTINGS[name][0]  # the solver's own time-limit parameter
    out = _cli("solve", str(path), "--solver", name, "-f", "paper", "--threads", "1",
               "--solver-option", f"{key}=0.2", "--json")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)  # nothing of the solver's banner or log on stdout
    assert row["status"] == "time_limit" and row["options"]["solver"].startswith(name)
    bad = _cli("solve", str(path), "--solver", name, "--solver-option", "NoSuchParam=1")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "NoSuchParam" in bad.stderr and bad.stdout == ""


def test_the_result_records_the_solvers_name_and_version(name, tiny):
    res = dmlopt.solve(tiny, name, threads=1)
    recorded = res.options["solver"]
    assert recorded == solvers.version(name)
    label, version = recorded.split(" ")
    assert label == name and version[0].isdigit() and "." in version
    from importlib.metadata import version as dist_version

    assert dist_version(solvers.PACKAGES[name]).startswith(version.rsplit(".", 1)[0])


def test_a_model_beyond_the_licence_is_one_line_naming_it(name, large, tmp_path):
    with pytest.raises(SolverError) as err:
        dmlopt.solve(large, name, formulation="rlt", threads=1, time_limit=30)
    text = str(err.value)
    assert text.startswith(f"{name}: licence limit:") and "\n" not in text
    assert solvers.PACKAGES[name] in text
    path = tmp_path / "large.json"
    path.write_text(large.model_dump_json())
    out = _cli("solve", str(path), "--solver", name, "-f", "rlt", "--threads", "1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "licence limit" in out.stderr


@pytest.mark.parametrize("solver", NAMES)
def test_a_missing_package_is_named(solver, monkeypatch, tiny):
    monkeypatch.setattr(solvers.options, "installed", lambda name: False)
    with pytest.raises(SolverError, match=rf"needs the Python package "
                       rf"{solvers.PACKAGES[solver]}, not installed here \(pip install"):
        dmlopt.solve(tiny, solver)
    assert solver in solvers.allowed()  # no environment variable needed


@pytest.mark.parametrize("solver", ["gurobi_persistent", "cplex_persistent", "xpress_persistent"])
def test_persistent_interfaces_are_refused_naming_the_one_to_use(solver, monkeypatch, tiny):
    monkeypatch.setenv(solvers.OPT_IN_ENV, solver)  # even when opted in
    base = solver.removesuffix("_persistent")
    with pytest.raises(SolverError, match=f"persistent Pyomo interface.*use '{base}'"):
        dmlopt.solve(tiny, solver)


def test_pyomos_direct_names_are_the_same_solvers(tiny):
    for alias, name in (("gurobi_direct", "gurobi"), ("cplex_direct", "cplex"),
                        ("xpress_direct", "xpress"), ("scip_direct", "scip")):
        assert solvers.canonical(alias) == name
    _needs("gurobi")
    assert dmlopt.solve(tiny, "gurobi_direct", threads=1).options["solver"].startswith("gurobi")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc; 0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    """The live descendants of ``pid`` (Linux /proc)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = [int(k) for k in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
        for kid in kids:
            out += [kid, *_descendants(kid)]
    return out


def test_ctrl_c_stops_the_run_and_keeps_the_callers_process(name, hard, tmp_path):
    # Gurobi, CPLEX and COPT stop with their incumbent (Pyomo reports Gurobi's and CPLEX's
    # stop as an error); Xpress, which takes SIGINT for itself, runs in a child that is ended
    import signal
    import time

    path = tmp_path / "hard.json"
    path.write_text(hard.model_dump_json())
    proc = subprocess.Popen([sys.executable, "-m", "dmlopt", "solve", str(path), "--solver",
                             name, "-f", "paper", "--threads", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # the model built and the solver running (it needs a minute to prove it), counted in CPU
    # seconds, not a fixed sleep, so a loaded machine only makes the wait longer: the start-up
    # (imports, the build) takes 0.6-0.7 CPU s, and an interrupt before the solver runs fails
    # the "status interrupted" check below; Xpress solves in a forked child, which must exist
    # and have run a CPU second itself
    t0 = time.monotonic()
    while True:
        assert proc.poll() is None, "the solve ended before the interrupt"
        assert time.monotonic() - t0 < 300, "the solve used no CPU in time"
        children = _descendants(proc.pid)
        if name == "xpress":
            if children and sum(map(_cpu_seconds, children)) >= 1.0:
                break
        elif _cpu_seconds(proc.pid) >= 1.5:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.startswith("dmlopt: interrupted")
    assert err.count("\n") == 1
    if name != "xpress":
        assert "status     interrupted" in out

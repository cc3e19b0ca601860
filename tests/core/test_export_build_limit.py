"""``dmlopt export`` never runs minutes silently on a model within the size limits (issue 51):
a model whose build and write are estimated beyond ``--build-limit`` is refused at once, one
that runs past it anyway is stopped (nothing written), and a long build says it is working."""

from __future__ import annotations

import time

import pytest

import dmlopt
from dmlopt import exact, io
from dmlopt.cli import main
from dmlopt.errors import SolverError
from dmlopt.models import rar
from dmlopt.models.rar import formulations as rar_formulations

#: the sweep's kind: 4 nodes, 2 requests, 4,000 slots; 248,150 variables and 1.06 million
#: constraints (within 1e6 / 2e6) but 354 million nonzeros (eqs. 32-33 are |T| long)
LONG = {"generator": "random", "slots": 4000}


@pytest.fixture
def long_rar(tmp_path):
    path = tmp_path / "long.json"
    io.save(dmlopt.generate("rar", LONG, seed=0), path)
    return path


def test_a_model_within_the_size_limits_but_long_to_build_is_refused_at_once(long_rar, capsys):
    n_vars, n_cons = rar.estimate_size(dmlopt.load(long_rar), "paper")
    assert n_vars < 1e6 and n_cons < 2e6  # the size limits let it through
    out = long_rar.parent / "long.lp"
    t0 = time.perf_counter()
    assert main(["export", str(long_rar), str(out), "-f", "paper"]) == 2
    assert time.perf_counter() - t0 < 5
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.splitlines()) == 1
    assert "above the build limit of 60 s" in cap.err and "354," in cap.err
    assert not out.exists() and sorted(p.name for p in long_rar.parent.iterdir()) == ["long.json"]
    # solve's own refusal (over twice its time limit plus 10 s) now counts the nonzeros too
    with pytest.raises(SolverError, match="nonzeros"):
        dmlopt.solve(dmlopt.load(long_rar), formulation="paper", time_limit=60)


@pytest.mark.parametrize("raw", ["0", "-1", "nan", "inf", "abc"])
def test_the_build_limit_is_a_number_of_seconds(raw, tmp_path, capsys):
    assert main(["export", "rar/fig2", str(tmp_path / "m.lp"), "--build-limit", raw]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--build-limit" in err


def test_the_build_limit_is_held_against_the_estimate_and_can_be_raised(tmp_path, capsys):
    """A limit below a small model's estimate refuses it; a limit above exports it."""
    inst = tmp_path / "r.json"
    io.save(dmlopt.generate("rar", {"generator": "random", "slots": 20}, seed=0), inst)
    need, _ = exact.build_estimate(dmlopt.registry.of(dmlopt.load(inst)), dmlopt.load(inst),
                                   "paper", write=True)
    out = tmp_path / "m.lp"
    assert main(["export", str(inst), str(out), "-f", "paper", "--build-limit",
                 f"{need / 2:g}"]) == 2
    assert "above the build limit" in capsys.readouterr().err and not out.exists()
    # the limit is wall-clock seconds: ten times the estimate, so a machine loaded several
    # times over (the suite's three workers on two cores) still builds within it
    assert main(["export", str(inst), str(out), "-f", "paper", "--build-limit",
                 f"{need * 10:g}"]) == 0
    assert out.stat().st_size > 0


def test_a_build_running_past_the_limit_is_stopped_and_says_it_is_working(tmp_path, capsys,
                                                                          monkeypatch):
    """An estimate too low (here: a build that never ends) is caught by the watch: progress
    lines, then one error line at the limit, nothing on stdout and nothing written."""
    def forever(instance):  # "never ends": 60 s, so a watch that failed cannot hang the suite
        t = time.perf_counter()
        while time.perf_counter() - t < 60:
            sum(range(100))
        raise AssertionError("the build watch did not stop the build")

    monkeypatch.setitem(rar.FORMULATIONS, "paper", (forever, rar_formulations._size_paper))
    monkeypatch.setattr(exact, "BUILD_PROGRESS_SECONDS", 0.2)
    out = tmp_path / "m.lp"
    t0 = time.perf_counter()
    assert main(["export", "rar/fig2", str(out), "-f", "paper", "--build-limit", "1"]) == 2
    assert time.perf_counter() - t0 < 3
    cap = capsys.readouterr()
    lines = cap.err.splitlines()
    assert cap.out == "" and len(lines) >= 2
    assert all("still at work" in line for line in lines[:-1])
    assert "ran past its limit of 1 s" in lines[-1] and "nothing written" in lines[-1]
    assert list(tmp_path.iterdir()) == []
    import signal

    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)  # handler restored

"""Smoke tests of the harness studies (benchmarks/studies/harness/): the overhead study runs its
44 runs and writes only under its directory; the scaling study's exponent of a tiny case. The
validity and hostile sweeps are product checks: tests/bench/test_validity_sweep.py and
tests/bench/test_hostile.py."""

from __future__ import annotations

import math
import re

import pytest

from benchmarks.studies.harness import overhead, scaling


def test_overhead_writes_only_under_its_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    overhead.run(["-o", str(tmp_path / "out")])
    assert "44 runs" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(SystemExit) as err:
        overhead.run(["-o", str(afile)])
    assert err.value.code == 2 and "not a directory" in capsys.readouterr().err
    assert afile.read_text() == "x"


def test_scaling_exponent_of_a_tiny_case(capsys):
    specs = tuple({"generator": "cpn38", "requests": n, "slots": 12, "scheme": "MinCU"}
                  for n in (10, 20))
    scaling._exponent("rar", "rdda", (10, 20), specs, repeats=1, evaluate=True)
    out = capsys.readouterr().out
    t = [float(x) for x in re.search(r"(\S+) s -> (\S+) s, b = (\S+)", out).groups()]
    if t[0] > 0 and t[1] > 0:  # the printed b is log(t1 / t0) / log 2 of the printed times
        assert t[2] == pytest.approx(math.log(t[1] / t[0]) / math.log(2), abs=0.02 + 0.01 /
                                     min(t[0], t[1]))
    assert "evaluator:" in out and "estimate at 20:" in out


def test_scaling_refuses_an_unknown_case(tmp_path, monkeypatch, capsys):
    for var in scaling._THREADS:  # already one thread: no re-exec of the process
        monkeypatch.setenv(var, "1")
    with pytest.raises(SystemExit) as err:
        scaling.run(["-o", str(tmp_path / "out"), "--only", "no-such-case"])
    assert err.value.code == 2 and "no-such-case" in capsys.readouterr().err

"""The studies' ``--seeds``: ranges and lists read as written; anything else exits 2 with one
line, before the output directory is made."""

from __future__ import annotations

import importlib

import pytest

from dmlopt.benchmarks.analysis import parse_seeds


def test_ranges_and_lists():
    assert parse_seeds("0-3") == [0, 1, 2, 3]
    assert parse_seeds("5") == [5]
    assert parse_seeds("0,3,5") == [0, 3, 5]
    assert parse_seeds("0-1,7,9-10") == [0, 1, 7, 9, 10]


@pytest.mark.parametrize("module", ["rar_bounds", "rar_mincu_frontier", "tabgp_planted"])
@pytest.mark.parametrize("text", ["3-1", "a", "-2", "1,,2", "", "0-x"])
def test_bad_seeds_exit_2_before_writing(module, text, tmp_path, capsys):
    study = importlib.import_module(f"dmlopt.benchmarks.analysis.{module}")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as err:
        study.main(["-o", str(out), "--seeds", text])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--seeds" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("module", ["hostile", "validity", "scaling", "tabgp_exact", "rar_exact",
                                    "tap_bounds", "nara_drops", "harness_workers"])
def test_usage_errors_are_one_line(module, capsys):
    study = importlib.import_module(f"dmlopt.benchmarks.analysis.{module}")
    entry = getattr(study, "main", None) or study.run
    with pytest.raises(SystemExit) as err:
        entry(["--no-such-option"])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines

"""Every study script (benchmarks/studies/<topic>/<name>.py) takes ``--help`` naming its ``-o
DIR``, its usage errors are one line with exit code 2, and its ``--seeds`` reads ranges and
lists; the documented way to run one (``python -m benchmarks.studies.<topic>.<name>`` from the
root of a clone) works from the installed dmlopt (tests/studies/test_rar.py runs one so)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import benchmarks.studies as studies
from benchmarks.studies import parse_seeds

ROOT = Path(__file__).resolve().parents[2]
#: every script: a module of a study folder with a command line (a main or run function)
SCRIPTS = sorted(
    f"{topic.name}.{m.name}"
    for topic in pkgutil.iter_modules(studies.__path__) if topic.ispkg
    for m in pkgutil.iter_modules([str(Path(studies.__path__[0]) / topic.name)])
    if "add_argument" in (Path(studies.__path__[0]) / topic.name / f"{m.name}.py").read_text())


def _entry(name: str):
    study = importlib.import_module(f"benchmarks.studies.{name}")
    return getattr(study, "main", None) or study.run


def test_the_scripts_are_found():
    assert len(SCRIPTS) >= 15 and "rar.mincu_dw" in SCRIPTS and "harness.hostile" in SCRIPTS


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_names_the_output_directory(name, capsys):
    with pytest.raises(SystemExit) as err:
        _entry(name)(["--help"])
    out = capsys.readouterr().out
    assert err.value.code == 0
    assert "-o DIR" in out and f"benchmarks.studies.{name}" in out.splitlines()[0]


@pytest.mark.parametrize("name", SCRIPTS)
def test_usage_errors_are_one_line(name, capsys):
    with pytest.raises(SystemExit) as err:
        _entry(name)(["--no-such-option"])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines


def test_seeds_read_ranges_and_lists():
    assert parse_seeds("0-3") == [0, 1, 2, 3]
    assert parse_seeds("5") == [5]
    assert parse_seeds("0,3,5") == [0, 3, 5]
    assert parse_seeds("0-1,7,9-10") == [0, 1, 7, 9, 10]


@pytest.mark.parametrize("name", ["rar.bounds", "rar.mincu_frontier", "tabgp.planted"])
@pytest.mark.parametrize("text", ["3-1", "a", "-2", "1,,2", "", "0-x"])
def test_bad_seeds_exit_2_before_writing(name, text, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as err:
        _entry(name)(["-o", str(out), "--seeds", text])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--seeds" in lines[0]
    assert not out.exists()

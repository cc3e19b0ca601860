"""Hostile QAPLIB files: a header size the limits refuse before anything is allocated, matrices
with the wrong number of entries, and ``.sln`` / ``--values`` files the held-out check must
refuse with one line and exit 2 (never exit 1, never an infinite gap reported)."""

from __future__ import annotations

import time

import pytest

from dmlopt.benchmarks import qaplib_check
from dmlopt.errors import InstanceError, ModelTooLargeError
from dmlopt.models.tap import qaplib

A = "0 1 2\n1 0 3\n2 3 0\n"
DAT = f"3\n\n{A}\n{A}"


def test_a_huge_header_is_refused_before_allocation(tmp_path):
    f = tmp_path / "huge.dat"
    f.write_text("1000000000\n1 2 3\n")
    t0 = time.perf_counter()
    with pytest.raises(ModelTooLargeError, match="n = 1000000000"):
        qaplib.read_dat(f)
    assert time.perf_counter() - t0 < 1.0
    f.write_text("2000\n1 2 3\n")  # within the limits: the entries are counted
    with pytest.raises(InstanceError, match="has 3 matrix entries, expected 2.n.n = 8000000"):
        qaplib.read_dat(f)
    f.write_text("9" * 5000 + "\n")
    with pytest.raises(InstanceError, match="must start with the size n"):
        qaplib.read_dat(f)


@pytest.mark.parametrize("sln, words", [
    ("4 10\n1 2 3 4\n", "has n = 4, its .dat file has n = 3"),
    ("3 1e999\n1 2 3\n", "non-finite objective"),
    ("3 -5\n1 2 3\n", "objective -5"),
    ("3 10\n1 2 " + "3" * 400 + "\n", "non-finite permutation"),
    (b"3 10\n1 2 \xff\n", "non-ASCII byte"),
])
def test_bad_sln_files_exit_2_with_one_line(tmp_path, capsys, sln, words):
    (tmp_path / "t3.dat").write_text(DAT)
    (tmp_path / "t3.sln").write_bytes(sln if isinstance(sln, bytes) else sln.encode())
    assert qaplib_check.main([str(tmp_path), "--seeds", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and "t3.sln" in err


@pytest.mark.parametrize("values, words", [
    (b"name,best_known\nt3,1e999\n", "not a finite number >= 0"),
    (b"name,best_known\nt3,-1\n", "not a finite number >= 0"),
    (b"name,best_known\nt3,1\xff\n", "not UTF-8"),
    (b"name,best_known\nt3," + b"1" * 200_000 + b"\n", "field"),
    (b"name,best_known\nt3,1e-320\n", "no finite gap"),
])
def test_bad_values_files_exit_2_with_one_line(tmp_path, capsys, values, words):
    (tmp_path / "t3.dat").write_text(DAT)
    v = tmp_path / "values.csv"
    v.write_bytes(values)
    assert qaplib_check.main([str(tmp_path), "--seeds", "1", "--values", str(v)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err

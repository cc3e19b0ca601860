"""The held-out QAPLIB check (``python -m dmlopt.benchmarks.qaplib_check``).

The published values here are worked out by brute force over all permutations, written in this
file (not with the package's scoring), so a check that reads the wrong value, scores the wrong
matrix or miscounts the hits fails."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

from dmlopt.benchmarks import qaplib_check


def _brute(a: np.ndarray, b: np.ndarray) -> tuple[float, tuple[int, ...]]:
    """Optimum of min_p sum_ij a[i][j] b[p(i)][p(j)] over every permutation (tiny n only)."""
    n = a.shape[0]
    best, arg = np.inf, tuple(range(n))
    for p in itertools.permutations(range(n)):
        c = sum(a[i, j] * b[p[i], p[j]] for i in range(n) for j in range(n))
        if c < best:
            best, arg = c, p
    return float(best), arg


def _write_dat(path, a, b) -> None:
    n = a.shape[0]
    lines = [str(n), ""] + [" ".join(str(int(x)) for x in row) for row in a] + [""]
    lines += [" ".join(str(int(x)) for x in row) for row in b]
    path.write_text("\n".join(lines) + "\n")


def _instance(seed: int, n: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 10, (n, n))
    b = np.triu(rng.integers(1, 10, (n, n)), 1)
    return a, b + b.T


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Two tiny instances with a brute-forced .sln, one without, one that is not a TAP."""
    d = tmp_path_factory.mktemp("qaplib")
    for name, seed in (("tiny6a", 1), ("tiny6b", 2), ("nosln6", 3)):
        a, b = _instance(seed)
        _write_dat(d / f"{name}.dat", a, b)
        if name != "nosln6":
            value, perm = _brute(a, b)
            (d / f"{name}.sln").write_text(f"6 {int(value)}\n"
                                           + " ".join(str(x + 1) for x in perm) + "\n")
    a, _ = _instance(4)  # neither matrix symmetric with a zero diagonal: not a TAP
    _write_dat(d / "asym6.dat", a, a + 1)
    return d


def test_check_reaches_brute_force_optima_and_writes_every_run(folder, tmp_path, capsys):
    out = tmp_path / "runs.csv"
    assert qaplib_check.main([str(folder), "--seeds", "2", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert "asym6" in captured.err and "skipped" in captured.err  # a refusal: stderr only
    assert "skipped" not in text
    assert "no published value" in text  # nosln6: gaps to its best run
    rows = list(csv.DictReader(out.open()))
    assert sorted({r["name"] for r in rows}) == ["nosln6", "tiny6a", "tiny6b"]
    assert len(rows) == 6
    for name, seed in (("tiny6a", 1), ("tiny6b", 2)):
        value, _ = _brute(*_instance(seed))
        mine = [r for r in rows if r["name"] == name]
        assert {float(r["reference"]) for r in mine} == {value}
        assert all(float(r["objective"]) == value and float(r["gap_pct"]) == 0 for r in mine)
    assert "reached on 4 of 4 runs with n <= 30" in text  # nosln6 has no published value


def test_values_csv_overrides_the_sln_and_gaps_follow(folder, tmp_path, capsys):
    value, _ = _brute(*_instance(1))
    vals = tmp_path / "v.csv"
    vals.write_text(f"name,best_known\ntiny6a,{value / 2}\n")  # a claim half the optimum
    assert qaplib_check.main([str(folder), "--only", "tiny6a", "--seeds", "1",
                              "--values", str(vals)]) == 0
    text = capsys.readouterr().out
    assert "mean 100.000 %" in text  # objective = 2 x the claimed value
    assert "reached on 0 of 1 runs" in text


@pytest.mark.parametrize("argv, words", [
    (["{missing}"], "is not an existing directory"),
    (["{folder}", "--only", "nug99"], "nug99 not in"),
    (["{folder}", "--seeds", "0"], "--seeds: 0"),
    (["{folder}", "--values", "{missing}"], "is not an existing CSV file"),
    (["{folder}", "--values", "{badcsv}"], "best_known 'abc' is not a finite number"),
    (["{folder}", "--only", "asym6"], "no file is a TAP-compatible"),
    (["{folder}", "-o", "{missing}/x.csv"], "is not an existing directory"),
    (["{empty}"], "holds no .dat file"),
])
def test_bad_input_is_one_line_and_exit_2(folder, tmp_path, capsys, argv, words):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,best_known\ntiny6a,abc\n")
    (tmp_path / "empty").mkdir()
    subs = {"folder": str(folder), "missing": str(tmp_path / "nowhere"), "badcsv": str(bad),
            "empty": str(tmp_path / "empty")}
    code = qaplib_check.main([x.format(**subs) for x in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert words in err and err.count("\n") == 1
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("target, words", [("/dev/null", "exists and is not a regular file"),
                                           ("{folder}", "is a directory")])
def test_bad_output_is_refused_before_any_run(folder, capsys, target, words):
    code = qaplib_check.main([str(folder), "-o", target.format(folder=folder)])
    std = capsys.readouterr()
    assert code == 2 and words in std.err and std.err.count("\n") == 1
    assert std.out == ""  # nothing ran


def test_gap_to_a_huge_published_value_does_not_overflow():
    assert qaplib_check.gap(1.0, 1e308) == pytest.approx(-100.0)
    assert qaplib_check.gap(3.0, 2.0) == pytest.approx(50.0)
    assert qaplib_check.gap(0.0, 0.0) == 0.0

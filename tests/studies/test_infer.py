"""Smoke test of the inference study (benchmarks/studies/infer/noise.py, paper 000): with
exact measurements (sigma 0) both solvers recover the category set exactly, with no false or
missed category, which eq. 7 guarantees without noise."""

from __future__ import annotations

from benchmarks.studies.infer import noise


def test_noise_script_is_exact_without_noise(tmp_path):
    noise.main(["-o", str(tmp_path), "--runs", "1", "--paths", "3", "--sigmas", "0", "0.01"])
    lines = (tmp_path / "infer_noise.md").read_text().splitlines()
    rows: dict[tuple[float, str], list[float]] = {}
    sigma = None
    for ln in lines[3:]:  # the title, the column names, the index names
        cells = ln.split()
        if cells[0] not in ("mobius", "nnls"):
            sigma, cells = float(cells[0]), cells[1:]
        rows[(sigma, cells[0])] = [float(c) for c in cells[1:]]
    assert set(rows) == {(s, m) for s in (0.0, 0.01) for m in ("mobius", "nnls")}
    for solver in ("mobius", "nnls"):
        exact_set, false, missed = rows[(0.0, solver)][:3]
        assert (exact_set, false, missed) == (1.0, 0.0, 0.0)

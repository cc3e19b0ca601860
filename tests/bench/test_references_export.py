"""``dmlopt references --export``: the reference library as a MIPLIB-style benchmark set. Raw
HiGHS (no dmlopt code) reads sampled models and reproduces their ``=opt=`` values; a solution
HiGHS writes for an exported model is read back by ``dmlopt validate``."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

import dmlopt
from dmlopt import cli, contract, references
from dmlopt.errors import InstanceError
from tests.helpers import raw_highs

#: small records of every problem with a library (optimal and best-known)
SAMPLE = ["fig42-p01-tau1-s0", "fig42-p05-tau3-s3", "fig11-dcell-ps-v8-s0",
          "qaplib-esc16f", "qaplib-chr12a", "fig4-r2-s1", "cpn6-r2-mincu-s0", "cpn6-r2-maxr-s1",
          "alpha-uniform-r16-s5"]


#: HiGHS statuses of a run stopped before it proved an optimum
STOPPED = ("kTimeLimit", "kUnknown", "kInterrupt")


def _solu(path: Path) -> list[tuple[str, str, float]]:
    out = []
    for line in path.read_text().splitlines():
        kw, name, value = line.split()
        out.append((kw, name, float(value)))
    return out


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("set")
    before = set(root.parent.iterdir())
    out = root / "bench"
    done, skipped = references.export_set(out, ids=SAMPLE)
    assert set(root.parent.iterdir()) == before  # nothing written beside DIR
    return out, done, skipped


def test_layout_and_solu(exported):
    out, done, skipped = exported
    assert skipped == []
    by_id = {r.id: r for r in references.records() if r.id in SAMPLE}
    assert {e.name.split("/")[1] for e in done} == set(SAMPLE)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == sorted([references.EXPORT_DONE, "README.md", "references.solu"] +
                           [f"{e.name}.mps.gz" for e in done])
    solu = _solu(out / "references.solu")
    assert len(solu) == len(SAMPLE)
    for kw, name, value in solu:
        rec = by_id[name.split("/")[1]]
        assert name == f"{rec.problem}/{rec.id}"
        assert kw == {"optimal": "=opt=", "best-known": "=best="}[rec.status]
        assert value == rec.objective
    assert {kw for kw, _, _ in solu} == {"=opt=", "=best="}
    assert all(e.checked for e in done)  # each value re-computed on its model
    readme = (out / "README.md").read_text()
    assert "dmlopt validate" in readme and "=opt=" in readme
    with gzip.open(out / done[0].path.relative_to(out), "rt") as fh:
        assert "ROWS" in fh.read()


def test_raw_highs_reproduces_opt(exported, tmp_path_factory, capsys):
    """Every sampled =opt= value is HiGHS's optimum of the model; a model HiGHS does not finish
    within raw_highs.TIME_LIMIT (60 s; the Nara episode: the library's run proved it, HiGHS
    alone on the MPS file takes 13-20 s) must still have the value between HiGHS's incumbent
    and its dual bound. (Each file is solved once per test run, under the same limit:
    test_references_export_all re-solves the same Nara episode.)"""
    out, done, _ = exported
    tap = None
    proven = 0
    for kw, name, value in _solu(out / "references.solu"):
        if kw != "=opt=":
            continue
        got = raw_highs.solve(out / f"{name}.mps.gz", raw_highs.TIME_LIMIT,
                              raw_highs.cache_dir(tmp_path_factory))
        if got["status"] == "kOptimal":
            assert math.isclose(got["objective"], value, rel_tol=1e-6, abs_tol=1e-6), (
                name, got, value)
            proven += 1
        else:  # stopped by the time limit (on a loaded machine, maybe before an incumbent)
            assert got["status"] in STOPPED, (name, got)
            sign = got["sign"]
            bound, incumbent = sign * got["dual_bound"], sign * got["objective"]
            assert bound - 1e-6 <= sign * value, (name, got, value)
            if got["primal_solution_status"] == 2:  # HiGHS holds a feasible incumbent
                assert sign * value <= incumbent + 1e-6, (name, got, value)
        if name.startswith("tap/"):
            tap = (name, got)
    assert proven >= 5
    # the README's check: HiGHS's solution file back through dmlopt validate
    name, got = tap
    sol = got["sol"]
    entry = next(e for e in done if e.name == name)
    rec = next(r for r in references.records("tap") if r.id == name.split("/")[1])
    code = cli.main(["validate", f"tap/{rec.id}", "--solution", str(sol),
                     "--formulation", entry.formulation])
    printed = capsys.readouterr().out
    assert code == 0 and ["objective", f"{rec.objective:.6g}"] in [
        ln.split() for ln in printed.splitlines()]


@pytest.mark.parametrize("chunk", [1 << 20, 7])
def test_a_quadratic_model_is_refused_and_leaves_no_file(tmp_path, monkeypatch, chunk):
    """The export's check for products (the MPS sections Pyomo writes for them, found as the
    file is compressed, also when they straddle two chunks) gives write_model's own count of
    quadratic terms: TAP's MINLP (``paper``) is refused with no file left, its linear ``rlt``
    is written."""
    rec = next(r for r in references.records("tap") if r.id == "fig11-dcell-ps-v8-s0")
    limits = contract.limits_from(references.EXPORT_LIMIT)
    monkeypatch.setattr(references, "COPY_CHUNK", chunk)
    for formulation, quadratic in (("paper", True), ("rlt", False)):
        counts = dmlopt.api.write_model(dmlopt.build(rec.load_instance(), formulation),
                                        tmp_path / f"{formulation}.mps")
        assert bool(counts["quadratic"]) is quadratic
        monkeypatch.setattr(references, "_choose", lambda *a, f=formulation: ([f], ""))
        target = tmp_path / formulation / "set" / "tap" / f"{rec.id}.mps.gz"
        if quadratic:
            with pytest.raises(InstanceError, match="wrote a quadratic model"):
                references._export_one(rec, f"tap/{rec.id}", target, limits)
            assert list(target.parent.iterdir()) == []
        else:
            out = references._export_one(rec, f"tap/{rec.id}", target, limits)
            assert out.formulation == "rlt" and out.checked
            with gzip.open(target, "rb") as fh:
                assert fh.read() == (tmp_path / "rlt.mps").read_bytes()


def test_cli_skips_and_refuses(tmp_path, capsys):
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("")
    code = cli.main(["references", "--export", str(full), "inc_oxc"])
    err = capsys.readouterr().err
    assert code == 2 and "must not exist, be an empty directory or hold an unfinished" in err
    out = tmp_path / "small"
    code = cli.main(["references", "--export", str(out), "inc_oxc", "--size-limit", "100,1000"])
    captured = capsys.readouterr()
    assert code == 0
    skipped = [ln for ln in captured.err.splitlines() if "skipped inc_oxc/" in ln]
    solu = _solu(out / "references.solu")
    n = len(references.records("inc_oxc"))
    assert len(skipped) + len(solu) == n and skipped and solu
    assert all("too large" in ln for ln in skipped)
    assert f"{len(skipped)} records skipped" in captured.out
    assert "## Not exported" in (out / "README.md").read_text()
    code = cli.main(["references", "--size-limit", "100,1000"])
    assert code == 2


def test_unknown_problem(tmp_path):
    with pytest.raises(dmlopt.DmloptError, match="no library"):
        references.export_set(tmp_path / "x", ["nosuch"])


def test_no_linear_formulation_is_skipped(tmp_path, monkeypatch):
    """A problem whose formulations are all nonlinear (as TAP's paper model alone would be) is
    skipped with its reason, in the returned lines and the README."""
    monkeypatch.setattr(references, "_linear", lambda problem, f: False)
    lines = []
    done, skipped = references.export_set(tmp_path / "s", ["inc_oxc"], log=lines.append)
    assert done == [] and len(skipped) == len(references.records("inc_oxc")) == len(lines)
    assert all("has no linear formulation" in s for s in skipped)
    assert (tmp_path / "s" / "references.solu").read_text() == ""
    assert "## Not exported" in (tmp_path / "s" / "README.md").read_text()

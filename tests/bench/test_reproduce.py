"""``dmlopt reproduce``: suites run once into resumable stores, tables rendered from them, docs
blocks replaced and nothing else touched, bad input refused before anything runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dmlopt.benchmarks import papers, reproduce, store
from dmlopt.benchmarks.tables import Table, rows
from dmlopt.errors import DmloptError

CALLS: list[int] = []


def _count_runs(runs: pd.DataFrame, outdir: Path) -> str:
    """A renderer computing its value by hand: the number of exact runs proven optimal."""
    CALLS.append(len(runs))
    optimal = sum(1 for _, r in runs.iterrows() if r["kind"] == "exact" and r["status"] ==
                  "optimal")
    (outdir / "fig.png").write_bytes(b"\x89PNG")  # a figure written under outdir
    return f"| runs | optimal |\n|---|---|\n| {len(runs)} | {optimal} |"


TOY = Table(paper="tabgp", name="toy", title="Toy table: the example suite", suites=("example",),
            quick=("example",), render=_count_runs, minutes=1.0, quick_minutes=0.5)
OTHER = Table(paper="tabgp", name="other", title="Other", suites=("example",),
              quick=("example",), render=lambda runs, out: "other body", minutes=1.0,
              quick_minutes=0.5)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(reproduce, "tables",
                        lambda paper=None: [TOY, OTHER] if paper in (None, "tabgp") else [])
    CALLS.clear()


@pytest.fixture(scope="module")
def example_stores(tmp_path_factory):
    """The quick example suite's stores, run once for the tests below whose claim is not the
    running (docs blocks, figures, argument order): each copies them into its output folder
    and its run resumes with nothing to do (the running is the claim of the first test)."""
    out = tmp_path_factory.mktemp("shared")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reproduce, "tables", lambda paper=None: [TOY])
        reproduce.run("tabgp", ["toy"], quick=True, workers=1, outdir=out)
    return out / "tabgp-quick" / "stores"


def _with_stores(stores: Path, outdir: Path) -> Path:
    """``outdir`` holding a copy of the shared stores, as a finished run leaves them."""
    shutil.copytree(stores, outdir / "tabgp-quick" / "stores")
    return outdir


def test_run_renders_from_the_store_and_resumes(toy, tmp_path, capsys):
    out = tmp_path / "out"
    written = reproduce.run("tabgp", ["toy"], quick=True, workers=1, outdir=out)
    here = out / "tabgp-quick"
    assert here / "toy.md" in written and (here / "README.md") in written
    recs = store.read(here / "stores" / "example.sqlite")
    assert len(recs) == 16  # the example suite: 4 instances x (1 exact + 3 random seeds)
    optimal = sum(1 for r in recs if r["kind"] == "exact" and r["status"] == "optimal")
    text = (here / "toy.md").read_text()
    assert f"| 16 | {optimal} |" in text
    assert "dmlopt reproduce tabgp toy --quick" in text and "quick run" in text
    assert (here / "fig.png").exists()
    assert sorted(p.name for p in out.iterdir()) == ["tabgp-quick"]  # nothing else written
    capsys.readouterr()
    reproduce.run("tabgp", ["toy"], quick=True, workers=1, outdir=out)  # resumes: nothing new
    assert "16 already in" in capsys.readouterr().err
    assert len(store.read(here / "stores" / "example.sqlite")) == 16


def test_docs_blocks_replaced_and_the_rest_kept(toy, tmp_path, example_stores):
    page = tmp_path / "page.md"
    before = ("# Page\n\nintro\n\n<!-- reproduce: tabgp/toy -->\nold\n<!-- /reproduce -->\n\n"
              "middle\n\n<!-- reproduce: tabgp/other -->\nkept\n<!-- /reproduce -->\nend\n")
    page.write_text(before)
    reproduce.run("tabgp", ["toy"], quick=True, workers=1,
                  outdir=_with_stores(example_stores, tmp_path / "o"), docs=page)
    after = page.read_text()
    assert "old" not in after and "| 16 |" in after
    assert "<!-- reproduce: tabgp/other -->\nkept\n<!-- /reproduce -->\nend\n" in after
    assert after.startswith("# Page\n\nintro\n\n<!-- reproduce: tabgp/toy -->\n### Toy table")


def test_bad_input_refused_before_anything_runs(toy, tmp_path):
    with pytest.raises(DmloptError, match="no table 'nosuch'.*toy, other"):
        reproduce.run("tabgp", ["nosuch"], outdir=tmp_path / "a")
    with pytest.raises(DmloptError, match="not one of"):
        reproduce.run("nosuch", None, outdir=tmp_path / "a")
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(DmloptError, match="not a directory"):
        reproduce.run("tabgp", ["toy"], outdir=afile)
    with pytest.raises(DmloptError, match="--docs"):
        reproduce.run("tabgp", ["toy"], outdir=tmp_path / "a", docs=tmp_path / "missing.md")
    with pytest.raises(DmloptError, match="--workers"):
        reproduce.run("tabgp", ["toy"], outdir=tmp_path / "a", workers=0)
    # a page without the table's block (the whole run would be spent for nothing), or one that
    # is not text
    with pytest.raises(DmloptError, match="--docs: .* has no block <!-- reproduce: tabgp/toy"):
        reproduce.run("tabgp", ["toy"], outdir=tmp_path / "a", docs=afile)
    binary = tmp_path / "page.md"
    binary.write_bytes(b"\xff\xfe<!-- reproduce")
    with pytest.raises(DmloptError, match="--docs: .* cannot be read as a text page"):
        reproduce.run("tabgp", ["toy"], outdir=tmp_path / "a", docs=binary)
    assert not (tmp_path / "a").exists() and CALLS == []


def test_listing_counts_runs_without_running(toy):
    text = reproduce.listing()
    assert "tabgp: paper 004" in text
    assert "toy" in text and "16 runs" in text and "Toy table" in text


def test_rows_drops_a_run_stored_twice():
    rec = {"instance_hash": "h", "method": "m", "options": "{}", "seed": 0, "objective": 1.0}
    df = rows([rec, {**rec, "objective": 2.0}, {**rec, "seed": 1}])
    assert len(df) == 2 and sorted(df["objective"].tolist()) == [1.0, 2.0]


def test_every_declared_table_is_well_formed():
    """Every shipped table names shipped suites (the growth tables, which measure in their own
    process, none), a known paper and a unique command-line name."""
    from dmlopt.benchmarks import suite

    shipped = suite.shipped()
    seen = set()
    for t in reproduce.tables():
        assert t.paper in papers.names()
        assert (t.paper, t.name) not in seen
        seen.add((t.paper, t.name))
        assert (t.suites and t.quick) or (t.name == "growth" and not t.suites + t.quick), t.name
        assert set(t.suites + t.quick) <= set(shipped), t.name
        assert t.quick_minutes <= 10 and t.minutes > 0


def test_cli_exit_codes(tmp_path):
    exe = [sys.executable, "-m", "dmlopt", "reproduce"]
    for argv in (["nosuch"], [], ["tabgp", "--workers", "x"], ["--list", "tap", "t1"]):
        proc = subprocess.run(exe + argv, cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 2 and proc.stdout == "", argv
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_docs_figures_are_copied_beside_the_page(monkeypatch, tmp_path, example_stores):
    """A figure a table links to is copied into figures/ beside the page and the link follows;
    a page without the table's block gets no figure."""
    def with_png(runs, outdir):
        (outdir / "plot.png").write_bytes(b"\x89PNG fake")
        return "![plot](plot.png)"

    fig = Table(paper="tabgp", name="fig", title="Fig", suites=("example",), quick=("example",),
                render=with_png, minutes=1.0, quick_minutes=0.5)
    monkeypatch.setattr(reproduce, "tables", lambda paper=None: [fig])
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "p.md"
    page.write_text("<!-- reproduce: tabgp/fig -->\nx\n<!-- /reproduce -->\n")
    other = tmp_path / "other.md"
    other.write_text("no blocks\n")
    reproduce.run("tabgp", ["fig"], quick=True, workers=1,
                  outdir=_with_stores(example_stores, tmp_path / "o"), docs=page)
    assert (docs / "figures" / "plot.png").read_bytes() == b"\x89PNG fake"
    assert "![plot](figures/plot.png)" in page.read_text()
    with pytest.raises(DmloptError, match="has no block <!-- reproduce: tabgp/fig -->"):
        reproduce.run("tabgp", ["fig"], quick=True, workers=1, outdir=tmp_path / "o2",
                      docs=other)
    assert not (tmp_path / "figures").exists() and other.read_text() == "no blocks\n"
    assert not (tmp_path / "o2").exists()   # refused before anything ran


def test_the_load_of_the_machine_is_recorded_beside_the_store(tmp_path):
    from dmlopt.benchmarks import reproduce as rp

    path = tmp_path / "s.load.json"
    first = rp._LoadSampler()
    first.samples = [7.84, 9.0]
    first.save(path)
    second = rp._LoadSampler()  # a resumed command on a quieter machine widens the range
    second.samples = [2.5]
    second.save(path)
    cores = os.cpu_count()
    assert rp._machine([path]) == (f"machine: {cores} cores, load average 2.5-9.0 while the "
                                   "runs ran")
    assert rp._machine([tmp_path / "missing.json"]) == ""
    (tmp_path / "bad.load.json").write_text("{not json")
    assert rp._machine([tmp_path / "bad.load.json"]) == ""
    empty = rp._LoadSampler()
    empty.save(tmp_path / "none.json")  # nothing sampled: nothing written
    assert not (tmp_path / "none.json").exists()


def test_tables_named_after_the_options(toy, tmp_path, capsys, example_stores):
    """`dmlopt reproduce tabgp --docs PAGE toy` (a table after an option) ran nothing:
    argparse fills TABLE ... before the options and called the table an unrecognized
    argument. It is a table; a word starting with '-' after the options is still refused."""
    from dmlopt.cli import main

    page = tmp_path / "page.md"
    page.write_text("<!-- reproduce: tabgp/toy -->\nold\n<!-- /reproduce -->\n")
    out = _with_stores(example_stores, tmp_path / "o")
    assert main(["reproduce", "tabgp", "--quick", "--workers", "1", "-o", str(out),
                 "--docs", str(page), "toy"]) == 0
    assert "old" not in page.read_text() and "| 16 |" in page.read_text()
    capsys.readouterr()
    assert main(["reproduce", "tabgp", "--docs", str(page), "toy", "--bogus"]) == 2
    assert "unrecognized arguments: toy --bogus" in capsys.readouterr().err

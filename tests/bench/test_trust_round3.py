"""Issue 51 (items 1, 5 and small edges) on the harness side: report names from data stay in
``-o``, figures replace a link instead of following it, the report flags rows that cannot be
true, store rows are validated on read, suite limits and error paths."""

from __future__ import annotations

import sqlite3

import pytest

from dmlopt.benchmarks import report, suite
from dmlopt.benchmarks.store import Store
from dmlopt.cli import main
from dmlopt.errors import InstanceError

from .test_report import row


def _store(path, rows):
    with Store(path) as s:
        for r in rows:
            s.put(r)
    return path


def test_report_png_names_from_the_store_stay_in_the_output_folder(tmp_path):
    """A row whose problem is ``x/../../../NAME`` wrote NAME.png three folders above -o."""
    out = tmp_path / "a" / "b" / "c" / "out"
    evil = "x/../../../../NAME"
    store = _store(tmp_path / "s.sqlite", [
        row(evil, "A", "highs:paper", "optimal", 10.0, 2.0, bound=10.0),
        row(evil, "A", "h1", "feasible", 12.0, 0.1),
        row(evil, "A", "h2", "feasible", 13.0, 0.1)])
    files = report.write(store, out)
    before = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert all(out in p.parents for p in files)
    outside = [p for p in before if out not in p.parents and p.name != "s.sqlite"]
    assert outside == [], outside
    assert any(p.suffix == ".png" for p in files)
    assert not list(tmp_path.rglob("NAME*"))


def test_a_link_at_a_figure_path_is_replaced_not_followed(tmp_path):
    """``savefig`` on the final path wrote through a link to a file outside -o."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dmlopt import io

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "fig.png").symlink_to(victim)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    io.save_figure(fig, out / "fig.png", dpi=20)
    plt.close(fig)
    assert victim.read_text() == "keep me"
    assert not (out / "fig.png").is_symlink()
    assert (out / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_infer_tables_write_through_the_writer(tmp_path, monkeypatch):
    """benchmarks/tables/infer.py called savefig on the final path (a link was followed)."""
    from dmlopt.benchmarks import store as store_mod
    from dmlopt.benchmarks.tables import infer

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    monkeypatch.setattr(store_mod, "read", lambda p: [])
    monkeypatch.setattr(infer, "fig11_summary", lambda rows: __import__("pandas").DataFrame())
    monkeypatch.setattr(infer, "plot_fig11", lambda s, o: [])
    monkeypatch.setattr(infer, "fig11_table", lambda rows: "t")
    infer.main(["--tap", str(tmp_path / "x.sqlite"), "-o", str(out)])
    assert victim.read_text() == "keep me"
    assert not (out / "report.md").is_symlink()


BAD_ROWS = [
    # min problem; A: optimum 10 proven. A bound run claiming 12.5 (beyond the optimum: a
    # certified gap of -25 % was printed), a heuristic relabelled optimal at 3.1 (-69 %)
    row("tabgp", "A", "highs:paper", "optimal", 10.0, 2.0, bound=10.0),
    row("tabgp", "A", "h1", "feasible", 12.0, 0.1),
    row("tabgp", "A", "bound:lp", "bound", None, 0.1, bound=12.5, kind="bound"),
    row("tabgp", "A", "h2", "optimal", 3.1, 0.1),
    # B: no optimum; a bound 30 beyond the feasible objective 20
    row("tabgp", "B|x", "h1", "feasible", 20.0, 0.1),
    row("tabgp", "B|x", "bound:lp", "bound", None, 0.1, bound=30.0, kind="bound"),
    row("tabgp", "B|x", "bound:ok", "bound", None, 0.1, bound=16.0, kind="bound"),
    # C: an exact "optimal" whose own bound disagrees
    row("tabgp", "C", "scip:paper", "optimal", 10.0, 1.0, bound=5.0),
]


def test_the_report_flags_rows_that_cannot_be_true(tmp_path):
    store = _store(tmp_path / "s.sqlite", BAD_ROWS)
    df = report.frame(Store(store).rows())
    why = {(r.instance, r.method): r.suspect for r in df.itertuples()}
    assert "beyond" in why[("A", "bound:lp")]
    assert "without a proof" in why[("A", "h2")]
    assert "beyond" in why[("B|x", "bound:lp")]
    assert "disagrees" in why[("C", "scip:paper")]
    assert why[("A", "h1")] == why[("A", "highs:paper")] == why[("B|x", "bound:ok")] == ""
    inst = report.instances(df).set_index("instance")
    assert inst.loc["B|x", "bound"] == 16.0  # the impossible bound is not the reference
    summ = report.summary(df)
    h2 = summ[summ["method"] == "h2"]
    assert h2.empty or h2["mean_gap_pct"].isna().all()  # left out of the means
    files = report.write(store, tmp_path / "out")
    md = files[0].read_text()
    assert "Rows that cannot be true" in md
    for line in md.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.split(" | ")]
            assert not any(c.startswith("-") and c[1:2].isdigit() for c in cells), line
            # the instance name's | is escaped: every row has the header's column count
    tables = [b for b in md.split("\n\n") if b.startswith("|")]
    for t in tables:
        counts = {ln.replace("\\|", "").count("|") for ln in t.splitlines()}
        assert len(counts) == 1, t
    assert "`B\\|x`" in md


def test_the_gap_never_prints_negative():
    assert report._pct(-25.0) == "-" and report._pct(-1e-9) == "0.00"
    assert report._pct(12.5) == "12.50"


def test_a_bad_store_row_is_a_clear_error(tmp_path, capsys):
    store = _store(tmp_path / "s.sqlite", [row("tabgp", "A", "h1", "feasible", 12.0, 0.1)])
    conn = sqlite3.connect(store)
    conn.execute("UPDATE runs SET seed = 'x'")
    conn.commit()
    conn.close()
    with pytest.raises(InstanceError, match=r"row 1: seed = 'x' is not an integer") as exc:
        Store(store).rows()
    assert str(store) in str(exc.value)
    with pytest.raises(InstanceError, match="seed"):
        report.write(store, tmp_path / "out")
    assert main(["report", str(store), "-o", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err
    assert "seed" in err and err.count("\n") == 1


@pytest.mark.parametrize("bad", ["x", "", "1.5", 2.5])
def test_resuming_a_store_with_a_bad_seed_is_a_clear_error(tmp_path, bad):
    """`bench` reads the stored keys to resume: a seed that is not an integer (text, empty, a
    float's text) names the store and the row (it was a ValueError from int(''))."""
    store = _store(tmp_path / "s.sqlite", [row("tabgp", "A", "h1", "feasible", 12.0, 0.1)])
    conn = sqlite3.connect(store)
    conn.execute("UPDATE runs SET seed = ?", (bad,))
    conn.commit()
    conn.close()
    with pytest.raises(InstanceError, match=r"row 1: seed = .* is not an integer") as exc:
        Store(store).keys()
    assert str(store) in str(exc.value)


SUITE = """name = "t"
[[groups]]
problem = "tabgp"
instances = [ {{ generator = "er", params = {{ n = 12, p = 0.5, tau = 3 }}, seeds = [0] }} ]
methods = [ {method} ]
"""


@pytest.mark.parametrize("method", [
    '{ bound = "lp", options = { threads = "x" } }',
    '{ heuristic = "random", options = { seed_x = 1 } }',
    '{ heuristic = "random", options = { time_limit = "x" } }',
])
def test_suite_option_errors_keep_their_path(tmp_path, method):
    path = tmp_path / "t.toml"
    path.write_text(SUITE.format(method=method))
    with pytest.raises(suite.SuiteError, match=r"groups\[0\]\.methods\[0\]\.options\."):
        suite.load(path)


@pytest.mark.parametrize("where", ["top", "method"])
def test_suite_grace_is_bounded(tmp_path, where):
    method = '{ solver = "highs", grace = 1e308 }' if where == "method" else '{ solver = "highs" }'
    text = SUITE.format(method=method)
    if where == "top":
        text = "grace = 1e308\n" + text
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(suite.SuiteError, match="grace: 1e\\+308 must be at most 3600"):
        suite.load(path)
    path.write_text(text.replace("1e308", "60"))
    assert all(t.grace == 60 for t in suite.load(path).tasks)

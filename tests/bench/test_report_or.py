"""The report as OR readers know it (issue 54, item 5): shifted geometric mean, runs counted
apart, n beside every mean, the library's best known value as the reference, the trace of an
exact run and its primal integral, a schema-1 store still read, and the HTML page opened in
headless Chromium."""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import textwrap
from types import SimpleNamespace

import pytest

from dmlopt.benchmarks import report, trace
from dmlopt.benchmarks import store as store_mod
from dmlopt.benchmarks.store import Store
from dmlopt.cli import main

from .test_report import ROWS, row


@pytest.fixture
def hand(tmp_path):
    path = tmp_path / "hand.sqlite"
    with Store(path) as s:
        for r in ROWS:
            s.put(r)
    return path


def test_shifted_geometric_mean_by_hand():
    import pandas as pd

    # exp(mean(log(t + 10))) - 10 for 1 s and 100 s: sqrt(11 * 110) - 10
    assert report.shifted_geomean(pd.Series([1.0, 100.0])) == pytest.approx(
        math.sqrt(11 * 110) - 10)
    assert report.shifted_geomean(pd.Series([5.0])) == pytest.approx(5.0)
    assert math.isnan(report.shifted_geomean(pd.Series([math.nan])))


def test_runs_counted_apart_and_every_mean_with_its_n(hand):
    df = report.frame(Store(hand).rows(), senses={"maxp": "max"})
    summ = {(r.problem, r.method): r for r in report.summary(df).itertuples()}
    scip = summ[("tabgp", "scip:paper")]  # A, C at the time limit; B optimal; D optimal 8
    assert (scip.runs, scip.optimal, scip.time_limit, scip.failed) == (4, 2, 2, 0)
    highs = summ[("tabgp", "highs:paper")]
    assert (highs.optimal, highs.time_limit) == (3, 1)
    assert (summ[("tabgp", "bound:lp")].bound, summ[("tabgp", "bound:bad")].failed) == (1, 1)
    h1 = summ[("tabgp", "h1")]
    assert (h1.n_gap, h1.n_cert_gap, h1.n_seconds) == (3, 5, 6)
    h3 = summ[("tabgp", "h3")]  # killed: no time in the means
    assert h3.failed == 1 and h3.n_seconds == 0 and math.isnan(h3.sgm_seconds)


def test_library_best_known_is_the_reference_where_nothing_is_proven(tmp_path, monkeypatch):
    """nug12-like: no run proves an optimum, the library holds 578 (best known, bound 512)."""
    rows = [row("tap", "N", "highs:paper", "time_limit", 600.0, 60.0, bound=500.0),
            row("tap", "N", "t", "feasible", 590.0, 1.0),
            row("tap", "P", "t", "feasible", 570.0, 1.0)]  # beats the library's 580
    lib = {"h-N": SimpleNamespace(status="best-known", objective=578.0, bound=512.0),
           "h-P": SimpleNamespace(status="best-known", objective=580.0, bound=None)}
    monkeypatch.setattr(report, "_library", lambda h: lib.get(h))
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        for r in rows:
            s.put(r)
    df = report.frame(Store(path).rows(), senses={"tap": "min"})
    by = {(r.instance, r.method): r for r in df.itertuples()}
    assert by[("N", "t")].ref_kind == "library-best" and by[("N", "t")].ref == 578
    assert by[("N", "t")].gap_pct == pytest.approx(100 * 12 / 578)
    assert by[("N", "t")].cert_gap_pct == pytest.approx(100 * (590 - 512) / 512)
    assert by[("P", "t")].ref_kind == "best-known" and by[("P", "t")].gap_pct == 0.0
    report.write(path, tmp_path / "r", senses={"tap": "min"})
    md = (tmp_path / "r" / "report.md").read_text()
    assert "| `N` | 578 (library best known) | >= 512 | t | 1 | feasible | 590 | 2.08 |" in md
    assert "| `P` | 570 (best known, this store) |" in md


def test_primal_integral_by_hand():
    pts = [[0.0, None, None], [2.0, 12.0, 5.0], [5.0, 10.0, 10.0]]
    # gap 1 on [0, 2], |10 - 12| / 12 on [2, 5], 0 on [5, 10]; divided by 10
    assert trace.primal_integral(pts, 10.0, 10.0) == pytest.approx((2 + 3 / 6) / 10)
    assert trace.primal_integral([], 10.0, 4.0) == 1.0  # never an incumbent
    assert trace.primal_gap(-1.0, 1.0) == 1.0 and trace.primal_gap(0.0, 0.0) == 0.0
    rows = [dict(row("tabgp", "A", "highs:paper", "optimal", 10.0, 5.0, bound=10.0),
                 time_limit=10.0, trace=json.dumps(pts)),
            row("tabgp", "A", "h", "feasible", 11.0, 0.1)]
    df = report.frame(rows)
    got = dict(zip(df["method"], df["primal_integral"], strict=True))
    assert got["highs:paper"] == pytest.approx(0.25) and math.isnan(got["h"])


def test_recording_stamps_progress_lines_and_passes_the_rest(capfd):
    import time

    with trace.recording(time.perf_counter()) as pts:
        os.write(2, b"dmlopt: highs 0 s: incumbent -, bound 3, gap - \n")
        os.write(2, b"something else the solver said\n")
        os.write(2, b"dmlopt: highs 0 s: incumbent 12, bound 5, gap 58 %\n")
        os.write(2, b"dmlopt: scip 1 s: incumbent 12, bound 5, gap 58 %\n")  # no change
    assert [p[1:] for p in pts] == [[None, 3.0], [12.0, 5.0]]
    assert pts[0][0] <= pts[1][0]
    assert "something else the solver said" in capfd.readouterr().err
    assert trace.finish(pts, 0.5, 10.0, 10.0)[-1] == [0.5, 10.0, 10.0]


def test_a_schema_1_store_is_read_and_gains_the_trace_column(tmp_path):
    path = tmp_path / "old.sqlite"
    old = [(c, t) for c, t in store_mod.COLUMNS if c != "trace"]
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, "
                 + ", ".join(f"{c} {t}" for c, t in old)
                 + f", UNIQUE ({', '.join(store_mod.KEY)}))")  # schema 1's table
    r = row("tabgp", "A", "h", "feasible", 3.0, 0.1)
    conn.execute(f"INSERT INTO runs ({', '.join(c for c, _ in old)}) VALUES "
                 f"({', '.join('?' * len(old))})",
                 [store_mod._sql_value(r.get(c)) for c, _ in old])
    conn.commit()
    conn.close()
    got = store_mod.read(path)
    assert len(got) == 1 and got[0]["trace"] == [] and got[0]["objective"] == 3.0
    assert report.write(path, tmp_path / "r")  # a report of an old store
    with Store(path) as s:  # opened to write: the column is added, the old row kept
        s.put(dict(row("tabgp", "A", "x:y", "optimal", 3.0, 1.0, bound=3.0),
                   trace=[[0.5, 3.0, 3.0]]))
    got = {r["method"]: r for r in store_mod.read(path)}
    assert got["x:y"]["trace"] == [[0.5, 3.0, 3.0]] and got["h"]["trace"] == []


def test_an_exact_run_of_the_harness_stores_its_trace(tmp_path):
    suite = tmp_path / "t.toml"
    suite.write_text(textwrap.dedent("""\
        name = "t"
        description = "trace"
        [[groups]]
        problem = "tabgp"
        instances = [
          { generator = "er", params = { n = 12, p = 0.4, tau = 2, l = 2 }, seeds = [0] },
        ]
        methods = [{ solver = "highs", formulation = "paper", time_limit = 20 }]
        """))
    out = tmp_path / "s.sqlite"
    assert main(["bench", str(suite), "-o", str(out), "--workers", "1"]) == 0
    (r,) = store_mod.read(out)
    pts = r["trace"]
    assert pts and pts[-1] == [pytest.approx(r["seconds"]), r["objective"], r["bound"]]
    assert all(a[0] <= b[0] for a, b in zip(pts, pts[1:], strict=False))
    df = report.frame(store_mod.read(out))
    assert 0.0 <= df["primal_integral"].iloc[0] < 1.0


def test_the_html_page_opens_in_headless_chromium(hand, tmp_path):
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser",
                                               "google-chrome") if shutil.which(n)), None)
    if chromium is None:
        pytest.skip("no chromium binary on PATH (apt-get install chromium); the page is "
                    "still written and checked as text below in test_the_html_page_is_whole")
    report.write(hand, tmp_path / "r", senses={"maxp": "max"})
    page = tmp_path / "r" / "report.html"
    md = (tmp_path / "r" / "report.md").read_text()
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True).stdout
    n_tables = sum(1 for a, b in zip(md.splitlines(), md.splitlines()[1:], strict=False)
                   if a.startswith("|") and b.startswith("|---"))
    assert dom.count("<table") == n_tables > 0
    imgs = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,([^"]+)"', dom)
    assert sorted(a for a, _ in imgs) == sorted(re.findall(r"^!\[([^\]]*)\]", md, re.M))
    assert all(base64.b64decode(d)[:8] == b"\x89PNG\r\n\x1a\n" for _, d in imgs)
    assert "tabgp (minimise)" in dom and "shifted geo-mean" in dom


def test_the_html_page_is_whole(hand, tmp_path):
    report.write(hand, tmp_path / "r", senses={"maxp": "max"})
    page = (tmp_path / "r" / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing fetched from anywhere
    assert "<code>A</code>" in page and "&lt;" not in page.split("<body>")[0]


def test_each_worker_warms_a_heuristic_up_once_untimed(tmp_path):
    suite = tmp_path / "w.toml"
    suite.write_text(textwrap.dedent("""\
        name = "w"
        description = "warm-up"
        [[groups]]
        problem = "tabgp"
        instances = [
          { generator = "er", params = { n = 10, p = 0.4, tau = 2, l = 2 }, seeds = [0, 1] },
        ]
        methods = [{ heuristic = "dense-refine", seeds = [0, 1] }, { heuristic = "random" }]
        """))
    out = tmp_path / "w.sqlite"
    assert main(["bench", str(suite), "-o", str(out), "--workers", "1"]) == 0
    rows = store_mod.read(out)
    warm = [r for r in rows if r["warmup_seconds"] is not None]
    # one worker: one warm-up per heuristic, recorded on its first timed run
    assert sorted(r["method"] for r in warm) == ["dense-refine", "random"]
    assert all(r["warmup_seconds"] > 0 for r in warm)
    report.write(out, tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    assert "### One-time costs (not in any timing above)" in md
    assert re.search(r"\| dense-refine \| 1 \| [0-9.e-]+ \| [0-9.e-]+ \|", md)


def test_legends_sit_outside_the_data_and_bounds_are_drawn_as_bounds(hand, tmp_path,
                                                                     monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dmlopt.benchmarks import report_time

    figs = {}

    def keep(fig, path, **kw):
        fig.canvas.draw()
        figs[path.name] = fig

    monkeypatch.setattr(report, "save_figure", keep)
    monkeypatch.setattr(report_time, "save_figure", keep)
    monkeypatch.setattr(plt, "close", lambda fig=None: None)
    rows = Store(hand).rows() + [dict(row("tabgp", "A", "x:paper", "optimal", 10.0, 3.0,
                                          bound=10.0),
                                      time_limit=10.0, trace=[[1.0, 12.0, 8.0],
                                                              [3.0, 10.0, 10.0]])]
    df = report.frame(rows, senses={"maxp": "max"})
    for fn in (report.plot_gaps, report.plot_runtime, report.plot_profile,
               report_time.plot_gap_over_time):
        assert fn(df, "tabgp", tmp_path / f"{fn.__name__}.png")
    assert len(figs) == 4
    for name, fig in figs.items():
        ax = fig.axes[0]
        legend = ax.get_legend()
        box, frame = legend.get_window_extent(), ax.get_window_extent()
        assert box.x0 >= frame.x1 - 1, name  # right of the axes: it covers no data
    labels = [t.get_text() for t in figs["plot_runtime.png"].axes[0].get_legend().get_texts()]
    assert "bound method (a bound)" in labels and "time limit" in labels
    assert not any("time limit / killed / error" in t for t in labels)
    over = [t.get_text() for t in figs["plot_gap_over_time.png"].axes[0].get_legend().get_texts()]
    # x:paper's trace: gap 1 on [0, 1], 2/12 on [1, 3], 0 after; over 10 s
    assert any(t.startswith("x:paper: primal gap (mean integral 0.133, n=1)") for t in over)

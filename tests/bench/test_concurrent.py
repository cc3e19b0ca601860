"""Two ``dmlopt bench`` processes on one store lose and duplicate nothing: the second is
refused at once with one line while the first holds the store."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

SUITE = """
name = "conc"
description = "two processes"
kill_limit = 30
[[groups]]
problem = "tabgp"
instances = [ { generator = "er", params = { n = 6, p = 0.5, tau = 2, l = 2 }, seeds = [0] } ]
methods = [
  { heuristic = "conc_fakes:nap", seeds = [0, 1, 2, 3, 4, 5, 6, 7, 8] },
]
"""

#: a one-second run that waits instead of computing (the claim is about the store's lock, and
#: the other test workers get the CPU meanwhile)
FAKES = """
import time

from dmlopt.heuristics.tabgp import random_partition


def nap(instance, *, seed=0):
    time.sleep(1.0)
    return random_partition(instance, seed=seed)
"""


def test_a_second_bench_on_the_same_store_is_refused(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    (tmp_path / "conc_fakes.py").write_text(FAKES)
    store = tmp_path / "s.sqlite"
    cmd = [sys.executable, "-m", "dmlopt", "bench", str(suite), "-o", str(store),
           "--workers", "1"]
    env = {**os.environ, "CI": "1", "DMLOPT_BENCH_ALLOW_IMPORT": "1"}
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    for _ in range(600):  # until the first run has started (the store exists and is held)
        if store.exists() and first.poll() is None:
            break
        time.sleep(0.05)
    time.sleep(0.5)
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    out, err = first.communicate(timeout=600)
    # nine 1-second runs: one process holds the store while the other is refused at once
    # (usually the second; the first when the second took the lock between the store's
    # creation and the first's lock)
    codes = sorted([first.returncode, second.returncode])
    assert codes == [0, 2], (first.returncode, err, second.returncode, second.stderr)
    refused = second.stderr if second.returncode == 2 else err
    assert "is in use by another dmlopt bench" in refused
    assert len(refused.strip().splitlines()) == 1
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT instance_hash, method, seed, COUNT(*) FROM runs "
                            "GROUP BY instance_hash, method, seed").fetchall()
    assert len(rows) == 9 and all(r[3] == 1 for r in rows)

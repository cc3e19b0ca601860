"""A fast command line: ``--version``, ``--help``, ``list`` and ``schema`` import none of pandas,
Pyomo, numba, matplotlib, SciPy, the solvers or gymnasium (each costs a second or more)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dmlopt import registry

HEAVY = ("pandas", "pyomo", "numba", "matplotlib", "scipy", "highspy", "pyscipopt",
         "gymnasium")

PROBE = """
import contextlib, io, json, sys
from dmlopt import cli
heavy = {heavy}
for argv in json.loads(sys.argv[1]):
    before = {{m for m in heavy if m in sys.modules}}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        cli.main(argv)
    after = {{m for m in heavy if m in sys.modules}}
    print("PROBE", json.dumps([argv, sorted(after - before)]))
"""

LIGHT = [["--version"], ["--help"], ["list"], ["list", "--data"], ["solve", "--help"],
         ["bound", "--help"], ["list", "--json"], ["list", "tabgp", "--json"],
         ["list", "--data", "--json"]]
PER_PROBLEM = [[cmd, problem] for problem in registry.names() for cmd in ("list", "schema")]


@pytest.fixture(scope="module")
def heavy_after() -> dict[str, list[str]]:
    """Every command of this file in one Python process, in turn: the heavy modules each one
    imported. Modules only accumulate in ``sys.modules``, so while none is loaded before a
    command, what is loaded after it is exactly what it imported, as in a process of its own
    (a command importing one shows it; the commands after it are then checked against what
    they add, and that one's test fails). One start-up, not one per command."""
    out = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY),
                          json.dumps(LIGHT + PER_PROBLEM)],
                         capture_output=True, text=True, check=True)
    rows = [json.loads(line.removeprefix("PROBE ")) for line in out.stdout.splitlines()
            if line.startswith("PROBE ")]
    assert [r[0] for r in rows] == LIGHT + PER_PROBLEM
    return {json.dumps(argv): added for argv, added in rows}


@pytest.mark.parametrize("argv", LIGHT)
def test_light_commands(argv, heavy_after):
    assert heavy_after[json.dumps(argv)] == []


@pytest.mark.parametrize("problem", registry.names())
def test_list_and_schema_of_every_problem(problem, heavy_after):
    assert heavy_after[json.dumps(["list", problem])] == []
    assert heavy_after[json.dumps(["schema", problem])] == []

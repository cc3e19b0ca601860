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
argv = json.loads(sys.argv[1])
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    code = cli.main(argv)
print(json.dumps(sorted(m for m in {heavy} if m in sys.modules)))
"""


def _heavy_after(argv: list[str]) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), json.dumps(argv)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["list"], ["list", "--data"],
                                  ["solve", "--help"], ["bound", "--help"]])
def test_light_commands(argv):
    assert _heavy_after(argv) == []


@pytest.mark.parametrize("problem", registry.names())
def test_list_and_schema_of_every_problem(problem):
    assert _heavy_after(["list", problem]) == []
    assert _heavy_after(["schema", problem]) == []

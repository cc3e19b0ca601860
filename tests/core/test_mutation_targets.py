"""The mutation runner (tests/mutation/run.py) has a target for every registered problem: its
evaluator found through the registry, its tests declared by the problem's test folder
(``MUTATION`` in ``tests/<folder>/__init__.py``), each test file present."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from dmlopt import registry

ROOT = Path(__file__).resolve().parents[2]


def _runner():
    spec = importlib.util.spec_from_file_location("mutation_run", ROOT / "tests/mutation/run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("problem", registry.names())
def test_every_problem_has_a_mutation_target(problem):
    """A problem added without declared evaluator tests, a target pointing at another file than
    the evaluator's, or a declared test file that does not exist fails here."""
    path, function, tests = _runner().targets()[problem]
    source = (ROOT / path).read_text()
    defined = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
    assert function in defined
    assert registry.get(problem).model.evaluate.__code__.co_filename == str(ROOT / path)
    files = [t for t in tests.split() if t.endswith(".py")]
    assert files and all((ROOT / f).is_file() for f in files), tests

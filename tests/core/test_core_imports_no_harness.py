"""The core (the ``dmlopt/`` directory) imports nothing of the benchmark harness: its commands
(``bench``, ``report``, ``reproduce``) reach the command line through the ``dmlopt.commands``
entry points, as a problem's commands do. Checked statically, on every module's syntax tree."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from dmlopt import registry

ROOT = Path(__file__).resolve().parents[2]
HARNESS = "dmlopt.benchmarks"


def _harness_imports(path: Path, root: Path = ROOT) -> list[str]:
    """The imports of the harness in ``path``: ``import``/``from ... import`` statements
    (absolute, or relative from inside ``dmlopt``) and ``importlib.import_module("...")``
    calls with a literal name, as ``line: text``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and ast.unparse(node.func).endswith("import_module")):
            names = [node.args[0].value]
        if any(n == HARNESS or n.startswith(HARNESS + ".") for n in names):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_sees_every_spelling(tmp_path):
    # catches a check that misses a spelling (it would pass on any core)
    spellings = ["import dmlopt.benchmarks.cli", "from dmlopt.benchmarks import cli",
                 "from dmlopt import benchmarks", "from .benchmarks import cli",
                 "importlib.import_module('dmlopt.benchmarks.report')"]
    fine = ["import dmlopt.bounds", "from dmlopt import registry", "from . import io",
            "importlib.import_module('dmlopt.models.tap')"]
    (tmp_path / "dmlopt").mkdir()
    probe = tmp_path / "dmlopt" / "probe.py"
    for text, expected in [(s, 1) for s in spellings] + [(s, 0) for s in fine]:
        probe.write_text(text + "\n", encoding="utf-8")
        assert len(_harness_imports(probe, tmp_path)) == expected, text


def test_no_core_module_imports_the_harness():
    modules = sorted((ROOT / "dmlopt").rglob("*.py"))
    assert len(modules) > 15  # the core is there (a wrong ROOT would check nothing)
    found = [hit for path in modules for hit in _harness_imports(path)]
    assert found == [], "the core imports the harness:\n" + "\n".join(found)


@pytest.mark.parametrize("name", ["bench", "report", "reproduce"])
def test_the_harness_commands_are_entry_points(name):
    """They reach the command line as contributed commands (pyproject's entry points)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    group = conf["project"]["entry-points"][registry.COMMANDS_GROUP]
    assert group[name] == "dmlopt.benchmarks.cli"
    assert name in registry.commands() and registry.command(name).name == name

"""The studies (benchmarks/studies/) are research code run from a clone: the wheel holds none of
it, and no installed module imports it (issue 52: what a user calls is the package, how the
authors got there is not).

Independent checks: the file list of a wheel built from this tree by pip, and an AST scan of
every installed source file's imports (the package is editable in the tests, so importing the
modules would not tell an installed import from one the source tree happens to satisfy)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ROOT / "benchmarks" / "studies"
#: the installed source folders (pyproject's package-dir) and the package name each maps to
CONF = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _installed_sources() -> list[Path]:
    files = []
    for rel in CONF["package-dir"].values():
        for path in (ROOT / rel).rglob("*.py"):
            if not path.is_relative_to(STUDIES) and "__pycache__" not in path.parts:
                files.append(path)
    return files


def _imports_studies(path: Path) -> list[str]:
    """The imports in ``path`` that reach the studies (absolute or relative), as written."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = path.parent.relative_to(ROOT).parts
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # resolve against the file's folder in the source tree
                base = pkg[:len(pkg) - node.level + 1] if node.level > 1 else pkg
                mod = ".".join((*base, *(node.module.split(".") if node.module else ())))
                names = [mod] + [f"{mod}.{a.name}" for a in node.names]
            else:
                mod = node.module or ""
                names = [mod] + [f"{mod}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if "studies" in parts or ("analysis" in parts and "benchmarks" in parts):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    for node in ast.walk(tree):  # importlib.import_module("...studies...") and the like
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                "benchmarks.studies" in node.value and node.value.strip().startswith(
                    ("benchmarks.studies", "dmlopt.benchmarks.studies")):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    return found


def test_the_scan_sees_an_import_of_the_studies(tmp_path):
    # catches a scan that finds nothing: each form of import is flagged, a product one is not
    mod = ROOT / "benchmarks" / "_probe_scan.py"
    cases = {"from benchmarks.studies.rar import benders": 1,
             "import benchmarks.studies.nara.diag": 1,
             "from .studies import harness": 1,
             "from . import studies": 1,
             "import importlib\nimportlib.import_module('benchmarks.studies.tap.bounds')": 1,
             "from dmlopt.benchmarks import store": 0,
             "from .tables import rar": 0}
    try:
        for text, n in cases.items():
            mod.write_text(text + "\n")
            assert len(_imports_studies(mod)) >= n and (n or not _imports_studies(mod)), text
    finally:
        mod.unlink(missing_ok=True)


def test_no_installed_module_imports_the_studies():
    files = _installed_sources()
    assert len(files) > 100 and any(f.parts[-2:] == ("heuristics", "rar.py") for f in files)
    hits = [hit for f in files for hit in _imports_studies(f)]
    assert hits == []


def test_no_studies_package_is_listed():
    assert not [p for p in CONF["packages"] if "studies" in p.split(".")]
    # a package-data glob of dmlopt.benchmarks (the benchmarks/ folder) reaching studies/ would
    # ship its files: only suites/*.toml is allowed there
    assert CONF["package-data"]["dmlopt.benchmarks"] == ["suites/*.toml"]


def test_the_wheel_holds_no_study_code(tmp_path):
    """pip builds the wheel of this tree (about 5 s); its file list has the harness and none of
    the studies (by folder, and by the names of the modules that moved there)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path), str(ROOT)], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode and "satisfies the requirement setuptools" in proc.stderr:
        pytest.skip("pip cannot reach an index for the build backend: " +
                    proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("dmlopt-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dmlopt/benchmarks/runner.py" in names and "dmlopt/models/rar/bounds.py" in names
    moved = {"benders.py", "diag.py", "NOTES.md"}
    study = [n for n in names if "studies" in n.split("/") or "analysis" in n.split("/")
             or (n.startswith("dmlopt/models/rar/") and n.endswith("cpsat.py"))
             or n.rsplit("/", 1)[-1] in moved]
    assert study == []

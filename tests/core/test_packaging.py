"""The wheel holds every package: each source directory with an ``__init__.py`` is listed in
pyproject.toml's ``[tool.setuptools] packages`` (an editable install finds unlisted ones, so the
tests alone would not notice a package missing from ``pip install dmlopt``). The studies
(benchmarks/studies/) are packages only to run from a clone and are never installed
(tests/core/test_studies_not_installed.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: source directories with an ``__init__.py`` that are not installed
NOT_INSTALLED = (ROOT / "benchmarks" / "studies",)


def test_every_package_is_listed():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    found = set()
    for name, rel in conf["package-dir"].items():
        base = ROOT / rel
        for init in base.rglob("__init__.py"):
            parts = init.parent.relative_to(base).parts
            if "__pycache__" in parts or any(init.is_relative_to(d) for d in NOT_INSTALLED):
                continue
            found.add(".".join((name, *parts)))
    assert found - listed == set(), "packages missing from pyproject.toml"
    assert listed - found == set(), "listed packages without an __init__.py"

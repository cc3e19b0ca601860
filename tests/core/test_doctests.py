"""Every docstring example (``>>>``) in dmlopt's modules runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

SKIP = ("dmlopt.__main__",)


#: the installed packages (models/, heuristics/ and benchmarks/ are mapped into dmlopt.* by
#: setuptools' package-dir, so each is walked from its own path)
ROOTS = ("dmlopt", "dmlopt.models", "dmlopt.heuristics", "dmlopt.benchmarks")


def _modules() -> list[str]:
    names = []
    for root in ROOTS:
        pkg = importlib.import_module(root)
        names.append(root)
        for info in pkgutil.walk_packages(pkg.__path__, f"{root}."):
            if info.name not in SKIP and info.name not in names:
                names.append(info.name)
    return names


def _with_examples() -> list[str]:
    out = []
    for name in _modules():
        mod = importlib.import_module(name)
        if doctest.DocTestFinder().find(mod) and any(
                t.examples for t in doctest.DocTestFinder().find(mod)):
            out.append(name)
    return out


def test_every_module_imports():
    """walk_packages reached the problem packages (models, heuristics, benchmarks)."""
    names = _modules()
    assert any(n.startswith("dmlopt.models.") for n in names)
    assert any(n.startswith("dmlopt.heuristics.") for n in names)
    assert any(n.startswith("dmlopt.benchmarks.") for n in names)


@pytest.mark.parametrize("name", _with_examples())
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

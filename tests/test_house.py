"""Static checks of the code base's layout, read from the source files (nothing is imported):
public names only in ``__all__``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the source trees installed as dmlopt.* (package-dir in pyproject.toml)
PACKAGES = ("dmlopt", "models", "heuristics", "benchmarks")


def _sources(*roots: str) -> list[Path]:
    return sorted(p for r in roots for p in (ROOT / r).rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _all_names(tree: ast.Module) -> list[str]:
    """The string entries of the module-level ``__all__`` (assigned or extended)."""
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value:
                out += [e.value for e in ast.walk(node.value)
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return out


@pytest.mark.parametrize("path", _sources(*PACKAGES), ids=lambda p: str(p.relative_to(ROOT)))
def test_all_lists_public_names_only(path):
    """A private helper stays importable from the module that defines it, but no module exports
    it: ``from module import *`` and the documentation see public names only."""
    private = [n for n in _all_names(_tree(path)) if n.startswith("_")]
    assert not private, f"{path.relative_to(ROOT)}: private names in __all__: {private}"

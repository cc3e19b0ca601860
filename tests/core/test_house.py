"""Static checks of the code base's layout, read from the source files (nothing is imported):
public names only in ``__all__``, no module under models/ importing a heuristic, no function
over 120 lines; and, importing the registered problems (nothing runs), a numpy docstring on every
registered entry and a doctest in every problem module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def _imports(path: Path, package: str) -> set[str]:
    """The modules ``path`` imports (anywhere in it, lazy imports included), relative imports
    resolved against ``package`` (the dotted package ``path`` belongs to)."""
    out: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            out.add(module)
            out |= {f"{module}.{a.name}" for a in node.names}  # ``from pkg import submodule``
    return out


def _dotted(path: Path) -> tuple[str, str]:
    """(module, package) of a source file under a tree installed as ``dmlopt.<tree>``."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] != "dmlopt":
        parts.insert(0, "dmlopt")
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


@pytest.mark.parametrize("path", _sources("models"), ids=lambda p: str(p.relative_to(ROOT)))
def test_models_do_not_import_heuristics(path):
    """Heuristics build on the models, never the other way round: a model module (and the
    commands a problem declares next to its model) imports no heuristics module."""
    module, package = _dotted(path)
    bad = sorted(m for m in _imports(path, package)
                 if m == "dmlopt.heuristics" or m.startswith("dmlopt.heuristics."))
    assert not bad, f"{module} imports {bad}"


def test_benchmarks_modules_import_no_cycle():
    """The harness's modules form no import cycle (lazy imports inside functions included)."""
    modules = {_dotted(p)[0]: p for p in _sources("benchmarks")}
    graph = {}
    for module, path in modules.items():
        package = _dotted(path)[1]
        graph[module] = {m for m in _imports(path, package) if m in modules and m != module}
    done: set[str] = set()

    def visit(node: str, stack: list[str]) -> None:
        if node in stack:
            cycle = stack[stack.index(node):] + [node]
            raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, [*stack, node])
        done.add(node)

    for module in sorted(graph):
        visit(module, [])


def _hooks_read_by_getattr(path: Path) -> set[str]:
    """The upper-case names read with ``getattr(obj, "NAME", ...)`` in ``path``: the optional
    hooks of a problem module."""
    out = set()
    for node in ast.walk(_tree(path)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                and node.args[1].value.isupper()):
            out.add(node.args[1].value)
    return out


def test_every_hook_the_core_reads_is_documented_in_the_contract():
    """A name the core looks up on a problem's module is part of the contract: the docstring of
    dmlopt/contract.py documents each (``NAME``) and docs/architecture.md's tables name it."""
    contract = ast.get_docstring(_tree(ROOT / "dmlopt" / "contract.py")) or ""
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    hooks = set()
    for name in ("registry.py", "api.py", "exact.py"):
        hooks |= _hooks_read_by_getattr(ROOT / "dmlopt" / name)
    assert hooks >= {"BOUNDS", "DEFAULT_FORMULATION", "SENSE"}
    undocumented = sorted(h for h in hooks if f"``{h}" not in contract)
    assert not undocumented, f"not documented in dmlopt/contract.py: {undocumented}"
    missing = sorted(h for h in hooks if f"| `{h}`" not in architecture
                     and f"`{h}`, " not in architecture)
    assert not missing, f"not in docs/architecture.md's contract table: {missing}"


#: longest function (lines of code: decorators and docstring excluded) outside numba kernels
MAX_FUNCTION_LINES = 120
#: the functions longer than that today ("path::qualified name"): the list only shrinks; a
#: function split below the limit leaves it (the test below fails until its entry is removed)
LONG_FUNCTIONS = frozenset({
})


def _is_kernel(path: Path, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A numba kernel: a function compiled with ``@njit``/``@jit`` (any spelling), or any
    function of a kernel module (``*kernel*.py``, compiled when first loaded)."""
    return "kernel" in path.stem or any("jit" in ast.unparse(d) for d in node.decorator_list)


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function without its docstring (a numpy docstring documents, it is not code
    to split)."""
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0] if node.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        lines -= first.end_lineno - first.lineno + 1
    return lines


def _function_lengths() -> dict[str, int]:
    """``"path::qualified name"`` -> lines, for every function outside numba kernels."""
    out: dict[str, int] = {}

    def visit(path: Path, node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef) and not _is_kernel(path, child):
                    out[f"{path.relative_to(ROOT)}::{name}"] = _code_lines(child)
                visit(path, child, f"{name}.")
            else:
                visit(path, child, prefix)

    for path in _sources(*PACKAGES):
        visit(path, _tree(path), "")
    return out


def test_no_new_long_function():
    """No function outside numba kernels is longer than MAX_FUNCTION_LINES, except the ones of
    LONG_FUNCTIONS; each of those still exists and is still over the limit (split one and
    remove its entry, so the list only shrinks)."""
    lengths = _function_lengths()
    new = sorted(f"{k} ({n} lines)" for k, n in lengths.items()
                 if n > MAX_FUNCTION_LINES and k not in LONG_FUNCTIONS)
    assert not new, f"functions over {MAX_FUNCTION_LINES} lines: {new}; split them"
    stale = sorted(k for k in LONG_FUNCTIONS if lengths.get(k, 0) <= MAX_FUNCTION_LINES)
    assert not stale, f"LONG_FUNCTIONS lists functions gone or within the limit: {stale}"


# --------------------------------------------------------------------------------------------
# numpy docstrings on every registered entry (these import the problems; nothing runs)

#: the sections every registered function's docstring has (numpy style, as networkx's
#: algorithms): what to pass (options with units and defaults), what comes back, where it is from
SECTIONS = ("Parameters", "Returns", "References")
#: the registered entries ("problem/kind/name") whose function has not got them yet (none
#: left): the list only shrinks (the test below fails while a listed entry has them, so remove
#: it then)
UNDOCUMENTED_ENTRIES = frozenset({
})


def _registered_functions() -> dict[str, object]:
    """``"problem/kind/name"`` -> the function the registry calls for that entry."""
    from dmlopt import registry

    out: dict[str, object] = {}
    for p in registry.names():
        prob = registry.get(p)
        for kind, entries, attr in (("heuristic", prob.heuristics, "function"),
                                    ("generator", prob.generator_entries, "function"),
                                    ("formulation", prob.formulation_entries, "build"),
                                    ("bound", prob.bound_entries, "function")):
            for name, entry in entries.items():
                out[f"{p}/{kind}/{name}"] = getattr(entry, attr)
    return out


def _sections(function: object) -> set[str]:
    """The numpy sections (a title underlined with dashes) of a function's docstring; a
    ``functools.partial`` is documented by the function it wraps."""
    import functools
    import inspect
    import re

    while isinstance(function, functools.partial):
        function = function.func
    doc = inspect.getdoc(inspect.unwrap(function)) or ""
    return {s for s in SECTIONS if re.search(rf"^{s}\n-{{{len(s)}}}\s*$", doc, re.M)}


def test_every_registered_entry_has_a_numpy_docstring():
    """Every heuristic, generator, formulation builder and bound the registry serves has a
    docstring with Parameters, Returns and References, except the allow-listed ones; a listed
    entry that has them now, or is no longer registered, must leave the list."""
    functions = _registered_functions()
    missing = {k: sorted(set(SECTIONS) - _sections(f)) for k, f in functions.items()}
    new = sorted(f"{k} (no {', '.join(v)})" for k, v in missing.items()
                 if v and k not in UNDOCUMENTED_ENTRIES)
    assert not new, f"registered entries without a numpy docstring: {new}"
    stale = sorted(k for k in UNDOCUMENTED_ENTRIES if k not in functions or not missing[k])
    assert not stale, f"UNDOCUMENTED_ENTRIES lists entries documented or gone: {stale}"


def test_every_problem_module_has_a_doctest():
    """Each registered problem's model module (its facade) shows a ``>>>`` example, which
    tests/core/test_doctests.py runs."""
    import doctest

    from dmlopt import registry

    without = []
    for p in registry.names():
        module = registry.get(p).model
        tests = doctest.DocTestFinder().find(module)
        if not any(t.examples for t in tests):
            without.append(module.__name__)
    assert not without, f"problem modules without a docstring example: {without}"


#: registered heuristics whose ``time_limit`` option does not follow
#: ``dmlopt.validation.time_limit_field`` (> 0, at most MAX_SECONDS), with the reason
TIME_LIMIT_EXCEPTIONS = {
    "tap/heuristic/rts": "0 is documented as 'no clock' (the run then stops on iterations)",
}


def test_time_limit_options_share_one_rule():
    """Every registered heuristic's ``time_limit`` option takes seconds > 0 and at most
    ``MAX_SECONDS`` (``time_limit_field``): the largest value passes, 0 and a second more are
    refused by the options model itself."""
    import pydantic

    from dmlopt import registry
    from dmlopt.validation import MAX_SECONDS

    seen, wrong = [], []
    for p in registry.names():
        for name, entry in registry.get(p).heuristics.items():
            key = f"{p}/heuristic/{name}"
            if "time_limit" not in entry.Options.model_fields or key in TIME_LIMIT_EXCEPTIONS:
                continue
            seen.append(key)
            entry.Options(time_limit=MAX_SECONDS)
            for bad in (0, MAX_SECONDS + 1):
                try:
                    entry.Options(time_limit=bad)
                except pydantic.ValidationError:
                    continue
                wrong.append(f"{key} accepts time_limit={bad}")
    assert len(seen) >= 3
    assert not wrong, wrong
    stale = sorted(set(TIME_LIMIT_EXCEPTIONS) - {
        f"{p}/heuristic/{n}" for p in registry.names() for n in registry.get(p).heuristics})
    assert not stale, f"TIME_LIMIT_EXCEPTIONS lists heuristics gone: {stale}"

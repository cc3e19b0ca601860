"""One writer (issue 51, item 1): every file the package writes goes through the writers of
:mod:`dmlopt.io` (atomic, in the destination, a link at the final path replaced and never
followed, names from data reduced to one safe component).

The static test reads the sources (nothing is imported) and fails on any direct write outside
``dmlopt/io.py``: ``savefig(``, ``open(..., "w"/"wb"/"a"/"x"/"+")``, ``.to_csv(``,
``.write_text(``, ``.write_bytes(``, ``np.save*``, ``json.dump(``, ``pickle.dump(``,
``shutil.copy*``/``move``, ``os.replace``/``os.rename``, ``tempfile.mkstemp``, a Pyomo
``model.write(``, ``os.open`` for writing. The few sites that are not files the package writes
(pipes, a kernel interface) and those in files other helpers are splitting now are listed below
by file and source line, so a new one fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dmlopt", "models", "heuristics", "benchmarks")
#: research code moving out of the package
EXCLUDED = ("benchmarks/studies/", "benchmarks/analysis/")
WRITER = "dmlopt/io.py"

#: Not files the package writes: a pipe to the parent process, a kernel control file, the
#: SQLite store (sqlite3 writes its own file; the store is made beside its path and linked
#: into place, never replacing a file).
NOT_FILES = {
    ("benchmarks/child.py", 'with open("/proc/self/clear_refs", "w") as fh:'),
    ("benchmarks/child.py", 'proto = os.fdopen(os.dup(1), "w", buffering=1)'),
    ("benchmarks/child.py", 'with os.fdopen(w, "wb") as fh:'),
    ("benchmarks/store.py", 'fd, tmp = tempfile.mkstemp(prefix=".dmlopt-store-", '
                            'suffix=".sqlite", dir=path.parent)'),
    ("benchmarks/store.py", "os.replace(tmp, path)"),
    ("benchmarks/store.py", "os.link(tmp, path)"),
    ("dmlopt/solvers/direct.py", "null = os.open(os.devnull, os.O_WRONLY)"),
    ("dmlopt/solvers/options.py", "null = os.open(os.devnull, os.O_WRONLY)"),
    ("dmlopt/solvers/fork.py", 'with os.fdopen(wfd, "wb") as fh:'),
    ("dmlopt/solvers/fork.py", "pickle.dump((*out, text), fh)"),
    ("dmlopt/solvers/fork.py", 'pickle.dump(("raise", SolverError(f"{what}: {exc}"), text), fh)'),
}

#: Writes into a temporary path the writer hands out (``io.atomic_path``, ``io.scratch_path``):
#: a tool that writes a file by name (Pyomo's model writer) writes there, the writer renames it
#: into the destination or removes it.
INTO_WRITER_PATHS = {
    ("dmlopt/api.py", 'model.write(str(tmp), io_options={"symbolic_solver_labels": True})'),
}

_ATTR_CALLS = {"savefig", "to_csv", "to_parquet", "to_pickle", "to_excel", "write_text",
               "write_bytes"}
_MODULE_CALLS = {
    "np": {"save", "savez", "savez_compressed", "savetxt"},
    "numpy": {"save", "savez", "savez_compressed", "savetxt"},
    "json": {"dump"}, "pickle": {"dump"}, "torch": {"save"},
    "shutil": {"copy", "copy2", "copyfile", "copyfileobj", "copytree", "move"},
    "os": {"replace", "rename", "link", "symlink"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "mkdtemp"},
}


def _mode(call: ast.Call, position: int) -> str | None:
    node = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _writes(call: ast.Call) -> str | None:
    """What kind of direct write ``call`` is, or None."""
    f = call.func
    if isinstance(f, ast.Name) and f.id == "open":
        mode = _mode(call, 1)
        return "open for writing" if mode and re.search(r"[wax+]", mode) else None
    if not isinstance(f, ast.Attribute):
        return None
    if f.attr in _ATTR_CALLS:
        return f".{f.attr}("
    base = f.value.id if isinstance(f.value, ast.Name) else None
    if base in _MODULE_CALLS and f.attr in _MODULE_CALLS[base]:
        return f"{base}.{f.attr}("
    if base == "os" and f.attr == "fdopen":
        mode = _mode(call, 1)
        return "os.fdopen for writing" if mode and re.search(r"[wax+]", mode) else None
    if base == "os" and f.attr == "open":
        text = ast.unparse(call)
        return "os.open for writing" if re.search(r"O_(WRONLY|RDWR|CREAT)", text) else None
    if f.attr == "open" and call.args:  # Path.open("w")
        mode = _mode(call, 0)
        return "Path.open for writing" if mode and re.search(r"[wax+]", mode) else None
    if f.attr == "write" and any(k.arg == "io_options" for k in call.keywords):
        return "Pyomo model.write("
    return None


def _sites() -> list[tuple[str, int, str, str]]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == WRITER or rel.startswith(EXCLUDED):
                continue
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for node in ast.walk(ast.parse(text, filename=rel)):
                if isinstance(node, ast.Call) and (kind := _writes(node)):
                    line = lines[node.lineno - 1].strip()
                    out.append((rel, node.lineno, kind, line))
    return out


def test_every_write_goes_through_the_writer():
    allowed = NOT_FILES | INTO_WRITER_PATHS
    bad = [f"{rel}:{n}: {kind}: {line}" for rel, n, kind, line in _sites()
           if (rel, line) not in allowed]
    assert not bad, "direct writes outside dmlopt/io.py (use its writers):\n" + "\n".join(bad)


def test_the_allow_lists_name_existing_sites_only():
    """An allow-listed site that no longer exists is removed from the list (so the lists
    shrink as sites are converted, and a stale entry cannot hide a new write)."""
    found = {(rel, line) for rel, _, _, line in _sites()}
    stale = (NOT_FILES | INTO_WRITER_PATHS) - found
    assert not stale, f"allow-listed sites no longer in the code: {sorted(stale)}"


@pytest.mark.parametrize("source", [
    'fig.savefig("x.png")', 'open(p, "w")', 'open(p, mode="ab")', 'df.to_csv(p)',
    'Path(p).write_text("x")', 'p.write_bytes(b"")', 'np.savez(fh, a=1)', 'json.dump(d, fh)',
    'shutil.copy2(a, b)', 'os.replace(a, b)', 'p.open("w")', 'os.fdopen(fd, "wb")',
    'os.open(p, os.O_WRONLY | os.O_CREAT)', 'm.write(f, io_options={})',
])
def test_the_scan_sees_each_kind_of_write(source):
    call = ast.parse(source).body[0].value
    assert _writes(call)


@pytest.mark.parametrize("source", [
    'open(p)', 'open(p, "rb")', 'json.dumps(d)', 'os.open(p, os.O_RDONLY)', 'fh.write("x")',
    'df.rename(columns={})',
])
def test_the_scan_lets_reads_pass(source):
    call = ast.parse(source).body[0].value
    assert _writes(call) is None

"""Mutation testing of the evaluators (``make mutation``; not part of ``make test``).

For each target (:data:`OWN`, and every registered problem's evaluator whose tests its test
folder declares in ``MUTATION``, ``tests/<folder>/__init__.py``), cosmic-ray mutates one
function of one file (its operators: comparison, arithmetic, boolean, constant, ...
replacements), one mutant at a time, and runs the target's tests (``pytest -x``, stop at the
first failure); a mutant the tests do not kill "survives". cosmic-ray proposes mutations for the
whole file; the ones outside the target function are marked skipped here before the run.
Results: ``results/mutation/<target>.sqlite`` (``cr-report`` lists the survivors), a summary
line per target on stdout.

cosmic-ray edits the files in place (and restores each after its test run): run it on a clean
work tree and do not interrupt it (``git checkout models benchmarks`` restores an interrupted
run). Usage: ``python tests/mutation/run.py [target ...]`` (default: every target).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "mutation"
CR = str(Path(sys.executable).parent / "cosmic-ray")
PYTEST = f"{sys.executable} -m pytest -x -q -p no:cacheprovider"

#: the harness's own target: name -> (file, function, the tests that must kill its mutants)
OWN: dict[str, tuple[str, str, str]] = {
    "report_gap": ("benchmarks/report.py", "_gap", "tests/bench/test_report.py -k gap"),
}


def declared() -> dict[str, str]:
    """problem -> pytest arguments, from the ``MUTATION`` dicts of the test folders
    (``tests/<folder>/__init__.py``), read without importing them."""
    out: dict[str, str] = {}
    for init in sorted((ROOT / "tests").glob("*/__init__.py")):
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "MUTATION" for t in node.targets):
                out.update(ast.literal_eval(node.value))
    return out


def targets() -> dict[str, tuple[str, str, str]]:
    """:data:`OWN`, then every registered problem's evaluator: its file and function from the
    registry, its tests from :func:`declared` (a problem that declares none has no target)."""
    import inspect

    from dmlopt import registry

    tests = declared()
    out = dict(OWN)
    for problem in registry.names():
        if problem not in tests:
            continue
        fn = registry.get(problem).model.evaluate
        path = Path(inspect.getsourcefile(fn)).resolve().relative_to(ROOT)
        out[problem] = (str(path), fn.__name__, tests[problem])
    return out


def _lines(path: Path, function: str) -> tuple[int, int]:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return node.lineno, node.end_lineno
    raise SystemExit(f"{path}: no function {function}")


def _keep_only(db: Path, first: int, last: int) -> tuple[int, int]:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    kept = skipped = 0
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        skip = []
        for item in work_db.pending_work_items:
            if all(first <= m.start_pos[0] <= last for m in item.mutations):
                kept += 1
            else:
                skip.append(item.job_id)
        for job_id in skip:
            work_db.set_result(job_id, WorkResult(output="outside the target function",
                                                  test_outcome=TestOutcome.SURVIVED,
                                                  worker_outcome=WorkerOutcome.SKIPPED))
            skipped += 1
    return kept, skipped


def _tally(db: Path) -> tuple[int, int, list[str]]:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    killed = survived = 0
    survivors = []
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        for item, result in work_db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.worker_outcome == WorkerOutcome.NORMAL and \
                    result.test_outcome == TestOutcome.SURVIVED:
                survived += 1
                m = item.mutations[0]
                survivors.append(f"line {m.start_pos[0]}: {m.operator_name} #{m.occurrence}")
            else:
                killed += 1
    return killed, survived, survivors


def run(name: str, target: tuple[str, str, str]) -> tuple[int, int]:
    path, function, tests = target
    first, last = _lines(ROOT / path, function)
    OUT.mkdir(parents=True, exist_ok=True)
    config, db = OUT / f"{name}.toml", OUT / f"{name}.sqlite"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{path}"\n'
        "timeout = 300.0\n"
        "excluded-modules = []\n"
        f'test-command = "{PYTEST} {tests.replace(chr(34), chr(39))}"\n'
        '[cosmic-ray.distributor]\nname = "local"\n'
    )
    db.unlink(missing_ok=True)
    subprocess.run([CR, "init", str(config), str(db)], cwd=ROOT, check=True)
    kept, skipped = _keep_only(db, first, last)
    subprocess.run([CR, "exec", str(config), str(db)], cwd=ROOT, check=True)
    killed, survived, survivors = _tally(db)
    rate = 100.0 * survived / max(1, killed + survived)
    print(f"{name}: {path}:{function} (lines {first}-{last}): {killed + survived} mutants, "
          f"{killed} killed, {survived} survived ({rate:.1f} %)", flush=True)
    for s in survivors:
        print(f"  survivor {s}", flush=True)
    return killed, survived


def main(argv: list[str]) -> int:
    found = targets()
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: python tests/mutation/run.py [TARGET ...]\ntargets: {', '.join(found)}")
        return 0
    unknown = [a for a in argv if a not in found]
    if unknown:
        print(f"mutation: unknown target {unknown[0]!r} (targets: {', '.join(found)})",
              file=sys.stderr)
        return 2
    names = argv or list(found)
    total_k = total_s = 0
    for name in names:
        k, s = run(name, found[name])
        total_k, total_s = total_k + k, total_s + s
    n = total_k + total_s
    print(f"total: {n} mutants, {total_s} survived ({100.0 * total_s / max(1, n):.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Benchmark suites: TOML files parsed and validated into a list of :class:`Task`.

A suite names, per problem, the instances (files, globs, generator specs with seeds) and the
methods (solver + formulation + time limit; heuristics with options, seeds and a kill limit)::

    name = "paper-tap"
    description = "one line"
    time_limit = 60          # optional: time limit of every exact and bound method (s, default 300)
    kill_limit = 60          # optional: the harness's limit of every heuristic run (s, default 300)
    grace = 10               # optional: seconds past either limit before the run is killed
    threads = 1              # optional: solver threads (default 1)

    [[groups]]
    problem = "tap"
    instances = [
      { file = "tabgp/*.json" },
      { generator = "er", params = { n = 12, p = 0.5, tau = 3 }, seeds = [0, 1, 2] },
    ]
    methods = [
      { solver = "highs", formulation = "paper", time_limit = 60 },
      { heuristic = "dense-refine", seeds = [0], options = {}, kill_limit = 30 },
      { bound = "lp", time_limit = 60 },
    ]

``paper_groups = true`` appends every registered paper's groups of the shipped ``quick`` suite
(``Paper.quick``, :mod:`dmlopt.benchmarks.papers`; ``groups`` may then be left out): a paper
joins the ``quick`` suite from its own module.

Two limits with two names: ``time_limit`` is the solver's (exact methods) or the bound method's
(bound methods) own limit, passed to it; ``kill_limit`` is the harness's limit of a heuristic
run, which the heuristic is not told (a heuristic's own time limit is one of its ``options``).
The harness kills any run ``grace`` seconds past its limit. ``time_limit``, ``kill_limit``,
``grace`` and ``threads`` may also be given per group and per method (the most specific wins;
``kill_limit`` on heuristic methods only, ``time_limit`` on exact and bound methods only). A
solver method may also give ``mip_gap``, ``warm_start`` (a heuristic name) and
``solver_options`` (a table passed to the solver), and ``default_solve = true`` to run what
``dmlopt.solve`` runs when no formulation is named (the problem's exact method first, e.g.
Nara's ``acceptance-sets``, then the MIP of the default formulation; without it a solver
method runs the named or default formulation's MIP alone). A bound method (``dmlopt bound``, the
problem's ``BOUNDS``) gets ``options`` and its ``time_limit``; the report grades every run
against the best bound of its instance (the certified gap).

Instance files are resolved relative to the suite file first, then among the instances shipped in
``dmlopt.data``; globs are allowed in both places.

A heuristic may be named ``"module:function"`` (a function ``f(instance, *, seed=0, **options)``
in a module importable from the suite file's directory or ``sys.path``) only when the environment
variable ``DMLOPT_BENCH_ALLOW_IMPORT=1`` is set: suites are data, and running code named in a data
file must be asked for explicitly. This is how one benchmarks a heuristic of one's own against
dmlopt's without registering it, and how the harness's tests inject failing methods.

Everything (TOML syntax, keys, problem/formulation/heuristic/generator names and options, files)
is validated before anything runs; the first error raises :class:`SuiteError` with one line
naming the file, the field, the value and the rule. Values are checked as the command line checks
them: ``time_limit``, ``kill_limit`` and ``grace`` finite and > 0, ``mip_gap`` in [0, 1),
``threads`` in [1, 256], seeds integers in [0, 2^63 - 1], solver names from the allow-list (never
a path), and ``solver_options`` against the solver's own option list, options that read or write
files refused. The file is read by the bounded reader (a regular file, a byte and a depth
cap). A suite ``name`` is a plain name (it names the default store ``results/<name>.sqlite``),
and a suite of more than :data:`MAX_RUNS` runs is refused (counted before any instance is
generated) unless the caller raises the cap (``dmlopt bench --max-runs N``).
"""

from __future__ import annotations

import glob
import importlib
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from dmlopt import api, io, registry, solvers
from dmlopt.errors import DmloptError, InstanceError

#: defaults of the optional keys
DEFAULT_TIME_LIMIT = 300.0
DEFAULT_KILL_LIMIT = 300.0
DEFAULT_GRACE = 10.0
#: The longest grace (seconds past a limit before the hard kill) a suite may set.
MAX_GRACE = 3600.0
DEFAULT_THREADS = 1

#: the most runs a suite may expand to unless the caller raises the cap (``--max-runs``)
MAX_RUNS = 10_000

#: a suite name: letters, digits, "-", "_" and "." (no "/", no "..", not starting with "." or "-")
NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")

#: env var that allows heuristics named "module:function"
ALLOW_IMPORT_ENV = "DMLOPT_BENCH_ALLOW_IMPORT"

_TOP_KEYS = {"name", "description", "time_limit", "kill_limit", "grace", "threads", "groups",
              "paper_groups"}
_GROUP_KEYS = {"problem", "instances", "methods", "time_limit", "kill_limit", "grace",
               "threads"}
_FILE_KEYS = {"file"}
_GEN_KEYS = {"generator", "params", "seeds"}
_SOLVER_KEYS = {"solver", "formulation", "time_limit", "grace", "threads", "mip_gap",
                "warm_start", "solver_options", "default_solve"}
_HEUR_KEYS = {"heuristic", "options", "seeds", "kill_limit", "grace"}
_BOUND_KEYS = {"bound", "options", "time_limit", "grace"}


class SuiteError(DmloptError):
    """A suite file breaks a rule: ``file: field: value rule``."""


@dataclass(frozen=True)
class Task:
    """One run: an instance, a method with its options, a seed.

    ``key`` identifies the run in the results store: the same instance content, method, options
    and seed give the same key, so a finished run is never repeated unless asked.
    """

    suite: str
    problem: str
    instance_id: str
    instance_hash: str
    kind: str  # "exact" | "heuristic" | "bound"
    method: str  # "highs:paper" | heuristic name | "bound:NAME"
    options: dict[str, Any]
    seed: int
    #: the run's limit in seconds (the store's ``time_limit`` column): the suite's
    #: ``time_limit`` of an exact or bound run, its ``kill_limit`` of a heuristic run
    time_limit: float
    grace: float
    instance: dict[str, Any] = field(repr=False, compare=False)
    import_path: str = ""  # directory added to sys.path for "module:function" heuristics

    @property
    def options_json(self) -> str:
        return canonical_json(self.options)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.instance_hash, self.method, self.options_json, self.seed)

    @property
    def hard_limit(self) -> float:
        return self.time_limit + self.grace

    def as_payload(self) -> dict[str, Any]:
        """Plain data for a child process (JSON/pickle friendly)."""
        return {
            "suite": self.suite, "problem": self.problem, "instance_id": self.instance_id,
            "instance_hash": self.instance_hash, "kind": self.kind, "method": self.method,
            "options": self.options, "options_json": self.options_json, "seed": self.seed,
            "time_limit": self.time_limit, "grace": self.grace, "instance": self.instance,
            "import_path": self.import_path,
        }


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    path: Path
    tasks: list[Task]


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- finding suites


def suites_dir() -> Path:
    return Path(str(resources.files("dmlopt.benchmarks").joinpath("suites")))


def shipped() -> dict[str, Path]:
    """Shipped suites: name (file stem) -> path."""
    root = suites_dir()
    return {p.stem: p for p in sorted(root.glob("*.toml"))} if root.is_dir() else {}


def describe(path: Path) -> str:
    """The ``description`` of a suite file (or the reading error, on one line)."""
    try:
        data = io.read_toml(path)
    except DmloptError as exc:
        return f"(unreadable: {exc})"
    return str(data.get("description", ""))


def resolve(name_or_path: str) -> Path:
    """A shipped suite name (``quick``) or a path to a TOML file (which may still be refused by
    the reader: a FIFO or a directory exists but is not read)."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or os.sep in name_or_path:
        if not path.exists() and not path.is_symlink():
            raise SuiteError(f"suite: {name_or_path!r} does not exist")
        return path
    found = shipped()
    if name_or_path in found:
        return found[name_or_path]
    if path.exists():
        return path
    raise SuiteError(
        f"suite: {name_or_path!r} is neither a shipped suite nor a file "
        f"(shipped: {', '.join(found) or 'none'})"
    )


# --------------------------------------------------------------------------- parsing


class _Ctx:
    """Error formatting with the file name."""

    def __init__(self, path: Path):
        self.path = path

    def err(self, where: str, value: Any, rule: str) -> SuiteError:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return SuiteError(f"{self.path}: {where}: {shown} {rule}")

    def keys(self, where: str, table: Any, allowed: set[str], required: set[str]) -> None:
        if not isinstance(table, dict):
            raise self.err(where, table, "must be a table")
        for key in table:
            if key not in allowed:
                raise self.err(f"{where}.{key}" if where else key, table[key],
                               f"is not a known key (known: {', '.join(sorted(allowed))})")
        for key in sorted(required):
            if key not in table:
                raise SuiteError(f"{self.path}: {where + '.' if where else ''}{key}: missing "
                                 "(the key is required)")

    def number(self, where: str, value: Any, *, positive: bool = True,
               integer: bool = False) -> Any:
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise self.err(where, value, "must be " + ("an integer" if integer else "a number"))
        if isinstance(value, float) and not math.isfinite(value):
            raise self.err(where, value, "must be a finite number")
        if positive and not value > 0:
            raise self.err(where, value, "must be positive")
        if not positive and value < 0:
            raise self.err(where, value, "must not be negative")
        return value

    def seeds(self, where: str, value: Any) -> list[int]:
        if not isinstance(value, list) or not value:
            raise self.err(where, value, "must be a non-empty list of integers")
        for i, s in enumerate(value):
            try:
                api.check_seed(s)
            except DmloptError as exc:
                raise self.err(f"{where}[{i}]", s, exc.rule) from None
        return list(dict.fromkeys(value))

    def core(self, where: str, exc: DmloptError) -> SuiteError:
        """A core check's error, its field placed under ``where`` (``groups[0].methods[1]``)."""
        if isinstance(exc, InstanceError) and exc.field:
            return self.err(f"{where}.{exc.field}", exc.value, exc.rule)
        return SuiteError(f"{self.path}: {where}.{exc}")

    def setting(self, where: str, key: str, value: Any) -> None:
        """``time_limit`` / ``mip_gap`` / ``threads`` through the core's own check."""
        try:
            solvers.check_settings(**{key: value})
        except DmloptError as exc:
            raise self.err(where, value, getattr(exc, "rule", "") or str(exc)) from None


def load(name_or_path: str | Path, max_runs: int | None = MAX_RUNS) -> Suite:
    """Parse and validate a suite; raise :class:`SuiteError` on the first problem.

    The runs are counted from the specs (instances x methods x seeds, before duplicates are
    merged) before any instance is generated or read; more than ``max_runs`` (None: no cap) are
    refused.
    """
    ctx, name, description, plans = _parse(name_or_path)
    path = ctx.path
    runs = sum(p.runs for p in plans)
    if max_runs is not None and runs > max_runs:
        raise SuiteError(
            f"{path}: the suite has {runs:,} runs (instances x methods x seeds), above the cap "
            f"of {max_runs:,}; split it, or raise the cap with --max-runs {runs}"
        )
    tasks: dict[tuple, Task] = {}
    for plan in plans:
        for task in _expand(ctx, name, plan):
            tasks.setdefault(task.key, task)
    return Suite(name=name, description=description, path=path, tasks=list(tasks.values()))


def count(name_or_path: str | Path) -> int:
    """Runs of a suite (instances x methods x seeds, before duplicates are merged), from its
    specs only: validated like :func:`load`, but no instance is generated or read."""
    return sum(p.runs for p in _parse(name_or_path)[3])


def _parse(name_or_path: str | Path) -> tuple[_Ctx, str, str, list[_Plan]]:
    """A suite file checked and planned (name, description, groups), nothing expanded."""
    path = resolve(str(name_or_path))
    ctx = _Ctx(path)
    try:
        data = io.read_toml(path)
    except InstanceError as exc:
        raise SuiteError(f"{path}: {exc.rule}") from None
    except DmloptError as exc:
        raise SuiteError(f"{path}: {exc}") from None
    from_papers = data.get("paper_groups", False)
    if not isinstance(from_papers, bool):
        raise ctx.err("paper_groups", from_papers, "must be true or false")
    ctx.keys("", data, _TOP_KEYS, set() if from_papers else {"groups"})
    name = check_name(ctx, data.get("name", path.stem), "name" in data)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ctx.err("description", description, "must be a string")
    defaults = _limits(ctx, "", data, {})
    groups = data.get("groups", [])
    if not isinstance(groups, list) or not (groups or from_papers):
        raise ctx.err("groups", groups, "must be a non-empty array of tables ([[groups]])")
    located = [(f"groups[{gi}]", group) for gi, group in enumerate(groups)]
    if from_papers:
        located += _paper_groups(ctx)
    plans = [_plan(ctx, where, group, defaults) for where, group in located]
    return ctx, name, description, plans


def _paper_groups(ctx: _Ctx) -> list[tuple[str, Any]]:
    """``paper_groups = true``: every registered paper's ``quick`` groups, in paper order
    (:mod:`dmlopt.benchmarks.papers`), each located as ``paper KEY quick[i]``."""
    from dmlopt.benchmarks import papers

    out = [(f"paper {key} quick[{i}]", group) for key, paper in papers.all_papers().items()
           for i, group in enumerate(paper.quick)]
    if not out:
        raise ctx.err("paper_groups", True, "but no registered paper declares quick groups")
    return out


def check_name(ctx: _Ctx, name: Any, given: bool = True) -> str:
    """A suite name is a plain name: it names the default store ``results/<name>.sqlite``."""
    if not isinstance(name, str) or not name:
        raise ctx.err("name", name, "must be a non-empty string")
    if not NAME_RE.fullmatch(name) or ".." in name:
        hint = "" if given else " (the name defaults to the file name; set name = \"...\")"
        raise ctx.err("name", name, "must be a plain name: letters, digits, '-', '_' and '.', "
                      f"at most 100, not starting with '.' or '-', no '/' or '..'{hint}")
    return name


def _limits(ctx: _Ctx, where: str, table: dict, inherited: dict) -> dict[str, Any]:
    out = dict(inherited) or {"time_limit": DEFAULT_TIME_LIMIT, "kill_limit": DEFAULT_KILL_LIMIT,
                              "grace": DEFAULT_GRACE, "threads": DEFAULT_THREADS}
    pre = f"{where}." if where else ""
    for key in ("time_limit", "kill_limit"):  # seconds, finite and > 0 (the core's rule)
        if key in table:
            value = ctx.number(pre + key, table[key])
            ctx.setting(pre + key, "time_limit", value)
            out[key] = float(value)
    if "grace" in table:
        grace = float(ctx.number(pre + "grace", table["grace"]))
        if grace > MAX_GRACE:  # a grace of 1e308 s would disable the hard kill
            raise ctx.err(pre + "grace", table["grace"], f"must be at most {MAX_GRACE:g} s")
        out["grace"] = grace
    if "threads" in table:
        value = ctx.number(pre + "threads", table["threads"], integer=True)
        ctx.setting(pre + "threads", "threads", value)
        out["threads"] = value
    return out


@dataclass
class _Plan:
    """A group checked but not expanded: instance specs resolved to files or generator seeds,
    methods checked, and the number of runs they make."""

    where: str
    problem: registry.Problem
    instances: list[tuple[str, Any]]  # ("file", [(id, path)]) | ("generator", (w, gen, params,
    #                                    seeds))
    methods: list[tuple]
    runs: int


def _plan(ctx: _Ctx, where: str, group: Any, defaults: dict) -> _Plan:
    ctx.keys(where, group, _GROUP_KEYS, {"problem", "instances", "methods"})
    pname = group["problem"]
    if not isinstance(pname, str) or pname not in registry.names():
        raise ctx.err(f"{where}.problem", pname,
                      f"is not a known problem (available: {', '.join(registry.names())})")
    problem = registry.get(pname)
    limits = _limits(ctx, where, group, defaults)
    instances = _instance_specs(ctx, f"{where}.instances", group["instances"], problem)
    methods = _methods(ctx, f"{where}.methods", group["methods"], problem, limits)
    n_instances = sum(len(spec[1]) if kind == "file" else len(spec[3])
                      for kind, spec in instances)
    n_methods = sum(len(m[3]) for m in methods)
    return _Plan(where, problem, instances, methods, n_instances * n_methods)


def _expand(ctx: _Ctx, suite: str, plan: _Plan) -> list[Task]:
    tasks = []
    for inst_id, inst_hash, inst in _instances(ctx, plan):
        for kind, method, options, seeds, tl, grace, import_path in plan.methods:
            for seed in seeds:
                tasks.append(Task(
                    suite=suite, problem=plan.problem.name, instance_id=inst_id,
                    instance_hash=inst_hash, kind=kind, method=method, options=options,
                    seed=seed, time_limit=tl, grace=grace, instance=inst,
                    import_path=import_path,
                ))
    return tasks


def _instance_specs(ctx: _Ctx, where: str, specs: Any,
                    problem: registry.Problem) -> list[tuple[str, Any]]:
    """The instance specs checked (files found, generator names and seeds), nothing generated
    or read."""
    if not isinstance(specs, list) or not specs:
        raise ctx.err(where, specs, "must be a non-empty array")
    out: list[tuple[str, Any]] = []
    for i, spec in enumerate(specs):
        w = f"{where}[{i}]"
        if isinstance(spec, dict) and "file" in spec:
            ctx.keys(w, spec, _FILE_KEYS, {"file"})
            out.append(("file", _find_files(ctx, f"{w}.file", spec["file"])))
        elif isinstance(spec, dict) and "generator" in spec:
            ctx.keys(w, spec, _GEN_KEYS, {"generator", "seeds"})
            gen = spec["generator"]
            if not isinstance(gen, str) or gen not in problem.model.GENERATORS:
                raise ctx.err(f"{w}.generator", gen, f"is not a {problem.name} generator "
                              f"(available: {', '.join(problem.generators)})")
            params = spec.get("params", {})
            if not isinstance(params, dict):
                raise ctx.err(f"{w}.params", params, "must be a table")
            if "seed" in params or "generator" in params:
                raise ctx.err(f"{w}.params", params, "must not hold 'seed' or 'generator'")
            seeds = ctx.seeds(f"{w}.seeds", spec["seeds"])
            out.append(("generator", (w, gen, params, seeds)))
        else:
            raise ctx.err(w, spec, "must be a table with 'file' or 'generator'")
    return out


def _instances(ctx: _Ctx, plan: _Plan) -> list[tuple]:
    problem = plan.problem
    out: dict[str, tuple] = {}

    def keep(inst_id: str, inst: Any) -> None:  # the first id of each distinct instance
        dump = inst.model_dump(mode="json")  # dumped once: hashed and kept
        h = io.dump_hash(dump)
        out.setdefault(h, (inst_id, h, dump))

    for kind, spec in plan.instances:
        if kind == "file":
            for inst_id, inst in _load_files(ctx, spec, problem):
                keep(inst_id, inst)
            continue
        w, gen, params, seeds = spec
        for seed in seeds:
            try:
                inst = api.generate(problem.name, {"generator": gen, **params}, seed)
            except DmloptError as exc:
                raise SuiteError(f"{ctx.path}: {w}: {exc}") from None
            except (TypeError, ValueError) as exc:
                raise SuiteError(f"{ctx.path}: {w}.params: {params!r} rejected by "
                                 f"generator {gen!r} ({exc})") from None
            keep(_gen_id(gen, params, seed), inst)
    return list(out.values())


def _gen_id(gen: str, params: dict, seed: int) -> str:
    args = ",".join(f"{k}={_short(v)}" for k, v in params.items())
    return f"{gen}({args})#{seed}" if args else f"{gen}#{seed}"


def _short(v: Any) -> str:
    return canonical_json(v) if isinstance(v, dict | list) else str(v)


def _find_files(ctx: _Ctx, where: str, pattern: Any) -> tuple[str, list[tuple[str, Path]]]:
    """``(where, [(instance id, path)])`` of the regular files a pattern matches (not read)."""
    if not isinstance(pattern, str) or not pattern:
        raise ctx.err(where, pattern, "must be a file name or glob")
    found: list[tuple[str, Path]] = []
    candidates = [pattern] if glob.has_magic(pattern) else [pattern, pattern + ".json"]
    for root in (ctx.path.parent, _data_root()):
        for cand in candidates:
            matches = sorted(m for m in glob.glob(str(root / cand), recursive=True)
                             if Path(m).is_file())
            if matches:
                found = [(_rel_id(Path(m), root), Path(m)) for m in matches]
                break
        if found:
            break
    if not found:
        raise ctx.err(where, pattern, "matches no file (looked beside the suite and in the "
                      "shipped data)")
    return where, found


def _load_files(ctx: _Ctx, spec: tuple[str, list[tuple[str, Path]]],
                problem: registry.Problem) -> list[tuple]:
    where, found = spec
    out = []
    for inst_id, path in found:
        try:
            inst = io.load(path)
        except DmloptError as exc:
            raise SuiteError(f"{ctx.path}: {where}: {str(path)!r}: {exc}") from None
        if inst.problem != problem.name:
            raise ctx.err(where, str(path), f"is a {inst.problem} instance, not {problem.name}")
        out.append((inst_id, inst))
    return out


def _data_root() -> Path:
    return Path(str(resources.files("dmlopt.data")))


def _rel_id(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        rel = Path(path.name)
    return str(rel.with_suffix("")) if rel.suffix == ".json" else str(rel)


def _methods(ctx: _Ctx, where: str, specs: Any, problem: registry.Problem,
             limits: dict) -> list[tuple]:
    if not isinstance(specs, list) or not specs:
        raise ctx.err(where, specs, "must be a non-empty array")
    out = []
    for i, spec in enumerate(specs):
        w = f"{where}[{i}]"
        if isinstance(spec, dict) and "solver" in spec:
            out.append(_solver_method(ctx, w, spec, problem, limits))
        elif isinstance(spec, dict) and "heuristic" in spec:
            out.append(_heuristic_method(ctx, w, spec, problem, limits))
        elif isinstance(spec, dict) and "bound" in spec:
            out.append(_bound_method(ctx, w, spec, problem, limits))
        else:
            raise ctx.err(w, spec, "must be a table with 'solver', 'heuristic' or 'bound'")
    return out


def _solver_method(ctx: _Ctx, w: str, spec: dict, problem: registry.Problem,
                   limits: dict) -> tuple:
    ctx.keys(w, spec, _SOLVER_KEYS, {"solver"})
    solver = spec["solver"]
    if not isinstance(solver, str) or not solver:
        raise ctx.err(f"{w}.solver", solver, "must be a solver name")
    try:
        solvers.check(solver)
    except DmloptError as exc:
        raise SuiteError(f"{ctx.path}: {w}.{exc}") from None
    form = spec.get("formulation") or api.default_formulation(problem, solver)
    if not isinstance(form, str) or form not in problem.model.FORMULATIONS:
        raise ctx.err(f"{w}.formulation", form, f"is not a {problem.name} formulation "
                      f"(available: {', '.join(problem.formulations)})")
    if not api.solver_allowed(problem, form, solver):
        raise ctx.err(f"{w}.solver", solver, f"cannot solve the {problem.name} {form!r} "
                      f"formulation (use {' or '.join(problem.formulation(form).solvers or ())})")
    lim = _limits(ctx, w, spec, limits)
    options: dict[str, Any] = {"solver": solver, "formulation": form,
                               "time_limit": lim["time_limit"], "threads": lim["threads"]}
    if "default_solve" in spec:
        ds = spec["default_solve"]
        if not isinstance(ds, bool):
            raise ctx.err(f"{w}.default_solve", ds, "must be true or false")
        if ds and form != api.default_formulation(problem, solver):
            raise ctx.err(f"{w}.formulation", form, "must be left out or be the default "
                          f"formulation ({api.default_formulation(problem, solver)!r}) with "
                          "default_solve = true")
        if ds:
            options["default_solve"] = True
    if "mip_gap" in spec:
        gap = ctx.number(f"{w}.mip_gap", spec["mip_gap"], positive=False)
        ctx.setting(f"{w}.mip_gap", "mip_gap", gap)
        options["mip_gap"] = float(gap)
    if "warm_start" in spec:
        ws = spec["warm_start"]
        if not isinstance(ws, str) or ws not in problem.heuristics:
            raise ctx.err(f"{w}.warm_start", ws, f"is not a {problem.name} heuristic "
                          f"(available: {', '.join(sorted(problem.heuristics))})")
        options["warm_start"] = ws
    if "solver_options" in spec:
        so = spec["solver_options"]
        if not isinstance(so, dict):
            raise ctx.err(f"{w}.solver_options", so, "must be a table")
        try:
            solvers.check_options(solver, so, allow_files=False)  # silent (fd level)
        except DmloptError as exc:
            raise ctx.core(w, exc) from None
        options["solver_options"] = so
    return ("exact", f"{solver}:{form}", options, [0], lim["time_limit"], lim["grace"], "")


def _heuristic_method(ctx: _Ctx, w: str, spec: dict, problem: registry.Problem,
                      limits: dict) -> tuple:
    """``{ heuristic = "NAME", options = {...}, seeds = [...], kill_limit = S }``: the harness
    kills the run ``grace`` seconds past ``kill_limit``; the heuristic is not told."""
    if isinstance(spec, dict) and "time_limit" in spec:
        raise ctx.err(f"{w}.time_limit", spec["time_limit"], "is not a heuristic method key: "
                      "the harness's limit of a heuristic run is kill_limit, the heuristic's "
                      "own time limit goes in options")
    ctx.keys(w, spec, _HEUR_KEYS, {"heuristic"})
    name = spec["heuristic"]
    if not isinstance(name, str) or not name:
        raise ctx.err(f"{w}.heuristic", name, "must be a heuristic name")
    options = spec.get("options", {})
    if not isinstance(options, dict):
        raise ctx.err(f"{w}.options", options, "must be a table")
    if "seed" in options:
        raise ctx.err(f"{w}.options.seed", options["seed"], "is not allowed (use 'seeds')")
    import_path = ""
    if ":" in name and name not in problem.heuristics:
        fn, import_path = _imported(ctx, f"{w}.heuristic", name)
        entry = registry.as_heuristic(fn, name)
    elif name in problem.heuristics:
        entry = problem.heuristics[name]
    else:
        raise ctx.err(f"{w}.heuristic", name, f"is not a {problem.name} heuristic "
                      f"(available: {', '.join(sorted(problem.heuristics))})")
    _check_options(ctx, f"{w}.options", name, entry, options)
    seeds = ctx.seeds(f"{w}.seeds", spec.get("seeds", [0]))
    lim = _limits(ctx, w, spec, limits)
    return ("heuristic", name, dict(options), seeds, lim["kill_limit"], lim["grace"],
            import_path)


def _bound_method(ctx: _Ctx, w: str, spec: dict, problem: registry.Problem,
                  limits: dict) -> tuple:
    """``{ bound = "NAME", options = {...}, time_limit = S }``: a dual bound run
    (:func:`dmlopt.bound`); ``time_limit`` is passed to the method and the harness kills the
    run ``grace`` seconds after it."""
    ctx.keys(w, spec, _BOUND_KEYS, {"bound"})
    name = spec["bound"]
    if not isinstance(name, str) or name not in problem.bound_entries:
        raise ctx.err(f"{w}.bound", name, f"is not a {problem.name} bound method (available: "
                      f"{', '.join(problem.bound_entries) or 'none'})")
    options = spec.get("options", {})
    if not isinstance(options, dict):
        raise ctx.err(f"{w}.options", options, "must be a table")
    _check_options(ctx, f"{w}.options", name, problem.bound_entries[name], options)
    lim = _limits(ctx, w, spec, limits)
    payload = {"bound": name, "options": dict(options), "time_limit": lim["time_limit"]}
    return ("bound", f"bound:{name}", payload, [0], lim["time_limit"], lim["grace"], "")


def _check_options(ctx: _Ctx, where: str, name: str, entry: Any, options: dict) -> None:
    """The options of a heuristic, checked against its options model as the API does."""
    try:
        api.validate_options(entry.Options, options, name, where=where)
    except DmloptError as exc:
        text = str(exc)  # a type error names the option only: placed under ``where``
        raise SuiteError(f"{ctx.path}: {text if text.startswith(where) else where + '.' + text}"
                         ) from None


def _imported(ctx: _Ctx, where: str, name: str) -> tuple[Any, str]:
    if os.environ.get(ALLOW_IMPORT_ENV) != "1":
        raise ctx.err(where, name, f"names code to import; allowed only with {ALLOW_IMPORT_ENV}=1 "
                      "(suites are data)")
    import_path = str(ctx.path.parent.resolve())
    try:
        fn = import_function(name, import_path)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ctx.err(where, name, f"cannot be imported ({type(exc).__name__}: {exc})") from None
    return fn, import_path


def import_function(name: str, import_path: str = "") -> Any:
    """``"module:function"`` -> the function (``import_path`` is put on ``sys.path`` first)."""
    module, _, func = name.partition(":")
    if not module or not func:
        raise ValueError("expected 'module:function'")
    if import_path and import_path not in sys.path:
        sys.path.insert(0, import_path)
    fn = getattr(importlib.import_module(module), func)
    if not callable(fn):
        raise ValueError(f"{name} is not callable")
    return fn

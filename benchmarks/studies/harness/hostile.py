"""Hostile-input sweep: mutated instances, solutions, options and parameters through the CLI.

Each round (seeded) draws a problem and a small generated instance, mutates it, and runs CLI
commands on what it made:

* ``instance``: one to three edits of the instance JSON (a value set to a hostile one such as
  NaN, -1, 1e308, a string, an empty list; a plausible extreme such as 0, 1e-9, 1e12, 2**53; a
  key deleted; a list entry repeated), then ``validate``, ``bound`` (5 s), a random heuristic
  and, for problems with formulations, ``solve`` (5 s, one thread);
* ``solution``: a heuristic's solution of the unmutated instance, edited the same way, through
  ``validate --solution`` and ``solve --warm-start``, and one option of that heuristic set to
  a hostile or extreme value;
* ``generator``: ``generate`` with one or two parameters of a random generator set so, then a
  bound method with one of its options set so on what was generated;
* ``formulation``: a plausibly edited instance through ``solve`` and ``export`` (LP or MPS) of
  a random formulation;
* the kinds of issue 51, each command in a fresh process with its own rule
  (:mod:`.hostile_files`, :mod:`.hostile_model`): ``writes`` (no file created or changed
  outside the destination, names from data, links, read-only folders, long names),
  ``solfile`` (a solver's file of another instance or edited is never "feasible"), ``clash``
  (``--option`` named like a call's own argument), ``env`` (``DMLOPT_*`` variables),
  ``limits`` (a 2 s limit holds at large sizes), ``store`` (rows that cannot be true, strings
  for numbers, ``|`` in names, hostile suite keys) and ``interrupt`` (Ctrl-C in
  ``references --export``, then a re-run that completes).

Every command runs in a forked child with an address-space limit (``--memory``, default
6 GiB) and an alarm (``--watchdog`` seconds). A *fault* is any exit code other than 0, 2
(refused: bad input, too large) and 3 (``validate --solution``: infeasible); an exit 2 whose
stderr is not one line starting ``dmlopt:`` or that writes to stdout; a child ended by a signal
(a crash, the alarm: a hang, or the memory limit). Each fault's inputs are kept under
``DIR/faults/`` with the command in ``DIR/faults.jsonl``, so that it can be run again; the exit
code is 1 when there is a fault.

    python -m benchmarks.studies.harness.hostile -o DIR [--seeds 0-3] [--rounds 200]
        [--problems tap rar ...] [--kinds writes solfile ...]
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import resource
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import dmlopt
from dmlopt import registry, solvers

from .. import ArgumentParser, output_dir, tee
from . import hostile_files, hostile_model
from .hostile_run import fault_of, run_case
from .validity import _seeds

#: a small instance per problem: (generator, parameters)
SMALL: dict[str, tuple[str, dict[str, Any]]] = {
    "inc_oxc": ("small", {}),
    "infer": ("dc", {}),
    "infer_tap": ("dc", {}),
    "nara": ("uniform", {"n_requests": 8}),
    "rar": ("random", {}),
    "tabgp": ("er", {"n": 8, "tau": 2, "l": 2}),
    "tap": ("random", {}),
}

#: values that break a type or a range
HOSTILE: list[Any] = [None, -1, float("nan"), float("inf"), -1e308, "x", "", [], {}, True,
                      [1, 2], {"a": 1}, "NaN", 2**63]
#: values of the right type at the edges of what is plausible
EXTREME: list[Any] = [0, 1, 2, 3, 7, 64, 100, 1000, 4096, 1e-9, 1e-6, 1e-3, 0.5, 0.999999,
                      1.000001, 1e6, 1e9, 1e12, 1e15, 1e18, 1e308, 2**31, 2**53]
#: the round kinds run through the in-process CLI (:func:`draw`)
CLI_KINDS = ("instance", "solution", "generator", "formulation")
#: the round kinds of issue 51 (fresh processes, their own rules)
CASE_KINDS = ("writes", "solfile", "clash", "env", "limits", "store", "interrupt")

#: heuristics left out of the random picks: they run to their time budget (minutes by default)
SLOW = ("milp", "offline-search", "rts", "tabu", "faq-2opt", "ft-transfer")


def _leaves(obj: Any, path: tuple = ()) -> list[tuple]:
    """Paths to every value of a JSON tree (the first 6 entries of each list)."""
    out = [path] if path else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:6]):
            out += _leaves(v, path + (i,))
    return out


def mutate(data: Any, rng: random.Random, hostile: float = 0.25) -> Any:
    """A copy of the JSON tree ``data`` with one to three edits (module docstring); the share
    ``hostile`` of the value edits take a hostile value, the others an extreme one.

    Parameters
    ----------
    data : JSON value
        An instance or solution as parsed JSON.
    rng : random.Random
        The round's generator.
    hostile : float
        Share of the edits that set a value breaking a type or a range.

    Returns
    -------
    JSON value
        The edited copy (``"problem"`` is never edited).
    """
    data = copy.deepcopy(data)
    for _ in range(rng.choice((1, 1, 2, 3))):
        paths = [p for p in _leaves(data) if p[0] != "problem"]
        if not paths:
            break
        path = rng.choice(paths)
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        last, op = path[-1], rng.random()
        if op < 0.6:
            parent[last] = rng.choice(HOSTILE if rng.random() < hostile else EXTREME)
        elif op < 0.8:
            del parent[last]
        elif isinstance(parent[last], list) and parent[last]:
            parent[last].append(copy.deepcopy(parent[last][0]))
        elif isinstance(parent[last], int | float) and not isinstance(parent[last], bool):
            parent[last] = rng.choice((-parent[last], parent[last] + 1, parent[last] * 1000))
    return data


def run_cli(argv: list[str], watchdog: float, memory: float) -> tuple[Any, str, str]:
    """``dmlopt argv`` in a forked child under an alarm and a memory limit: (exit code, or
    ``"crash: ..."`` when the child ended by a signal, stdout, stderr)."""
    from dmlopt.cli import main

    def child() -> tuple[int, str, str]:
        resource.setrlimit(resource.RLIMIT_AS, (int(memory), int(memory)))
        # the alarm ends the child and every process it started (a solver's own forked child
        # holds the result pipe open: killing the child alone would leave the parent waiting)
        os.setpgid(0, 0)
        signal.signal(signal.SIGALRM, lambda *_: os.killpg(0, signal.SIGKILL))
        signal.alarm(max(1, int(watchdog)))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
        return code, out.getvalue(), err.getvalue()

    t0 = time.perf_counter()
    try:
        return solvers.forked(child, "the command")
    except solvers.Crashed as exc:
        if time.perf_counter() - t0 >= watchdog:
            return f"hang: no result within {watchdog:g} s", "", ""
        return f"crash: {exc}", "", ""


class Round:
    """One round's files and commands (see the module docstring)."""

    def __init__(self, work: Path, rng: random.Random) -> None:
        self.work, self.rng = work, rng
        self.files: dict[str, str] = {}
        self.commands: list[list[str]] = []

    def write(self, name: str, data: Any) -> str:
        path = self.work / name
        path.write_text(json.dumps(data, allow_nan=True))
        self.files[name] = str(path)
        return str(path)

    def value(self) -> str:
        return json.dumps(self.rng.choice(HOSTILE + EXTREME))


def draw(problem: str, kind: str, work: Path, rng: random.Random) -> Round:
    """The files and commands of one round of ``kind`` on ``problem``."""
    entry = registry.get(problem)
    gen, params = SMALL[problem]
    inst = dmlopt.generate(problem, {"generator": gen, **params}, seed=rng.randrange(100))
    data = json.loads(dmlopt.io.to_json(inst))
    r = Round(work, rng)
    heuristics = [h for h in entry.heuristics if h not in SLOW]
    if kind == "instance":
        f = r.write("instance.json", mutate(data, rng))
        r.commands = [["validate", f], ["bound", f, "--time-limit", "5"]]
        if heuristics:
            r.commands.append(["heuristic", f, rng.choice(heuristics)])
        if entry.formulations:
            r.commands.append(["solve", f, "--time-limit", "5", "--threads", "1"])
    elif kind == "solution" and heuristics:
        f = r.write("instance.json", data)
        name = rng.choice(heuristics)
        with contextlib.suppress(dmlopt.DmloptError):
            sol = dmlopt.heuristic(inst, name).solution
            s = r.write("solution.json", mutate(json.loads(dmlopt.io.to_json(sol)), rng))
            r.commands.append(["validate", f, "--solution", s])
            if entry.formulations:
                r.commands.append(["solve", f, "--time-limit", "5", "--threads", "1",
                                   "--warm-start", s])
        opts = sorted(entry.heuristics[name].Options.model_json_schema().get("properties", {}))
        if opts:
            r.commands.append(["heuristic", f, name, "--option",
                               f"{rng.choice(opts)}={r.value()}"])
    elif kind == "generator":
        gname = rng.choice(sorted(entry.generators))
        props = sorted(entry.generator(gname).Params.model_json_schema().get("properties", {}))
        (work / "generated.json").unlink(missing_ok=True)   # never a previous round's
        argv = ["generate", problem, "-g", gname, "-o", str(work / "generated.json")]
        base = params if gname == gen else {}
        for key, val in base.items():
            argv += ["-p", f"{key}={json.dumps(val)}"]
        for key in rng.sample(props, min(len(props), rng.choice((1, 2)))):
            argv += ["-p", f"{key}={r.value()}"]
        r.commands.append(argv)
    else:   # formulation
        if not entry.formulations:
            return r
        f = r.write("instance.json", mutate(data, rng, hostile=0.05)
                    if rng.random() < 0.8 else data)
        form = rng.choice(sorted(entry.formulations))
        out = str(work / f"model{rng.choice(('.lp', '.mps'))}")
        r.commands = [["solve", f, "--formulation", form, "--time-limit", "5", "--threads",
                       "1"], ["export", f, out, "--formulation", form]]
    return r


def _bound_after_generate(problem: str, work: Path, rng: random.Random) -> list[str] | None:
    """A bound command with one hostile or extreme option on the instance just generated."""
    path = work / "generated.json"
    if not path.exists() or path.stat().st_size > 2_000_000:
        return None
    bounds = registry.get(problem).bound_entries
    method = rng.choice(sorted(bounds))
    argv = ["bound", str(path), "--method", method, "--time-limit", "5"]
    props = sorted(bounds[method].Options.model_json_schema().get("properties", {}))
    if props and rng.random() < 0.7:
        argv += ["--option", f"{rng.choice(props)}={json.dumps(rng.choice(HOSTILE + EXTREME))}"]
    return argv


def draw_cases(kind: str, work: Path, rng: random.Random, start: float) -> list:
    """The cases of one round of an issue-51 kind (:data:`CASE_KINDS`) in ``work/<kind>``."""
    here = work / kind
    here.mkdir(parents=True, exist_ok=True)
    if kind == "limits":
        return hostile_model.draw_limits(here, rng, start)
    draw_fn = {"writes": hostile_files.draw_writes, "store": hostile_files.draw_store,
               "interrupt": hostile_files.draw_interrupt, "solfile": hostile_model.draw_solfile,
               "clash": hostile_model.draw_clash, "env": hostile_model.draw_env}[kind]
    return draw_fn(here, rng)


def _keep(out: Path, tag: str, files: dict[str, str]) -> dict[str, str]:
    """Copies of a fault's input files under ``out/faults`` (path to copy)."""
    kept = {}
    for name, path in files.items():
        p = Path(path)
        if p.is_file() and not p.is_symlink() and p.stat().st_size < 50_000_000:
            dst = out / "faults" / f"{tag}-{name}"
            dst.write_bytes(p.read_bytes())
            kept[path] = str(dst)
    return kept


def main(argv: list[str] | None = None) -> int:
    """Run the sweep (see the module docstring); returns the exit code (1: a fault)."""
    ap = ArgumentParser(prog="python -m benchmarks.studies.harness.hostile",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    ap.add_argument("--problems", nargs="*", default=sorted(SMALL), choices=sorted(SMALL),
                    help="problems to draw from (default: all)")
    ap.add_argument("--kinds", nargs="*", default=list(CLI_KINDS + CASE_KINDS),
                    choices=CLI_KINDS + CASE_KINDS, help="round kinds to draw (default: all)")
    ap.add_argument("--seeds", default="0-0", help="seeds A-B, one series of rounds each")
    ap.add_argument("--rounds", type=int, default=200, help="rounds per seed (default 200)")
    ap.add_argument("--watchdog", type=float, default=120.0,
                    help="seconds one command may take before it is a hang (default 120)")
    ap.add_argument("--memory", type=float, default=6.0,
                    help="GiB one command may allocate (default 6)")
    args = ap.parse_args(argv)
    if args.rounds < 1 or not 1 <= args.watchdog <= 86400 or not 0.5 <= args.memory <= 1024:
        print("error: --rounds >= 1, --watchdog in [1, 86400], --memory in [0.5, 1024] GiB",
              file=sys.stderr)
        return 2
    seeds = _seeds(args.seeds)   # refused (exit 2) before the output folder is made
    out = output_dir(args.out)
    work = out / "work"
    work.mkdir(exist_ok=True)
    (out / "faults").mkdir(exist_ok=True)
    counts: Counter = Counter()
    exits: Counter = Counter()   # issue-51 kinds: exit codes per kind and command
    faults = 0
    t0 = time.perf_counter()
    start = hostile_model.startup() if "limits" in args.kinds else 0.0
    with tee(out / "log.txt"), open(out / "faults.jsonl", "a") as log:
        for seed in seeds:
            rng = random.Random(seed)
            for k in range(args.rounds):
                problem = rng.choice(args.problems)
                kind = rng.choice(args.kinds)
                if kind in CASE_KINDS:
                    try:
                        cases = draw_cases(kind, work, rng, start)
                    except Exception as exc:   # the harness's own bug: said, not a fault
                        print(f"HARNESS ERROR {kind} s{seed}-r{k}: {exc!r}", flush=True)
                        counts["harness errors"] += 1
                        continue
                    for i, case in enumerate(cases):
                        o = run_case(case, args.watchdog, args.memory * 2**30)
                        counts[kind] += 1
                        exits[f"{kind} {case.argv[0]}: {str(o.code).split(':')[0]}"] += 1
                        why = case.check(o)
                        if not why:
                            continue
                        faults += 1
                        tag = f"s{seed}-r{k}-c{i}"
                        files = {Path(a).name: a for a in case.argv
                                 if a.startswith(str(work)) and Path(a).is_file()}
                        kept = _keep(out, tag, files)
                        replay = [kept.get(a, a) for a in case.argv]
                        env = " ".join(f"{k_}={v!r}" for k_, v in case.env.items())
                        log.write(json.dumps({"seed": seed, "round": k, "problem": "",
                                              "kind": kind, "argv": replay, "env": case.env,
                                              "exit": o.code, "wall": round(o.wall, 2),
                                              "note": case.note, "fault": why}) + "\n")
                        log.flush()
                        print(f"FAULT {kind} {case.note}: {env} dmlopt {' '.join(replay)}\n  {why}",
                              flush=True)
                    continue
                rnd = draw(problem, kind, work, rng)
                commands = list(rnd.commands)
                for i, cmd in enumerate(commands):
                    code, so, se = run_cli(cmd, args.watchdog, args.memory * 2**30)
                    counts[kind] += 1
                    why = fault_of(code, so, se)
                    if code == 0 and cmd[0] == "generate" and i == len(commands) - 1:
                        nxt = _bound_after_generate(problem, work, rng)
                        if nxt:
                            commands.append(nxt)
                            rnd.files["generated.json"] = str(work / "generated.json")
                    if not why:
                        continue
                    faults += 1
                    tag = f"s{seed}-r{k}-c{i}"
                    kept = _keep(out, tag, rnd.files)
                    replay = [kept.get(a, a) for a in cmd]
                    log.write(json.dumps({"seed": seed, "round": k, "problem": problem,
                                          "kind": kind, "argv": replay, "fault": why}) + "\n")
                    log.flush()
                    print(f"FAULT {problem} {kind}: dmlopt {' '.join(replay)}\n  {why}",
                          flush=True)
                if (k + 1) % 50 == 0:
                    print(f"seed {seed}: {k + 1} rounds, {sum(counts.values())} commands, "
                          f"{faults} faults, {time.perf_counter() - t0:.0f} s", flush=True)
        if exits:
            print("exits: " + ", ".join(f"{k} x{v}" for k, v in sorted(exits.items())))
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{sum(counts.values())} commands ({kinds}), {faults} faults, "
              f"{time.perf_counter() - t0:.0f} s")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())

"""Round kinds of the hostile sweep on models, options, the environment and limits (issue 51):
solver solution files that are not this model's (``solfile``), option names that clash with a
call's own arguments (``clash``), ``DMLOPT_*`` variables (``env``) and time limits at extreme
sizes (``limits``).
"""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

from .hostile_files import boundary
from .hostile_run import Case, Outcome, run_case

#: TABGP at n vertices, tau steps (size drawn per round)
TABGP = {"generator": "er", "tau": 2, "l": 2}


def _instance(path: Path, n: int, seed: int) -> str:
    import dmlopt

    path.write_text(dmlopt.io.to_json(dmlopt.generate("tabgp", dict(TABGP, n=n), seed=seed)))
    return str(path)


def highs_solution(inst: str, work: Path) -> tuple[str, list[str]]:
    """HiGHS's raw solution file of ``inst``'s exported model (``Highs.writeSolution`` style 0),
    and the model's column names.

    Parameters
    ----------
    inst : str
        An instance JSON file.
    work : Path
        Where the model and the solution are written.

    Returns
    -------
    tuple
        The solution file's text and the column names.
    """
    import highspy

    import dmlopt

    lp = work / "model.lp"
    dmlopt.export(dmlopt.load(inst), str(lp))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", 20.0)
    h.readModel(str(lp))
    h.run()
    sol = work / "model.sol"
    h.writeSolution(str(sol), 0)
    text = sol.read_text()
    return text, [c.split()[0] for c in _columns_block(text)[1]]


def _columns_block(text: str) -> tuple[str, list[str], str]:
    head, rest = text.split("# Columns", 1)
    lines = rest.splitlines()
    cols, i = [], 1
    while i < len(lines) and lines[i].strip() and not lines[i].startswith("#"):
        cols.append(lines[i])
        i += 1
    return head, cols, "\n".join(lines[i:])


def _join(head: str, cols: list[str], tail: str) -> str:
    return f"{head}# Columns {len(cols)}\n" + "\n".join(cols) + "\n" + tail + "\n"


def mutate_solution(text: str, how: str, rng: random.Random) -> str:
    """A HiGHS raw solution file edited so that it is not a solution of its model.

    Parameters
    ----------
    text : str
        The file as HiGHS wrote it.
    how : str
        ``extra`` (a variable the model lacks), ``missing`` (a column left out), ``half`` (a
        binary at 0.5), ``two`` (a vertex in two clusters), ``none`` (in none), ``objective`` (a
        stated objective off the evaluated one), ``space`` (``Objective`` with a trailing space,
        the value right).
    rng : random.Random
        The round's generator.

    Returns
    -------
    str
        The edited text.
    """
    head, cols, tail = _columns_block(text)
    if how == "extra":
        cols.insert(rng.randrange(len(cols) + 1), f"{rng.choice(('z', 'x', 'y'))}("
                    f"{rng.randrange(50, 99)}_0_0) {rng.choice((0, 1))}")
    elif how == "missing":
        del cols[rng.randrange(len(cols))]
    elif how == "half":
        xs = [i for i, c in enumerate(cols) if c.startswith("x(")]
        i = rng.choice(xs)
        cols[i] = f"{cols[i].split()[0]} {rng.choice((0.5, 0.4999, 0.3))}"
    elif how in ("two", "none"):
        groups: dict[tuple, list[int]] = {}
        for i, c in enumerate(cols):
            m = re.match(r"x\((\d+)_(\d+)_(\d+)\)", c)
            if m:
                groups.setdefault((m.group(1), m.group(3)), []).append(i)
        members = groups[rng.choice(sorted(groups))]
        for i in members:
            cols[i] = f"{cols[i].split()[0]} {1 if how == 'two' else 0}"
    elif how == "objective":
        shift = rng.choice((1, 7, 0.5, -3))
        head = re.sub(r"^Objective (\S+)",
                      lambda m: f"Objective {float(m.group(1)) + shift}", head, flags=re.M)
    elif how == "space":
        repl = r"Objective \1 " if rng.random() < 0.5 else "Objective "
        head = re.sub(r"^Objective (\S+)", repl, head, flags=re.M)
    return _join(head, cols, tail)


def to_plain(text: str, rng: random.Random) -> str:
    """A HiGHS raw file rewritten in the plain ``name value`` format (Gurobi's ``.sol``: a
    ``# Objective value = V`` comment, zeros left out or not).

    Parameters
    ----------
    text : str
        A HiGHS raw file (possibly edited by :func:`mutate_solution`).
    rng : random.Random
        The round's generator.

    Returns
    -------
    str
        The same columns and objective in the plain format.
    """
    head, cols, _ = _columns_block(text)
    m = re.search(r"^Objective ?(.*)$", head, flags=re.M)
    sparse = rng.random() < 0.5
    lines = [f"# Objective value = {m.group(1)}" if m else "# Solution"]
    lines += [c for c in cols if not (sparse and c.split()[1] in ("0", "-0"))]
    return "\n".join(lines) + "\n"


def _not_accepted(o: Outcome) -> str:
    why = boundary(o, (0, 2, 3))
    if why:
        return why
    if o.code == 0:
        return f"accepted as a solution of this model: {o.out.strip().splitlines()[:2]}"
    return ""


def draw_solfile(work: Path, rng: random.Random) -> list[Case]:
    """A HiGHS solution file of another TABGP instance of the same size, or of this one edited
    (:func:`mutate_solution`), through ``validate --solution``: never "feasible" (issue 51,
    "another instance's solution accepted")."""
    n = rng.choice((6, 8, 8, 10))
    seed = rng.randrange(1000)
    inst = _instance(work / "inst.json", n, seed)
    text, cols = highs_solution(inst, work)
    how = rng.choice(("other", "other", "extra", "missing", "half", "two", "none", "objective",
                      "space"))
    def either(o: Outcome) -> str:   # accepted or refused: both right
        return boundary(o, (0, 2, 3))

    check = _not_accepted
    cols2: list[str] = []
    if how == "other":
        other = _instance(work / "other.json", n, seed + 1 + rng.randrange(50))
        text2, cols2 = highs_solution(other, work)
        if sorted(cols2) == sorted(cols):   # the same model: the file may be a solution of it
            check = either
        text = text2
    elif how == "space":
        check = either   # the value is right
    body = mutate_solution(text, how, rng) if how != "other" else text
    plain = rng.random() < 0.35 and how != "missing"   # a sparse file may leave columns out
    if plain:
        body = to_plain(body, rng)
        if how == "other" and set(cols2) <= set(cols):   # a subset: may be a solution of it
            check = either
    name = rng.choice(("s.sol", "s.txt", "solution", "s.sol.txt"))
    (work / name).write_text(body)
    return [Case(["validate", inst, "--solution", str(work / name)], check,
                 note=how + (" plain" if plain else " highs"))]


#: names an option of a call must not take from its own arguments
CLASH = ["time_limit", "seed", "size_limit", "method", "instance", "formulation", "name",
         "options", "solver", "threads", "problem", "params", "generator", "warm_start"]


def draw_clash(work: Path, rng: random.Random) -> list[Case]:
    """``--option NAME=VALUE`` where NAME is one of the call's own arguments, on ``bound``,
    ``heuristic`` and ``solve``, and ``--param generator=...`` beside ``-g``: exit 2 in one line
    (issue 51, "multiple values")."""
    inst = _instance(work / "inst.json", rng.choice((6, 8)), rng.randrange(100))
    key = rng.choice(CLASH)
    val = rng.choice(("5", "3", '"lp"', '"x"', "null", "[1, 2]", "true", '"paper"'))
    cmd = rng.choice(("bound", "heuristic", "solve", "generate"))
    if cmd == "bound":
        argv = ["bound", inst, "--method", rng.choice(("lp", "spectral", "enum")),
                "--time-limit", "5"]
    elif cmd == "heuristic":
        argv = ["heuristic", inst, rng.choice(("random", "dense", "local-search"))]
    elif cmd == "solve":
        argv = ["solve", inst, "--time-limit", "5", "--threads", "1"]
    else:
        out = work / "gen.json"
        out.unlink(missing_ok=True)
        g = rng.choice(("er", "drift"))
        other = rng.choice(("er", "drift", "x", "dc"))
        argv = ["generate", "tabgp", "-g", g, "-p", f"generator={json.dumps(other)}", "-o",
                str(out)]

        def gen_check(o: Outcome) -> str:
            why = boundary(o)
            if why or o.code != 0 or other == g:   # the same generator twice: either is right
                return why
            return f"--param generator={other} beside -g {g} accepted silently"
        return [Case(argv, gen_check)]
    argv += ["--option", f"{key}={val}"]

    def check(o: Outcome) -> str:
        why = boundary(o)
        if why:
            return why
        if "Traceback" in o.err:
            return "traceback"
        return ""
    return [Case(argv, check)]


#: the ``DMLOPT_*`` variables the package reads (``grep environ dmlopt/``)
ENV_VARS = ["DMLOPT_MAX_FILE_BYTES", "DMLOPT_SIZE_LIMIT", "DMLOPT_SOLVERS",
            "DMLOPT_REFERENCES_ROOT", "DMLOPT_DEBUG"]
ENV_VALUES = ["abc", "1e3", "-5", "", "0", " ", "9" * 400, "1e999", "nan", "inf", "2,3",
              "1,2,3,4,5", "-1,-1", "\u00e9", "/nonexistent", "..", "gurobi,../x", "1_000"]


def draw_env(work: Path, rng: random.Random) -> list[Case]:
    """A ``DMLOPT_*`` variable set to a hostile value, then ``--version`` and a small command:
    never exit 1 or a traceback (issue 51, "environment")."""
    inst = _instance(work / "inst.json", 6, rng.randrange(100))
    var = rng.choice(ENV_VARS)
    env = {var: rng.choice(ENV_VALUES)}
    small = rng.choice((["validate", inst], ["heuristic", inst, "random"],
                        ["bound", inst, "--method", "lp", "--time-limit", "5"],
                        ["references", "tabgp"], ["solve", inst, "--time-limit", "5",
                                                  "--solver", rng.choice(("highs", "gurobi"))]))

    def check(o: Outcome) -> str:
        why = boundary(o)
        return why or ("traceback" if "Traceback" in o.err else "")
    return [Case(["--version"], check, env=env), Case(small, check, env=env)]


#: sizes quick to generate and large for the methods: (problem, generator, params, methods)
LARGE = [
    ("tabgp", "er", {"n": 3000, "tau": 2, "l": 2, "p": 0.001}, ["enum", "spectral", None]),
    ("tabgp", "er", {"n": 600, "tau": 3, "l": 3, "p": 0.05}, ["spectral", None, "lp"]),
    ("rar", "random", {"requests": 1000, "slots": 2000}, ["energy", None]),
    ("rar", "random", {"requests": 400, "slots": 800}, ["energy", "node-choice", None]),
    ("tap", "random", {"m": 2000, "n": 2000}, ["glb"]),
    ("tap", "random", {"m": 600, "n": 600}, ["glb", None]),
    ("inc_oxc", "large", {}, [None, "configs"]),
]


def startup() -> float:
    """Wall seconds of ``dmlopt --version`` in a fresh process (the start-up to add to a limit).

    Returns
    -------
    float
        The seconds, measured once.
    """
    return run_case(Case(["--version"], lambda o: ""), 60, 2 * 2**30).wall


def draw_limits(work: Path, rng: random.Random, start: float) -> list[Case]:
    """A large generated instance through a bound or a heuristic with a 2 s limit: unless refused
    up front (exit 2), the method's own seconds stay within max(1 s, 10 %) of it, and the wall
    time within max(2 s, 10 %) of it plus the start-up and the reading, both scaled by how much
    slower a fresh start is now than at the sweep's start (issue 51, "limits that do not hold at
    extreme sizes")."""
    import dmlopt

    if rng.random() < 0.2:   # a commercial solver's size-limited licence: a refusal, one line
        n, tau = rng.choice(((40, 3), (60, 3), (100, 2), (12, 2)))
        inst = dmlopt.generate("tabgp", dict(TABGP, n=n, tau=tau, l=3), seed=rng.randrange(99))
        path = work / "licence.json"
        path.write_text(dmlopt.io.to_json(inst))
        solver = rng.choice(("gurobi", "cplex", "xpress", "copt"))
        return [Case(["solve", str(path), "--solver", solver, "--time-limit", "5", "--threads",
                      "1"], boundary, timeout=120, note=f"licence {solver} n={n}")]
    problem, gen, params, methods = rng.choice(LARGE)
    path = work / "large.json"
    t0 = time.perf_counter()
    inst = dmlopt.generate(problem, dict(params, generator=gen), seed=rng.randrange(100))
    path.write_text(dmlopt.io.to_json(inst))
    gen_s = time.perf_counter() - t0
    limit = 2.0
    method = rng.choice(methods)
    from dmlopt import registry

    entries = registry.get(problem).heuristics
    heur = [h for h in entries if "time_limit" in
            entries[h].Options.model_json_schema().get("properties", {})]
    if heur and rng.random() < 0.3:
        argv = ["heuristic", str(path), rng.choice(heur), "--option", f"time_limit={limit:g}"]
    else:
        argv = ["bound", str(path), "--time-limit", f"{limit:g}"]
        if method:
            argv += ["--method", method]
    argv.append("--json")
    load = max(0.5, gen_s)   # reading the instance back costs about its making
    # the machine's load now: start-up and reading slow down by as much as a fresh start does
    slower = max(1.0, startup() / start) if start > 0 else 1.0

    def check(o: Outcome) -> str:
        why = boundary(o)
        if why or o.code == 2:
            return why
        try:   # the method's own seconds (Result.seconds): the limit it promises to keep
            own = float(json.loads(o.out)["seconds"])
        except (ValueError, KeyError, TypeError):
            return f"no JSON result with seconds on stdout: {o.out.strip()[:200]}"
        if own > limit + max(1.0, 0.1 * limit):
            return f"its own seconds {own:.1f} on a {limit:g} s limit"
        allowed = limit + max(2.0, 0.1 * limit) + (start + load) * slower
        if o.wall > allowed:
            return (f"ran {o.wall:.1f} s on a {limit:g} s limit (allowed {allowed:.1f} s: "
                    f"start-up {start:.1f} s, reading {load:.1f} s, x{slower:.1f} for the "
                    f"machine's load)")
        return ""
    return [Case(argv, check, timeout=120, memory=4 * 2**30,
                 note=f"{problem} {gen} {json.dumps(params)}")]

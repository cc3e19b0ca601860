"""Round kinds of the hostile sweep on files (issue 51): where a command writes (``writes``),
what a results store or a suite holds (``store``) and an interrupted export (``interrupt``).

Each ``draw_*`` function returns the :class:`~.hostile_run.Case` list of one round, drawn from
the round's generator; the rules are in each case's ``check``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sqlite3
from pathlib import Path

from benchmarks import store as bstore

from .hostile_run import Case, Outcome, fault_of, reset


def boundary(o: Outcome, codes: tuple[int, ...] = (0, 2), progress: bool = False) -> str:
    """The boundary's rules (:func:`~.hostile_run.fault_of`) with the exit codes allowed here,
    and no file changed outside the destination.

    Parameters
    ----------
    o : Outcome
        What the command did.
    codes : tuple of int
        The exit codes that are not faults.
    progress : bool
        The command prints progress on stderr (``reproduce``, ``bench``): a refusal is then
        its last line, starting ``dmlopt:``, with no traceback.

    Returns
    -------
    str
        Why it is a fault, or "".
    """

    if o.outside:
        return f"wrote outside the destination: {', '.join(o.outside[:4])}"
    if isinstance(o.code, int) and o.code not in codes and o.code != 2:
        tail = o.err.strip().splitlines()[-1][:300] if o.err.strip() else ""
        return f"exit {o.code}: {tail}"
    err = o.err
    if progress and o.code == 2 and "Traceback" not in err and err.strip():
        err = err.strip().splitlines()[-1] + "\n"
    return fault_of(o.code if o.code != 3 or 3 in codes else 1, o.out, err)


def progress_boundary(o: Outcome) -> str:
    """:func:`boundary` of a command that prints progress on stderr."""
    return boundary(o, progress=True)


def hostile_names(box: Path, rng: random.Random) -> list[str]:
    """Names chosen by data that must never pick where a file goes: ``..`` climbs of any depth,
    absolute paths into the watched tree, separators, ``|``, odd characters, 300 characters.

    Parameters
    ----------
    box : Path
        The watched tree (absolute names point into it).
    rng : random.Random
        The round's generator.

    Returns
    -------
    list of str
        Three names.
    """
    word = rng.choice(("NAME", "victim", "x", "report", "tap", "figure"))
    pool = [
        "x/" + "../" * rng.randint(1, 6) + word,
        "../" * rng.randint(1, 6) + word,
        str(box / "outside" / word),
        str(box / "outside" / "victim.txt").removesuffix(".txt"),
        f"a/b/{word}", f"{word}|pipe|", "|", ".", "..", "...", "-" + word,
        word + "\\..\\..\\" + word, "x" * rng.choice((255, 300, 1000)),
        f"{word} \t;$(*)?[]{{}}<>'\"`", "\u00e9\u4e2d\u202e" + word, "~/" + word,
        "/".join(["d"] * 40) + "/" + word,
    ]
    return rng.sample(pool, 3)


def sandbox(work: Path) -> tuple[Path, Path, Path]:
    """A fresh watched tree ``box`` with a victim file, a victim folder and links to them, the
    destination four levels down and the working directory beside it.

    Parameters
    ----------
    work : Path
        The round's working folder.

    Returns
    -------
    tuple of Path
        ``(box, dest, cwd)``.
    """
    box = reset(work / "box")
    (box / "outside" / "dir").mkdir(parents=True)
    (box / "outside" / "victim.txt").write_text("victim\n")
    (box / "outside" / "dir" / "keep.txt").write_text("keep\n")
    cwd = box / "a" / "b" / "c" / "d"
    dest = cwd / "dest"
    cwd.mkdir(parents=True)
    return box, dest, cwd


def _plant(path: Path, box: Path, rng: random.Random) -> str:
    """``path`` made a link out of the sandbox (to the victim, a folder or nothing)."""
    what = rng.choice(("victim", "dangling", "dir"))
    target = {"victim": box / "outside" / "victim.txt",
              "dangling": box / "outside" / f"new-{rng.randrange(1000)}",
              "dir": box / "outside" / "dir"}[what]
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)
    return what


def make_store(path: Path, rows: list[dict]) -> None:
    """A dmlopt results store at ``path`` holding ``rows`` as given (strings where numbers
    belong are kept: SQLite stores what it is given).

    Parameters
    ----------
    path : Path
        The store to create.
    rows : list of dict
        Columns of :data:`benchmarks.store.COLUMNS`; missing ones are NULL.

    Returns
    -------
    None
    """
    bstore._create(path)
    required = {c for c, t in bstore.COLUMNS if "NOT NULL" in t}
    conn = sqlite3.connect(path)
    with conn:
        for row in rows:
            cols = [c for c in bstore.NAMES if c in row]
            # SQLite stores a float NaN as NULL: a required column gets the text instead
            vals = ["NaN" if c in required and row[c] != row[c] else row[c] for c in cols]
            conn.execute(f"INSERT INTO runs ({','.join(cols)}) VALUES "
                         f"({','.join('?' * len(cols))})", vals)
    conn.close()


def store_rows(rng: random.Random, names: list[str], hostile: bool) -> list[dict]:
    """Rows of one TABGP instance: an exact run, a heuristic, a bound; names and values drawn
    (module docstring of :mod:`.hostile`)."""
    inst = rng.choice(names) if names and rng.random() < 0.5 else f"er-{rng.randrange(99)}"
    prob = rng.choice(names) if names and rng.random() < 0.5 else "tabgp"
    opt = float(rng.choice((12, 40, 3.5, 1000)))
    base = {"suite": rng.choice(names) if names and rng.random() < 0.3 else "s",
            "problem": prob, "instance": inst, "instance_hash": f"h{rng.randrange(10**6)}",
            "options": "{}", "seconds": 0.1, "wall_seconds": 0.2, "time_limit": 5.0,
            "feasible": 1, "timestamp": "2026-01-01T00:00:00"}
    rows = [dict(base, kind="exact", method="highs:paper", seed=0, status="optimal",
                 objective=opt, bound=opt, gap=0.0),
            dict(base, kind="heuristic", method=rng.choice(names) if names else "random",
                 seed=1, status="feasible", objective=opt * 1.5),
            dict(base, kind="bound", method="lp", seed=0, status="feasible", objective=None,
                 bound=opt * 0.8)]
    if hostile:
        row = rng.choice(rows)
        col = rng.choice(("seed", "objective", "bound", "gap", "seconds", "feasible"))
        row[col] = rng.choice(("x", "NaN", float("nan"), "", "1e999", -1e308, 2**62))
        beyond = rng.choice(rows[1:])   # a bound beyond the optimum, a heuristic "optimal"
        if beyond["kind"] == "bound":
            beyond["bound"] = opt * rng.choice((1.25, 2.0, 10.0))
        else:
            beyond.update(status="optimal", objective=opt * rng.choice((0.31, 0.5, 0.9)))
    return rows


def _report_check(o: Outcome, dest: Path) -> str:
    """The boundary's rules, then no negative percentage printed and every Markdown table
    row with as many unescaped ``|`` as its header."""
    why = boundary(o)
    if why or o.code != 0:
        return why
    text = "\n".join(p.read_text(errors="replace") for p in sorted(dest.rglob("*.md"))
                     if p.is_file() and not p.is_symlink())
    neg = re.search(r"(?<![\w.])-\d+(\.\d+)?\s?%", text)
    if neg:
        line = next(ln for ln in text.splitlines() if neg.group(0) in ln)
        return f"negative gap printed in the report: {line.strip()[:200]}"
    width = None
    for line in text.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        n = len(re.findall(r"(?<!\\)\|", line))
        if width is None:
            width = n
        elif n != width:
            return f"a '|' in a name breaks the Markdown table: {line.strip()[:200]}"
    return ""


def draw_writes(work: Path, rng: random.Random) -> list[Case]:
    """A command that writes files, inside a watched sandbox with names from data, links at
    its output paths, read-only folders and very long names (issue 51, "outside")."""
    box, dest, cwd = sandbox(work)
    what = rng.choice(("report", "report", "references", "file", "file", "file", "reproduce"))
    names = hostile_names(box, rng)
    if what == "report":
        st = box / "store.sqlite"
        make_store(st, store_rows(rng, names, rng.random() < 0.5)
                   + store_rows(rng, names, False))
        if rng.random() < 0.5:
            _plant(dest / rng.choice(("report.md", "runs.csv", "summary.csv")), box, rng)
        return [Case(["report", "-o", str(dest), str(st)], lambda o: _report_check(o, dest),
                     cwd=cwd, watch=box, dest=dest)]
    if what == "references":
        how = rng.choice(("dangling", "long", "readonly", "readonly-parent", "file", "link"))
        target = dest
        if how == "dangling":
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(box / "outside" / "nothing", dest)
        elif how == "long":
            target = dest / ("e" * rng.choice((256, 300, 4000)))
        elif how in ("readonly", "readonly-parent"):
            dest.mkdir()
            os.chmod(dest if how == "readonly" else dest.parent, 0o555)
        elif how == "file":
            dest.mkdir()
            target = dest / "a-file"
            target.write_text("x")
        else:
            dest.mkdir()
            _plant(dest / "references.solu", box, rng)
        return [Case(["references", "--export", str(target), "inc_oxc", "--size-limit",
                      "300,2000"], boundary, cwd=cwd, watch=box, dest=dest, timeout=120)]
    if what == "reproduce":
        return _reproduce(work, box, dest, cwd, rng)
    return _file_output(work, box, dest, cwd, rng)


def _file_output(work: Path, box: Path, dest: Path, cwd: Path,
                 rng: random.Random) -> list[Case]:
    """``heuristic/solve/bound/validate -o``, ``export`` or ``generate -o`` onto a hostile path."""
    import dmlopt

    inst = work / "inst.json"
    gen_seed = rng.randrange(100)
    inst.write_text(dmlopt.io.to_json(dmlopt.generate(
        "tabgp", {"generator": "er", "n": 8, "tau": 2, "l": 2}, seed=gen_seed)))
    dest.mkdir(parents=True, exist_ok=True)
    how = rng.choice(("link", "link", "long", "readonly", "missing-parent", "dir", "name"))
    ext = rng.choice((".json", ".lp", ".mps"))
    out = dest / f"out{ext}"
    if how == "link":
        _plant(out, box, rng)
    elif how == "long":
        out = dest / ("o" * rng.choice((256, 300, 1000)) + ext)
    elif how == "readonly":
        os.chmod(dest, 0o555)
    elif how == "missing-parent":
        out = dest / "no" / "such" / f"out{ext}"
    elif how == "dir":
        out.mkdir()
    else:
        out = dest / (rng.choice(("..", ".", "|", "a|b")) + ext)
    cmd = rng.choice(("heuristic", "solve", "bound", "export", "generate", "validate"))
    argv = {"heuristic": ["heuristic", str(inst), "random", "-o", str(out)],
            "solve": ["solve", str(inst), "--time-limit", "5", "--threads", "1", "-o",
                      str(out)],
            "bound": ["bound", str(inst), "--method", rng.choice(("lp", "spectral")),
                      "--time-limit", "5", "-o", str(out)],
            "export": ["export", str(inst), str(out)],
            "generate": ["generate", "tabgp", "-g", "er", "-p", "n=8", "-o", str(out)],
            "validate": ["validate", str(inst), "-o", str(out)]}[cmd]
    return [Case(argv, boundary, cwd=cwd, watch=box, dest=dest, timeout=120)]


#: the quick table reproduced once per sweep, then re-rendered with links at its outputs
REPRO = ["reproduce", "tap", "flow-tracking", "--quick", "--workers", "1"]


def _reproduce(work: Path, box: Path, dest: Path, cwd: Path, rng: random.Random) -> list[Case]:
    """``reproduce`` of a quick table over a copy of a finished run whose figure and table
    paths are links out of the sandbox (its stores are complete: only the renderers run)."""
    cache = work.parent / "reproduce-cache"
    if not (cache / ".done").exists():
        from .hostile_run import run_case
        reset(cache)
        o = run_case(Case(REPRO + ["-o", str(cache / "out")], progress_boundary), 1800, 6 * 2**30)
        if o.code != 0:
            return [Case(REPRO + ["-o", str(dest)], progress_boundary, cwd=cwd, watch=box,
                         dest=dest, timeout=1800)]
        (cache / ".done").write_text("")
    shutil.copytree(cache / "out", dest, symlinks=True)
    outputs = [p for p in dest.rglob("*") if p.is_file() and p.suffix in (".png", ".md",
                                                                           ".csv", ".json")]
    for p in rng.sample(outputs, min(len(outputs), rng.randint(1, 4))):
        p.unlink()
        _plant(p, box, rng)
    return [Case(REPRO + ["-o", str(dest)], progress_boundary, cwd=cwd, watch=box, dest=dest,
                 timeout=600)]


SUITE_KEYS = {"grace": [1e308, 1e18, -1, 0, "x", float("nan")],
              "kill_limit": [1e308, 0, -5, 1e12, "x"], "bogus_key": [1, "x"],
              "name": ["../../x", "a|b", "/" + "x" * 300, ""]}


def draw_store(work: Path, rng: random.Random) -> list[Case]:
    """A results store with rows that cannot be true or hold strings where numbers belong
    through ``report`` and ``bench`` (resume), and a suite with hostile keys through ``bench``
    (issue 51, "the report trusts every stored row")."""
    box, dest, cwd = sandbox(work)
    names = [rng.choice(("a|b", "x|", "|", "inst|1", "m|n"))]
    st = box / "a" / "store.sqlite"
    st.parent.mkdir(parents=True, exist_ok=True)
    make_store(st, store_rows(rng, names, True) + store_rows(rng, [], True))
    cases = [Case(["report", "-o", str(dest), str(st)], lambda o: _report_check(o, dest),
                  cwd=cwd, watch=box, dest=dest)]
    suite = {"name": "hostile", "kill_limit": 30, "grace": 10}
    for key in rng.sample(sorted(SUITE_KEYS), rng.randint(1, 2)):
        suite[key] = rng.choice(SUITE_KEYS[key])
    toml = [f"{k} = {json.dumps(v) if v == v else 'nan'}" for k, v in suite.items()]
    toml = [t.replace("Infinity", "inf") for t in toml]
    toml += ["[[groups]]", 'problem = "tabgp"',
             'instances = [ { generator = "er", params = { n = 6, tau = 2, l = 2 }, '
             'seeds = [0] } ]', 'methods = [ { heuristic = "random", seeds = [0] } ]']
    sp = box / "a" / "suite.toml"
    sp.write_text("\n".join(toml) + "\n")
    resume = box / "a" / "b" / "resume.sqlite"
    make_store(resume, [dict(r, problem="tabgp") for r in store_rows(rng, [], True)])
    cases.append(Case(["bench", str(sp), "--list"], progress_boundary, cwd=cwd))
    cases.append(Case(["bench", str(sp), "-o", str(resume), "--workers", "1", "--max-runs",
                       "1"], progress_boundary, cwd=cwd, watch=box, dest=resume.parent,
                      timeout=120))
    return cases


def draw_interrupt(work: Path, rng: random.Random) -> list[Case]:
    """``references --export DIR`` stopped by Ctrl-C after a short delay, then run again: the
    re-run completes (exit 0); nothing from Pyomo on stdout (issue 51, "interrupted export")."""
    box, dest, cwd = sandbox(work)
    problem = rng.choice(("tap", "inc_oxc"))
    argv = ["references", "--export", str(dest), problem, "--size-limit", "2000,5000"]
    seen: dict[str, object] = {}

    def first(o: Outcome) -> str:
        seen["code"] = o.code
        done = o.out.startswith("wrote ") and (dest / "references.solu").exists()
        if done:   # finished (its last line said so) before the Ctrl-C landed: a
            seen["code"] = 0   # refusal of the re-run is right
        if o.code == 0 and (o.wall < delay or done):
            return ""
        if o.code == 0:
            return f"exit 0 after a Ctrl-C at {delay:g} s (the interruption was not seen)"
        other = [ln for ln in o.out.splitlines() if ln.strip() and not ln.startswith("wrote ")]
        if other:   # Pyomo's "ERROR: Constructing component ..." among others
            return f"output on stdout after Ctrl-C: {' / '.join(other)[:200]}"
        if o.outside:
            return f"wrote outside the destination: {', '.join(o.outside[:4])}"
        if o.code == "crash: ended by signal SIGINT":   # died of the Ctrl-C: the re-run
            return ""                                    # judges what it left
        if isinstance(o.code, str):
            return o.code
        if o.code not in (0, 2, 130):
            return f"exit {o.code} on Ctrl-C: {o.err.strip()[-200:]}"
        return ""

    def again(o: Outcome) -> str:
        why = boundary(o)
        if why:
            return why
        if o.code != 0 and seen.get("code") == 0:   # finished before the Ctrl-C: a refusal
            return ""                                 # of a finished export is right
        if o.code != 0:
            return (f"the re-run after Ctrl-C (first run: exit {seen.get('code')}) is "
                    f"refused: {o.err.strip()[:200]}")
        if not (dest / "references.solu").exists() or not (dest / "README.md").exists():
            return "the re-run left no references.solu or README.md"
        return ""

    delay = rng.choice((0.3, 0.7, 1.0, 1.5, 2.0, 2.5, 3.0))
    return [Case(argv, first, cwd=cwd, watch=box, dest=dest, sigint_after=delay, timeout=120),
            Case(argv, again, cwd=cwd, watch=box, dest=dest, timeout=180)]

"""``dmlopt reproduce``: a paper's tables and figures re-created by one command.

``dmlopt reproduce PAPER [TABLE ...] [--quick] [--workers N] [-o DIR] [--docs PAGE]`` runs the
shipped suites the tables need (:mod:`dmlopt.benchmarks.tables`) through the harness into
resumable stores ``DIR/<paper>[-quick]/stores/<suite>.sqlite`` (an interrupted run resumes where
it stopped: finished runs are never repeated), then renders each table to
``DIR/<paper>[-quick]/<table>.md`` (PNG figures beside it) and an index ``README.md`` there.
Nothing is written outside DIR, except the page given with ``--docs``, whose generated blocks

    <!-- reproduce: <paper>/<table> -->
    ...
    <!-- /reproduce -->

are replaced by the tables just rendered (the rest of the page is kept byte for byte).
``dmlopt reproduce --list [PAPER]`` lists every table with its runs and measured minutes.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import importlib
import json
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

from dmlopt import __version__, io
from dmlopt.errors import DmloptError

from . import papers as papers_mod
from . import suite as suite_mod
from .tables import Table, rows

#: default output directory (relative to the working directory, like ``dmlopt bench``)
DEFAULT_DIR = "results/reproduce"
_MARK = re.compile(r"<!-- reproduce: ([a-z0-9_]+)/([a-z0-9._-]+) -->\n(.*?)<!-- /reproduce -->",
                   re.S)


def tables(paper: str | None = None) -> list[Table]:
    """Every declared table, in paper order, or those of ``paper``: the tables of each paper's
    ``Paper.tables`` modules (:mod:`dmlopt.benchmarks.papers`), then its growth table."""
    known = papers_mod.all_papers() if paper is None else {paper: papers_mod.get(paper)}
    out: list[Table] = []
    for p, decl in known.items():
        for name in decl.tables:
            mod = importlib.import_module(name)
            out.extend(t for t in getattr(mod, "TABLES", []) if t.paper == p)
        if decl.growth is not None:
            from .tables.scale import growth_table

            out.append(growth_table(p))
    return out


def select(paper: str, names: list[str] | None) -> list[Table]:
    """The tables of ``paper`` named (all of them when ``names`` is empty)."""
    papers_mod.get(paper)  # an unknown paper is refused by name
    known = tables(paper)
    if not known:
        raise DmloptError(f"reproduce: paper {paper!r} declares no tables")
    if not names:
        return known
    by_name = {t.name: t for t in known}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise DmloptError(f"reproduce: {paper} has no table {missing[0]!r} (tables: "
                          f"{', '.join(by_name)})")
    return [by_name[n] for n in dict.fromkeys(names)]


def suites_of(chosen: list[Table], quick: bool) -> list[str]:
    """The suites the tables need, each once, in order."""
    return list(dict.fromkeys(s for t in chosen for s in (t.quick if quick else t.suites)))


def listing_data(paper: str | None = None) -> list[dict[str, Any]]:
    """Every table (of ``paper``, or all) with its runs and measured minutes, full and quick.

    Parameters
    ----------
    paper : a paper key (``tabgp``, ``rar``, ...), or None for every paper.

    Returns
    -------
    list of dict
        One entry per paper that declares tables: ``paper``, ``title``, ``runs``, ``minutes``,
        ``quick_runs``, ``quick_minutes`` (all its tables; tables that share suites count them
        once) and ``tables``, one ``{name, title, suites, quick_suites, runs, minutes,
        quick_runs, quick_minutes}`` per table.

    Raises
    ------
    DmloptError
        ``paper`` is unknown or declares no tables.
    """
    titles = {p: d.title for p, d in papers_mod.all_papers().items()}
    if paper is not None and paper not in titles:
        raise DmloptError(f"reproduce: paper {paper!r} is not one of {', '.join(titles)}")
    out = []
    counts: dict[str, int] = {}

    def runs(names: tuple[str, ...] | list[str]) -> int:
        for n in names:
            if n not in counts:
                counts[n] = suite_mod.count(n)
        return sum(counts[n] for n in names)

    for p in titles if paper is None else [paper]:
        found = tables(p)
        if paper is not None and not found:
            raise DmloptError(f"reproduce: paper {paper!r} declares no tables")
        if not found:
            continue
        full, quick = _totals(found)
        out.append({
            "paper": p, "title": titles[p], "runs": runs(full[0]), "minutes": full[1],
            "quick_runs": runs(quick[0]), "quick_minutes": quick[1],
            "tables": [{"name": t.name, "title": t.title, "suites": list(t.suites),
                        "quick_suites": list(t.quick), "runs": runs(t.suites),
                        "minutes": t.minutes, "quick_runs": runs(t.quick),
                        "quick_minutes": t.quick_minutes} for t in found]})
    return out


def listing(paper: str | None = None) -> str:
    """``--list``: one line per table: paper/name, runs and minutes (full and quick), title."""
    lines = []
    for p in listing_data(paper):
        lines.append(f"{p['paper']}: {p['title']}; all tables: {p['runs']} runs "
                     f"~{_minutes(p['minutes'])}, quick {p['quick_runs']} runs "
                     f"~{_minutes(p['quick_minutes'])}")
        for t in p["tables"]:
            lines.append(f"  {t['name']:<18} {t['runs']:>6} runs ~{_minutes(t['minutes'])}, "
                         f"quick {t['quick_runs']:>4} runs ~{_minutes(t['quick_minutes'])}  "
                         f"{t['title']}")
    return "\n".join(lines)


def _totals(found: list[Table]) -> tuple[tuple[list[str], float], tuple[list[str], float]]:
    """(suites, minutes) of running every table, full and quick: tables that share their suites
    share their minutes (the longest of them counts once)."""
    out = []
    for attr, mins in (("suites", "minutes"), ("quick", "quick_minutes")):
        groups: dict[tuple[str, ...], float] = {}
        for t in found:
            key = getattr(t, attr)
            groups[key] = max(groups.get(key, 0.0), getattr(t, mins))
        suites = list(dict.fromkeys(s for key in groups for s in key))
        out.append((suites, sum(groups.values())))
    return out[0], out[1]


def _minutes(m: float) -> str:
    if m < 10:
        return f"{m:.1f} min"
    return f"{m:.0f} min" if m < 90 else f"{m / 60:.1f} h"


def run(paper: str, names: list[str] | None = None, quick: bool = False,
        workers: int | None = None, outdir: str | Path = DEFAULT_DIR,
        docs: str | Path | None = None) -> list[Path]:
    """Run the suites of the chosen tables and render them; the paths written.

    Raises :class:`~dmlopt.errors.DmloptError` on an unknown paper or table, an output that is
    not a directory or a ``docs`` page that is not a regular file, before anything runs.
    :class:`KeyboardInterrupt` propagates after the finished runs are stored.
    """
    from . import runner, store
    from .run import run_suite

    chosen = select(paper, names)
    page = (_check_docs(docs, [f"{t.paper}/{t.name}" for t in chosen]) if docs is not None
            else None)
    if workers is not None and (isinstance(workers, bool) or not 1 <= workers <= 256):
        raise DmloptError(f"--workers: {workers} must be an integer in [1, 256]")
    base = io.check_output_dir(outdir, "-o")
    here = base / (f"{paper}-quick" if quick else paper)
    names_ = suites_of(chosen, quick)
    suites = [suite_mod.load(n) for n in names_]  # every suite checked before anything runs
    (here / "stores").mkdir(parents=True, exist_ok=True)
    # by the name the tables give (a shipped name, or a path to a suite file), each store named
    # by its suite's own name
    stores = {n: io.inside(here / "stores", f"{s.name}.sqlite")
              for n, s in zip(names_, suites, strict=True)}
    workers = workers or runner.default_workers()
    for n, s in zip(names_, suites, strict=True):
        before = len(store.read(stores[n])) if stores[n].exists() else 0
        with _LoadSampler() as load:
            run_suite(s, stores[n], workers, summary=sys.stderr)
        if len(store.read(stores[n])) > before:
            load.save(stores[n].with_suffix(".load.json"))
    written: list[Path] = []
    blocks: dict[str, str] = {}
    titles: dict[str, str] = {}
    for t in chosen:
        records = [r for n in (t.quick if quick else t.suites) for r in store.read(stores[n])]
        df = rows(records)
        body = t.render(df, here)
        titles[t.name] = t.title_of(df)
        run_minutes = sum(r.get("wall_seconds") or 0.0 for r in records) / 60
        machine = _machine([stores[n].with_suffix(".load.json")
                            for n in (t.quick if quick else t.suites)])
        text = _page(t, body, quick, len(records), run_minutes, titles[t.name], machine)
        path = io.inside(here, f"{t.name}.md")
        io.atomic_write_text(path, text)
        written.append(path)
        blocks[f"{t.paper}/{t.name}"] = text
    index = here / "README.md"
    io.atomic_write_text(index, _index(paper, chosen, quick, titles))
    written.append(index)
    if page is not None:
        written.extend(_figures(page, blocks, here))
        written.extend(embed(page, blocks))
    return written


_PNG = re.compile(r"\]\(([\w.-]+\.png)\)")


def _figures(page: Path, blocks: dict[str, str], here: Path) -> list[Path]:
    """Copy the figures the blocks link to into ``figures/`` beside the page and point the
    links there (the page's directory is where ``--docs`` points)."""
    out = []
    present = page.read_text()
    for key, text in blocks.items():
        if f"<!-- reproduce: {key} -->" not in present:
            continue
        for name in dict.fromkeys(_PNG.findall(text)):
            src = here / name
            if not src.is_file():
                continue
            dst = io.inside(page.parent / "figures", name)
            io.copy_file(src, dst)
            out.append(dst)
        blocks[key] = _PNG.sub(lambda m: f"](figures/{io.safe_name(m.group(1))})", text)
    return out


def _check_docs(docs: str | Path, keys: list[str]) -> Path:
    """The page ``--docs`` names, refused before anything runs unless it is a text page with
    the block of at least one of the tables ``keys`` (``paper/table``) to replace."""
    page = io.check_output(docs, "--docs")  # NUL bytes, names, a writable folder
    if not page.is_file():
        raise DmloptError(f"--docs: {page} is not an existing Markdown page")
    try:
        present = {f"{m.group(1)}/{m.group(2)}" for m in _MARK.finditer(page.read_text())}
    except (OSError, UnicodeDecodeError) as exc:
        raise DmloptError(f"--docs: {page} cannot be read as a text page ({exc})") from None
    if not present & set(keys):
        raise DmloptError(f"--docs: {page} has no block <!-- reproduce: {keys[0]} --> "
                          f"(nor one of the other tables chosen): nothing would be replaced")
    # a symbolic link: the page it points to is edited (its folder gets the figures); the link
    # itself is never replaced
    return page.resolve()


def _command(t: Table, quick: bool) -> str:
    return f"dmlopt reproduce {t.paper} {t.name}" + (" --quick" if quick else "")


def _page(t: Table, body: str, quick: bool, runs: int, run_minutes: float,
          title: str | None = None, machine: str = "") -> str:
    kind = "quick run (reduced: see the suites)" if quick else "full run"
    date = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    suites = ", ".join(t.quick if quick else t.suites)
    what = (f"{runs} runs of {suites}, {run_minutes:.1f} min of run time in all" if suites else
            "measured in the command's own process, no suites")
    return (f"### {title or t.title}\n\n"
            f"*Written by `{_command(t, quick)}` ({kind}) on {date}, dmlopt {__version__}: "
            f"{what}{'; ' + machine if machine else ''}.*\n\n{body.strip()}\n")


class _LoadSampler:
    """The machine's 1-minute load average every few seconds while the runs run, so a table of
    times says how busy the machine was (times on a shared machine are not one quiet core's)."""

    def __init__(self, every: float = 5.0) -> None:
        self.every, self.samples = every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            with contextlib.suppress(OSError):
                self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> _LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def save(self, path: Path) -> None:
        """Merge the range into ``path`` (a store's runs may come from several commands)."""
        if not self.samples:
            return
        seen = _read_load(path)
        lo = min([*self.samples, *seen.get("load", [])])
        hi = max([*self.samples, *seen.get("load", [])])
        io.atomic_write_text(path, json.dumps({"cores": os.cpu_count(), "load": [lo, hi]}))


def _read_load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
        lo, hi = (float(x) for x in data["load"])
        return {"cores": int(data["cores"]), "load": [lo, hi]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _machine(paths: list[Path]) -> str:
    """``machine: 2 cores, load average 7.8-10.6 while the runs ran`` from the stores' load
    files ("" when none was recorded)."""
    seen = [d for d in map(_read_load, paths) if d]
    if not seen:
        return ""
    lo = min(d["load"][0] for d in seen)
    hi = max(d["load"][1] for d in seen)
    span = f"{lo:.1f}" if hi - lo < 0.05 else f"{lo:.1f}-{hi:.1f}"
    return f"machine: {seen[0]['cores']} cores, load average {span} while the runs ran"


def _index(paper: str, chosen: list[Table], quick: bool,
           titles: dict[str, str] | None = None) -> str:
    lines = [f"# {papers_mod.get(paper).title}" + (" (quick run)" if quick else ""), ""]
    lines += [f"- [{(titles or {}).get(t.name, t.title)}]({t.name}.md)" for t in chosen]
    return "\n".join(lines) + "\n"


def embed(page: Path, blocks: dict[str, str]) -> list[Path]:
    """Replace the generated blocks of ``page`` whose key (``paper/table``) is in ``blocks``;
    the rest of the page is kept. Returns ``[page]`` if it changed."""
    text = page.read_text()
    seen: set[str] = set()

    def swap(m: re.Match) -> str:
        key = f"{m.group(1)}/{m.group(2)}"
        if key not in blocks:
            return m.group(0)
        seen.add(key)
        return f"<!-- reproduce: {key} -->\n{blocks[key].strip()}\n<!-- /reproduce -->"

    new = _MARK.sub(swap, text)
    for key in blocks:
        if key not in seen:
            print(f"dmlopt: {page} has no block <!-- reproduce: {key} -->; not embedded",
                  file=sys.stderr)
    if new == text:
        return []
    io.atomic_write_text(page, new)
    return [page]


def cmd_reproduce(args: Any) -> int:
    if args.list:
        if args.tables:
            raise DmloptError("reproduce --list takes at most a PAPER, no tables")
        print(json.dumps(listing_data(args.paper), indent=2) if args.json
              else listing(args.paper))
        return 0
    if args.json:
        raise DmloptError("reproduce: --json applies to --list only")
    if not args.paper:
        raise DmloptError(f"reproduce: PAPER is required (one of "
                          f"{', '.join(papers_mod.names())}; or --list)")
    out = args.output or DEFAULT_DIR
    try:
        written = run(args.paper, args.tables, quick=args.quick, workers=args.workers,
                      outdir=out, docs=args.docs)
    except KeyboardInterrupt as exc:
        if not getattr(exc, "reported", False):  # else the suite's runner said it already
            where = Path(out) / (f"{args.paper}-quick" if args.quick else args.paper)
            print(f"dmlopt: interrupted; finished runs are kept under {where}/stores; run the "
                  "same command to resume", file=sys.stderr)
        return 130
    for path in written:
        print(f"wrote {path}")
    return 0


def register(sub: Any) -> None:
    """Add ``reproduce`` to dmlopt's subcommands."""
    known = papers_mod.all_papers()
    r = sub.add_parser(
        "reproduce", help="re-create a paper's tables and figures (runs its suites)",
        description="Run the suites of a paper's tables through the harness (resumable stores "
        "under DIR) and write each table as Markdown (PNG for figures), the paper's values "
        "beside ours. Papers: " + ", ".join(f"{p} ({d.title})" for p, d in known.items()) + ".")
    r.add_argument("paper", nargs="?", choices=list(known), metavar="PAPER",
                   help=f"one of {', '.join(known)}")
    r.add_argument("tables", nargs="*", metavar="TABLE",
                   help="tables to make (default: all of the paper's; see --list)")
    r.add_argument("--quick", action="store_true",
                   help="reduced version of every table (at most 10 minutes per paper on 2 "
                   "cores)")
    r.add_argument("--workers", type=int, default=None, metavar="N",
                   help="parallel runs (default: the number of cores)")
    r.add_argument("-o", "--output", default=None, metavar="DIR",
                   help=f"output directory (default: {DEFAULT_DIR}); stores and tables go to "
                   "DIR/PAPER or DIR/PAPER-quick")
    r.add_argument("--docs", default=None, metavar="PAGE",
                   help="also replace the page's <!-- reproduce: PAPER/TABLE --> blocks "
                   "(default: write under DIR only)")
    r.add_argument("--list", action="store_true",
                   help="list the tables (of PAPER, or all) with runs and minutes, and exit")
    r.add_argument("--json", action="store_true",
                   help="with --list: print the tables as JSON (default: one line per table)")
    r.set_defaults(func=cmd_reproduce)

"""What README.md and docs/*.md name exists: repository paths, Python modules (and the
attributes named after them), benchmark suites, and `dmlopt` commands (each distinct subcommand
path answers ``--help``, and every ``--option`` a command line uses is in that help).

Paths under ``benchmarks/studies/`` are checked like any other. A reference is found in the
whole page, generated blocks included (they name tables' modules and suites too); the tests
read only text, and the commands' ``--help`` runs in this process (one call per subcommand
path), so the file runs in a few seconds.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import io
import re
import shlex
from pathlib import Path

import pytest

from dmlopt import cli
from dmlopt.benchmarks import suite as suite_mod

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: a repository path: one of the top-level folders, then path characters (not preceded by a path
#: character, so ``../benchmarks/...`` in a link and ``dmlopt.models`` are not taken here)
_PATH = re.compile(r"(?<![\w./<>-])((?:models|heuristics|benchmarks|docs|tests|data|dmlopt)"
                   r"/(?:[\w./-]|\{[\w.,-]*\})*)")
#: placeholders in a path (``docs/KEY.md``, ``fig4-r8-sS.json``) and Gymnasium ids
#: (``dmlopt/Nara-v0``): not files
_PLACEHOLDER = re.compile(r"(?:^|/)(?:KEY|NAME|FILE|DIR|PROBLEM|PAPER)(?:\.|/|$)|-s[A-Z]\.|-v\d+$")
#: entry-point groups (``dmlopt.papers``): dotted names that are not modules
_GROUPS = set(re.findall(r'entry-points\."(dmlopt\.[\w.]+)"',
                         (ROOT / "pyproject.toml").read_text()))
#: a dotted module or attribute path starting with ``dmlopt.``
_MODULE = re.compile(r"(?<![\w./-])(dmlopt(?:\.[A-Za-z_]\w*)+)")
_FENCE = re.compile(r"```[\w-]*\n(.*?)```", re.S)
_TICK = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
#: a suite name: ``paper-...`` / ``quick-...`` or ``...-qaplib`` in backticks, or any backticked
#: name right after the word "suite(s)"
_SUITE_NAME = re.compile(r"^(?:(?:paper|quick)-[a-z0-9_.-]+|[a-z0-9_-]+-qaplib)$")
_SUITE_AFTER = re.compile(r"\bsuites?\s+`([a-z0-9_.-]+)`")
_ENV = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _code_texts(text: str) -> list[str]:
    """The code of the page: fenced blocks and inline code spans (outside the blocks)."""
    blocks = _FENCE.findall(text)
    rest = _FENCE.sub("", text)
    return blocks + _TICK.findall(rest)


def paths(text: str) -> set[str]:
    """Repository paths named in code (``models/tap/bounds.py``, ``docs/x.md``)."""
    out = set()
    for code in _code_texts(text):
        for m in _PATH.finditer(code):
            p = m.group(1).rstrip(".")
            if code[m.end():m.end() + 1] in ("<", "*") or _PLACEHOLDER.search(p):
                continue  # a placeholder (`docs/<problem>.md`) or a pattern
            out |= _expand(p)
    return out


def _expand(path: str) -> set[str]:
    """``a/{x,y}.json`` -> ``{"a/x.json", "a/y.json"}`` (shell brace expansion, one level)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return {path}
    return set().union(*(_expand(path[:m.start()] + alt + path[m.end():])
                         for alt in m.group(1).split(",")))


def links(text: str) -> set[str]:
    """Relative link targets without their anchors (``../benchmarks/studies/x/NOTES.md``)."""
    out = set()
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        out.add(target.split("#")[0])
    return out


def modules(text: str) -> set[str]:
    """Dotted names starting with ``dmlopt.`` in code."""
    out = set()
    for code in _code_texts(text):
        out |= {m.group(1) for m in _MODULE.finditer(code)}
    return out - _GROUPS


def suites(text: str) -> set[str]:
    """Suite names: backticked ``paper-*`` / ``quick-*`` / ``*-qaplib``, names after "suite",
    and the argument of ``dmlopt bench`` when it is a name, not a file."""
    out = {t for t in _TICK.findall(text) if _SUITE_NAME.match(t)}
    out |= set(_SUITE_AFTER.findall(text))
    for argv in commands(text):
        if (argv[:1] == ["bench"] and len(argv) > 1 and not argv[1].endswith(".toml")
                and re.fullmatch(r"[a-z0-9_][a-z0-9_.-]*", argv[1])):
            out.add(argv[1])
    return out


def commands(text: str) -> list[list[str]]:
    """Every `dmlopt ...` command: lines of code blocks starting with it (after environment
    assignments and a ``$`` prompt) and inline code spans starting with it; the words after
    ``dmlopt``, up to a comment."""
    lines = []
    for block in _FENCE.findall(text):
        for line in block.splitlines():
            line = _ENV.sub("", line.strip().removeprefix("$ "))
            if line.startswith("dmlopt "):
                lines.append(line)
    rest = _FENCE.sub("", text)
    lines += [t for t in _TICK.findall(rest) if t.startswith("dmlopt ")]
    out = []
    for line in lines:
        line = line.split(" #")[0]
        try:
            words = shlex.split(line)[1:]
        except ValueError:
            words = line.split()[1:]
        if words:
            out.append(words)
    return out


@functools.cache
def _parser_tree() -> dict:
    """Subcommand tree of ``dmlopt``: name -> subtree (problem commands parse their own
    arguments, so they are leaves here)."""
    def tree(p) -> dict:
        for action in p._actions:  # noqa: SLF001 - argparse keeps the subparsers only there
            if action.__class__.__name__ == "_SubParsersAction":
                return {name: tree(sp) for name, sp in action.choices.items()}
        return {}
    return tree(cli.parser())


def subcommand(argv: list[str]) -> tuple[str, ...]:
    """The subcommand path of a command's words (``("bench",)``, ``("references", "add")``);
    empty when the first word is not a command."""
    path: list[str] = []
    node = _parser_tree()
    for word in argv:
        if word not in node:
            break
        path.append(word)
        node = node[word]
        if not node:
            break
    return tuple(path)


@functools.cache
def help_text(path: tuple[str, ...]) -> tuple[int, str]:
    """``dmlopt PATH --help`` in this process: (exit code, the help printed)."""
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main([*path, "--help"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue()


def _module_exists(name: str) -> bool:
    """``name`` is a module, or a module followed by attributes that exist."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        mod = ".".join(parts[:i])
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            continue
        obj = importlib.import_module(mod)
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_paths_exist(page):
    text = page.read_text()
    missing = sorted(p for p in paths(text) if not (ROOT / p).exists())
    missing += sorted(t for t in links(text) if not (page.parent / t).exists())
    assert not missing, f"{_id(page)} names paths that do not exist: {missing}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", _FENCE.sub("", page.read_text()), re.M)}


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_anchors_exist(page):
    """A link's ``#anchor`` (on this page or on a linked Markdown file) is one of its headings."""
    bad = []
    for target in _LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or "#" not in target:
            continue
        file, anchor = target.split("#", 1)
        dest = (page.parent / file) if file else page
        if dest.suffix == ".md" and dest.is_file() and anchor not in anchors(dest):
            bad.append(target)
    assert not bad, f"{_id(page)} links anchors that are no heading: {bad}"


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_modules_exist(page):
    missing = sorted(m for m in modules(page.read_text()) if not _module_exists(m))
    assert not missing, f"{_id(page)} names modules or attributes that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_suites_exist(page):
    names = set(suite_mod.shipped())
    missing = sorted(s for s in suites(page.read_text()) if s not in names)
    assert not missing, f"{_id(page)} names suites that are not shipped: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_commands_parse(page):
    bad = []
    for argv in commands(page.read_text()):
        path = subcommand(argv)
        if not path:
            bad.append(f"dmlopt {' '.join(argv)}: {argv[0]!r} is not a command")
            continue
        code, text = help_text(path)
        if code != 0:
            bad.append(f"dmlopt {' '.join(path)} --help exited {code}")
            continue
        for word in argv[len(path):]:
            opt = word.split("=")[0]
            if re.fullmatch(r"--[a-z][a-z0-9-]*", opt) and not re.search(
                    rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text):
                bad.append(f"dmlopt {' '.join(path)}: no option {opt}")
    assert not bad, f"{_id(page)}: {sorted(set(bad))}"


def test_the_checks_find_what_is_missing(tmp_path):
    """Each check reports a name that does not exist (the test is not vacuous)."""
    text = ("See `models/tap/nothing_here.py`, `dmlopt.models.tap.no_such_thing`, suite\n"
            "`paper-nothing`, and\n\n```sh\ndmlopt nosuchcommand x\n"
            "NUMBA_NUM_THREADS=1 dmlopt bound f.json --no-such-option 3\n```\n")
    assert paths(text) == {"models/tap/nothing_here.py"}
    assert not (ROOT / "models/tap/nothing_here.py").exists()
    assert modules(text) == {"dmlopt.models.tap.no_such_thing"}
    assert not _module_exists("dmlopt.models.tap.no_such_thing")
    assert _module_exists("dmlopt.models.tap.qaplib") and _module_exists("dmlopt.solve")
    assert suites(text) == {"paper-nothing"}
    assert _slug("`rts` on QAPLIB: n = 12-100") == "rts-on-qaplib-n--12-100"
    assert [subcommand(a) for a in commands(text)] == [(), ("bound",)]
    page = tmp_path / "a.md"
    page.write_text("# A page\n\n```sh\n# not a heading\n```\n## B: `c`\n")
    assert anchors(page) == {"a-page", "b-c"}
    code, text_help = help_text(("bound",))
    assert code == 0 and "--method" in text_help and "--no-such-option" not in text_help

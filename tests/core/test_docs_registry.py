"""The docs agree with the registry (``dmlopt list PROBLEM`` is the source).

Three rules, over README.md and every problem page ``docs/<problem>.md``:

* **names**: every name in the README catalogue row of a problem is a formulation, heuristic,
  bound or generator of that problem, in its column, and every registered one is listed there;
  on a problem page, a table column headed by a backticked name or headed ``heuristic``,
  ``method``, ``formulation``, ``bound`` or ``generator`` names registered entries only.
* **equation ranges**: a formulation described as ```NAME` (eqs. a-b`` or ```NAME` (... (a)-(b)``
  has the same range in its registry description (the first range of the parentheses).
* **defaults**: an option written ```NAME` (default X``, ```NAME`, default X`` or, in a list of
  options, ```NAME` (X)`` has default X in the options model of an entry that declares it; an
  episode length written ``delta (N requests)`` outside a generated block is the generator's
  default for that topology.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dmlopt import registry
from dmlopt.benchmarks import papers

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
#: the problems whose names a page may use, as each paper declares them (``Paper.docs``: the
#: Flow Tracking page of paper 000 also covers infer_tap's heuristics)
PAGES = {page: probs for paper in papers.all_papers().values()
         for page, probs in paper.docs.items()}
KINDS = ("formulations", "heuristics", "bounds", "generators")
_TICK = re.compile(r"`([^`]+)`")
_GENERATED = re.compile(r"<!-- reproduce: .*? -->.*?<!-- /reproduce -->", re.S)
_RANGE = re.compile(r"(?:eqs?\.\s*\(?(\d+)\)?\s*-\s*\(?(\d+)\)?)|(?:\((\d+)\)\s*-\s*\((\d+)\))")


def entries(problem: str) -> dict[str, dict]:
    """kind -> {name: entry} of ``problem``."""
    p = registry.get(problem)
    return {"formulations": p.formulation_entries, "heuristics": p.heuristics,
            "bounds": p.bound_entries, "generators": p.generator_entries}


def _all_names(problems: tuple[str, ...]) -> set[str]:
    out: set[str] = set()
    for prob in problems:
        for kind, found in entries(prob).items():
            out |= set(found)
            if kind == "formulations":
                out |= {f"{s}:{f}" for f in found for s in ("highs", "scip")}
    return out


def _strip_parens(text: str) -> str:
    """``text`` without its (possibly nested) parenthesised parts."""
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def catalogue() -> dict[str, dict[str, list[str]]]:
    """problem -> kind -> the names of the README catalogue row (outside parentheses)."""
    text = README.read_text()
    part = text[text.index("## Catalogue"):]
    table = _tables(part)[0]
    head = table[0]
    out: dict[str, dict[str, list[str]]] = {}
    for row in table[1:]:
        cells = dict(zip(head, row, strict=True))
        problem = _TICK.search(cells["problem"]).group(1)
        out[problem] = {k: _TICK.findall(_strip_parens(cells[k.replace("formulations",
                                                                      "exact formulations")]))
                        for k in KINDS}
    return out


def test_catalogue_lists_exactly_the_registered_names():
    rows = catalogue()
    assert set(rows) == set(registry.names())
    wrong = []
    for problem, kinds in rows.items():
        registered = entries(problem)
        for kind, names in kinds.items():
            if set(names) != set(registered[kind]):
                wrong.append(f"{problem} {kind}: README {sorted(names)}, registry "
                             f"{sorted(registered[kind])}")
    assert not wrong, "\n".join(wrong)


_METHOD_COLUMNS = ("heuristic", "method", "formulation", "bound", "generator", "allocator")


def _tables(text: str) -> list[list[list[str]]]:
    """The Markdown tables of ``text``: lists of rows of cells (the separator row dropped)."""
    tables, cur = [], []
    for ln in text.splitlines() + [""]:
        if ln.startswith("|"):
            cur.append(_cells(ln))
        elif cur:
            tables.append([r for i, r in enumerate(cur) if i != 1])
            cur = []
    return tables


def _name_of(cell: str) -> str | None:
    """The method name a cell starts with: ```name``` then options, or None."""
    m = re.match(r"\*{0,2}`([^`]+)`", cell)
    if m is None:
        return None
    name = m.group(1).split()[0]
    return name if re.fullmatch(r"[a-z][a-z0-9.:-]*", name) else None


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_tables_name_registered_methods(page):
    known = _all_names(PAGES[page])
    bad = []
    for table in _tables((DOCS / f"{page}.md").read_text()):
        head = table[0]
        for j, h in enumerate(head):
            col = h.lower()
            name = _name_of(h)
            if name is not None and re.fullmatch(r"[a-z][a-z0-9:-]*", name) \
                    and not name.isdigit() and name not in known:
                bad.append(f"header {h!r}")
            if any(col.startswith(k) for k in _METHOD_COLUMNS):
                for row in table[1:]:
                    if j < len(row) and (n := _name_of(row[j])) is not None and n not in known:
                        bad.append(f"{h}: {row[j]!r}")
    assert not bad, f"docs/{page}.md names what {PAGES[page]} does not register: {bad}"


def _ranges(text: str) -> set[tuple[str, str]]:
    return {(m[0] or m[2], m[1] or m[3]) for m in _RANGE.findall(text)}


def _parenthesised(text: str, start: int) -> str:
    """The text inside the parentheses opening at ``text[start]`` (nesting respected)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i]
    return text[start + 1:]


def _descriptions_of_ranges() -> list[tuple[str, str, str, str]]:
    """(where, problem, formulation, parenthesised text) of every ```NAME` (...)`` naming a
    formulation in the README catalogue row of its problem and on its problem page."""
    out = []
    readme = README.read_text()
    for problem in catalogue():
        row = next(ln for ln in readme.splitlines() if ln.startswith(f"| `{problem}` "))
        for m in re.finditer(r"`([a-z-]+)` \(", row):
            if m.group(1) in entries(problem)["formulations"]:
                out.append(("README.md", problem, m.group(1), _parenthesised(row, m.end() - 1)))
    for page, probs in PAGES.items():
        text = (DOCS / f"{page}.md").read_text()
        for m in re.finditer(r"`([a-z-]+)` \(", text):
            for prob in probs:
                if m.group(1) in entries(prob)["formulations"]:
                    out.append((f"docs/{page}.md", prob, m.group(1),
                                _parenthesised(text, m.end() - 1)))
    return out


def test_equation_ranges_match_the_registry():
    bad = []
    checked = 0
    for where, problem, name, text in _descriptions_of_ranges():
        first = _RANGE.search(text)  # the range of the formulation (later ones: details)
        if first is None:
            continue
        stated = _ranges(first.group(0))
        checked += 1
        desc = entries(problem)["formulations"][name].description
        if not stated <= _ranges(desc):
            bad.append(f"{where}: {problem} `{name}` eqs. {sorted(stated)}; registry: {desc!r}")
    assert checked >= 3, "the rule found no equation range to check"
    assert not bad, "\n".join(bad)


_DEFAULT = re.compile(r"`([a-z_]+)`(?:\s+\(default\s+|,\s+default\s+|\s+\()"
                      r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)(?=[)\s,;:])")


def _defaults(problem: str) -> dict[str, set]:
    """option name -> the defaults it has in the entries of ``problem`` that declare it."""
    out: dict[str, set] = {}
    for kind, found in entries(problem).items():
        if kind == "formulations":
            continue
        for entry in found.values():
            model = getattr(entry, "Options", None) or getattr(entry, "Params", None)
            for key, field in getattr(model, "model_fields", {}).items():
                out.setdefault(key, set()).add(field.default)
    return out


def _same(value: str, default: object) -> bool:
    if isinstance(default, bool) or not isinstance(default, int | float):
        return False
    return float(value) == float(default)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_stated_defaults_match_the_options_models(page):
    text = (DOCS / f"{page}.md").read_text()
    defaults: dict[str, set] = {}
    for prob in PAGES[page]:
        for k, v in _defaults(prob).items():
            defaults.setdefault(k, set()).update(v)
    bad = []
    for m in _DEFAULT.finditer(text):
        key, value = m.groups()
        if key in defaults and not any(_same(value, d) for d in defaults[key]):
            bad.append(f"`{key}` {value}: registry {sorted(map(str, defaults[key]))}")
    assert not bad, f"docs/{page}.md: {bad}"


def test_stated_episode_lengths_are_the_generator_defaults():
    """``TOPOLOGY (N requests)`` in prose states the default episode length of a topology."""
    desc = registry.get("nara").generator_entries["uniform"].Params.model_fields[
        "n_requests"].description
    default = {t: int(n) for t, n in re.findall(r"(alpha|beta|gamma|delta)[^\d(]*?(\d+)",
                                                desc.split("default:")[1])}
    assert default.get("delta") and default.get("gamma"), desc
    bad = []
    for path in [README, *DOCS.glob("*.md")]:
        text = _GENERATED.sub("", path.read_text())
        for m in re.finditer(r"\b(alpha|beta|gamma|delta) \((\d+)(?: requests|\))", text):
            if int(m.group(2)) != default[m.group(1)]:
                bad.append(f"{path.name}: {m.group(0)} (default {default[m.group(1)]})")
    assert not bad, bad

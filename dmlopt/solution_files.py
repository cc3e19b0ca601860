"""Solution files written by other solvers, read back onto the Pyomo model dmlopt exported.

``dmlopt export`` writes LP and MPS files with symbolic names: Pyomo's LP labeler turns the
variable ``x[1,2]`` into ``x(1_2)`` (``[]{}`` become ``()()``, every character other than a
letter, a digit, ``(``, ``)`` or ``_`` becomes ``_``), in LP and MPS files alike. This module
reads the solution file a solver wrote for such a model (:func:`parse`), recognising the format
by its content, and sets the values on the model's variables (:func:`assign`), checking every
name, value, bound and integrality on the way. It names no problem: the caller builds the model
and decodes it with the formulation's own decoder (:func:`dmlopt.read_solution`).

Formats
-------
``highs``
    ``Highs.writeSolution`` in its raw style (0, and the sparse raw style 4): ``Model status``,
    ``# Primal solution values``, ``# Columns N`` then ``name value`` lines.
``highs-pretty``
    ``Highs.writeSolution`` in its pretty style (1): a ``Columns`` table with ``Index Status
    Lower Upper Primal Dual [Type] Name`` columns.
``scip``
    SCIP's ``.sol`` (``writeBestSol``, ``write solution``): ``objective value: V`` then ``name
    value (obj:c)`` lines; variables at zero are left out.
``gurobi``
    Gurobi's ``.sol`` and the plain format: ``name value`` lines, ``#`` comments (Gurobi writes
    ``# Objective value = V``); variables at zero may be left out.
``cplex``
    CPLEX's XML ``.sol``: ``<variable name="..." value="..."/>`` elements of one
    ``<CPLEXSolution>``.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dmlopt import io
from dmlopt.errors import InstanceError

#: the formats :func:`parse` reads, with what they look like (for error messages)
FORMATS = {
    "highs": "HiGHS writeSolution, raw style ('Model status' ... '# Columns N', 'name value')",
    "highs-pretty": "HiGHS writeSolution, pretty style ('Columns' table with a Name column)",
    "scip": "SCIP .sol ('objective value: V', then 'name value (obj:c)' lines)",
    "gurobi": "Gurobi .sol or plain 'name value' lines ('#' comments)",
    "cplex": "CPLEX XML .sol (<CPLEXSolution> with <variable name=... value=...>)",
}

#: a value may lie this far outside a variable's bounds; an integer this far from an integer
TOL = 1e-6

#: relative precision of the values a format prints beyond :data:`TOL` (HiGHS's pretty style
#: prints 6 significant digits: a value at a bound may print up to half a unit beyond it)
PRECISION = {"highs-pretty": 5e-6}

#: the column Pyomo adds for a constant term of the objective (always 1)
CONSTANT_COLUMN = "ONE_VAR_CONSTANT"

_EXPECTED = ("expected one of: " + "; ".join(FORMATS.values()) + "; or a dmlopt solution JSON")


@dataclass(frozen=True)
class SolutionFile:
    """A parsed solution file: the format, the ``(name, value)`` pairs in file order, and the
    objective value the file reports (None when it reports none)."""

    format: str
    values: list[tuple[str, float]]
    objective: float | None


def _text(path: Path) -> str:
    raw = io.read_bytes(path)
    if b"\0" in raw[:4096]:
        raise InstanceError("solution", str(path), f"is binary, not a solution file ({_EXPECTED})")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError("solution", str(path),
                            f"is not UTF-8 text (byte {exc.start}); {_EXPECTED}") from None


def is_json(path: str | Path) -> bool:
    """Whether the file at ``path`` is JSON (it parses as JSON, or starts like a JSON object,
    array or string).

    Parameters
    ----------
    path : the file, read with the bounded reader (:func:`dmlopt.io.read_bytes`).

    Returns
    -------
    bool
        True for a dmlopt solution JSON (or any JSON value), False for a solver's file.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    text = _text(Path(path))
    if text.lstrip()[:1] in ("{", "[", '"'):
        return True
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _number(token: str, path: Path, line: int, name: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise InstanceError("solution", str(path), f"line {line}: {name}: {token!r} is not a "
                            "number") from None
    if not math.isfinite(value):
        raise InstanceError(f"solution {path}", name, f"has the non-finite value {token!r} "
                            f"(line {line})")
    return value


def detect(text: str) -> str:
    """The format of a solution file's text, from its content.

    Parameters
    ----------
    text : the file's text.

    Returns
    -------
    str
        A key of :data:`FORMATS`, ``"json"``, ``"glpsol"`` (HiGHS styles 2 and 3, which name no
        column), or ``""`` when it is none of them.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    first = lines[0]
    if first[0] in "{[":
        return "json"
    if first.startswith("<"):
        return "cplex" if "<CPLEXSolution" in text[:4096] else ""
    if first == "Model status" or first.startswith("Model status"):
        return "highs"
    if first == "Columns" and len(lines) > 1 and lines[1].split()[:2] == ["Index", "Status"]:
        return "highs-pretty"
    if first.startswith(("c Problem:", "Problem:")):
        return "glpsol"
    if first.lower().startswith(("objective value:", "solution status:")):
        return "scip"
    body = [ln for ln in lines if not ln.startswith("#")]
    if all(len(ln.split()) == 2 for ln in body):
        return "gurobi"
    return ""


def parse(path: str | Path) -> SolutionFile:
    """Read a solution file with the bounded reader (:func:`dmlopt.io.read_bytes`: a regular
    file, at most ``DMLOPT_MAX_FILE_BYTES``) and parse it in the format its content shows.

    Parameters
    ----------
    path : the file a solver wrote (see the module's list of formats).

    Returns
    -------
    SolutionFile
        The format, the ``(name, value)`` pairs as written, the objective the file reports.

    Raises
    ------
    InstanceError
        A file that is not one of the formats (naming the formats expected), a value that is not
        a finite number, a truncated file, or a name given twice.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    path = Path(path)
    text = _text(path)
    fmt = detect(text)
    if fmt == "json":
        raise InstanceError("solution", str(path), "is JSON: read it with dmlopt.load_solution")
    if fmt == "glpsol":
        raise InstanceError("solution", str(path), "is a HiGHS glpsol-style file (styles 2 and "
                            "3), which names no column; write it with style 0 (raw) or 1 "
                            "(pretty)")
    if not fmt:
        raise InstanceError("solution", str(path), f"is not a solution file dmlopt reads; "
                            f"{_EXPECTED}")
    reader = {"highs": _highs, "highs-pretty": _highs_pretty, "scip": _scip,
              "gurobi": _gurobi, "cplex": _cplex}[fmt]
    values, objective = reader(text, path)
    seen: set[str] = set()
    for name, _ in values:
        if name in seen:
            raise InstanceError(f"solution {path}", name, "is given twice")
        seen.add(name)
    return SolutionFile(fmt, values, objective)


def _highs(text: str, path: Path) -> tuple[list[tuple[str, float]], float | None]:
    lines = text.splitlines()
    objective = None
    for i, line in enumerate(lines):
        if line.startswith("Objective "):
            objective = _number(line.split()[1], path, i + 1, "Objective")
        if line.startswith("# Columns"):
            break
        if line.startswith("# Dual solution values"):
            raise InstanceError("solution", str(path), "holds no primal solution (no '# Columns' "
                                "section)")
    else:
        raise InstanceError("solution", str(path), "is a truncated HiGHS solution: no "
                            "'# Columns N' line")
    head = lines[i].split()
    try:
        count = abs(int(head[2]))
    except (IndexError, ValueError):
        raise InstanceError("solution", str(path), f"line {i + 1}: {lines[i]!r} is not "
                            "'# Columns N'") from None
    out = []
    for j in range(i + 1, i + 1 + count):
        if j >= len(lines) or lines[j].startswith("#"):
            raise InstanceError("solution", str(path), f"is truncated: {count} columns "
                                f"announced, {len(out)} found")
        tokens = lines[j].split()
        if len(tokens) not in (2, 3):  # the sparse style adds the column index
            raise InstanceError("solution", str(path), f"line {j + 1}: {lines[j][:80]!r} is "
                                "not 'name value'")
        out.append((tokens[0], _number(tokens[1], path, j + 1, tokens[0])))
    return out, objective


_PRETTY_STATUS = re.compile(r"^[A-Za-z]+$")


def _highs_pretty(text: str, path: Path) -> tuple[list[tuple[str, float]], float | None]:
    lines = text.splitlines()
    header = lines[1].split() if len(lines) > 1 else []
    if "Primal" not in header or header[-1] != "Name":
        raise InstanceError("solution", str(path), "line 2: a HiGHS pretty 'Columns' header "
                            "with Primal and Name columns was expected")
    out = []
    objective = None
    end = None
    for j in range(2, len(lines)):
        line = lines[j]
        if not line.strip():
            continue
        if line.strip() == "Rows" or line.startswith("Model status"):
            end = j
            break
        tokens = line.split()
        # Index [Status] Lower Upper Primal [Dual] [Type] Name: Lower and Upper are always
        # printed, Status (BS, LB, ...) only for a basic solution
        k = 1
        if len(tokens) > 1 and _PRETTY_STATUS.match(tokens[1]) and \
                tokens[1].lower() not in ("inf", "infinity", "nan"):
            k = 2
        if len(tokens) < k + 4 or not tokens[0].isdigit():
            raise InstanceError("solution", str(path), f"line {j + 1}: {line[:80]!r} is not a "
                                "row of the Columns table")
        name = tokens[-1]
        out.append((name, _number(tokens[k + 2], path, j + 1, name)))
    if end is None:
        raise InstanceError("solution", str(path), "is a truncated HiGHS pretty solution: the "
                            "Columns table does not end (no 'Rows' or 'Model status')")
    for j in range(end, len(lines)):
        if lines[j].startswith("Objective value:"):
            objective = _number(lines[j].split(":", 1)[1].strip(), path, j + 1, "objective")
    return out, objective


def _scip(text: str, path: Path) -> tuple[list[tuple[str, float]], float | None]:
    out = []
    objective = None
    for j, line in enumerate(text.splitlines()):
        s = line.strip()
        if not s:
            continue
        low = s.lower()
        if low.startswith("solution status:"):
            continue
        if low.startswith("objective value:"):
            objective = _number(s.split(":", 1)[1].strip(), path, j + 1, "objective value")
            continue
        if low.startswith("no solution"):
            raise InstanceError("solution", str(path), "says SCIP found no solution")
        tokens = s.split()
        if len(tokens) == 3 and tokens[2].startswith("(obj:"):
            tokens = tokens[:2]
        if len(tokens) != 2:
            raise InstanceError("solution", str(path), f"line {j + 1}: {s[:80]!r} is not "
                                "'name value (obj:c)'")
        out.append((tokens[0], _number(tokens[1], path, j + 1, tokens[0])))
    if objective is None:
        raise InstanceError("solution", str(path), "is a SCIP solution without its "
                            "'objective value:' line")
    return out, objective


_GUROBI_OBJ = re.compile(r"#\s*objective value\s*=\s*(\S+)", re.I)


def _gurobi(text: str, path: Path) -> tuple[list[tuple[str, float]], float | None]:
    out = []
    objective = None
    for j, line in enumerate(text.splitlines()):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = _GUROBI_OBJ.match(s)
            if m:
                objective = _number(m.group(1), path, j + 1, "objective value")
            continue
        name, value = s.split()
        out.append((name, _number(value, path, j + 1, name)))
    return out, objective


def _cplex(text: str, path: Path) -> tuple[list[tuple[str, float]], float | None]:
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise InstanceError("solution", str(path), "declares a DOCTYPE or an entity, which a "
                            "CPLEX solution file does not: not read")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InstanceError("solution", str(path), f"is not well-formed XML ({exc})") from None
    sols = [root] if root.tag == "CPLEXSolution" else root.findall("CPLEXSolution")
    if len(sols) != 1:
        raise InstanceError("solution", str(path), f"holds {len(sols)} CPLEX solutions "
                            "(<CPLEXSolution>); give a file with exactly one")
    sol = sols[0]
    objective = None
    header = sol.find("header")
    if header is not None and header.get("objectiveValue") is not None:
        objective = _number(header.get("objectiveValue", ""), path, 0, "objectiveValue")
    out = []
    for var in sol.iter("variable"):
        name, value = var.get("name"), var.get("value")
        if name is None or value is None:
            raise InstanceError("solution", str(path), "has a <variable> without a name or a "
                                "value attribute")
        out.append((name, _number(value, path, 0, name)))
    return out, objective


def label(var: Any) -> str:
    """The name ``dmlopt export`` gives a Pyomo variable in LP and MPS files.

    Parameters
    ----------
    var : a Pyomo variable (a ``VarData``).

    Returns
    -------
    str
        Pyomo's symbolic label (``symbolic_solver_labels``, its LP labeler, used by its LP and
        MPS writers alike): ``x[1,2]`` -> ``x(1_2)``.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    from pyomo.core.base.label import cpxlp_label_from_name

    return cpxlp_label_from_name(var.getname(fully_qualified=True))


def labels(model: Any) -> dict[str, Any]:
    """Every variable of ``model`` by its exported name (:func:`label`).

    Parameters
    ----------
    model : a Pyomo model.

    Returns
    -------
    dict
        name -> variable.

    Raises
    ------
    InstanceError
        If two variables share a name (a file could not tell them apart).

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    import pyomo.environ as pyo

    out: dict[str, Any] = {}
    for var in model.component_data_objects(pyo.Var, descend_into=True):
        name = label(var)
        if name in out:
            raise InstanceError("model", name, f"names two variables ({out[name].name} and "
                                f"{var.name}): their values cannot be told apart")
        out[name] = var
    return out


def _bounds(var: Any) -> tuple[float, float]:
    lb, ub = var.bounds
    return (-math.inf if lb is None else float(lb)), (math.inf if ub is None else float(ub))


def _fits(var: Any, value: float, where: str, rel: float = 0.0) -> float:
    """``value`` checked against the bounds and integrality of ``var`` (rounded if integer);
    ``rel``: the relative precision of the file's values, added to :data:`TOL`."""
    lb, ub = _bounds(var)
    tol = TOL + rel * abs(value)
    if value < lb - tol or value > ub + tol:
        raise InstanceError(where, value, f"is outside the bounds [{lb:g}, {ub:g}] of "
                            f"{var.name} (tolerance {tol:g})")
    value = min(max(value, lb), ub)
    if var.is_integer():
        r = round(value)
        if abs(value - r) > TOL:
            raise InstanceError(where, value, f"is not integral ({var.name} is an integer "
                                f"variable; tolerance {TOL:g})")
        value = float(r)
    return value


def assign(model: Any, parsed: SolutionFile, path: str | Path = "") -> dict[str, int]:
    """Set every variable of ``model`` from a parsed solution file.

    Every name in the file must be a variable of the model (or Pyomo's ``ONE_VAR_CONSTANT`` at
    1), every value finite and within the variable's bounds (tolerance :data:`TOL`, integers
    rounded). A variable the file leaves out (SCIP and Gurobi omit zeros) is set to 0 when 0 is
    within its bounds; a fixed variable keeps its value. A file that names no column of the
    model is refused (a SCIP file of an all-zero solution names Pyomo's constant column when the
    objective has a constant term, and is read).

    Parameters
    ----------
    model : the Pyomo model built for the instance and formulation the file was written for.
    parsed : the file, from :func:`parse`.
    path : the file's path, for messages.

    Returns
    -------
    dict
        ``named`` (variables set from the file), ``defaulted`` (left out, set to 0 or their
        fixed value).

    Raises
    ------
    InstanceError
        An unknown name (the file is for another instance or formulation), a value out of
        bounds or not integral, a file naming none of the model's variables, or a variable left
        out whose bounds exclude 0.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    where = f"solution {path}" if path else "solution"
    by_name = labels(model)
    given: dict[str, float] = {}
    constant = False
    for name, value in parsed.values:
        if name == CONSTANT_COLUMN and name not in by_name:
            if abs(value - 1.0) > TOL:
                raise InstanceError(f"{where}: {name}", value, "must be 1 (the objective's "
                                    "constant term)")
            constant = True
            continue
        var = by_name.get(name)
        if var is None:
            near = _example(by_name)
            raise InstanceError(where, name, f"is not a variable of this model (its variables "
                                f"are named like {near}): the file was written for another "
                                "instance or formulation")
        value = _fits(var, value, f"{where}: {name}", PRECISION.get(parsed.format, 0.0))
        if var.fixed:
            if abs(value - float(var.value)) > TOL:
                raise InstanceError(f"{where}: {name}", value, f"differs from the value "
                                    f"{var.value} the model fixes")
            continue
        given[name] = value
    if not given and not constant:
        raise InstanceError("solution", str(path) or None,
                            f"names none of the model's {len(by_name)} variables (a "
                            f"{FORMATS[parsed.format].split(' (')[0]} file with no variable of "
                            "this model)")
    defaulted = 0
    for name, var in by_name.items():
        if name in given:
            var.set_value(given[name], skip_validation=True)
            continue
        if var.fixed:
            continue
        lb, ub = _bounds(var)
        if not lb <= 0.0 <= ub:
            raise InstanceError(where, name, f"is missing, and 0 is outside its bounds "
                                f"[{lb:g}, {ub:g}]")
        var.set_value(0.0, skip_validation=True)
        defaulted += 1
    return {"named": len(given), "defaulted": defaulted}


def _example(by_name: dict[str, Any]) -> str:
    names = list(by_name)
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def check_objective(model: Any, parsed: SolutionFile, path: str | Path = "",
                    rel_tol: float = 1e-6) -> float:
    """The model's objective at the values set, checked against the one the file reports.

    Parameters
    ----------
    model : the model, its variables set by :func:`assign`.
    parsed : the file, from :func:`parse`.
    path : the file's path, for messages.
    rel_tol : relative tolerance (absolute below 1).

    Returns
    -------
    float
        The model's objective (NaN for a model without exactly one active objective).

    Raises
    ------
    InstanceError
        If the file reports an objective these values do not give: the file was written for
        another instance (with the same variable names) or formulation.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        return math.nan
    value = float(pyo.value(objs[0].expr))
    if parsed.objective is not None and \
            abs(value - parsed.objective) > rel_tol * max(1.0, abs(value)):
        raise InstanceError(f"solution {path}".strip(), parsed.objective,
                            f"is the objective the file reports, but its values give {value!r} "
                            "in this model: the file was written for another instance or "
                            "formulation")
    return value

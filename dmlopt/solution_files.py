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
    value (obj:c)`` lines; variables at zero are left out (as in HiGHS's sparse style 4).
``gurobi``
    Gurobi's ``.sol`` and the plain format: ``name value`` lines, ``#`` comments (Gurobi writes
    ``# Objective value = V``); every column is listed (as Gurobi writes it).
``cplex``
    CPLEX's XML ``.sol``: ``<variable name="..." value="..."/>`` elements of one
    ``<CPLEXSolution>``.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
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


#: longest line read from a text solution file (a longer one is refused, not buffered)
MAX_LINE_BYTES = 1 << 16

#: formats that list every column of the model (HiGHS's sparse raw style 4, announced by a
#: negative '# Columns -N', and SCIP list only the nonzeros)
COMPLETE = frozenset({"highs", "highs-pretty", "gurobi", "cplex"})


@dataclass(frozen=True)
class SolutionFile:
    """A parsed solution file: the format, the ``(name, value)`` pairs in file order (an
    iterable: for a file read by :func:`parse`, streamed from the file again at each pass), the
    objective value the file reports (None when it reports none), and whether the format lists
    every column of the model (``complete``) or only the nonzeros."""

    format: str
    values: Iterable[tuple[str, float]]
    objective: float | None
    complete: bool = False


def check_path(path: Any, field: str = "solution") -> Path:
    """``path`` as a Path, refused as :func:`dmlopt.load` refuses an instance argument.

    Parameters
    ----------
    path : the argument given for a file.
    field : the argument's name, for the message.

    Returns
    -------
    Path
        The path.

    Raises
    ------
    InstanceError
        Not a str or a Path (None, an int, bytes), or a name holding a NUL byte.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    if not isinstance(path, str | Path):
        raise InstanceError(field, type(path).__name__, "must be a path (a str or a "
                            "pathlib.Path)")
    if "\x00" in str(path):
        raise InstanceError(field, str(path), "contains a NUL byte")
    return Path(path)


def _open(path: Path) -> Any:
    """A binary file object for a regular file of at most ``DMLOPT_MAX_FILE_BYTES``, opened
    without blocking (the checks of :func:`dmlopt.io.read_bytes`)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InstanceError("file", str(path), "does not exist") from None
    except IsADirectoryError:
        raise InstanceError("file", str(path), "is a directory, not a file") from None
    except OSError as exc:
        raise InstanceError("file", str(path), f"cannot be read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InstanceError("file", str(path), "is not a regular file (FIFOs, devices and "
                                "directories are not read)")
        if st.st_size > io.max_file_bytes():
            raise InstanceError("file", str(path), f"is {st.st_size} bytes, above the limit "
                                f"{io.max_file_bytes()} (set DMLOPT_MAX_FILE_BYTES to raise it)")
        return os.fdopen(fd, "rb", buffering=1 << 20)
    except BaseException:
        os.close(fd)
        raise


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a text file, streamed: one line in memory at a time, at most
    :data:`MAX_LINE_BYTES` per line and ``DMLOPT_MAX_FILE_BYTES`` in all."""
    limit = io.max_file_bytes()
    total = 0
    try:
        with _open(path) as fh:
            n = 0
            while True:
                raw = fh.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    return
                n += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise InstanceError("solution", str(path), f"line {n} is longer than "
                                        f"{MAX_LINE_BYTES} bytes: not a solution file "
                                        f"({_EXPECTED})")
                if b"\0" in raw:
                    raise InstanceError("solution", str(path), f"is binary, not a solution "
                                        f"file ({_EXPECTED})")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InstanceError("solution", str(path), f"is not UTF-8 text (byte "
                                        f"{total + exc.start}); {_EXPECTED}") from None
                total += len(raw)
                if total > limit:
                    raise InstanceError("file", str(path), f"holds more than {limit} bytes "
                                        "(set DMLOPT_MAX_FILE_BYTES to raise the limit)")
                yield n, line.rstrip("\r\n")
    except OSError as exc:
        raise InstanceError("file", str(path), f"cannot be read ({exc.strerror})") from None


def _head(path: Path, size: int = 1 << 16) -> tuple[str, bool]:
    """The first lines of a text file, up to about ``size`` bytes, and whether that is all of
    it."""
    out, used, whole = [], 0, True
    for _, line in _lines(path):
        if used > size:
            whole = False
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out), whole


def is_json(path: str | Path) -> bool:
    """Whether the file at ``path`` is JSON (it parses as JSON, or starts like a JSON object,
    array or string).

    Parameters
    ----------
    path : the file, read with the bounds of :func:`dmlopt.io.read_bytes` (a regular file, at
        most ``DMLOPT_MAX_FILE_BYTES``), only its first lines.

    Returns
    -------
    bool
        True for a dmlopt solution JSON (or any JSON value), False for a solver's file.

    Raises
    ------
    InstanceError
        ``path`` not a path (None, an int, bytes, a NUL byte), or a file that cannot be read.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    text, whole = _head(check_path(path))
    if text.lstrip()[:1] in ("{", "[", '"'):
        return True
    if not whole:
        return False
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
    """The format of a solution file's text, from its content (its first lines suffice).

    Parameters
    ----------
    text : the file's text, or its first lines.

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


class _Pairs:
    """The ``(name, value)`` pairs of a solution file, read again from the file at each
    iteration (the file is never held in memory)."""

    def __init__(self, path: Path, fmt: str) -> None:
        self.path, self.format = path, fmt

    def __iter__(self) -> Iterator[tuple[str, float]]:
        return _READERS[self.format](self.path, {})


def parse(path: str | Path) -> SolutionFile:
    """Recognise a solution file's format from its first lines and read it through once,
    streamed (one line in memory at a time; a regular file of at most
    ``DMLOPT_MAX_FILE_BYTES``), checking every line.

    Parameters
    ----------
    path : the file a solver wrote (see the module's list of formats).

    Returns
    -------
    SolutionFile
        The format, the ``(name, value)`` pairs as written (streamed from the file again when
        iterated), the objective the file reports, whether it lists every column.

    Raises
    ------
    InstanceError
        ``path`` not a path, a file that is not one of the formats (naming the formats
        expected), a value that is not a finite number, a truncated file. (A name given twice is
        refused by :func:`assign`, which knows the model's names.)

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    path = check_path(path)
    fmt = detect(_head(path, 4096)[0])
    if fmt == "json":
        raise InstanceError("solution", str(path), "is JSON: read it with dmlopt.load_solution")
    if fmt == "glpsol":
        raise InstanceError("solution", str(path), "is a HiGHS glpsol-style file (styles 2 and "
                            "3), which names no column; write it with style 0 (raw) or 1 "
                            "(pretty)")
    if not fmt:
        raise InstanceError("solution", str(path), f"is not a solution file dmlopt reads; "
                            f"{_EXPECTED}")
    meta: dict[str, Any] = {}
    for _ in _READERS[fmt](path, meta):
        pass
    return SolutionFile(fmt, _Pairs(path, fmt), meta.get("objective"),
                        fmt in COMPLETE and not meta.get("sparse", False))


def _highs(path: Path, meta: dict[str, Any]) -> Iterator[tuple[str, float]]:
    lines = _lines(path)
    for n, line in lines:
        if line.startswith("Objective "):
            tokens = line.split()
            if len(tokens) < 2:
                raise InstanceError("solution", str(path), f"line {n}: {line!r} states no "
                                    "objective value ('Objective V' expected)")
            meta["objective"] = _number(tokens[1], path, n, "Objective")
        if line.startswith("# Columns"):
            break
        if line.startswith("# Dual solution values"):
            raise InstanceError("solution", str(path), "holds no primal solution (no '# Columns' "
                                "section)")
    else:
        raise InstanceError("solution", str(path), "is a truncated HiGHS solution: no "
                            "'# Columns N' line")
    head = line.split()
    try:
        count = int(head[2])
    except (IndexError, ValueError):
        raise InstanceError("solution", str(path), f"line {n}: {line!r} is not "
                            "'# Columns N'") from None
    meta["sparse"] = count < 0  # the sparse raw style 4 lists only the nonzeros
    count, found = abs(count), 0
    for n, line in lines:
        if found == count:
            break
        if line.startswith("#"):
            break
        tokens = line.split()
        if len(tokens) not in (2, 3):  # the sparse style adds the column index
            raise InstanceError("solution", str(path), f"line {n}: {line[:80]!r} is "
                                "not 'name value'")
        found += 1
        yield tokens[0], _number(tokens[1], path, n, tokens[0])
    if found < count:
        raise InstanceError("solution", str(path), f"is truncated: {count} columns "
                            f"announced, {found} found")


_PRETTY_STATUS = re.compile(r"^[A-Za-z]+$")


def _highs_pretty(path: Path, meta: dict[str, Any]) -> Iterator[tuple[str, float]]:
    lines = _lines(path)
    next(lines, None)
    n, second = next(lines, (2, ""))
    header = second.split()
    if "Primal" not in header or header[-1] != "Name":
        raise InstanceError("solution", str(path), "line 2: a HiGHS pretty 'Columns' header "
                            "with Primal and Name columns was expected")
    ended = False
    for n, line in lines:
        if not line.strip():
            continue
        if line.strip() == "Rows" or line.startswith("Model status"):
            ended = True
            break
        tokens = line.split()
        # Index [Status] Lower Upper Primal [Dual] [Type] Name: Lower and Upper are always
        # printed, Status (BS, LB, ...) only for a basic solution
        k = 1
        if len(tokens) > 1 and _PRETTY_STATUS.match(tokens[1]) and \
                tokens[1].lower() not in ("inf", "infinity", "nan"):
            k = 2
        if len(tokens) < k + 4 or not tokens[0].isdigit():
            raise InstanceError("solution", str(path), f"line {n}: {line[:80]!r} is not a "
                                "row of the Columns table")
        name = tokens[-1]
        yield name, _number(tokens[k + 2], path, n, name)
    if not ended:
        raise InstanceError("solution", str(path), "is a truncated HiGHS pretty solution: the "
                            "Columns table does not end (no 'Rows' or 'Model status')")
    for n, line in lines:
        if line.startswith("Objective value:"):
            meta["objective"] = _number(line.split(":", 1)[1].strip(), path, n, "objective")


def _scip(path: Path, meta: dict[str, Any]) -> Iterator[tuple[str, float]]:
    meta["sparse"] = True
    for n, line in _lines(path):
        s = line.strip()
        if not s:
            continue
        low = s.lower()
        if low.startswith("solution status:"):
            continue
        if low.startswith("objective value:"):
            meta["objective"] = _number(s.split(":", 1)[1].strip(), path, n, "objective value")
            continue
        if low.startswith("no solution"):
            raise InstanceError("solution", str(path), "says SCIP found no solution")
        tokens = s.split()
        if len(tokens) == 3 and tokens[2].startswith("(obj:"):
            tokens = tokens[:2]
        if len(tokens) != 2:
            raise InstanceError("solution", str(path), f"line {n}: {s[:80]!r} is not "
                                "'name value (obj:c)'")
        yield tokens[0], _number(tokens[1], path, n, tokens[0])
    if "objective" not in meta:
        raise InstanceError("solution", str(path), "is a SCIP solution without its "
                            "'objective value:' line")


_GUROBI_OBJ = re.compile(r"#\s*objective value\s*=\s*(\S+)", re.I)


def _gurobi(path: Path, meta: dict[str, Any]) -> Iterator[tuple[str, float]]:
    for n, line in _lines(path):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = _GUROBI_OBJ.match(s)
            if m:
                meta["objective"] = _number(m.group(1), path, n, "objective value")
            continue
        tokens = s.split()
        if len(tokens) != 2:
            raise InstanceError("solution", str(path), f"line {n}: {s[:80]!r} is not "
                                "'name value'")
        yield tokens[0], _number(tokens[1], path, n, tokens[0])


def _cplex(path: Path, meta: dict[str, Any]) -> Iterator[tuple[str, float]]:
    # XML is parsed whole, within the byte cap of the bounded reader
    try:
        text = io.read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError("solution", str(path), f"is not UTF-8 text (byte {exc.start}); "
                            f"{_EXPECTED}") from None
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise InstanceError("solution", str(path), "declares a DOCTYPE or an entity, which a "
                            "CPLEX solution file does not: not read")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InstanceError("solution", str(path), f"is not well-formed XML ({exc})") from None
    del text
    sols = [root] if root.tag == "CPLEXSolution" else root.findall("CPLEXSolution")
    if len(sols) != 1:
        raise InstanceError("solution", str(path), f"holds {len(sols)} CPLEX solutions "
                            "(<CPLEXSolution>); give a file with exactly one")
    sol = sols[0]
    header = sol.find("header")
    if header is not None and header.get("objectiveValue") is not None:
        meta["objective"] = _number(header.get("objectiveValue", ""), path, 0,
                                    "objectiveValue")
    for var in sol.iter("variable"):
        name, value = var.get("name"), var.get("value")
        if name is None or value is None:
            raise InstanceError("solution", str(path), "has a <variable> without a name or a "
                                "value attribute")
        yield name, _number(value, path, 0, name)


_READERS = {"highs": _highs, "highs-pretty": _highs_pretty, "scip": _scip,
            "gurobi": _gurobi, "cplex": _cplex}


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
    1), given once, every value finite and within the variable's bounds (tolerance :data:`TOL`,
    integers rounded). A file of a format that lists every column (``parsed.complete``) must
    name every column of the model (:func:`columns`). A variable a sparse file (SCIP, HiGHS
    style 4) leaves out is set to 0 when 0 is within its bounds; a fixed variable keeps its
    value. A file that names no column of the
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
        An unknown name (the file is for another instance or formulation), a name given
        twice, a column left out of a complete file, a value out of bounds or not integral,
        a file naming none of the model's variables, or a variable left out whose bounds
        exclude 0.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    where = f"solution {path}" if path else "solution"
    by_name = labels(model)
    given: dict[str, float] = {}
    constant = False
    for name, value in parsed.values:
        if name in given or (name == CONSTANT_COLUMN and constant):
            raise InstanceError(where, name, "is given twice")
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
    if parsed.complete:
        _all_columns(model, by_name, given, parsed.format, where)
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


def columns(model: Any) -> list[str]:
    """The exported names of the columns of ``model``: the variables, not fixed, that appear in
    an active constraint or objective (those Pyomo's LP and MPS writers write).

    Parameters
    ----------
    model : a Pyomo model.

    Returns
    -------
    list
        The names (:func:`label`), in the order first met.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    import pyomo.environ as pyo
    from pyomo.core.expr.visitor import identify_variables

    seen: dict[int, str] = {}
    for kind in (pyo.Constraint, pyo.Objective):
        for comp in model.component_data_objects(kind, active=True, descend_into=True):
            for var in identify_variables(comp.expr, include_fixed=False):
                if id(var) not in seen:
                    seen[id(var)] = label(var)
    return list(seen.values())


def _all_columns(model: Any, by_name: dict[str, Any], given: dict[str, float], fmt: str,
                 where: str) -> None:
    """Refuse a file of a format that lists every column (:data:`COMPLETE`) but leaves out a
    column of ``model``: it was written for another model (another instance of the same size
    names a subset of this model's variables)."""
    cols = columns(model)
    missing = [c for c in cols if c not in given and not by_name[c].fixed]
    if missing:
        kind = FORMATS[fmt].split(" (")[0]
        raise InstanceError(where, missing[0], f"is a column of this model the file leaves out "
                            f"({len(missing)} of its {len(cols)} columns are missing); a {kind} "
                            "file lists every column, so it was written for another instance or "
                            "formulation")


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

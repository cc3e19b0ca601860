"""The incumbent and bound of an exact run over time, and its primal integral.

An exact run in the harness asks the solver for progress lines (``dmlopt.solve(progress=...)``:
HiGHS's MIP callback, SCIP's event handler; each line gives the incumbent and the dual bound).
:func:`recording` sends the run's file descriptor 2 through a pipe for the duration of the
solve; a reader thread stamps every progress line with the time it arrived (seconds since the
solve was called, so the model build counts, as in the run's ``seconds``) and passes every other
line on to the real stderr. The trace keeps a point where the incumbent or the bound changed.

The primal integral (T. Berthold, "Measuring the impact of primal heuristics", Oper. Res. Lett.
41(6), 2013): with the primal gap function ``p(t) = |x_opt - x(t)| / max(|x_opt|, |x(t)|)``
(0 when both are 0, 1 without an incumbent or where the signs differ), ``P(T)`` is the
integral of ``p`` over ``[0, T]``; divided by ``T`` (the time limit) it lies in ``[0, 1]``
(0: the optimum at once).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

#: seconds between the solver's progress lines in a harness run (the callback's throttle)
EVERY = 0.05

#: the most points a trace keeps (the first ones and the last)
MAX_POINTS = 2000

_LINE = re.compile(r"dmlopt: (?:highs|scip) \d+ s: incumbent (\S+), bound (\S+), gap")


def _value(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse(line: str) -> tuple[float | None, float | None] | None:
    """(incumbent, bound) of one progress line (None where the line says ``-``), or None if
    the line is not one.

    Parameters
    ----------
    line : one line of the run's stderr.

    Returns
    -------
    tuple or None
        The two values, or None.

    References
    ----------
    ``dmlopt.solvers.backends`` (the lines' format).
    """
    m = _LINE.search(line)
    return None if m is None else (_value(m.group(1)), _value(m.group(2)))


@contextlib.contextmanager
def recording(t0: float) -> Iterator[list[list[float | None]]]:
    """Record the progress lines written to fd 2 while the block runs: the yielded list fills
    with ``[seconds since t0, incumbent, bound]`` (a point only where a value changed); other
    output is passed on to the real stderr.

    Parameters
    ----------
    t0 : ``time.perf_counter()`` at the start of the run.

    Returns
    -------
    list
        The trace (complete once the block has ended).

    References
    ----------
    Issue 54, item 5.
    """
    points: list[list[float | None]] = []
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    os.close(w)

    def read() -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(r, 65536)
            except OSError:
                return
            if not chunk:
                return
            now = time.perf_counter() - t0
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                got = parse(raw.decode("utf-8", "replace"))
                if got is None:
                    with contextlib.suppress(OSError):
                        os.write(saved, raw + b"\n")
                elif not points or [points[-1][1], points[-1][2]] != list(got):
                    if len(points) < MAX_POINTS:
                        points.append([round(now, 4), got[0], got[1]])
                    else:
                        points[-1] = [round(now, 4), got[0], got[1]]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield points
    finally:
        with contextlib.suppress(OSError):
            os.dup2(saved, 2)  # the pipe's last writer closed: the reader sees its end
        reader.join(timeout=5.0)
        with contextlib.suppress(OSError):
            os.close(r)
        os.close(saved)


def finish(points: list[list[float | None]], seconds: Any, objective: Any,
           bound: Any) -> list[list[float | None]]:
    """The trace with the run's final incumbent and bound appended at its ``seconds``.

    Parameters
    ----------
    points : the recorded trace.
    seconds, objective, bound : the run's result (the evaluated objective).

    Returns
    -------
    list
        The trace, ending at the result.

    References
    ----------
    Issue 54, item 5.
    """
    def num(x: Any) -> float | None:
        ok = isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
        return float(x) if ok else None

    end = num(seconds)
    if end is None:
        return points
    out = [p for p in points if p[0] is not None and p[0] <= end]
    out.append([end, num(objective), num(bound)])
    return out


def primal_gap(x: float | None, opt: float) -> float:
    """Berthold's primal gap in [0, 1] of incumbent ``x`` against reference ``opt``.

    Parameters
    ----------
    x : the incumbent's objective, None without one.
    opt : the optimum (or best known value).

    Returns
    -------
    float
        0 when both are 0, 1 without an incumbent or with opposite signs, else
        ``|opt - x| / max(|opt|, |x|)``.

    References
    ----------
    T. Berthold, Oper. Res. Lett. 41(6), 2013, definition 1.
    """
    if x is None or not math.isfinite(x):
        return 1.0
    if abs(x) < 1e-9 and abs(opt) < 1e-9:
        return 0.0
    if x * opt < 0:
        return 1.0
    return min(1.0, abs(opt - x) / max(abs(opt), abs(x)))


def primal_integral(points: list[list[float | None]], opt: float, horizon: float) -> float:
    """The primal integral over ``[0, horizon]`` divided by ``horizon``.

    The gap function is a step function: 1 until the first incumbent, then the primal gap of the
    latest incumbent; after the run's last point it keeps its last value.

    Parameters
    ----------
    points : ``[[seconds, incumbent, bound], ...]``, time non-decreasing.
    opt : the reference value (optimum or best known).
    horizon : the time limit (seconds > 0).

    Returns
    -------
    float
        In [0, 1]; NaN for a horizon that is not positive or a reference that is not finite.

    References
    ----------
    T. Berthold, Oper. Res. Lett. 41(6), 2013.
    """
    if not (horizon > 0 and math.isfinite(horizon) and math.isfinite(opt)):
        return math.nan
    area, t_prev, g_prev = 0.0, 0.0, 1.0
    for t, x, _ in points:
        t = min(max(float(t or 0.0), t_prev), horizon)
        area += g_prev * (t - t_prev)
        t_prev = t
        if x is not None:
            g_prev = primal_gap(x, opt)
    area += g_prev * (horizon - t_prev)
    return area / horizon

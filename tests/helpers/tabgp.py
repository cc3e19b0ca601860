"""TABGP test helpers shared by several test files: a brute force written without the
package's scoring helpers.

Imported as ``from tests.helpers.tabgp import ...`` (tests/ is a package).
"""

from __future__ import annotations

import itertools

#: optima already computed in this process, by the arguments' repr (two formulations, or a
#: solver and a bound, compared with the same instance's optimum: seconds each at n = 8)
_OPTIMA: dict[str, float] = {}


def brute_force(n, l, k, alpha, edges, weights) -> float:
    """Minimum of sum_t cut_t + alpha * migrations over all labellings with <= k per label.

    A dynamic program over every feasible labelling of every step, scored in plain Python, so
    a wrong model cannot agree with it by sharing code (:func:`_dynamic_program`, once per
    instance and process).
    """
    key = repr((n, l, k, alpha, edges, weights))
    if key not in _OPTIMA:
        _OPTIMA[key] = _dynamic_program(n, l, k, alpha, edges, weights)
    return _OPTIMA[key]


def _dynamic_program(n, l, k, alpha, edges, weights) -> float:
    """:func:`brute_force`'s dynamic program."""
    labellings = [a for a in itertools.product(range(l), repeat=n)
                  if max(a.count(i) for i in range(l)) <= k]
    best = None
    for t, step in enumerate(edges):
        cut = [sum(w for (u, v), w in zip(step, weights[t], strict=True) if a[u] != a[v])
               for a in labellings]
        if best is None:
            best = cut
            continue
        best = [cut[j] + min(best[i] + alpha * sum(x != y for x, y in zip(a, b, strict=True))
                             for i, a in enumerate(labellings))
                for j, b in enumerate(labellings)]
    return min(best)

"""The harness's forking helper (``dmlopt.benchmarks.child``) with the toy problem registered,
as an installed entry point would register it: the runs of a toy suite happen in this process
(tests/bench/test_papers.py points the runner here)."""

from __future__ import annotations

import sys

from dmlopt import registry
from dmlopt.benchmarks import child

registry._PROBLEMS["toy"] = ("tests.helpers.toy_problem", "tests.helpers.toy_problem")

if __name__ == "__main__":
    sys.exit(child.serve())

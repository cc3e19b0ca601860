"""dmlopt: exact models, heuristics and benchmarks for network-aware placement and scheduling
of distributed ML training.

>>> import dmlopt
>>> inst = dmlopt.generate("tabgp", {"generator": "er", "n": 8, "p": 0.4, "tau": 2}, seed=0)
>>> res = dmlopt.heuristic(inst, "dense-refine")
>>> res.status
'feasible'
"""

from dmlopt import registry as _registry
from dmlopt.api import (
    bound,
    build,
    check_size,
    decode,
    evaluate,
    export,
    generate,
    heuristic,
    read_solution,
    solve,
)
from dmlopt.certification import certify
from dmlopt.errors import (
    DmloptError,
    InstanceError,
    ModelTooLargeError,
    ObjectiveMismatchError,
    SolverError,
    UnknownNameError,
    UserFunctionError,
)
from dmlopt.evaluation import Evaluation
from dmlopt.io import instance_hash, load_solution, save
from dmlopt.loading import load
from dmlopt.registry import get as problem
from dmlopt.registry import names as problems
from dmlopt.result import Result

__version__ = "0.1.0"

_registry.register_gym_envs()  # dmlopt/<Name>-v0 for gymnasium.make (no gymnasium import here)

__all__ = [
    "DmloptError",
    "Evaluation",
    "InstanceError",
    "ModelTooLargeError",
    "ObjectiveMismatchError",
    "Result",
    "SolverError",
    "UnknownNameError",
    "UserFunctionError",
    "bound",
    "build",
    "certify",
    "check_size",
    "decode",
    "evaluate",
    "export",
    "generate",
    "heuristic",
    "instance_hash",
    "load",
    "load_solution",
    "problem",
    "problems",
    "read_solution",
    "save",
    "solve",
]

"""The boundary: hostile input gets a DmloptError naming field, value and rule (library)
or exit code 2 with one line on stderr and nothing on stdout (CLI); never a traceback, a hang, a
false ``optimal``, a file where the user did not point.

The first part names every measured example of the issue as a regression test; the second fuzzes
instances, solutions, heuristic options and generator parameters of every registered problem
with hypothesis (derandomised, bounded: see the ``ci`` profile in conftest.py).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmlopt
from dmlopt import api, io, registry, solvers
from dmlopt.cli import main
from dmlopt.errors import DmloptError, InstanceError, ModelTooLargeError

# a 4-cycle into two clusters of two: the optimum is 2 (two of the four edges must be cut)
CYCLE = {"problem": "tabgp", "n": 4, "k": 2, "l": 2, "alpha": 1,
         "edges": [[[0, 1], [1, 2], [2, 3], [3, 0]]]}


@pytest.fixture
def inst_file(tmp_path: Path) -> Path:
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(CYCLE))
    return path


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv: str, says: str = "") -> str:
    """The CLI exits 2 with one line on stderr that contains ``says`` and nothing on stdout."""
    code, out, err = cli(capsys, *argv)
    assert code == 2, (argv, code, out, err)
    assert out == "", (argv, out)
    assert len(err.strip().splitlines()) == 1 and err.startswith("dmlopt: "), (argv, err)
    assert says in err, (argv, err)
    return err


# ---------------------------------------------------------------------------------------------
# solvers: names, settings, options, and what "optimal" means


def test_unknown_solver_is_one_line_and_nothing_else(capsys, inst_file):
    refused(capsys, "solve", str(inst_file), "--solver", "nosuch", says="'nosuch' is not an "
            "allowed solver")


def test_a_solver_path_is_never_passed_to_pyomo(capsys, inst_file):
    refused(capsys, "solve", str(inst_file), "--solver", "asl:/bin/true", says="never a path")


def test_opted_in_solver_names_are_checked_quietly(capsys, inst_file, monkeypatch):
    monkeypatch.setenv("DMLOPT_SOLVERS", "nosuchsolverxyz")
    assert "nosuchsolverxyz" in solvers.allowed()
    refused(capsys, "solve", str(inst_file), "--solver", "nosuchsolverxyz",
            says="not available to Pyomo")


@pytest.mark.parametrize("flag, value, says", [
    ("--mip-gap", "2", "mip_gap: 2.0 must be a relative gap in [0, 1)"),
    ("--mip-gap", "1", "mip_gap: 1.0 must be"),
    ("--mip-gap", "nan", "mip_gap: nan"),
    ("--mip-gap", "-0.1", "mip_gap: -0.1"),
    ("--time-limit", "nan", "time_limit: nan must be a finite number of seconds > 0"),
    ("--time-limit", "inf", "time_limit: inf"),
    ("--time-limit", "-1", "time_limit: -1.0"),
    ("--time-limit", "0", "time_limit: 0.0"),
    ("--threads", "1000000000", "threads: 1000000000 must be an integer in [1, 256]"),
    ("--threads", "0", "threads: 0"),
])
def test_solver_settings_are_checked_before_building(capsys, inst_file, flag, value, says):
    refused(capsys, "solve", str(inst_file), flag, value, says=says)


def test_solver_options_are_the_solvers_own(inst_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # checking "log_file" opens it (HiGHS does): not in the repo
    inst = dmlopt.load(str(inst_file))
    with pytest.raises(InstanceError, match="solver_options.no_such_option.*not a HiGHS option"):
        dmlopt.solve(inst, solver_options={"no_such_option": 1})
    with pytest.raises(InstanceError, match="solver_options.mip_max_nodes.*type int"):
        dmlopt.solve(inst, solver_options={"mip_max_nodes": "many"})
    with pytest.raises(InstanceError, match="not a SCIP parameter"):
        dmlopt.solve(inst, "scip", solver_options={"limits/nosuch": 1})
    # file options: allowed from Python (the user owns the process), refused for suites
    solvers.check_options("highs", {"log_file": "x.log"})
    with pytest.raises(InstanceError, match="log_file.*reads or writes a file"):
        solvers.check_options("highs", {"log_file": "/anywhere/x"}, allow_files=False)
    with pytest.raises(InstanceError, match="visual/vbcfilename.*file"):
        solvers.check_options("scip", {"visual/vbcfilename": "/x"}, allow_files=False)
    res = dmlopt.solve(inst, solver_options={"mip_max_nodes": 1000})
    assert res.status == "optimal" and res.objective == 2


def test_optimal_only_when_proven_at_the_default_tolerance(inst_file, monkeypatch):
    """A solver that stops at a looser requested gap says "optimal"; dmlopt says feasible."""
    inst = dmlopt.load(str(inst_file))
    real_run = solvers.run

    def loose(model, solver="highs", **kw):
        run = real_run(model, solver, **kw)
        run.bound = 1.0  # as if it had stopped with bound 1 against the incumbent 2 (gap 50 %)
        return run

    monkeypatch.setattr(solvers, "run", loose)
    res = dmlopt.solve(inst, formulation="pairs", mip_gap=0.6)  # the MIP alone
    assert res.status == "feasible" and res.gap == pytest.approx(0.5)
    assert "mip_gap 0.6" in res.message
    # at the default tolerance, the solver's proof stands
    monkeypatch.setattr(solvers, "run", real_run)
    assert dmlopt.solve(inst, formulation="pairs", mip_gap=0.0).status == "optimal"


# ---------------------------------------------------------------------------------------------
# files: bounded readers, outputs


def test_fifo_and_devices_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    # in a child with a timeout: a reader that blocked on the FIFO would hang this test forever
    code = ("import sys; from dmlopt.cli import main; sys.exit(main(['validate', sys.argv[1]]))")
    for target in (str(fifo), "/dev/zero", str(tmp_path)):
        proc = subprocess.run([sys.executable, "-c", code, target], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2, (target, proc.stderr)
        assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
        assert "not a regular file" in proc.stderr or "is a directory" in proc.stderr


def test_deep_json_and_toml_are_refused(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    refused(capsys, "validate", str(deep), says="nested deeper than 64")
    toml = tmp_path / "deep.toml"
    toml.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(InstanceError, match="nested deeper"):
        io.read_toml(toml)


def test_byte_cap_counts_bytes_actually_read(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(CYCLE))
    monkeypatch.setattr(io, "MAX_FILE_BYTES", 10)
    with pytest.raises(InstanceError, match="above the limit 10"):
        io.read_json(path)


def test_non_json_numbers_and_int64_overflow(tmp_path, capsys):
    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps(CYCLE).replace('"alpha": 1', '"alpha": NaN'))
    refused(capsys, "validate", str(nan), says="NaN is not a JSON number")
    for field, value in (("n", 2**63), ("alpha", 2**64), ("k", -(2**63) - 1)):
        data = dict(CYCLE, **{field: value})
        with pytest.raises(InstanceError, match=f"{field}: {value} is outside the 64-bit"):
            dmlopt.load(data)
    edges = copy.deepcopy(CYCLE)
    edges["edges"][0][1][0] = 2**70
    with pytest.raises(InstanceError, match=r"edges\[0\]\[1\]\[0\]: .* 64-bit"):
        dmlopt.load(edges)


@pytest.mark.parametrize("text, kind", [("null", "null"), ("[]", "array"), ("3", "number"),
                                        ('"x"', "string")])
def test_a_solution_that_is_not_an_object(tmp_path, capsys, inst_file, text, kind):
    sol = tmp_path / "sol.json"
    sol.write_text(text)
    refused(capsys, "validate", str(inst_file), "--solution", str(sol),
            says=f"solution: a JSON {kind} where a JSON object is required")
    refused(capsys, "validate", str(sol), says=f"instance: a JSON {kind}")


def test_output_that_is_a_directory_leaves_nothing(tmp_path, capsys, inst_file):
    before = sorted(os.listdir(tmp_path))
    refused(capsys, "solve", str(inst_file), "-o", str(tmp_path), says="is a directory")
    refused(capsys, "generate", "tabgp", "-o", str(tmp_path), says="is a directory")
    refused(capsys, "export", str(inst_file), str(tmp_path / "m.txt"), says="must end in .lp")
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_are_written_with_the_users_umask(tmp_path, capsys, inst_file, umask, mode):
    old = os.umask(umask)
    try:
        assert cli(capsys, "heuristic", str(inst_file), "random", "-o",
                   str(tmp_path / "s.json"))[0] == 0
        assert cli(capsys, "export", str(inst_file), str(tmp_path / "m.lp"))[0] == 0
    finally:
        os.umask(old)
    for name in ("s.json", "m.lp"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_shipped_names_cannot_climb_out_of_the_data_directory(capsys):
    refused(capsys, "validate", "../../../../etc/hostname", says="file:")


# ---------------------------------------------------------------------------------------------
# names, options, parameters, seeds


def test_parameters_options_and_seeds(capsys, inst_file):
    refused(capsys, "generate", "tabgp", "-p", "n=ten", says="n: 'ten' is a string, not a "
            "number")
    refused(capsys, "generate", "tabgp", "-p", "n=10.5", says="n: 10.5 (input should be a "
            "valid integer, got a number with a fractional part)")
    refused(capsys, "generate", "tabgp", "-p", "wibble=1", says="wibble: 1 is not a parameter "
            "of er (params: ")
    refused(capsys, "generate", "tabgp", "-p", "p=1e999", says="p: ")
    refused(capsys, "generate", "tabgp", "--seed", str(2**63), says="seed: 9223372036854775808 "
            "must be an integer in [0, 9223372036854775807]")
    refused(capsys, "generate", "tabgp", "--seed", "-1", says="seed: -1")
    refused(capsys, "heuristic", str(inst_file), "dense-roll", "--option", "x=abc",
            says="x: 'abc' is a string, not a number")
    refused(capsys, "heuristic", str(inst_file), "dense-roll", "--option", "depth=3",
            says="depth: 3 is not an option of dense-roll (options: ")
    refused(capsys, "heuristic", str(inst_file), "dense", "--seed", str(2**64), says="seed:")
    refused(capsys, "solve", str(inst_file), "--warm-start", "nosuch.json",
            says="warm_start: 'nosuch.json' does not exist")
    refused(capsys, "solve", str(inst_file), "--warm-start", "nosuch",
            says="'nosuch' is neither a solution file nor a tabgp heuristic")
    refused(capsys, "list", "nosuch", says="problem: 'nosuch' is not a known problem")
    refused(capsys, "schema", "tabgp", "--heuristic", "nope", says="'nope' is not a tabgp "
            "heuristic")


@pytest.mark.parametrize("problem,spec,break_it,says", [
    # an assignment to a VM that does not exist: the TAP start writer indexed by it
    ("tap", {"generator": "random"}, lambda s: {**s, "assignment": [len(s["assignment"])]
                                                 + s["assignment"][1:]}, "is not a VM"),
    # one entry per request more than the instance has: the RAR start writer looked it up
    ("rar", {"generator": "random"}, lambda s: {**s, "requests": s["requests"] + [None]},
     "entries, the instance has"),
])
def test_an_infeasible_warm_start_is_refused(capsys, tmp_path, problem, spec, break_it, says):
    """A warm start must pass the evaluator before any formulation writes it into a model:
    out-of-range values ended in an IndexError or KeyError inside the start writers of TAP
    and RAR (found by mutating heuristic solutions)."""
    inst = dmlopt.generate(problem, spec, seed=3)
    heuristic = next(iter(registry.get(problem).heuristics))
    start = json.loads(io.to_json(dmlopt.heuristic(inst, heuristic).solution))
    path, spath = tmp_path / "inst.json", tmp_path / "start.json"
    path.write_text(io.to_json(inst))
    spath.write_text(json.dumps(break_it(start)))
    refused(capsys, "solve", str(path), "--warm-start", str(spath), "--time-limit", "5",
            says="is not a feasible start")
    with pytest.raises(DmloptError, match=says):
        dmlopt.solve(inst, warm_start=break_it(start), time_limit=5, threads=1)
    spath.write_text(json.dumps(start))   # the start as the heuristic gave it: accepted
    code, _, err = cli(capsys, "solve", str(path), "--warm-start", str(spath),
                       "--time-limit", "5", "--threads", "1")
    assert code == 0, err


def test_size_limit_forms(capsys, inst_file, monkeypatch):
    refused(capsys, "solve", str(inst_file), "--size-limit", "1,1", says="model too large")
    refused(capsys, "solve", str(inst_file), "--size-limit", "a,b", says="--size-limit: 'a'")
    refused(capsys, "solve", str(inst_file), "--size-limit", "1,2,3", says="V,C or V,C,MEMORY")
    refused(capsys, "heuristic", str(inst_file), "dense", "--size-limit", "1e6,1e6,1,1",
            says="too large: the dense heuristic")
    monkeypatch.setenv("DMLOPT_SIZE_LIMIT", "nan,1")
    refused(capsys, "solve", str(inst_file), says="DMLOPT_SIZE_LIMIT")
    monkeypatch.setenv("DMLOPT_SIZE_LIMIT", "1e6,2e6,1KiB,1e3")
    with pytest.raises(ModelTooLargeError, match="1 KiB"):
        dmlopt.heuristic(dmlopt.load(str(inst_file)), "dense")


def test_list_and_schema_show_options_with_type_default_and_meaning(capsys):
    code, out, _ = cli(capsys, "list", "tabgp")
    assert code == 0
    assert "generators (" in out and "heuristics (" in out
    er = out[out.index("  er:"):]
    assert "      n (int, >= 1, default 12): number of vertices" in er
    assert "      p (float, >= 0 <= 1, default 0.5): " in er
    code, out, _ = cli(capsys, "schema", "tabgp", "--generator", "er")
    schema = json.loads(out)
    assert code == 0 and {"n", "p", "tau"} <= set(schema["properties"])
    assert schema.get("additionalProperties") is False


# ---------------------------------------------------------------------------------------------
# fuzzing every registered problem


@functools.cache
def small_instance(problem: str):
    """The problem's own tiny example (``EXAMPLE``, a generator spec every model declares)."""
    return dmlopt.generate(problem, registry.get(problem).model.EXAMPLE, seed=0)


@functools.cache
def base_solution(problem: str) -> dict:
    """A feasible solution of the small instance (the problem's first heuristic), as JSON."""
    first = next(iter(registry.get(problem).heuristics))
    return api.run_heuristic(small_instance(problem), first, seed=0).model_dump(mode="json")



HOSTILE = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.sampled_from([None, "", "x", [], {}, [[[]]], True, 1e308, -1e308, 2**63, -1, 0]),
    st.lists(st.integers(-3, 10**6), max_size=4),
)

FUZZ = settings(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _mutate(data, path_choice: int, value):
    """Replace one leaf or field of JSON data (chosen by index over a flat walk) by ``value``."""
    data = copy.deepcopy(data)
    slots = []
    stack = [data]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            slots.append((node, key))
            if isinstance(child, dict | list) and len(slots) < 500:
                stack.append(child)
    if not slots:
        return value
    node, key = slots[path_choice % len(slots)]
    node[key] = value
    return data


def _bounded(fn):
    """Only a DmloptError or a value: anything else is a crash of the boundary."""
    try:
        return fn()
    except DmloptError:
        return None


@pytest.mark.parametrize("problem", registry.names())
@FUZZ
@given(choice=st.integers(0, 10**6), value=HOSTILE)
def test_fuzz_instances_and_solutions(problem, choice, value):
    inst = small_instance(problem)
    data = inst.model_dump(mode="json")
    loaded = _bounded(lambda: dmlopt.load(_mutate(data, choice, value)))
    if loaded is not None:
        assert loaded.problem == problem
    sol_data = base_solution(problem)
    ev = _bounded(lambda: dmlopt.evaluate(inst, _mutate(sol_data, choice, value)))
    if ev is not None:
        assert isinstance(ev.feasible, bool)


@pytest.mark.parametrize("problem", registry.names())
@FUZZ
@given(data=st.data())
def test_fuzz_options_and_params(problem, data):
    prob = registry.get(problem)
    name = data.draw(st.sampled_from(sorted(prob.heuristics)))
    keys = list(prob.heuristic(name).Options.model_fields) + ["nosuch"]
    opts = data.draw(st.dictionaries(st.sampled_from(keys), HOSTILE, max_size=2))
    err = _bounded(lambda: api.validate_options(prob.heuristic(name).Options, opts, name))
    if "nosuch" in opts:
        assert err is None
    gen = data.draw(st.sampled_from(prob.generators))
    gkeys = list(prob.generator(gen).Params.model_fields) + ["nosuch"]
    params = data.draw(st.dictionaries(st.sampled_from(gkeys), HOSTILE, max_size=2))
    perr = _bounded(lambda: api.validate_options(prob.generator(gen).Params, params, gen,
                                                 "param"))
    if "nosuch" in params:
        assert perr is None


@pytest.mark.parametrize("problem", ["tabgp", "tap", "rar"])
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choice=st.integers(0, 10**6), value=HOSTILE)
def test_fuzz_cli_exit_codes(problem, choice, value, tmp_path_factory, capsys):
    tmp = tmp_path_factory.mktemp("cli")
    inst = small_instance(problem)
    path = tmp / "inst.json"
    path.write_text(json.dumps(_mutate(inst.model_dump(mode="json"), choice, value)))
    for argv in (["validate", str(path)],
                 ["heuristic", str(path), next(iter(registry.get(problem).heuristics)),
                  "-o", str(tmp / "sol.json")]):
        code, out, err = cli(capsys, *argv)
        assert code in (0, 2, 3), (argv, code, err)
        if code == 2:
            assert out == "" and len(err.strip().splitlines()) == 1
    assert set(os.listdir(tmp)) <= {"inst.json", "sol.json"}



def test_infer_command_checks_its_numbers(capsys):
    base = ["infer", "--topology", "fat-tree", "-p", "k=4", "--routing", "dijkstra"]
    refused(capsys, *base, "--noise", "nan", says="--noise: nan must be a finite number >= 0")
    refused(capsys, *base, "--threshold", "inf", says="--threshold: inf")
    refused(capsys, *base, "--seed", "-5", says="seed: -5 must be an integer")
    refused(capsys, *base, "--seed", str(2**80), says="seed: ")


def test_a_problem_command_is_parsed_by_its_own_parser(capsys, toy, monkeypatch):
    """A problem contributes ``dmlopt <command>`` through ``COMMANDS``; its bad input is exit 2."""
    from dmlopt.contract import Command

    seen = {}

    def configure(p):
        p.add_argument("--steps", type=int, required=True)

    def run(args):
        seen["steps"] = args.steps
        return 0

    monkeypatch.setattr(toy.model, "COMMANDS", {"frob": Command("frob", "frob it", configure,
                                                                run)}, raising=False)
    monkeypatch.setitem(registry._COMMANDS, "frob", toy.model.__name__)
    assert cli(capsys, "frob", "--steps", "3")[0] == 0 and seen == {"steps": 3}
    refused(capsys, "frob", "--steps", "x", says="frob: argument --steps: invalid int value")


def test_error_shows_a_long_path_whole_and_cuts_a_long_matrix():
    """A path of 150 characters stays whole in the message (cut, the file name would be lost:
    the message a parallel test run's longer temporary paths exposed); a long list is cut."""
    from dmlopt.errors import InstanceError

    path = "/tmp/" + "d" * 130 + "/instance.json"
    assert f"file: '{path}' is missing" == str(InstanceError("file", path, "is missing"))
    cut = str(InstanceError("M", list(range(1000)), "must be square"))
    assert "..." in cut and len(cut) < 120


def test_a_generated_instance_that_breaks_a_rule_is_an_instance_error(monkeypatch, capsys):
    """Parameters whose instance breaks one of the instance's rules (RAR's random generator
    with 100 ring nodes: a source on no ring of 3..6 nodes) gave pydantic's ValidationError and
    an internal error; it is an InstanceError naming the rule, exit 2 on the CLI. The random
    generator now refuses more than 6 ring nodes; a generator's function that builds such an
    instance stands for any other case."""
    import dataclasses

    from dmlopt.models import rar

    refused(capsys, "generate", "rar", "-g", "random", "-p", "nodes=100",
            says="nodes: 100 (input should be less than or equal to 6)")

    def broken(seed=0, **params):
        inst = rar.generate_random(seed=seed, **params)
        data = inst.model_dump()
        data["requests"][0]["source"] = 99
        return rar.Instance(**data)

    model = registry.get("rar").model
    entry = registry.get("rar").generator_entries["random"]
    monkeypatch.setitem(model.GENERATORS, "random", dataclasses.replace(entry, function=broken))
    with pytest.raises(InstanceError, match=r"spec: the random generator's instance .* "
                                            r"breaks a rule: requests\[0\]\.source"):
        dmlopt.generate("rar", {"generator": "random"}, seed=0)

"""``dmlopt.heuristic(instance, function)``: a function of one's own runs through the boundary of
a shipped heuristic (seed and options passed and checked, the result evaluated and timed, a
return value that is not the problem's Solution refused by name, an exception inside it the
user's error), and the example of docs/interop.md ("Your own function, certified") runs as
written, with the numbers its prose quotes."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

import dmlopt
from dmlopt import cli, registry
from dmlopt.errors import DmloptError, InstanceError, UnknownNameError, UserFunctionError
from dmlopt.models.tabgp import Instance, Solution

ROOT = Path(__file__).resolve().parents[2]

#: four vertices, two steps, two clusters of two, migration cost 0.5 (as in test_certify.py)
TINY = Instance(name="tiny", n=4, edges=[[(0, 1), (1, 2), (2, 3)], [(0, 1), (2, 3)]], l=2, k=2,
                alpha=0.5)

CALLS: list[tuple[int, dict]] = []


def alternating(instance: Instance, *, seed: int = 0, shift: int = 0) -> Solution:
    """Vertex v in cluster (v + shift) % 2 at step 0, in v // 2 at step 1."""
    CALLS.append((seed, {"shift": shift}))
    return Solution(assignment=[[(v + shift) % 2 for v in range(instance.n)],
                                [v // 2 for v in range(instance.n)]])


def test_options_and_seed_are_passed_and_the_result_evaluated():
    CALLS.clear()
    res = dmlopt.heuristic(TINY, alternating, seed=7, shift=1)
    assert CALLS == [(7, {"shift": 1})]
    # by hand: step 0 [1,0,1,0] cuts all three edges; step 1 [0,0,1,1] cuts none; vertices 0
    # and 3 change cluster: 2 migrations x 0.5; objective 3 + 1 = 4
    assert res.objective == 4.0 and res.status == "feasible"
    assert res.metrics["cut_cost"] == 3.0 and res.metrics["migrations"] == 2.0
    assert res.solution == alternating(TINY, shift=1)
    assert res.options == {"seed": 7, "shift": 1}
    assert res.method == f"{__name__}:alternating"
    CALLS.clear()
    dmlopt.heuristic(TINY, alternating)  # the function's own default applies
    assert CALLS == [(0, {"shift": 0})]


def test_options_are_checked_against_the_annotations():
    with pytest.raises(InstanceError, match="shift"):
        dmlopt.heuristic(TINY, alternating, shift="one")
    with pytest.raises(UnknownNameError, match=r"depth: 2 is not an option of .*alternating "
                       r"\(options: shift\)"):
        dmlopt.heuristic(TINY, alternating, depth=2)
    with pytest.raises(InstanceError, match="seed"):
        dmlopt.heuristic(TINY, alternating, seed=-1)


def test_keyword_options_pass_through():
    got = {}

    def anything(instance, *, seed=0, **options):
        got.update(options)
        return alternating(instance, seed=seed)

    def loose(instance, seed=0, shift=0):
        got["loose"] = shift
        return alternating(instance, seed=seed, shift=shift)

    assert dmlopt.heuristic(TINY, anything, depth=2, names=["a"]).status == "feasible"
    assert got == {"depth": 2, "names": ["a"]}
    assert dmlopt.heuristic(TINY, loose, shift=1).objective == 4.0 and got["loose"] == 1


def test_the_call_is_timed():
    def slow(instance, *, seed=0):
        time.sleep(0.2)
        return alternating(instance)

    t0 = time.perf_counter()
    res = dmlopt.heuristic(TINY, slow)
    assert 0.2 <= res.seconds <= time.perf_counter() - t0


def _as_dict(instance, *, seed=0):
    return {"assignment": [[0, 0, 1, 1]] * 2}


def _other_problems(instance, *, seed=0):
    from dmlopt.models.tap import Solution as TapSolution

    return TapSolution(assignment=[0])


@pytest.mark.parametrize(("function", "returned"), [
    (_as_dict, "dict"), (lambda instance, *, seed=0: None, "None"),
    (_other_problems, "dmlopt.models.tap.Solution")])
def test_a_return_value_that_is_no_solution_is_refused(function, returned):
    with pytest.raises(InstanceError) as err:
        dmlopt.heuristic(TINY, function)
    assert isinstance(err.value, DmloptError)
    assert f"returned {returned}, not a dmlopt.models.tabgp.Solution" in str(err.value)


def test_an_infeasible_solution_is_an_error_result():
    res = dmlopt.heuristic(TINY, lambda instance, *, seed=0: Solution(
        assignment=[[0, 0, 0, 1], [0, 0, 1, 1]]))
    assert res.status == "error" and res.feasible is False
    assert "cluster 0 holds 3 vertices" in res.message


def test_an_exception_inside_is_the_users_error(capsys):
    def broken(instance, *, seed=0):
        return {}["missing"]

    with pytest.raises(UserFunctionError) as err:
        dmlopt.heuristic(TINY, broken)
    text = str(err.value)
    assert "broken" in text and "KeyError: 'missing'" in text and "internal" not in text
    assert isinstance(err.value.__cause__, KeyError)  # the user's traceback is kept
    assert isinstance(err.value, DmloptError)


def test_a_callable_of_another_shape_is_refused():
    with pytest.raises(InstanceError, match=r"cannot be called as f\(instance, \*, seed=0"):
        dmlopt.heuristic(TINY, lambda instance: alternating(instance))
    with pytest.raises(InstanceError,
                       match=r"^name: 42 must be the name of a heuristic .* or a function"):
        dmlopt.heuristic(TINY, 42)


def test_a_registered_entry_object_runs_as_by_name():
    entry = registry.get("tabgp").heuristics["random"]
    by_object = dmlopt.heuristic(TINY, entry, seed=3)
    by_name = dmlopt.heuristic(TINY, "random", seed=3)
    assert by_object.solution == by_name.solution and by_object.objective == by_name.objective


# --- the docs example ---------------------------------------------------------------------

SECTION = "## Your own function, certified"


def _section() -> str:
    text = (ROOT / "docs" / "interop.md").read_text()
    assert SECTION in text
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def test_docs_example_runs_as_written(tmp_path, monkeypatch, capsys):
    section = _section()
    code = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(code) == 1
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    exec(compile(code[0], "docs/interop.md", "exec"), namespace)
    res, cert = namespace["res"], namespace["cert"]
    assert res.method == "swaps" and res.status == "feasible"
    assert cert.objective == res.objective
    assert cert.bound == 512.0 and cert.metrics["bound_computed"] == 493.0  # the prose's numbers
    assert "tighter than bound:glb's 493" in cert.message
    capsys.readouterr()
    commands = [ln.strip() for body in re.findall(r"```text\n(.*?)```", section, re.S)
                for ln in body.splitlines() if ln.startswith("dmlopt certify")]
    assert len(commands) == 2
    for line in commands:
        assert cli.main(line.split()[1:]) == 0, line
    out = capsys.readouterr().out
    assert re.search(rf"^objective\s+{res.objective:.10g}$", out, re.M)
    assert re.search(r"^bound\s+512$", out, re.M)

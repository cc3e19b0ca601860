"""Small edges of the library and command line (issue 51, items 4 and 8): an option named after
one of the call's own arguments is refused by name (never "multiple values"), numbers too large
for a float, non-string method names and booleans as size limits are typed errors naming the
field, ``bound -o`` says why it wrote nothing, ``generate`` refuses two generators; and
(issue 54, item 7) ``dmlopt bound`` prints each key once, and a solve proven by an exact bound
method says so."""

from __future__ import annotations

import json

import pytest

import dmlopt
import dmlopt.arguments
from dmlopt import io
from dmlopt.cli import main
from dmlopt.errors import InstanceError

TINY = "tabgp/er12-p03-tau1-s0"


def _fails(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "internal error" not in err and \
        "multiple values" not in err
    return err


@pytest.mark.parametrize(("command", "option", "flag"), [
    ("bound", "time_limit", "--time-limit"),
    ("bound", "size_limit", "--size-limit"),
    ("bound", "method", "--method"),
    ("bound", "instance", "INSTANCE"),
    ("heuristic", "seed", "--seed"),
    ("heuristic", "size_limit", "--size-limit"),
    ("heuristic", "name", "NAME"),
    ("heuristic", "instance", "INSTANCE"),
])
def test_an_option_named_like_the_commands_own_argument_is_refused(capsys, command, option,
                                                                    flag):
    method = ["-m", "lp"] if command == "bound" else ["dense"]
    err = _fails(capsys, command, TINY, *method, "--option", f"{option}=5")
    assert f"option {option}: 5" in err and flag in err


def test_an_option_given_twice_in_the_library_is_refused_by_name():
    inst = io.load(TINY)
    with pytest.raises(InstanceError, match="^name: 'x' is given twice"):
        dmlopt.heuristic(inst, "dense", name="x")
    with pytest.raises(InstanceError, match="^method: 'x' is given twice"):
        dmlopt.bound(inst, "lp", method="x")
    with pytest.raises(InstanceError, match="^option seed: 3 is an argument of dmlopt heuristic"):
        dmlopt.arguments.check_option_names({"seed": 3}, "heuristic")


@pytest.mark.parametrize(("kwargs", "field", "rule"), [
    ({"time_limit": 10**400}, "time_limit", "finite number of seconds"),
    ({"method": ["lp"]}, "method", "must be the name of a bound method"),
    ({"size_limit": (True, True)}, "size_limit", "not booleans"),
    ({"size_limit": (1e6, 10**400)}, "size_limit", "positive finite"),
    ({"size_limit": ("1e6", "2e6")}, "size_limit", "not booleans or text"),
])
def test_bound_arguments_are_typed_errors(kwargs, field, rule):
    with pytest.raises(InstanceError) as exc:
        dmlopt.bound(io.load(TINY), **kwargs)
    assert exc.value.field == field and rule in str(exc.value)


def test_solve_and_heuristic_refuse_a_huge_number_and_a_list_name():
    inst = io.load(TINY)
    with pytest.raises(InstanceError, match="^time_limit: "):
        dmlopt.solve(inst, time_limit=10**400)
    with pytest.raises(InstanceError, match="^mip_gap: "):
        dmlopt.solve(inst, mip_gap=-(10**400))
    with pytest.raises(InstanceError, match="^name: \\['dense'\\] must be the name"):
        dmlopt.heuristic(inst, ["dense"])


def test_bound_output_without_a_solution_says_nothing_was_written(capsys, tmp_path):
    out = tmp_path / "b.json"
    assert main(["bound", TINY, "-m", "lp", "-o", str(out)]) == 0  # the bound is the result
    captured = capsys.readouterr()
    assert "bound:lp" in captured.out  # the bound itself is printed
    assert f"{out} not written" in captured.err and "no feasible solution" in captured.err
    assert not out.exists()
    # a method that finds a solution on the way writes it, as before
    assert main(["bound", TINY, "-m", "enum", "-o", str(out)]) == 0
    written = io.load_solution(io.load(TINY), out)
    assert dmlopt.evaluate(TINY, written).feasible


def test_generate_refuses_two_generators(capsys):
    err = _fails(capsys, "generate", "tabgp", "-g", "er", "-p", "generator=drift")
    assert "generator=drift" in err and "--generator er" in err
    # the same name twice is one generator
    assert main(["generate", "tabgp", "-g", "er", "-p", "generator=er", "-p", "n=6"]) == 0
    assert json.loads(capsys.readouterr().out)["problem"] == "tabgp"


def test_bound_prints_each_key_once(capsys):
    assert main(["bound", TINY, "-m", "enum"]) == 0
    keys = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()]
    assert len(keys) == len(set(keys)) and "seconds" in keys and "seconds (enum)" in keys


def test_a_solve_proven_by_the_exact_bound_says_so():
    res = dmlopt.solve(io.load(TINY))
    assert res.status == "optimal" and res.method == "highs:pairs"
    assert res.metrics["proved_by_enum"] == 1.0
    assert "by the enum bound" in res.message and "highs was not run" in res.message
    named = dmlopt.solve(io.load(TINY), formulation="pairs")  # the MIP alone: no such claim
    assert "proved_by_enum" not in named.metrics and "enum" not in named.message


def test_a_model_whose_build_alone_is_far_beyond_the_time_limit_is_refused(monkeypatch, capsys):
    """A named formulation whose build (size estimate x BUILD_SECONDS_PER_ROW) is over twice
    the time limit plus 10 s is refused at once (a mutated RAR instance built 1.3 million rows
    for minutes on a 5 s limit); without a time limit it runs."""
    from dmlopt import exact
    from dmlopt.errors import SolverError

    inst = io.load(TINY)
    monkeypatch.setattr(exact, "BUILD_SECONDS_PER_ROW", 1.0)  # every tiny model "takes" minutes
    with pytest.raises(SolverError, match=r"^time_limit: 5 s is far below the 'paper' model"):
        dmlopt.solve(inst, formulation="paper", time_limit=5)
    assert main(["solve", TINY, "-f", "paper", "--time-limit", "5"]) == 2
    assert "build alone" in capsys.readouterr().err
    assert dmlopt.solve(inst, formulation="paper").status == "optimal"

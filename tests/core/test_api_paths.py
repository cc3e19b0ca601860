"""One API for paths and objects: solve, heuristic, bound, export, evaluate and build take an
instance object, a JSON path, a shipped name or a dict, as the command line does; a missing
shipped name suggests the nearest names and where the list is."""

from __future__ import annotations

import pytest

import dmlopt

NAME = "tabgp/er12-p03-tau1-s0"


@pytest.fixture(scope="module")
def inst():
    return dmlopt.load(NAME)


def test_every_entry_point_takes_every_form(inst, tmp_path):
    path = tmp_path / "inst.json"
    dmlopt.save(inst, path)
    forms = [inst, NAME, str(path), path, inst.model_dump(mode="json")]
    ref = dmlopt.heuristic(inst, "dense-refine", seed=0)
    for form in forms:
        assert dmlopt.heuristic(form, "dense-refine", seed=0).objective == ref.objective
        assert dmlopt.evaluate(form, ref.solution).objective == ref.objective
        assert dmlopt.bound(form, "lp").bound <= ref.objective
    assert dmlopt.solve(str(path), formulation="pairs").objective == \
        dmlopt.solve(inst, formulation="pairs").objective
    out = tmp_path / "m.lp"
    dmlopt.export(NAME, out, formulation="pairs")
    assert out.read_text().startswith("\\* Source Pyomo model name=")


def test_a_missing_shipped_name_points_to_the_nearest_and_the_list():
    with pytest.raises(dmlopt.InstanceError) as err:
        dmlopt.solve("tabgp/er12-p03-tau1-s7")
    text = str(err.value)
    assert "tabgp/er12-p03-tau1-s0" in text and "dmlopt list --data" in text


def test_a_missing_file_is_named():
    with pytest.raises(dmlopt.InstanceError, match="no-such.json"):
        dmlopt.heuristic("/tmp/no-such.json", "dense")

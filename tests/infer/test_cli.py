"""``dmlopt infer`` and the inferred-topology -> TAP pipeline (paper 000, Fig. 11)."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from dmlopt.cli import main
from dmlopt.models.infer import flow_tracking, measure
from dmlopt.models.infer.cli import ROUTINGS as CLI_ROUTINGS
from dmlopt.models.infer.measurement import ROUTINGS
from dmlopt.models.infer.pipeline import allocation_gap, true_instance, vm_hops


def test_cli_routing_names_match_the_library():
    assert CLI_ROUTINGS == ROUTINGS


def test_infer_from_topology_writes_graphml_and_reports_exact_reconstruction(tmp_path, capsys):
    out = tmp_path / "ft.graphml"
    assert main(["infer", "--topology", "fat-tree", "-p", "k=4", "--routing", "dijkstra",
                 "-o", str(out), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["method"] == "FT" and row["paths"] == 15
    assert row["nged"] == 0 and row["ged_exact"] and row["h2"] == 1 and row["hops_error"] == 0
    g = nx.read_graphml(out)
    assert g.number_of_nodes() == row["nodes"] and g.number_of_edges() == row["edges"]
    assert not list(tmp_path.glob("_tmp_*"))  # atomic write left nothing behind


def test_infer_from_category_file_and_cast_weights(tmp_path, capsys):
    cats = {"1,2,3": 1, "1": 2, "2,3": 3, "2": 4, "3": 5}
    (tmp_path / "c.json").write_text(json.dumps({"n": 3, "categories": cats}))
    assert main(["infer", "-m", str(tmp_path / "c.json"), "-o", str(tmp_path / "g.json"),
                 "--weights-transfer", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["edges"] == 5
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["routes"][1] == ["s", "c1,2,3", "c2,3", "c2"]
    # the same categories as k-cast measurements phi_C = sum of w_A over A meeting C (eq. 7)
    phi = {}
    for mask in range(1, 8):
        c = [i + 1 for i in range(3) if mask >> i & 1]
        phi[",".join(map(str, c))] = sum(w for k, w in cats.items()
                                         if set(map(int, k.split(","))) & set(c))
    (tmp_path / "phi.json").write_text(json.dumps({"n": 3, "cast_weights": phi}))
    assert main(["infer", "-m", str(tmp_path / "phi.json"), "-o", str(tmp_path / "h.json"),
                 "--json"]) == 0
    assert json.loads((tmp_path / "h.json").read_text())["routes"] == doc["routes"]


@pytest.mark.parametrize("doc, needle", [
    ({"paths": [["h0.0.0", "h1.0.0"]]}, "is not an edge"),
    ({"paths": []}, "is empty"),
    ({"paths": [["h0.0.0", "nowhere"]]}, "is not a node"),
    ({"n": 2, "categories": {"1,x": 1}}, "path numbers"),
    ({"n": 2, "cast_weights": {"1": 1}}, "needed"),
    ({"n": 0, "categories": {}}, "positive"),
])
def test_bad_measurement_files_exit_2_with_one_line(tmp_path, capsys, doc, needle):
    f = tmp_path / "m.json"
    f.write_text(json.dumps(doc))
    assert main(["infer", "--topology", "fat-tree", "-m", str(f)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_bad_command_lines_exit_2(tmp_path, capsys):
    assert main(["infer"]) == 2
    assert main(["infer", "--topology", "fat-tree"]) == 2  # routing missing
    assert main(["infer", "--topology", "torus", "--routing", "dijkstra"]) == 2
    assert main(["infer", "--topology", "fat-tree", "--routing", "dijkstra", "-o",
                 str(tmp_path / "x.txt")]) == 2
    assert main(["infer", "--topology", "fat-tree", "--routing", "dijkstra", "--paths",
                 "99"]) == 2
    assert main(["infer", "--graph", str(tmp_path / "missing.graphml"), "--routing",
                 "dijkstra"]) == 2
    assert all(line.startswith("dmlopt: ") for line in capsys.readouterr().err.splitlines())


def test_pipeline_allocates_on_the_inferred_topology_and_scores_on_the_truth():
    from dmlopt import topology
    from dmlopt.models.tap import Solution, evaluate, overlay_matrix

    g = topology.fat_tree(4)
    m = measure(g, "dijkstra", seed=2)  # all 15 paths: the measured tree is recovered exactly
    inf = flow_tracking(m.categories(), m.n)
    d = vm_hops(inf)
    sub = nx.Graph([e for p in m.paths for e in zip(p, p[1:], strict=False)])
    vms = [m.source, *m.destinations]
    assert np.array_equal(d, [[nx.shortest_path_length(sub, a, b) for b in vms] for a in vms])
    traffic = overlay_matrix("ps", 8)
    rows = allocation_gap(m, inf, traffic, methods=("exact", "abm", "random"))
    by = {r["method"]: r for r in rows}
    truth = true_instance(m, traffic)
    assert by["exact"]["status_true"] == "optimal"
    assert by["exact"]["gap"] >= -1e-9  # the optimum on the truth is a lower bound
    assert by["random"]["cost_inferred"] >= by["exact"]["cost_true"]
    # every reported cost is the evaluator's on the true instance
    for r in rows:
        assert r["cost_true"] >= by["exact"]["cost_true"] - 1e-9
    # the true instance's distances are the underlay's hop counts among the VMs
    assert np.array_equal(truth.distance, topology.hop_matrix(g, vms))
    assert evaluate(truth, Solution(assignment=list(range(8)))).feasible


def test_topology_parameters_named_as_the_generators_name_them(tmp_path):
    """``-p dcell_n= -p dcell_level=`` as for ``dmlopt generate tap -g dc`` (one name
    for one thing); the old ``n``/``level`` are refused with the valid names."""
    import subprocess
    import sys

    exe = [sys.executable, "-m", "dmlopt", "infer", "--topology", "dcell", "--routing",
           "dijkstra", "--json"]
    ok = subprocess.run(exe + ["-p", "dcell_n=3", "-p", "dcell_level=1"], capture_output=True,
                        text=True, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(exe + ["-p", "n=3"], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert "'n' is not a dcell parameter (valid: dcell_n, dcell_level)" in bad.stderr

"""source: remote: a weighted directed edge list served from 127.0.0.1 with its sha256, through the DAG.

The fetched graph joins the graphs a static agent's attention is read on, where attention is also
compared with the held-out edge weights; a wrong checksum or a malformed edge list stops the build
with an error naming it, and nothing lands where training reads.
"""

from __future__ import annotations

import hashlib
import json

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import torch

from repro.data.sidecar import read_sidecar
from repro.papers.opinion.experiment import _attention_lift, weight_rhos
from repro.papers.opinion.game import GameConfig, OpinionGame
from repro.papers.opinion.graphs import from_networkx, load_edge_list
from repro.papers.opinion.grid import REMOTE_STEM, remote_config, remote_edges

RECORD = "results/opinion/agents/static/alpha0.5/marl/seed0.json"
EDGES = f"{REMOTE_STEM}.csv"


def _karate_edges() -> pd.DataFrame:
    """Zachary's karate club with its interaction counts as weights, both directions of each tie."""
    g = nx.karate_club_graph()
    rows = [(u, v, d["weight"]) for u, v, d in g.edges(data=True)]
    rows += [(v, u, w) for u, v, w in rows]
    return pd.DataFrame(rows, columns=["source", "target", "weight"])


# -- attention vs weights: planted attention --------------------------------------------------------------

def _weighted_game(n_games: int) -> tuple[OpinionGame, object]:
    graph = from_networkx(nx.karate_club_graph(), weight="weight")
    game = OpinionGame(GameConfig(), lambda B, rng: [graph] * B, n_games, 0)
    game.reset()
    return game, graph


def test_attention_proportional_to_weights_gives_rho_one():
    # attention over i's in-ties proportional to w^power (normalised per receiver), the same at every step and in
    # every game of the batch: the batch fold and the per-receiver normalisation must recover the weights
    game, graph = _weighted_game(3)
    rho = {}
    for power in (1.0, -1.0):
        w = game.weight ** power
        tot = torch.zeros(game.graph.n_nodes).index_add(0, game.graph.dst, w)
        attention = (w / tot[game.graph.dst]).expand(4, -1)
        node_lift, edge_lift = _attention_lift(game, attention)
        assert edge_lift.shape == (len(graph.src),) and node_lift.shape == (graph.n,)
        rho[power] = weight_rhos(graph, node_lift, edge_lift)["weight"]
    assert rho[1.0] == pytest.approx(1.0, abs=1e-3)  # lift = w / mean w exactly (float32 breaks a few ties)
    # against the weights: decreasing in w within each receiver, so strongly negative (not exactly -1 across
    # receivers: 1/w over the mean of 1/w is not a monotone function of w over the mean of w)
    assert rho[-1.0] < -0.9


def test_uniform_attention_and_unweighted_graphs_give_no_weight_rho():
    game, graph = _weighted_game(2)
    deg = torch.zeros(game.graph.n_nodes).index_add(0, game.graph.dst, torch.ones(len(game.graph.dst)))
    node_lift, edge_lift = _attention_lift(game, (1 / deg[game.graph.dst]).expand(2, -1))
    assert np.allclose(edge_lift, 1) and np.isnan(weight_rhos(graph, node_lift, edge_lift)["weight"])
    assert weight_rhos(graph._replace(weight=np.ones_like(graph.weight)), node_lift, edge_lift) == {}


# -- config -------------------------------------------------------------------------------------------------

def test_remote_config_names_a_missing_block_and_infers_the_format():
    assert remote_config({}, "synthetic", "small") is None and remote_edges(None) is None
    with pytest.raises(ValueError, match=r"opinion\.small\.remote \(url, sha256\) is missing"):
        remote_config({}, "remote", "small")
    sha = "ab" * 32
    cfg = remote_config({"remote": {"url": "https://x.org/bsky.parquet", "sha256": sha}}, "remote", "small")
    assert cfg == {"url": "https://x.org/bsky.parquet", "sha256": sha, "format": "parquet"}
    assert remote_edges(cfg) == f"{REMOTE_STEM}.parquet"
    cfg = remote_config({"remote": {"url": "https://x.org/get?id=3", "sha256": sha, "format": "csv"}}, "remote", "s")
    assert remote_edges(cfg) == EDGES


def test_schema_checks_the_remote_block():
    from pathlib import Path

    import jsonschema
    import yaml

    from repro.config import preset_error, workflow_config

    repo = Path(__file__).resolve().parents[2]
    schema = str(repo / "workflow/schemas/opinion.schema.yaml")
    block = workflow_config(repo)["opinion"]["smoke"]
    jsonschema.validate({**block, "remote": {"url": "http://h/e.csv", "sha256": "0" * 64}}, yaml.safe_load(open(schema)))
    assert "opinion.smoke.remote.sha256" in preset_error({**block, "remote": {"url": "http://h/e.csv", "sha256": "x"}},
                                                         schema, "opinion.smoke")
    assert "url" in preset_error({**block, "remote": {"sha256": "0" * 64}}, schema, "opinion.smoke")


# -- end to end -------------------------------------------------------------------------------------------

def _remote(url: str, sha: str) -> dict:
    return {"opinion": f"{{source: remote, smoke: {{remote: {{url: '{url}', sha256: '{sha}'}}}}}}"}


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_remote_edge_list_is_fetched_and_read_by_the_static_agents(served, tmp_path, workflow_build):
    root, base = served
    _karate_edges().to_csv(root / "karate.csv", index=False)
    work = tmp_path / "work"
    workflow_build(work, [RECORD], config=_remote(f"{base}/karate.csv", _sha(root / "karate.csv")), cores=1)
    assert _sha(work / EDGES) == _sha(root / "karate.csv")  # the bytes served, checked, nothing rewritten
    assert read_sidecar(work / EDGES) == _sha(root / "karate.csv")  # beside it, checked by opinion_train
    assert load_edge_list(work / EDGES).n == 34
    record = json.loads((work / RECORD).read_text())
    for which in ("attention", "attention_untrained"):
        remote = record[which]["remote"]
        assert {"degree", "eigenvector", "pagerank", "weight", "strength"} <= set(remote), which
        assert all(-1 <= v <= 1 for k, v in remote.items() if k != "eigenvector"), remote
        assert "weight" not in record[which]["static"]  # unweighted graphs get no weight comparison
    # the same seed's attention on the other graphs does not depend on the extra graph
    ref = tmp_path / "ref"
    workflow_build(ref, [RECORD], cores=1)
    assert json.loads((ref / RECORD).read_text())["attention"]["karate"] == record["attention"]["karate"]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["wrong_sha256", "negative_weight", "missing_column"])
def test_bad_edge_list_stops_the_build_and_leaves_nothing(served, tmp_path, workflow_run, case):
    root, base = served
    table = _karate_edges()
    if case == "negative_weight":
        table.loc[3, "weight"] = -1.0
    if case == "missing_column":
        table = table.rename(columns={"target": "dst"})
    table.to_csv(root / "edges.csv", index=False)
    sha = "0" * 64 if case == "wrong_sha256" else _sha(root / "edges.csv")
    work = tmp_path / "work"
    proc = workflow_run(work, RECORD, config=_remote(f"{base}/edges.csv", sha), check=False, cores=1)
    log = proc.stdout + proc.stderr + "".join(p.read_text() for p in (work / "logs/opinion").rglob("*.log"))
    assert proc.returncode != 0
    assert {"wrong_sha256": "sha256 mismatch", "negative_weight": "weight must be a positive number",
            "missing_column": "missing column(s) ['target']"}[case] in log
    assert not (work / RECORD).exists()
    assert not (work / REMOTE_STEM).parent.exists() or not list((work / REMOTE_STEM).parent.iterdir())


def test_remote_without_its_block_is_refused_at_parse_time(tmp_path, workflow_run):
    proc = workflow_run(tmp_path, "-n", RECORD, config={"opinion": "{source: remote}"}, check=False)
    assert proc.returncode != 0 and "opinion.smoke.remote (url, sha256) is missing" in proc.stdout + proc.stderr

"""Graphs: the edge-list loader (real path), generated families and centrality."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.papers.opinion.graphs import (REAL_GRAPHS, centrality, hunter_gatherer, load_edge_list, real_graph,
                                         scale_free)


def test_loader_reads_weighted_directed_edges(tmp_path):
    path = tmp_path / "edges.csv"
    pd.DataFrame({"source": ["a", "a", "b", "c"], "target": ["b", "c", "c", "a"], "weight": [0.5, 0.25, 1.0, 0.1]}
                 ).to_csv(path, index=False)
    g = load_edge_list(path)
    assert g.n == 3 and len(g.src) == 4  # directed: one edge per row
    assert sorted(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist())) == [
        (0, 1, 0.5), (0, 2, 0.25), (1, 2, 1.0), (2, 0, 0.1)]
    pq = tmp_path / "edges.parquet"
    pd.read_csv(path).to_parquet(pq)
    assert np.array_equal(load_edge_list(pq).weight, g.weight)


@pytest.mark.parametrize("table, match", [
    (pd.DataFrame({"src": [1], "target": [2]}), "missing column"),
    (pd.DataFrame({"source": [1, 2], "target": [2, 3], "weight": [0.5, "x"]}), "positive number"),
    (pd.DataFrame({"source": [1], "target": [2], "weight": [-1.0]}), "positive number"),
    (pd.DataFrame({"source": [], "target": []}), "no edges"),
])
def test_loader_names_malformed_files(tmp_path, table, match):
    path = tmp_path / "bad.csv"
    table.to_csv(path, index=False)
    with pytest.raises(ValueError, match=match) as err:
        load_edge_list(path)
    assert "bad.csv" in str(err.value)


def test_real_and_generated_graphs_are_symmetric_and_sized():
    for name in REAL_GRAPHS:
        g = real_graph(name)
        assert set(zip(g.src.tolist(), g.dst.tolist())) == set(zip(g.dst.tolist(), g.src.tolist()))
    assert real_graph("karate").n == 34
    g = scale_free(200, 2, seed=0)
    assert g.n == 200 and len(g.src) == 2 * 2 * (200 - 2)
    rng = np.random.default_rng(0)
    a, b = hunter_gatherer(24, rng), hunter_gatherer(24, rng)
    assert a.n == b.n == 24 and not (len(a.src) == len(b.src) and np.array_equal(a.src, b.src))  # rewired


def test_centrality_ranks_the_hub_of_a_star_first():
    import networkx as nx
    from repro.papers.opinion.graphs import from_networkx
    star = from_networkx(nx.star_graph(5))
    c = centrality(star)
    for name in ("degree", "eigenvector", "pagerank"):
        assert np.argmax(c[name]) == 0, name


def test_eigenvector_centrality_is_networkx_s_with_a_deterministic_solver():
    import networkx as nx

    from repro.papers.opinion.graphs import eigenvector_centrality, scale_free, to_networkx

    for name in ("karate", "les_miserables", "davis", "florentine"):
        g = to_networkx(real_graph(name)).reverse(copy=True)
        ours = eigenvector_centrality(g)
        ref = nx.eigenvector_centrality_numpy(g, weight="weight")
        assert np.allclose(ours, [ref[v] for v in range(g.number_of_nodes())], atol=1e-8), name
        assert np.array_equal(ours, eigenvector_centrality(g))  # bitwise repeatable (no random start vector)
    big = to_networkx(scale_free(300, 2, 0)).reverse(copy=True)  # the ARPACK path (fixed v0) agrees with LAPACK's
    assert np.allclose(eigenvector_centrality(big, dense_up_to=10), eigenvector_centrality(big), atol=1e-8)
    assert np.isnan(eigenvector_centrality(nx.DiGraph([(0, 1)]))).all()  # no unique Perron vector: NaN, as networkx refuses

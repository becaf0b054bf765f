"""The social graphs of the opinion game: networkx's real graphs, generated ones, and an edge-list loader.

A graph is a :class:`Graph` of directed, weighted edges ``src -> dst`` meaning *dst sees src's
stance* (an undirected tie gives both directions). For the paper's Bluesky subset, an edge
(u, v, w) with w = the share of u's posts that v liked reads "v attends to u": src u, dst v.

- :func:`real_graph`: karate club, les misérables, davis southern women, florentine families
  (networkx ships them; offline).
- :func:`scale_free`: a Barabási-Albert graph (the "large static" family, 200 to 1,000 nodes).
- :func:`hunter_gatherer`: a camp network (the "dynamic" family, after the paper's 37-person Hadza
  network): agents split into camps of ``camp_size`` on average, everyone tied within a camp, plus
  one tie to another camp with probability ``bridge_p``. With ``camp_q`` / ``bridge_q`` each tie also
  carries ``q``, the stationary probability that the pair interacts (the reference's Hadza q: the
  share of the day two people spend within two metres of each other; here a value per kind of tie),
  which the game's two-state chain switches within an episode (:mod:`repro.papers.opinion.game`).
- :func:`load_edge_list`: a CSV or Parquet of ``source, target[, weight]`` (the real path,
  ``source: remote``); a missing column, a non-numeric or negative weight, or an empty table is a
  ``ValueError`` naming the file.
- :func:`centrality`: in-degree, eigenvector and PageRank centrality of each node (networkx).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import networkx as nx
import numpy as np
import pandas as pd

__all__ = ["Graph", "from_networkx", "REAL_GRAPHS", "real_graph", "scale_free", "hunter_gatherer", "drop_ties",
           "load_edge_list", "to_networkx", "centrality", "eigenvector_centrality"]


class Graph(NamedTuple):
    n: int
    src: np.ndarray  # (E,) int64
    dst: np.ndarray  # (E,) int64
    weight: np.ndarray  # (E,) float64, > 0
    q: np.ndarray | None = None  # (E,) float64 in [0, 1]: the tie's stationary interaction probability (both directions equal)

    def in_degree(self) -> np.ndarray:
        return np.bincount(self.dst, minlength=self.n)

    def pairs(self) -> np.ndarray:
        """(E,) the index of each directed edge's unordered pair {src, dst} (0..P-1, in sorted pair order)."""
        lo, hi = np.minimum(self.src, self.dst), np.maximum(self.src, self.dst)
        return np.unique(lo * self.n + hi, return_inverse=True)[1].reshape(-1)


def from_networkx(g: nx.Graph, weight: str | None = None) -> Graph:
    """Relabel nodes 0..n-1 (sorted order of insertion) and list both directions of undirected ties."""
    nodes = list(g.nodes)
    idx = {v: i for i, v in enumerate(nodes)}
    src, dst, w = [], [], []
    for u, v, data in g.edges(data=True):
        if u == v:
            continue
        wt = float(data.get(weight, 1.0)) if weight else 1.0
        src.append(idx[u])
        dst.append(idx[v])
        w.append(wt)
        if not g.is_directed():
            src.append(idx[v])
            dst.append(idx[u])
            w.append(wt)
    order = np.lexsort((np.asarray(src), np.asarray(dst)))
    return Graph(len(nodes), np.asarray(src, np.int64)[order], np.asarray(dst, np.int64)[order],
                 np.asarray(w, np.float64)[order])


REAL_GRAPHS = {
    "karate": nx.karate_club_graph,
    "les_miserables": nx.les_miserables_graph,
    "davis": nx.davis_southern_women_graph,
    "florentine": nx.florentine_families_graph,
}


def real_graph(name: str) -> Graph:
    """One of networkx's bundled social graphs, unweighted (ties only)."""
    if name not in REAL_GRAPHS:
        raise ValueError(f"unknown graph {name!r}; networkx ships: {', '.join(REAL_GRAPHS)}")
    return from_networkx(REAL_GRAPHS[name]())


def scale_free(n: int, m: int, seed: int) -> Graph:
    """Barabási-Albert preferential attachment, n nodes, m ties per new node."""
    return from_networkx(nx.barabasi_albert_graph(n, m, seed=seed % 2**32))


def hunter_gatherer(n: int, rng: np.random.Generator, *, camp_size: float = 6.0, bridge_p: float = 0.3,
                    camp_q: float | None = None, bridge_q: float | None = None) -> Graph:
    """A camp network: n agents in camps (complete inside), each with a bridge tie to another camp w.p. bridge_p.

    With ``camp_q`` and ``bridge_q`` the graph carries each tie's stationary interaction probability ``q``: camp_q
    for a tie inside a camp, bridge_q for a tie between camps (the same for both directions).
    """
    n_camps = max(int(round(n / camp_size)), 1)
    camp = rng.integers(0, n_camps, size=n)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for c in range(n_camps):
        members = np.flatnonzero(camp == c)
        g.add_edges_from((int(a), int(b)) for i, a in enumerate(members) for b in members[i + 1:])
    for i in range(n):
        if rng.random() < bridge_p:
            others = np.flatnonzero(camp != camp[i])
            if len(others):
                g.add_edge(i, int(rng.choice(others)))
    graph = from_networkx(g)
    if camp_q is None and bridge_q is None:
        return graph
    if camp_q is None or bridge_q is None or not (0 <= camp_q <= 1 and 0 <= bridge_q <= 1):
        raise ValueError(f"camp network: camp_q and bridge_q must both lie in [0, 1], got {camp_q}, {bridge_q}")
    same = camp[graph.src] == camp[graph.dst]
    return graph._replace(q=np.where(same, float(camp_q), float(bridge_q)))


def load_edge_list(path: str | Path) -> Graph:
    """A weighted directed edge list (CSV or Parquet): columns ``source``, ``target``, optional ``weight``.

    Node ids may be any hashable values; they are numbered in sorted order. Self-loops are dropped.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"edge list {path}: no such file")
    try:
        table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except Exception as err:  # a corrupt file: say which
        raise ValueError(f"edge list {path}: unreadable ({err})") from None
    missing = [c for c in ("source", "target") if c not in table.columns]
    if missing:
        raise ValueError(f"edge list {path}: missing column(s) {missing}; has {list(table.columns)}")
    if table.empty:
        raise ValueError(f"edge list {path}: no edges")
    if table[["source", "target"]].isna().any().any():
        raise ValueError(f"edge list {path}: empty source or target in row(s) "
                         f"{list(np.flatnonzero(table[['source', 'target']].isna().any(axis=1).to_numpy())[:5])}")
    if "weight" in table.columns:
        w = pd.to_numeric(table["weight"], errors="coerce")
        bad = np.flatnonzero(~np.isfinite(w.to_numpy(dtype=float)) | (w.to_numpy(dtype=float) <= 0))
        if len(bad):
            raise ValueError(f"edge list {path}: weight must be a positive number; bad rows {list(bad[:5])}")
    else:
        w = pd.Series(np.ones(len(table)))
    g = nx.DiGraph()
    g.add_nodes_from(sorted(set(table["source"]) | set(table["target"]), key=str))
    g.add_weighted_edges_from(zip(table["source"], table["target"], w.astype(float)))
    return from_networkx(g, weight="weight")


def drop_ties(graph: Graph, keep_prob: float, rng: np.random.Generator) -> Graph:
    """The graph with each tie kept independently w.p. ``keep_prob`` (the reference's percolation mask).

    Directed ties are kept one by one; on a graph whose ties switch (``q`` set) a pair is kept or dropped whole,
    as in the reference, whose interaction chain reads one entry per pair and gives it both directions.
    """
    if graph.q is None:
        keep = rng.random(len(graph.src)) < keep_prob
    else:
        pair = graph.pairs()
        keep = (rng.random(int(pair.max()) + 1 if len(pair) else 0) < keep_prob)[pair]
    return Graph(graph.n, graph.src[keep], graph.dst[keep], graph.weight[keep], None if graph.q is None else graph.q[keep])


def to_networkx(graph: Graph) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(graph.n))
    g.add_weighted_edges_from(zip(graph.src.tolist(), graph.dst.tolist(), graph.weight.tolist()))
    return g


def centrality(graph: Graph) -> dict[str, np.ndarray]:
    """Per node: in-degree (weighted), eigenvector centrality and PageRank of the sees-graph's reverse.

    A node is central when many agents see it: its out-edges in the ``src -> dst`` convention, so
    the measures run on the graph whose edges point from the viewer to the viewed.
    """
    viewed = to_networkx(graph).reverse(copy=True)  # edges viewer -> viewed: centrality flows to the viewed
    n = graph.n
    degree = np.bincount(graph.src, weights=graph.weight, minlength=n)  # how many (weighted) agents see the node
    eig = eigenvector_centrality(viewed)
    pr = nx.pagerank(viewed, weight="weight")  # power iteration from the uniform vector: deterministic
    # nodes of equal centrality (automorphic) come out equal only up to rounding in the last digits, which a rank
    # correlation would order arbitrarily; rounding keeps such ties tied
    return {"degree": degree, "eigenvector": np.round(eig, 10), "pagerank": np.round([pr[v] for v in range(n)], 10)}


def eigenvector_centrality(g: nx.DiGraph, dense_up_to: int = 2000) -> np.ndarray:
    """networkx's ``eigenvector_centrality_numpy`` (the Perron vector of the transposed adjacency, unit norm,
    positive sum) with a deterministic solver: LAPACK's dense eigendecomposition up to ``dense_up_to`` nodes,
    ARPACK from the fixed start vector of ones above (networkx's ARPACK call starts from a random vector, so
    tied nodes differed in the last digits between runs of one seed). NaN everywhere where networkx refuses:
    a graph that is not strongly connected has no unique Perron vector."""
    import scipy.sparse.linalg

    n = g.number_of_nodes()
    if n == 0 or not nx.is_strongly_connected(g):
        return np.full(n, np.nan)
    m = nx.to_scipy_sparse_array(g, nodelist=range(n), weight="weight", dtype=float).T
    if n <= dense_up_to:
        vals, vecs = np.linalg.eig(m.toarray())
        vec = vecs[:, int(np.argmax(vals.real))].real
    else:
        _, vecs = scipy.sparse.linalg.eigs(m, k=1, which="LR", v0=np.ones(n))
        vec = vecs[:, 0].real
    return vec / (np.sign(vec.sum()) * np.linalg.norm(vec))

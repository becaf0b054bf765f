"""The MDA-DD experiment: the corpus to encode, and the tables and summary numbers of its evaluations.

:func:`corpus_for_source` picks the corpus of the ``source`` setting (the synthetic scene corpus of
:mod:`repro.papers.mdadd.synth`, or Flickr30K / COCO in the Karpathy format).

Every evaluation job writes ``{"method", "n_pairs", "recall": {"unseen": [...], "seen": [...]}}``
(one recall dict per student initialisation). :func:`tidy_recalls` flattens a list of them into
the long table the figures plot; :func:`table1` gives the paper's table (unseen initialisations,
mean +- sd); :func:`summary_metrics` gives the numbers the claims read.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from repro.data.captions import ImageCaptionCorpus, load_corpus

__all__ = ["corpus_for_source", "tidy_recalls", "table1", "init_gap", "cost_summary", "summary_metrics", "RECALL_KEYS"]

RECALL_KEYS = ("TR@1", "TR@5", "TR@10", "IR@1", "IR@5", "IR@10", "mR")


def corpus_for_source(source: str, *, corpus: str | os.PathLike | None = None, json_path: str | os.PathLike | None = None,
                      image_root: str | os.PathLike | None = None, max_images: dict | None = None) -> ImageCaptionCorpus:
    """The corpus to encode: the synthetic ``.npz`` (``source: synthetic``) or a Karpathy JSON + folder."""
    if source == "synthetic":
        if corpus is None:
            raise ValueError("source synthetic needs the corpus .npz")
        return load_corpus(corpus)
    if source in ("local", "remote"):
        from repro.data.karpathy import load_karpathy

        if json_path is None or image_root is None:
            raise ValueError(f"source {source} needs data.json and data.images")
        return load_karpathy(json_path, image_root, max_images=max_images)
    raise ValueError(f"mdadd: unknown data source {source!r} (synthetic, local or remote)")


def tidy_recalls(records: list[dict]) -> pd.DataFrame:
    """Columns: method, n_pairs (int; the full set's size for ``full``), init (seen / unseen), run, metric, value."""
    rows = []
    for rec in records:
        for kind, runs in rec["recall"].items():
            for i, r in enumerate(runs):
                rows += [{"method": rec["method"], "n_pairs": int(rec["n_pairs"]), "init": kind, "run": i,
                          "metric": k, "value": float(r[k])} for k in RECALL_KEYS]
    return pd.DataFrame(rows, columns=["method", "n_pairs", "init", "run", "metric", "value"])


def table1(tidy: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """TR/IR@1,5,10 and mR under unseen initialisations, as "mean +- sd", one row per method and size."""
    unseen = tidy[tidy["init"] == "unseen"]
    stats = unseen.groupby(["method", "n_pairs", "metric"])["value"].agg(["mean", "std"]).reset_index()
    rows = []
    for (method, n), g in stats.groupby(["method", "n_pairs"]):
        row = {"method": method, "pairs": n}
        for k in RECALL_KEYS:
            r = g[g["metric"] == k].iloc[0]
            row[k] = f"{r['mean']:.1f} +- {0.0 if np.isnan(r['std']) else r['std']:.1f}"
        rows.append(row)
    out = pd.DataFrame(rows)
    order = {m: i for i, m in enumerate(methods)}
    out["_o"] = out["method"].map(lambda m: order.get(m, len(order)))
    return out.sort_values(["_o", "pairs"]).drop(columns="_o").reset_index(drop=True)


def init_gap(tidy: pd.DataFrame) -> pd.DataFrame:
    """Seen minus unseen mean R@1 (average of TR@1 and IR@1) per method and size, where both exist."""
    r1 = tidy[tidy["metric"].isin(["TR@1", "IR@1"])]
    means = r1.groupby(["method", "n_pairs", "init"])["value"].mean().unstack("init")
    if "seen" not in means:
        return pd.DataFrame(columns=["method", "n_pairs", "seen", "unseen", "gap"])
    means = means.dropna(subset=["seen", "unseen"]).reset_index()
    means["gap"] = means["seen"] - means["unseen"]
    return means[["method", "n_pairs", "seen", "unseen", "gap"]]


def cost_summary(cost: pd.DataFrame) -> dict:
    """Log-log slopes of time against dimension (upper half of the dims) and the ratios at the largest one."""
    out = {}
    dims = np.sort(cost["dim"].unique())
    upper = dims[len(dims) // 2:] if len(dims) >= 4 else dims
    for form, g in cost.groupby("form"):
        g = g.set_index("dim").loc[upper]
        out[f"slope_{form}"] = float(np.polyfit(np.log(g.index.values), np.log(g["time_s"].values), 1)[0])
    big = cost[cost["dim"] == dims[-1]].set_index("form")
    out["largest_dim"] = int(dims[-1])
    out["time_ratio_naive_over_socm_largest_dim"] = float(big.loc["naive", "time_s"] / big.loc["socm", "time_s"])
    out["memory_ratio_naive_over_socm_largest_dim"] = float(big.loc["naive", "memory_bytes"] / big.loc["socm", "memory_bytes"])
    out["max_rel_diff"] = float(cost["rel_diff"].max())
    return out


def summary_metrics(tidy: pd.DataFrame, cost: pd.DataFrame, *, method: str, ablation: str,
                    baselines: list[str]) -> dict:
    """The numbers ``workflow/claims/mdadd.yaml`` reads (unseen initialisations unless stated)."""
    unseen = tidy[tidy["init"] == "unseen"]
    mean = unseen.groupby(["method", "n_pairs", "metric"])["value"].mean()
    sd = unseen.groupby(["method", "n_pairs", "metric"])["value"].std()
    recall: dict = {}
    for (m, n, k), v in mean.items():
        recall.setdefault(m, {}).setdefault(f"n{n}", {})[k] = {"mean": v, "sd": sd[(m, n, k)]}
    sizes = sorted(unseen.loc[unseen["method"] == method, "n_pairs"].unique())
    small, large = int(sizes[0]), int(sizes[-1])

    def best(k: str, n: int) -> float:
        return max(mean.get((b, n, k), -np.inf) for b in baselines)

    gaps = init_gap(tidy).groupby("method")["gap"].mean()
    summary = {
        "n_smallest": small, "n_largest": large,
        "mdadd_tr1_smallest": mean[(method, small, "TR@1")], "mdadd_ir1_smallest": mean[(method, small, "IR@1")],
        "best_baseline_tr1_smallest": best("TR@1", small), "best_baseline_ir1_smallest": best("IR@1", small),
        "mdadd_mr_smallest": mean[(method, small, "mR")], "best_baseline_mr_largest": best("mR", large),
        "gap_r1_mdadd": gaps.get(method, np.nan), "gap_r1_noqueue": gaps.get(ablation, np.nan),
    }
    summary["tr1_margin_smallest"] = summary["mdadd_tr1_smallest"] - summary["best_baseline_tr1_smallest"]
    summary["ir1_margin_smallest"] = summary["mdadd_ir1_smallest"] - summary["best_baseline_ir1_smallest"]
    return {"recall": recall, "init_gap_r1": {m: float(g) for m, g in gaps.items()}, "summary": summary,
            "cost": cost_summary(cost)}

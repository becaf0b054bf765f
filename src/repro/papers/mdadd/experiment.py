"""The MDA-DD experiment: the corpus to encode, and the tables and summary numbers of its evaluations.

:func:`corpus_for_source` picks the corpus of the ``source`` setting (the synthetic scene corpus of
:mod:`repro.papers.mdadd.synth`, or Flickr30K / COCO in the Karpathy format).

Every evaluation job writes ``{"method", "n_pairs", "distill_seed", "recall": {"unseen": [...],
"seen": [...]}}`` (one recall dict per student initialisation). :func:`tidy_recalls` flattens a list
of them into the long table the figures plot; :func:`table1` gives the paper's table (unseen
initialisations, mean +- sd); :func:`summary_metrics` gives the numbers the tables quote and the
per-unit samples the claims read.

The units of the claims (:data:`UNIT`): one unit is a distillation seed ``k`` together with one
unseen student initialisation ``i`` (id ``s{k}i{i}``). Both come from the unit, never from the
method: distillation job ``k`` of every method gets ``job.seed_for("mdadd-distill", seed=k)`` and
its evaluation the unseen initialisations and data order of ``job.seed_for("mdadd-eval", seed=k)``,
the same for every method and size. So unit ``s0i2`` of MDA-DD and unit ``s0i2`` of a baseline
differ only by the method, and a comparison is paired by unit. Units that share a distillation
seed share its distilled set, so they are not independent: the samples label each unit with its
distillation seed (``cluster``), and the checker resamples distillation seeds with their units. The
claims are decided by distillation seeds: 6 are needed at 95% (:func:`repro.stats.intervals.min_units`).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from repro.claims import INTERVAL_COLUMNS, interval_rows, lookup_metric, sample
from repro.data.captions import ImageCaptionCorpus, load_corpus
from repro.tablecells import mean_spread

__all__ = ["corpus_for_source", "tidy_recalls", "unit_id", "table1", "init_gap", "init_gap_units", "cost_table",
           "cost_summary", "unseen_sample", "summary_metrics", "claim_intervals", "RECALL_KEYS", "UNIT"]

RECALL_KEYS = ("TR@1", "TR@5", "TR@10", "IR@1", "IR@5", "IR@10", "mR")
#: What one unit of a claim is: a distillation seed with one unseen student initialisation.
UNIT = "distill_seed_init"


def corpus_for_source(source: str, *, corpus: str | os.PathLike | None = None, json_path: str | os.PathLike | None = None,
                      image_root: str | os.PathLike | None = None, max_images: dict | None = None) -> ImageCaptionCorpus:
    """The corpus to encode: the synthetic ``.npz`` (``source: synthetic``) or a Karpathy JSON + folder (checked
    against their sidecars under ``source: remote``, :mod:`repro.data.sidecar`)."""
    if source == "synthetic":
        if corpus is None:
            raise ValueError("source synthetic needs the corpus .npz")
        return load_corpus(corpus)
    if source in ("local", "remote"):
        from repro.data.karpathy import load_karpathy
        from repro.data.sidecar import verify

        if json_path is None or image_root is None:
            raise ValueError(f"source {source} needs data.json and data.images")
        if source == "remote":  # fetched: both are checked against the sha256 mdadd_fetch wrote beside them
            for fetched in (json_path, image_root):
                verify(fetched)
        return load_karpathy(json_path, image_root, max_images=max_images)
    raise ValueError(f"mdadd: unknown data source {source!r} (synthetic, local or remote)")


def tidy_recalls(records: list[dict]) -> pd.DataFrame:
    """Columns: method, n_pairs (int; the full set's size for ``full``), distill_seed, init (seen / unseen),
    run (the initialisation's index within its distillation seed), metric, value."""
    rows = []
    for rec in records:
        k = int(rec.get("distill_seed", 0))
        for kind, runs in rec["recall"].items():
            for i, r in enumerate(runs):
                rows += [{"method": rec["method"], "n_pairs": int(rec["n_pairs"]), "distill_seed": k, "init": kind,
                          "run": i, "metric": m, "value": float(r[m])} for m in RECALL_KEYS]
    return pd.DataFrame(rows, columns=["method", "n_pairs", "distill_seed", "init", "run", "metric", "value"])


def cluster_id(distill_seed: int) -> str:
    """The cluster of a unit: its distillation seed ``k`` -> ``s{k}`` (units of one seed share its set)."""
    return f"s{int(distill_seed)}"


def unit_id(distill_seed: int, run: int) -> str:
    """The id of a unit: distillation seed ``k`` and unseen initialisation ``i`` -> ``s{k}i{i}``."""
    return f"{cluster_id(distill_seed)}i{int(run)}"


def table1(tidy: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """TR/IR@1,5,10 and mR under unseen initialisations, as "mean +- sd", one row per method and size.

    A row over one unit has no sd: it prints as missing (:func:`repro.tablecells.mean_spread`), never as 0."""
    unseen = tidy[tidy["init"] == "unseen"]
    stats = unseen.groupby(["method", "n_pairs", "metric"])["value"].agg(["mean", "std"]).reset_index()
    rows = []
    for (method, n), g in stats.groupby(["method", "n_pairs"]):
        row = {"method": method, "pairs": n}
        for k in RECALL_KEYS:
            r = g[g["metric"] == k].iloc[0]
            row[k] = mean_spread(r["mean"], r["std"], fmt=".1f")
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


def cost_table(cost: pd.DataFrame) -> pd.DataFrame:
    """One row per (dim, form): the minimum time over the timing repeats (``timeit``'s advice), as Fig. 3 plots."""
    if "rep" not in cost:
        return cost.copy()
    keys = ["dim", "form"]
    out = cost.groupby(keys, sort=False).agg(time_s=("time_s", "min"), memory_bytes=("memory_bytes", "first"),
                                             rel_diff=("rel_diff", "max")).reset_index()
    return out[["dim", "form", "time_s", "memory_bytes", "rel_diff"]]


def _upper_dims(cost: pd.DataFrame) -> np.ndarray:
    dims = np.sort(cost["dim"].unique())
    return dims[len(dims) // 2:] if len(dims) >= 4 else dims


def _loglog_slope(dims: np.ndarray, times: np.ndarray) -> float:
    return float(np.polyfit(np.log(dims), np.log(times), 1)[0])


def cost_summary(cost: pd.DataFrame) -> dict:
    """Log-log slopes of time against dimension (upper half of the dims) and the ratios at the largest one.

    ``slope_{form}`` is the slope of the minimum time over repeats (the number Fig. 3 shows);
    ``per_repeat.slope_{form}`` is a sample (unit ``repeat``, ids ``r{r}``) of the slope of each timing
    repeat, where repeat ``r`` timed both forms back to back at every dimension, so the two forms'
    slopes are paired by repeat. The repeats share the process and the random inputs: they capture
    timing noise (machine load), not a rerun on another machine.
    """
    out: dict = {}
    table = cost_table(cost)
    dims = np.sort(table["dim"].unique())
    upper = _upper_dims(table)
    for form, g in table.groupby("form"):
        g = g.set_index("dim").loc[upper]
        out[f"slope_{form}"] = _loglog_slope(g.index.values, g["time_s"].values)
    big = table[table["dim"] == dims[-1]].set_index("form")
    out["largest_dim"] = int(dims[-1])
    out["time_ratio_naive_over_socm_largest_dim"] = float(big.loc["naive", "time_s"] / big.loc["socm", "time_s"])
    out["memory_ratio_naive_over_socm_largest_dim"] = float(big.loc["naive", "memory_bytes"] / big.loc["socm", "memory_bytes"])
    out["max_rel_diff"] = float(table["rel_diff"].max())
    if "rep" in cost:
        per_repeat = {}
        for form, g in cost[cost["dim"].isin(upper)].groupby("form"):
            reps = sorted(g["rep"].unique())
            slopes = []
            for r in reps:
                gr = g[g["rep"] == r].set_index("dim").loc[upper]
                slopes.append(_loglog_slope(gr.index.values, gr["time_s"].values))
            per_repeat[f"slope_{form}"] = sample(slopes, [f"r{int(r)}" for r in reps], "repeat")
        out["per_repeat"] = per_repeat
    return out


def unseen_sample(tidy: pd.DataFrame, method: str, n_pairs: int, metric: str) -> dict | None:
    """Per-unit ``metric`` of ``method`` at ``n_pairs`` under unseen initialisations (a :func:`repro.claims.sample`)."""
    sel = tidy[(tidy["method"] == method) & (tidy["n_pairs"] == n_pairs) & (tidy["init"] == "unseen")
               & (tidy["metric"] == metric)].sort_values(["distill_seed", "run"])
    if sel.empty:
        return None
    return sample(sel["value"], [unit_id(k, i) for k, i in zip(sel["distill_seed"], sel["run"])], UNIT,
                  cluster=[cluster_id(k) for k in sel["distill_seed"]])


def init_gap_units(tidy: pd.DataFrame, *, by_size: bool = False) -> pd.DataFrame:
    """The initialisation gap per unit: columns method, distill_seed, run, gap (and n_pairs, ``by_size``).

    For unit (distillation seed ``k``, unseen initialisation ``i``) and one size: the mean R@1
    (average of TR@1 and IR@1) of the seen initialisations of distillation ``k`` minus the R@1 of
    unseen initialisation ``i``; then averaged over the sizes where the method has seen
    initialisations (``by_size``: one row per size instead). The mean over units equals
    :func:`init_gap`'s gap averaged over sizes (per size, ``by_size``).
    """
    r1 = tidy[tidy["metric"].isin(["TR@1", "IR@1"])]
    r1 = r1.groupby(["method", "n_pairs", "distill_seed", "init", "run"])["value"].mean().reset_index()
    keys = ["method", "n_pairs", "distill_seed"]
    seen = r1[r1["init"] == "seen"].groupby(keys)["value"].mean().rename("seen")
    unseen = r1[r1["init"] == "unseen"].set_index(keys)[["run", "value"]].rename(columns={"value": "unseen"})
    both = unseen.join(seen, how="inner").reset_index()
    both["gap"] = both["seen"] - both["unseen"]
    if by_size:
        return both[["method", "n_pairs", "distill_seed", "run", "gap"]]
    return both.groupby(["method", "distill_seed", "run"])["gap"].mean().reset_index()


def _gap_sample(units: pd.DataFrame, method: str) -> dict | None:
    g = units[units["method"] == method].sort_values(["distill_seed", "run"])
    if g.empty:
        return None
    return sample(g["gap"], [unit_id(k, i) for k, i in zip(g["distill_seed"], g["run"])], UNIT,
                  cluster=[cluster_id(k) for k in g["distill_seed"]])


def summary_metrics(tidy: pd.DataFrame, cost: pd.DataFrame, *, method: str, ablation: str,
                    baselines: list[str]) -> dict:
    """The numbers the tables quote (``summary``) and the per-unit samples the claims read (``evidence``).

    Unseen initialisations unless stated. The best baseline of a comparison is the baseline with
    the highest mean over units at that size (the claims' "previous best"); ``evidence`` then holds
    that baseline's per-unit sample, paired by unit with MDA-DD's.
    """
    unseen = tidy[tidy["init"] == "unseen"]
    mean = unseen.groupby(["method", "n_pairs", "metric"])["value"].mean()
    sd = unseen.groupby(["method", "n_pairs", "metric"])["value"].std()
    recall: dict = {}
    for (m, n, k), v in mean.items():
        recall.setdefault(m, {}).setdefault(f"n{n}", {})[k] = {"mean": v, "sd": sd[(m, n, k)],
                                                              "per_unit": unseen_sample(tidy, m, n, k)}
    sizes = sorted(unseen.loc[unseen["method"] == method, "n_pairs"].unique())
    small, large = int(sizes[0]), int(sizes[-1])

    def best(k: str, n: int) -> str | None:
        """The baseline with the highest mean ``k`` at size ``n`` (selection by mean, as the claims word it)."""
        scored = [(mean[(b, n, k)], b) for b in baselines if (b, n, k) in mean.index]
        return max(scored)[1] if scored else None

    def best_entry(k: str, n: int) -> dict | None:
        b = best(k, n)
        return None if b is None else {"method": b, "mean": float(mean[(b, n, k)]),
                                       "per_unit": unseen_sample(tidy, b, n, k)}

    gaps = init_gap(tidy).groupby("method")["gap"].mean()
    gap_units = init_gap_units(tidy)
    summary = {
        "n_smallest": small, "n_largest": large,
        "mdadd_tr1_smallest": mean[(method, small, "TR@1")], "mdadd_ir1_smallest": mean[(method, small, "IR@1")],
        "best_baseline_tr1_smallest": mean.get((best("TR@1", small), small, "TR@1"), -np.inf),
        "best_baseline_ir1_smallest": mean.get((best("IR@1", small), small, "IR@1"), -np.inf),
        "mdadd_mr_smallest": mean[(method, small, "mR")],
        "best_baseline_mr_largest": mean.get((best("mR", large), large, "mR"), -np.inf),
        "gap_r1_mdadd": gaps.get(method, np.nan), "gap_r1_noqueue": gaps.get(ablation, np.nan),
    }
    summary["tr1_margin_smallest"] = summary["mdadd_tr1_smallest"] - summary["best_baseline_tr1_smallest"]
    summary["ir1_margin_smallest"] = summary["mdadd_ir1_smallest"] - summary["best_baseline_ir1_smallest"]
    evidence = {
        "unit": UNIT,
        "n_distill_seeds": int(unseen["distill_seed"].nunique()),
        "mdadd_tr1_smallest": unseen_sample(tidy, method, small, "TR@1"),
        "mdadd_ir1_smallest": unseen_sample(tidy, method, small, "IR@1"),
        "mdadd_mr_smallest": unseen_sample(tidy, method, small, "mR"),
        "best_baseline_tr1_smallest": best_entry("TR@1", small),
        "best_baseline_ir1_smallest": best_entry("IR@1", small),
        "best_baseline_mr_largest": best_entry("mR", large),
        "gap_r1_mdadd": _gap_sample(gap_units, method),
        "gap_r1_noqueue": _gap_sample(gap_units, ablation),
    }
    return {"recall": recall, "init_gap_r1": {m: float(g) for m, g in gaps.items()}, "summary": summary,
            "evidence": evidence, "cost": cost_summary(cost)}


def claim_intervals(metrics: dict, claims) -> pd.DataFrame:
    """One row per claim whose metric this build holds: the interval it is decided on, or why it has
    none (:func:`repro.claims.interval_rows`), for the figures that draw the claims' quantities.

    Beside the columns of :func:`~repro.claims.interval_rows`: the claim's ``metric`` and ``rhs`` paths,
    ``rhs_method`` (the best baseline the claim compares with, where the rhs names one), ``n_units`` and
    ``n_seeds`` (the units of the claim's sample and their distillation seeds, the clusters the
    checker resamples). ``claims``: the paper's claims (:func:`repro.claims.load_claims`).
    """
    by_id = {c.id: c for c in claims}
    rows = []
    for r in interval_rows(list(claims), metrics):
        claim = by_id[r["claim"]]
        node = lookup_metric(metrics, claim.metric)
        node = node.get("per_unit", node) if isinstance(node, dict) else node
        rhs = lookup_metric(metrics, claim.rhs) if isinstance(claim.rhs, str) else None
        rows.append({**r, "metric": claim.metric, "rhs": claim.rhs,
                     "rhs_method": rhs.get("method") if isinstance(rhs, dict) else None,
                     "n_units": len(node["ids"]) if isinstance(node, dict) and "ids" in node else None,
                     "n_seeds": len(set(node["cluster"])) if isinstance(node, dict) and "cluster" in node else None})
    columns = [*INTERVAL_COLUMNS, "metric", "rhs", "rhs_method", "n_units", "n_seeds"]
    return pd.DataFrame(rows, columns=columns)

"""modellens on a real leaderboard dump (``source: remote``): held-out records stand in for true quality.

A long-format dump (``repro.data.leaderboard.load_leaderboard``: model, dataset, metric, value, and
optionally higher_is_better, model_card, dataset_desc, task, family, size_b, downloads) has no
planted truth, so each seed (the unit) draws a split of the records, as the reference evaluates:

- ``unseen_model_frac`` of the models and ``unseen_dataset_frac`` of the datasets (all their metric
  groups) lose every record to the evaluation side (cold start);
- ``heldout_record_frac`` of the remaining records are held out (in-domain completion);
- the rest train. A group (dataset, metric) ranks, per split, only the models with a held-out record
  in it (at least two), and their held-out values (turned higher-is-better) are the truth, scored
  by the reference's metrics as on synthetic data (``experiment.evaluate_truth``: NDCG@K, Hit@K and
  Recall@K over the groups with at least K such models, so a split without one has no value at K).

What real data cannot give, and is therefore not run (its metrics are absent, so the claims that
read them are NOT RUN): the true-quality oracle (the held-out values are the truth; it would score
1 by construction), run-every-candidate and the regret-vs-cost curve (a dump holds no probe set
and no way to run a candidate), and routing (no per-query correctness). Fig. 2 and Fig. 3 are
built from synthetic data only.

Metadata a dump may lack (choices of ours, no reference): the family is the ``family`` column, else
the organisation before ``/`` in the model name, else the name's first token; the size is
``size_b``, else a number followed by ``b`` in the name (``7b``, ``1.5B``), else the median size;
the popularity is ``downloads``, else the model's number of records in the whole dump (evaluation
counts are public metadata; no value is read); a card is ``model_card``, else the model name; a
description is ``dataset_desc``, else the dataset name; the task is ``task``, else the dataset.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from repro.data.leaderboard import load_leaderboard
from repro.methods.modellens import name_tokens
from repro.methods.recommenders import RECOMMENDERS, RecProblem, standardise
from repro.papers.modellens.experiment import SPLITS, evaluate_truth, modellens_variant

__all__ = ["RealLeaderboard", "read_real", "real_texts", "real_split", "build_real_problem", "real_pairs",
           "prepare_real", "run_real_seed", "SPLIT_KEYS"]

SPLIT_KEYS = ("unseen_model_frac", "unseen_dataset_frac", "heldout_record_frac")
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.IGNORECASE)


@dataclass
class RealLeaderboard:
    """Entities and records of a dump, indexed: models (m), datasets (d), groups (g), records (m, g, value)."""

    models: pd.DataFrame     # model, card, family, size_b, log_pop
    datasets: pd.DataFrame   # dataset, description, task
    groups: pd.DataFrame     # group, dataset, metric, higher_is_better, d
    records: pd.DataFrame    # m, g, value (higher is better: direction applied)


def _first(table: pd.DataFrame, key: str, col: str) -> pd.Series:
    if col not in table.columns:
        return pd.Series(dtype=object)
    return table.dropna(subset=[col]).groupby(key, sort=True)[col].first()


def _family(name: str) -> str:
    return name.split("/", 1)[0].lower() if "/" in name else (name_tokens(name) or [name.lower()])[0]


def _size(name: str) -> float:
    hit = _SIZE.search(name.split("/")[-1])
    return float(hit.group(1)) if hit and float(hit.group(1)) > 0 else np.nan


def read_real(path: str | os.PathLike) -> RealLeaderboard:
    """Load and index a dump; an unreadable or malformed one is a ValueError naming the file."""
    table, groups = load_leaderboard(path)
    dup = table.duplicated(["model", "group"])
    if dup.any():
        row = table[dup].iloc[0]
        raise ValueError(f"{path}: model {row.model!r} has more than one value in dataset {row.dataset!r}, "
                         f"metric {row.metric!r}; keep one record per (model, dataset, metric)")
    names = sorted(table.model.astype(str).unique())
    if len(names) < 4 or table.dataset.nunique() < 2:
        raise ValueError(f"{path}: {len(names)} models and {table.dataset.nunique()} datasets; a split into seen "
                         "and unseen needs at least 4 models and 2 datasets")
    table = table.assign(model=table.model.astype(str), dataset=table.dataset.astype(str))
    cards, fams = _first(table, "model", "model_card"), _first(table, "model", "family")
    sizes, pops = _first(table, "model", "size_b"), _first(table, "model", "downloads")
    counts = table.groupby("model").size()
    size = np.array([float(sizes[n]) if n in sizes else _size(n) for n in names], dtype=float)
    size[~np.isfinite(size) | (size <= 0)] = np.nan
    size = np.where(np.isnan(size), np.nanmedian(size) if np.isfinite(size).any() else 1.0, size)
    models = pd.DataFrame({
        "model": names,
        "card": [str(cards[n]) if n in cards else n for n in names],
        "family": [str(fams[n]) if n in fams else _family(n) for n in names],
        "size_b": size,
        "log_pop": [np.log(float(pops[n]) + 1.0) if n in pops else np.log(float(counts[n])) for n in names]})
    dnames = sorted(table.dataset.unique())
    descs, tasks = _first(table, "dataset", "dataset_desc"), _first(table, "dataset", "task")
    datasets = pd.DataFrame({"dataset": dnames, "description": [str(descs[d]) if d in descs else d for d in dnames],
                             "task": [str(tasks[d]) if d in tasks else d for d in dnames]})
    d_index = {d: i for i, d in enumerate(dnames)}
    groups = groups.assign(d=groups.dataset.astype(str).map(d_index))
    g_index = {g: i for i, g in enumerate(groups.group)}
    m_index = {n: i for i, n in enumerate(names)}
    sign = np.where(groups.higher_is_better.to_numpy(), 1.0, -1.0)
    g = table.group.map(g_index).to_numpy()
    records = pd.DataFrame({"m": table.model.map(m_index).to_numpy(), "g": g, "value": table.value.to_numpy() * sign[g]})
    return RealLeaderboard(models=models, datasets=datasets, groups=groups, records=records)


def real_texts(real: RealLeaderboard) -> list[str]:
    """Every text to embed: model cards, then dataset descriptions."""
    return list(real.models.card) + list(real.datasets.description)


def real_split(real: RealLeaderboard, fracs: dict, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seen flags of models and datasets and each record's split ("train", "heldout", "cold") for ``seed``."""
    rng = np.random.default_rng(seed)
    n_m, n_d = len(real.models), len(real.datasets)
    unseen_m = np.zeros(n_m, dtype=bool)
    unseen_m[rng.permutation(n_m)[: int(round(fracs["unseen_model_frac"] * n_m))]] = True
    unseen_d = np.zeros(n_d, dtype=bool)
    unseen_d[rng.permutation(n_d)[: min(n_d - 1, int(round(fracs["unseen_dataset_frac"] * n_d)))]] = True
    d_of = real.groups.d.to_numpy()[real.records.g.to_numpy()]
    cold = unseen_m[real.records.m.to_numpy()] | unseen_d[d_of]
    held = rng.random(len(real.records)) < fracs["heldout_record_frac"]
    split = np.where(cold, "cold", np.where(held, "heldout", "train"))
    return ~unseen_m, ~unseen_d, split


def build_real_problem(real: RealLeaderboard, card_emb: np.ndarray, desc_emb: np.ndarray, model_seen: np.ndarray,
                       split: np.ndarray) -> RecProblem:
    """The recommenders' view: metadata, text and the training records (values already higher-is-better)."""
    d_of_g = real.groups.d.to_numpy()
    train = []
    recs = real.records[split == "train"]
    for g, part in recs.groupby("g", sort=True):
        if len(part) >= 2:
            train.append((int(g), part.m.to_numpy(), standardise(part.value.to_numpy(), True)))
    group_seen = np.zeros(len(real.groups), dtype=bool)
    group_seen[[g for g, _, _ in train]] = True
    return RecProblem(
        model_family=pd.Categorical(real.models.family).codes.astype(np.int64),
        model_log_size=np.log2(real.models.size_b.to_numpy()), model_log_pop=real.models.log_pop.to_numpy(float),
        model_text=card_emb, model_tokens=[name_tokens(n) for n in real.models.model], model_seen=model_seen,
        group_text=desc_emb[d_of_g], group_task=pd.Categorical(real.datasets.task).codes[d_of_g].astype(np.int64),
        group_metric=pd.Categorical(real.groups.metric).codes.astype(np.int64), group_seen=group_seen, train=train)


def real_pairs(real: RealLeaderboard, problem: RecProblem, dataset_seen: np.ndarray,
               split: np.ndarray) -> dict[str, list[tuple[int, np.ndarray, np.ndarray]]]:
    """Per split, (group, models with a held-out record there, their held-out values), two models or more."""
    out = {s: [] for s in SPLITS}
    held = real.records[split != "train"]
    for g, part in held.groupby("g", sort=True):
        d_seen = bool(dataset_seen[real.groups.d.iloc[g]]) and problem.group_seen[g]
        for m_side in ("seen", "unseen"):
            side = part[problem.model_seen[part.m.to_numpy()] == (m_side == "seen")]
            if len(side) >= 2:
                out[f"{m_side}_{'seen' if d_seen else 'unseen'}"].append(
                    (int(g), side.m.to_numpy(), side.value.to_numpy()))
    return out


def prepare_real(real: RealLeaderboard, cfg: dict, split_seed: int, embed):
    """One seed's split of the dump, the recommenders' problem, the evaluation pairs and an evaluator."""
    emb = embed(real_texts(real))
    model_seen, dataset_seen, split = real_split(real, cfg["real"], split_seed)
    n_m = len(real.models)
    problem = build_real_problem(real, emb[:n_m], emb[n_m:], model_seen, split)
    pairs = real_pairs(real, problem, dataset_seen, split)

    def evaluate(scores: np.ndarray) -> dict[str, dict[str, float]]:
        return {s: evaluate_truth([(q, scores[ms, g]) for g, ms, q in p], cfg["ks"]) for s, p in pairs.items()}

    return split, problem, pairs, evaluate


def run_real_seed(real: RealLeaderboard, cfg: dict, split_seed: int, method_seed: int, embed) -> dict:
    """Every recommender of ``cfg["methods"]`` on one split of the dump (no oracle, run_all or routing)."""
    if not problem_has_training(real, cfg, split_seed):
        raise ValueError(f"split seed {split_seed}: fewer than one group with two training records; the dump is too "
                         "small or too sparse for the configured held-out fractions")
    split, problem, pairs, evaluate = prepare_real(real, cfg, split_seed, embed)
    result = {"source": "remote", "data_seed": split_seed, "method_seed": method_seed,
              "n_records": {s: int((split == s).sum()) for s in ("train", "heldout", "cold")},
              "n_groups": {s: len(p) for s, p in pairs.items()}, "n_candidates_unseen_unseen": 0,
              "budgets": [], "metrics": {}, "regret": {},
              "not_run": ["oracle", "run_all", "regret", "routing"]}
    for name in cfg["methods"]:
        model = modellens_variant(cfg) if name == "modellens" else RECOMMENDERS.create(
            name, **cfg.get("method_options", {}).get(name, {}))
        result["metrics"][name] = evaluate(model.fit_predict(problem, method_seed))
    return result


def problem_has_training(real: RealLeaderboard, cfg: dict, split_seed: int) -> bool:
    _, _, split = real_split(real, cfg["real"], split_seed)
    train = real.records[split == "train"]
    return bool((train.groupby("g").size() >= 2).any())

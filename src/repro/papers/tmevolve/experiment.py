"""TMEvolve's experiments: the three tasks, one training fold, summaries, metrics.json, tables, the Fig. 3 trace.

- Tasks (registered in :data:`TASKS`, the ``{task}`` wildcard): ``survival`` (discrete-time NLL
  over 4 bins from quartiles of the training fold's uncensored times, C-index of
  ``risk = -sum S``; :mod:`repro.metrics.survival`), ``subtype`` (cross-entropy, macro one-vs-rest
  AUC), ``gene`` (MSE on the standardised target, Pearson r).
- :func:`train_fold`: one method on one task for one fold, with the preset's settings, through the
  shared MIL training loop (:func:`repro.methods.mil_train.fit_fold`).

- Version 2: two cohorts (the main, spatial one, whose labels are set by the arrangement
  of the patches, and the control, version 1's WSI cohort); repeated cross-validation
  (:func:`make_repeated_folds`; units ``r{repeat}_fold{fold}_s{repeat}``, :func:`unit_id`), one
  training job per (method, repeat), or per (task, repeat) with ``train_bundle: task``
  (:func:`train_repeat`, :func:`save_repeat`); summaries straight from the jobs' fold records
  (:func:`collect_summaries`); the position-shuffle controls
  (``shuffled_<method>``, :func:`shuffle_positions`); oracles and random scores on the same units
  (:func:`oracle_summaries`).

Every function takes paths or plain data and returns data, so each pipeline script is one call.
``metrics.json`` layout (the claims address it by dotted path)::

    {task: {method: {mean, sd, folds, per_unit, seeds, [ari_*, fidelity keys]}},  # main cohort, every run
     best_baseline: {task: {method, mean, sd, per_unit}},
     shuffle_drop: {task: {method: sample(method - shuffled_method)}},
     control: {task: {method: ...}, best_baseline: ..., shuffle_drop: ...},     # the control cohort
     ablation: {task: {drop: {variant: full - variant}, max_drop_other_than_randcon, other_minus_randcon}},
     grid: {task: {"q{Q}_k{K}": mean}},
     ari: {q0, final, gain, tiles, q0_folds, final_folds, tiles_folds, baseline_folds},  # TMEvolve, survival
     fidelity: {task: {rho_rowsum_median, ..., dirichlet_ratio, spread_feature, spread_spatial, kappa_mean}},
     design_choices: {...}}                                                   # TMEvolve's version-2 choices
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pandas as pd
import torch

import repro.methods.tmevolve  # noqa: F401 - registers TMEvolve, its ablations and its grid as MIL models
from repro.claims import require_paired, sample
from repro.io import atomic_path, load_npz, load_torch, read_json, save_torch
from repro.methods.mil import create_mil_model
from repro.methods.mil_train import (FIDELITY_KEYS, CohortData, FoldResult, fit_fold, fold_of, load_prepared,
                                     make_folds, region_ari, summarize_folds)
from repro.methods.mil import SlideBag
from repro.methods.tmevolve import DESIGN_CHOICES
from repro.methods.tmevolve_variants import grid_name
from repro.nn.graph import grid_neighbours, knn_neighbours
from repro.papers.tmevolve.grid import ORACLES, SHUFFLED, base_method
from repro.metrics.survival import concordance_index, discretize, nll_survival_loss, risk_from_logits, time_bins
from repro.registry import Registry
from repro.tables import MISSING
from repro.tablecells import mean_spread
from repro.tableio import read_csv

__all__ = ["TASKS", "train_fold", "train_repeat", "save_repeat", "unit_id", "shuffle_positions", "oracle_summaries",
           "make_repeated_folds", "ridge_cox", "slide_features", "train_seed", "save_fold", "check_paired", "summarize_fold_files",
           "collect_summaries", "inner_split", "learning_curve", "loss_floors",
           "aggregate_metrics", "make_tables", "trace_slide", "save_concepts", "load_concepts", "BASELINES",
           "slide_thumbnail", "survival_points", "FIG3_CLAIM", "encoder_probe"]

log = logging.getLogger(__name__)

#: The registry keys that count as baselines for "best baseline".
BASELINES = ("mean", "abmil", "transmil", "graphmil", "dsmil")


# ----------------------------------------------------------------------------------------------
# Tasks: targets, loss, score and metric of one slide-level prediction task (repro.methods.mil_train.MILTask)

TASKS: Registry = Registry("task")


class SurvivalTask:
    name = "survival"
    metric_name = "c_index"

    def fit(self, train: pd.DataFrame, cohort: pd.DataFrame) -> "SurvivalTask":
        self.cuts_ = time_bins(train.survival_months.to_numpy(), train.event.to_numpy(), 4)
        self.out_dim = len(self.cuts_) + 1
        return self

    def targets(self, table: pd.DataFrame) -> dict:
        return {"y": torch.as_tensor(discretize(table.survival_months.to_numpy(), self.cuts_)),
                "event": torch.as_tensor(table.event.to_numpy(), dtype=torch.float32)}

    def loss(self, out: torch.Tensor, tgt: dict, i: int) -> torch.Tensor:
        return nll_survival_loss(out.view(1, -1), tgt["y"][i:i + 1], tgt["event"][i:i + 1])

    def score(self, outs: np.ndarray) -> np.ndarray:
        return risk_from_logits(outs).numpy()

    def metric(self, table: pd.DataFrame, score: np.ndarray) -> float:
        try:
            return concordance_index(table.event.to_numpy(), table.survival_months.to_numpy(), score)
        except ValueError:  # no comparable pair in a tiny (smoke) test fold
            return float("nan")


class SubtypeTask:
    name = "subtype"
    metric_name = "auc"

    def fit(self, train: pd.DataFrame, cohort: pd.DataFrame) -> "SubtypeTask":
        self.n_classes_ = int(cohort.subtype.max()) + 1   # the label space only, no test labels
        self.out_dim = self.n_classes_
        return self

    def targets(self, table: pd.DataFrame) -> dict:
        return {"y": torch.as_tensor(table.subtype.to_numpy(), dtype=torch.long)}

    def loss(self, out: torch.Tensor, tgt: dict, i: int) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(out.view(1, -1), tgt["y"][i:i + 1])

    def score(self, outs: np.ndarray) -> np.ndarray:
        return torch.softmax(torch.as_tensor(outs), dim=-1).numpy()

    def metric(self, table: pd.DataFrame, score: np.ndarray) -> float:
        from sklearn.metrics import roc_auc_score   # here, not at import: scripts that only summarise stay light

        y = table.subtype.to_numpy()
        present = np.unique(y)
        if len(present) < 2:
            return float("nan")
        if score.shape[1] == 2:
            return float(roc_auc_score(y, score[:, 1]))
        # macro one-vs-rest AUC over the classes present in the test fold
        return float(np.mean([roc_auc_score(y == c, score[:, c]) for c in present]))


class GeneTask:
    name = "gene"
    metric_name = "pearson_r"

    def fit(self, train: pd.DataFrame, cohort: pd.DataFrame) -> "GeneTask":
        self.mean_, self.sd_ = float(train.gene_expr.mean()), float(train.gene_expr.std() + 1e-8)
        self.out_dim = 1
        return self

    def targets(self, table: pd.DataFrame) -> dict:
        return {"y": torch.as_tensor((table.gene_expr.to_numpy() - self.mean_) / self.sd_, dtype=torch.float32)}

    def loss(self, out: torch.Tensor, tgt: dict, i: int) -> torch.Tensor:
        return torch.nn.functional.mse_loss(out.view(1), tgt["y"][i:i + 1])

    def score(self, outs: np.ndarray) -> np.ndarray:
        return np.asarray(outs)[:, 0] * self.sd_ + self.mean_

    def metric(self, table: pd.DataFrame, score: np.ndarray) -> float:
        from scipy import stats

        if np.std(score) == 0:
            return 0.0
        return float(stats.pearsonr(table.gene_expr.to_numpy(), score)[0])


TASKS.register("survival")(SurvivalTask)
TASKS.register("subtype")(SubtypeTask)
TASKS.register("gene")(GeneTask)


# ----------------------------------------------------------------------------------------------
# One training fold


def model_config(task: str, cfg: dict) -> dict:
    """Keyword arguments of the model: the preset's ``model`` block plus the task's Q and K."""
    return {**cfg.get("model", {}), **cfg.get("qk", {}).get(task, {})}


def train_fold(method: str, task: str, data: CohortData, folds: pd.DataFrame, fold: int, cfg: dict, *,
               concept_emb: np.ndarray | None = None, seed: int = 0, device: str = "cpu",
               heldout_curve: bool = False) -> FoldResult:
    """Train ``method`` on ``task`` on every fold but ``fold`` and predict ``fold``.

    ``cfg`` is the part of the preset training reads: ``epochs``, ``lr``, ``weight_decay``,
    ``model`` (kwargs of every model) and ``qk`` (TMEvolve's Q and K per task). ``heldout_curve``:
    see :func:`repro.methods.mil_train.fit_fold`.
    """
    if method.startswith(SHUFFLED):   # position-shuffle control: same model, same seed, permuted positions
        data = shuffle_positions(data, seed=seed, knn_k=cfg.get("knn_k", 8))
    return fit_fold(base_method(method), TASKS.create(task), data, folds, fold, epochs=cfg["epochs"], lr=cfg["lr"],
                    weight_decay=cfg.get("weight_decay", 0.0), model_cfg=model_config(task, cfg),
                    model_kwargs={"concept_emb": concept_emb}, seed=seed, device=device, heldout_curve=heldout_curve)


def inner_split(data: CohortData, folds: pd.DataFrame, fold: int, *, inner_folds: int = 4,
                seed: int = 0) -> tuple[CohortData, pd.DataFrame]:
    """The training slides of ``fold`` (the outer test fold left out entirely) and their own split into
    ``inner_folds`` parts (:func:`make_folds`, the seed's split); inner part 0 is the held-out part."""
    inner = data.subset(np.flatnonzero(fold_of(folds, data.table) != fold))
    return inner, make_folds(inner.table, inner_folds, seed)


def learning_curve(method: str, data: CohortData, folds: pd.DataFrame, fold: int, cfg: dict, *,
                   concept_emb: np.ndarray | None = None, seed: int = 0, task: str = "survival",
                   inner_folds: int = 4) -> dict[str, list[float]]:
    """Per-epoch task loss of ``method`` inside the training folds of ``fold`` (the optimisation diagnostic).

    The outer test fold is left out entirely (:func:`inner_split`); the model trains on all inner
    parts but one and the held-out part's loss is recorded after every epoch. Returns ``{"train": [...],
    "heldout": [...]}``: where the held-out loss stops falling sets the training budget from training
    data only.
    """
    inner, split = inner_split(data, folds, fold, inner_folds=inner_folds, seed=seed)
    result = train_fold(method, task, inner, split, 0, cfg, concept_emb=concept_emb, seed=seed, heldout_curve=True)
    return {"train": result.diagnostics["train_loss_curve"], "heldout": result.diagnostics["heldout_loss_curve"]}


def loss_floors(data: CohortData, folds: pd.DataFrame, fold: int, *, inner_folds: int = 4, seed: int = 0,
                steps: int = 500) -> dict[str, dict[str, float]]:
    """Survival NLL of a linear hazard model on planted slide features, on the same inner split as
    :func:`learning_curve`: what a learner that finds the signal reaches. Feature sets: ``marginal``
    (none), ``composition``, ``arrangement`` (:func:`slide_features`) and, when the manifest has it,
    ``true_log_hazard``. Returns ``{name: {"train": ..., "heldout": ...}}``.

    The loss is the training loop's (discrete-time NLL on the inner training part's time bins),
    minimised by L-BFGS on standardised features without a penalty: a learner's training loss below
    the ``arrangement`` floor is memorisation, not signal.
    """
    inner, split = inner_split(data, folds, fold, inner_folds=inner_folds, seed=seed)
    part = fold_of(split, inner.table)
    tr, ho = np.flatnonzero(part != 0), np.flatnonzero(part == 0)
    table = inner.table.reset_index(drop=True)
    task = TASKS.create("survival").fit(table.iloc[tr], table)
    tgt = task.targets(table)
    feats = slide_features(inner)
    comp = [c for c in feats if c.startswith("frac_")][:-1]
    sets = {"marginal": np.zeros((len(table), 0)), "composition": feats[comp].to_numpy(),
            "arrangement": feats[comp + ["contact", "t_exposed", "tl_edges"]].to_numpy()}
    if "log_hazard" in table:
        sets["true_log_hazard"] = table[["log_hazard"]].to_numpy()
    floors = {}
    for name, X in sets.items():
        if X.shape[1]:
            X = (X - X[tr].mean(0)) / (X[tr].std(0) + 1e-9)
        X = torch.as_tensor(X, dtype=torch.float32)
        w = torch.zeros(X.shape[1], 1, requires_grad=True)        # one risk score shifts every bin's logit
        b = torch.zeros(task.out_dim, requires_grad=True)
        opt = torch.optim.LBFGS([w, b], max_iter=steps, line_search_fn="strong_wolfe")

        def nll(idx):
            return nll_survival_loss(X[idx] @ w + b, tgt["y"][idx], tgt["event"][idx])

        def closure():
            opt.zero_grad()
            loss = nll(tr)
            loss.backward()
            return loss
        opt.step(closure)
        with torch.no_grad():
            floors[name] = {"train": float(nll(tr)), "heldout": float(nll(ho))}
    return floors


def shuffle_positions(data: CohortData, *, seed: int, knn_k: int = 8) -> CohortData:
    """The position-shuffle control: within each slide the grid positions are permuted among the patches
    (features and tissue types stay with their patch), and the graphs rebuilt. Composition is kept,
    arrangement destroyed: a model that uses the arrangement must drop to the composition oracle."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, 17]))
    bags = []
    for b in data.bags:
        grid = b.grid.numpy()[rng.permutation(b.n)]
        bags.append(SlideBag(x=b.x, grid=torch.from_numpy(grid.copy()), nbr8=torch.from_numpy(grid_neighbours(grid)),
                             knn=torch.from_numpy(knn_neighbours(grid, knn_k)), patch_types=b.patch_types,
                             slide_id=b.slide_id))
    return CohortData(bags, data.table, data.tissue_types)


def unit_id(repeat: int, fold: int) -> str:
    """The id of one cross-validation unit, the same for every method: ``r{repeat}_fold{fold}_s{repeat}``
    (repeat r is one fold split and one training seed index)."""
    return f"r{int(repeat)}_fold{int(fold)}_s{int(repeat)}"


def make_repeated_folds(table: pd.DataFrame, n_folds: int, n_repeats: int, seed: int) -> pd.DataFrame:
    """``slide_id, repeat, fold``: ``n_repeats`` independent stratified fold splits (repeated CV)."""
    return pd.concat([make_folds(table, n_folds, int(np.random.SeedSequence([int(seed) % 2**63, r]).generate_state(1)[0]))
                      .assign(repeat=r) for r in range(n_repeats)], ignore_index=True)[["slide_id", "repeat", "fold"]]


def train_repeat(method: str, task: str, data: CohortData, folds: pd.DataFrame, repeat: int, cfg: dict, *,
                 seeds: dict[int, int], concept_emb: np.ndarray | None = None,
                 device: str = "cpu") -> dict[int, FoldResult]:
    """Every fold of one repeat of the cross-validation (``seeds``: fold -> the unit's training seed)."""
    split = folds[folds.repeat == repeat][["slide_id", "fold"]]
    if split.empty:
        raise ValueError(f"tmevolve: repeat {repeat} is not in the folds table")
    return {f: train_fold(method, task, data, split, f, cfg, concept_emb=concept_emb, seed=seeds[f], device=device)
            for f in sorted(seeds)}


def _checkpoint(result: FoldResult, method: str) -> dict:
    """A fold's weights and what rebuilds its model, as tensors and plain values (read with weights_only=True)."""
    return {"state_dict": result.state_dict, "model_cfg": result.model_cfg, "method": method,
            "in_dim": int(result.in_dim), "out_dim": int(result.out_dim)}


def save_repeat(results: dict[str, dict[int, FoldResult]], model_path: str, *, task: str, repeat: int,
                seeds: dict[int, int]) -> dict:
    """Write one training job's weights (one ``.pt``, method -> fold -> checkpoint); return the fold records
    of every method (for the JSON, ``{"folds": [...]}``; each record names its method)."""
    save_torch({m: {f: _checkpoint(r, base_method(m)) for f, r in folds.items()} for m, folds in results.items()},
               model_path)
    return {"folds": [{"metric": r.metric, "metric_name": TASKS.get(task).metric_name, "method": m, "task": task,
                       "repeat": int(repeat), "fold": int(f), "id": unit_id(repeat, f), "seed": int(seeds[f]),
                       "diagnostics": r.diagnostics, "predictions": r.predictions.to_dict(orient="list")}
                      for m, folds in results.items() for f, r in folds.items()]}


# ----------------------------------------------------------------------------------------------
# Outputs of the DAG: fold files, summaries, metrics.json, tables, the Fig. 3 trace


def save_concepts(path: str | os.PathLike, names: list[str], texts: list[str], emb: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        np.savez(tmp, names=np.array(names), texts=np.array(texts), emb=emb.astype(np.float32))


def load_concepts(path: str | os.PathLike) -> np.ndarray:
    return load_npz(path, ["emb"])["emb"]


def train_seed(job, *, cohort: str, task: str, fold: int, repeat: int = 0) -> int:
    """The seed of one (cohort, task, repeat, fold) training unit, the same for every method, ablation,
    control and oracle.

    It sets parameter init, dropout and the order of the slides; deriving it from the unit and not
    from the method name makes every comparison paired (a difference between two methods is not a
    difference between two seeds).
    """
    if int(repeat) == 0:   # version 1's units keep their seeds
        return job.seed_for("tmevolve_train", cohort=cohort, task=task, fold=int(fold))
    return job.seed_for("tmevolve_train", cohort=cohort, task=task, fold=int(fold), repeat=int(repeat))


def save_fold(result: FoldResult, model_path: str, *, method: str, task: str, fold: int, seed: int) -> dict:
    """Write the fold's weights (``.pt``); return its metric, predictions and diagnostics (for the JSON)."""
    save_torch(_checkpoint(result, method), model_path)
    return {"metric": result.metric, "metric_name": TASKS.get(task).metric_name, "method": method, "task": task,
            "fold": fold, "seed": int(seed), "diagnostics": result.diagnostics, "predictions": result.predictions.to_dict(orient="list")}


def summarize_fold_files(paths: list[str]) -> dict:
    """Summary over every unit of the repeat files (``{"folds": [...]}``) or single-fold files."""
    records = []
    for p in paths:
        blob = read_json(p)
        records += blob["folds"] if "folds" in blob else [blob]
    return summarize_folds(records)


def _cohort_block(summaries: dict[str, dict[str, dict]], cfg: dict) -> dict:
    """``{task: {method: summary}}`` plus best baseline, ablation drops, the Q x K grid and shuffle drops."""
    out: dict = {task: dict(methods) for task, methods in summaries.items()}
    out["best_baseline"] = {}
    compared = [m for m in cfg.get("methods", []) if m in BASELINES]
    for task, methods in summaries.items():
        if any(m not in methods for m in compared):   # a partial build: the best of some baselines is not the best
            continue
        base = {m: s for m, s in methods.items() if m in BASELINES and s["mean"] == s["mean"]}
        if base:
            best = max(base, key=lambda m: base[m]["mean"])
            out["best_baseline"][task] = {"method": best, "mean": base[best]["mean"], "sd": base[best]["sd"],
                                          "per_unit": base[best].get("per_unit")}
    out["shuffle_drop"] = {}
    for task, methods in summaries.items():
        drops = {m[len(SHUFFLED):]: _paired_diff(methods[m[len(SHUFFLED):]], methods[m])
                 for m in methods if m.startswith(SHUFFLED) and m[len(SHUFFLED):] in methods}
        if drops:
            out["shuffle_drop"][task] = drops
    return out


def _paired_diff(a: dict, b: dict) -> dict:
    """Per-unit ``a - b`` (same ids) as a sample."""
    ua, ub = a["per_unit"], b["per_unit"]
    vb = dict(zip(ub["ids"], ub["values"]))
    ids = [i for i in ua["ids"] if i in vb]
    va = dict(zip(ua["ids"], ua["values"]))
    return sample([va[i] - vb[i] for i in ids], ids, ua.get("unit", "fold"), cv=_cv_ratio(ua, ub))


def _cv_ratio(*samples: dict) -> float | None:
    """The n_test / n_train the samples' folds carry (the larger, the more conservative), or None."""
    ratios = [s["cv"]["test_over_train"] for s in samples if s and "cv" in s]
    return max(ratios) if ratios else None


def aggregate_metrics(summaries: dict, cfg: dict) -> dict:
    """The paper's ``metrics.json`` from ``{cohort: {task: {method: summary}}}`` (or ``{task: {method: ...}}``).

    The main cohort's block is at the top level (the claims address ``survival.tmevolve``), the
    control cohort's under ``control``; ``design_choices`` records TMEvolve's version-2 choices.
    """
    if cfg.get("cohort") in summaries:
        main = summaries[cfg["cohort"]]
        control = summaries.get(cfg.get("control_cohort") or "", {})
    else:
        main, control = summaries, {}
    for block in (main, control):
        check_paired(block)
    out = _cohort_block(main, cfg)
    if control:
        out["control"] = _cohort_block(control, cfg)
    out["ablation"] = {}
    for task, methods in main.items():
        if "tmevolve" not in methods:
            continue
        drops = {v: methods["tmevolve"]["mean"] - methods[v]["mean"] for v in cfg.get("ablations", []) if v in methods}
        if drops:
            others = [d for v, d in drops.items() if v != "tmevolve_randcon"]
            every = all(v in methods for v in cfg.get("ablations", []))   # else a partial build's max is not the max
            out["ablation"][task] = {"drop": drops,
                                     "max_drop_other_than_randcon": max(others) if others and every else None}
            if methods.get("tmevolve_randcon", {}).get("per_unit"):  # each other ablation minus random concepts, paired
                out["ablation"][task]["other_minus_randcon"] = {
                    v: _paired_diff(methods[v], methods["tmevolve_randcon"])
                    for v in drops if v != "tmevolve_randcon" and methods[v].get("per_unit")}
    grid = cfg.get("grid", {})
    gtask = grid.get("task")
    if gtask in main:
        out["grid"] = {gtask: {f"q{q}_k{k}": main[gtask].get(grid_name(q, k), {}).get("mean")
                               for q in grid.get("Q", []) for k in grid.get("K", [])}}
    tm = main.get("survival", {}).get("tmevolve", {})
    if "ari_q0" in tm:
        out["ari"] = {"q0": tm["ari_q0"], "final": tm["ari_final"], "gain": tm["ari_final"] - tm["ari_q0"],
                      "q0_folds": tm.get("ari_q0_per_unit"), "final_folds": tm.get("ari_final_per_unit")}
        if "ari_tiles_per_unit" in tm:   # the reference the evolved regions must beat: max(q = 0, spatial tiles)
            q0, tiles = tm["ari_q0_per_unit"], tm["ari_tiles_per_unit"]
            out["ari"].update(tiles=tm["ari_tiles"], tiles_folds=tiles,
                              baseline_folds=sample(np.maximum(q0["values"], tiles["values"]), q0["ids"], q0["unit"],
                                                            cv=_cv_ratio(q0, tiles)))
    out["fidelity"] = {task: {k: methods["tmevolve"][k] for k in FIDELITY_KEYS if k in methods.get("tmevolve", {})}
                       for task, methods in main.items() if "tmevolve" in methods}
    out["design_choices"] = dict(DESIGN_CHOICES)
    return out


def check_paired(summaries: dict[str, dict[str, dict]]) -> None:
    """Every method, ablation, control and oracle of a task was run on the same (repeat, fold) units with
    the same seeds, or a ``ValueError`` naming the odd ones (:func:`repro.claims.require_paired`).

    The claims compare methods unit by unit (paired); a method trained with other seeds (an old job
    file, a changed seed rule) would make that comparison a comparison of seeds.
    """
    for task, methods in summaries.items():
        require_paired({m: dict(zip(s["per_unit"]["ids"], s.get("seeds") or [None] * len(s["per_unit"]["ids"])))
                        for m, s in methods.items() if isinstance(s, dict) and s.get("per_unit")},
                       f"tmevolve {task}")


def _fmt(s: dict | None) -> str:
    """A run's cell: mean +- sd over its units. Missing where the run is not built or its metric is defined on no
    unit (null); the sd alone where the metric is defined on one unit only (one fold in the grid, or the others
    without a value: a fold without a comparable pair or with one class has none), so the sd is null
    (:func:`repro.tablecells.mean_spread`)."""
    return mean_spread(s.get("mean"), s.get("sd")) if s else MISSING


def make_tables(metrics: dict, cfg: dict) -> dict[str, pd.DataFrame]:
    """Table 1 (methods, shuffle controls and oracles x tasks, main and control cohorts), Table 3
    (ablations x tasks), Table 4 (Q x K grid)."""
    tasks = cfg["tasks"]
    names = {t: TASKS.get(t).metric_name for t in tasks}
    rows = [*cfg["methods"], *[f"{SHUFFLED}{m}" for m in cfg.get("shuffle_controls", [])], *ORACLES]
    blocks = [("main", metrics)] + ([("control", metrics["control"])] if "control" in metrics else [])
    t1 = pd.DataFrame([{"cohort": cfg["cohort"] if b == "main" else cfg.get("control_cohort"), "method": m,
                        **{f"{t} ({names[t]})": _fmt(blk.get(t, {}).get(m)) for t in tasks}}
                       for b, blk in blocks for m in rows if any(m in blk.get(t, {}) for t in tasks)])
    t3 = pd.DataFrame([{"variant": m, **{f"{t} ({names[t]})": _fmt(metrics.get(t, {}).get(m)) for t in tasks}}
                       for m in ["tmevolve", *cfg["ablations"]]])
    grid = cfg["grid"]
    t4 = pd.DataFrame([{"Q": q, **{f"K={k}": _fmt(metrics.get(grid["task"], {}).get(grid_name(q, k)))
                                   for k in grid["K"]}} for q in grid["Q"]])
    return {"table1": t1, "table3": t3, "table4": t4}


def trace_slide(dataset_path: str, folds_path: str, model_path: str, concepts_path: str, *, fold: int,
                slide_index: int = 0, repeat: int = 0, method: str = "tmevolve") -> tuple[pd.DataFrame, dict]:
    """Run the fold's trained TMEvolve (``method`` of the job's model file) on one of its test slides and return per-patch maps.

    Returns a tidy DataFrame (``slide_id, gx, gy, truth, region_q0, region_final, response, flux, x0,
    y0``: grid position and level-0 corner of each patch) and a dict of slide-level facts (slide id,
    Q, K, ARI at q = 0 and after evolution, the patch side in level-0 pixels).
    """
    data = load_prepared(dataset_path)
    folds = read_csv(folds_path, dtype={"slide_id": str})
    if "repeat" in folds:
        folds = folds[folds.repeat == repeat]
    test_ids = set(folds.slide_id[folds.fold == fold])
    test = [b for b in data.bags if b.slide_id in test_ids]
    if not test:
        raise ValueError(f"{folds_path}: fold {fold} has no slides")
    bag = sorted(test, key=lambda b: -b.n)[min(slide_index, len(test) - 1)]   # the largest test slides first
    ckpt = load_torch(model_path)                                           # weights_only=True: no code runs
    ckpt = ckpt.get(method, ckpt)                                            # a job file: method -> fold -> checkpoint
    ckpt = ckpt[fold] if fold in ckpt else ckpt
    model = create_mil_model(ckpt["method"], ckpt["in_dim"], ckpt["out_dim"], concept_emb=load_concepts(concepts_path),
                             **ckpt["model_cfg"])
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    with torch.no_grad():
        res = model(bag, trace=True)
    tr = res["trace"]
    flux = tr["flux"].norm(dim=-1).numpy() if "flux" in tr else np.zeros(bag.n)
    prepared = load_torch(dataset_path)                                      # the traced patches' level-0 corners
    blob = next(b for b in prepared["slides"] if b["slide_id"] == bag.slide_id)
    x0y0 = blob["coords"].numpy() if "coords" in blob else np.full((bag.n, 2), -1)
    df = pd.DataFrame({"slide_id": bag.slide_id, "gx": bag.grid[:, 0].numpy().astype(int),
                       "gy": bag.grid[:, 1].numpy().astype(int), "truth": bag.patch_types.astype(int),
                       "region_q0": tr["S"][0].argmax(1).numpy(), "region_final": tr["S"][-1].argmax(1).numpy(),
                       "response": tr["a"].numpy(), "flux": flux, "x0": x0y0[:, 0], "y0": x0y0[:, 1]})
    facts = {"slide_id": bag.slide_id, "Q": model.cfg.Q, "K": model.cfg.K, "tissue_types": data.tissue_types,
             "patch_size_level0": int(prepared.get("patch_size_level0", 0)),
             "ari_q0": region_ari(tr["S"][0], bag.patch_types), "ari_final": region_ari(tr["S"][-1], bag.patch_types)}
    return df, facts


def collect_summaries(train_files: dict[str, str], oracle_files: dict[str, str],
                      expected: list[str] | None = None) -> dict[str, dict[str, dict]]:
    """``{cohort: {task: {method: summary}}}`` from the training jobs' JSONs (``{path: cohort}``, fold
    records of one or more methods) and the oracle files (``{path: cohort}``, ``{task: {oracle: summary}}``).

    A method's records are summarised over every (repeat, fold) unit in that order; ``expected``
    (``cohort/task/method`` runs) names the runs that must be there, or a ``ValueError``.
    """
    records: dict = {}
    for path, cohort in train_files.items():
        for rec in read_json(path)["folds"]:
            records.setdefault((cohort, rec["task"], rec["method"]), []).append(rec)
    out: dict = {}
    for (cohort, task, method), recs in records.items():
        recs = sorted(recs, key=lambda r: (r["repeat"], r["fold"]))
        out.setdefault(cohort, {}).setdefault(task, {})[method] = summarize_folds(recs)
    for path, cohort in oracle_files.items():
        for task, oracles in read_json(path).items():
            if task == "provenance":   # written by Job.write_metrics beside the tasks
                continue
            out.setdefault(cohort, {}).setdefault(task, {}).update(oracles)
    missing = missing_runs(out, expected or [])
    if missing:
        raise ValueError(f"tmevolve: no fold records for {missing[:5]}{' ...' if len(missing) > 5 else ''} in "
                         f"{sorted(train_files)[:3]} ...; rebuild the training jobs")
    return out


def missing_runs(summaries: dict, expected: list[str]) -> list[str]:
    """The ``cohort/task/method`` runs of ``expected`` that ``summaries`` lacks."""
    return [r for r in expected if r.split("/")[2] not in summaries.get(r.split("/")[0], {}).get(r.split("/")[1], {})]


def complete_runs(summaries: dict, expected: list[str]) -> tuple[dict, list[str]]:
    """A partial build's summaries, cut to the runs it can compare, and the expected runs left out.

    Within a task a run is kept only if it holds every (repeat, fold) unit that any run of that
    task holds, so each comparison the claims make stays paired on the same units; a run with some
    repeats not yet built is left out whole, as are runs with no job at all.
    """
    kept: dict = {}
    for cohort, tasks in summaries.items():
        for task, methods in tasks.items():
            units = [set(s["per_unit"]["ids"]) for s in methods.values() if s.get("per_unit")]
            every = set().union(*units) if units else set()
            kept.setdefault(cohort, {})[task] = {m: s for m, s in methods.items()
                                                 if not s.get("per_unit") or set(s["per_unit"]["ids"]) == every}
    return kept, missing_runs(kept, expected)


def slide_thumbnail(slides_dir: str, slide_id: str, max_size: int = 256) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The slide's thumbnail through the WSI stage's reader and its level-0 size ``(width, height)``, or
    None (no slide file, e.g. bags only)."""
    from pathlib import Path

    paths = sorted(Path(slides_dir).glob(f"{slide_id}.*"))
    if not paths:
        return None
    try:
        from repro.wsi.reader import open_slide
    except ImportError:
        return None
    with open_slide(paths[0]) as slide:
        return slide.thumbnail(max_size), tuple(int(v) for v in slide.dimensions)


#: The claim Fig. 3's comparison draws: TMEvolve's survival C-index against the best baseline's, paired over units.
FIG3_CLAIM = "survival_beats_best_baseline"


def survival_points(summaries: dict[str, dict], methods: list[str], claims: list) -> pd.DataFrame:
    """Each run's survival C-index and its paired difference from the best baseline, with the interval of the
    claim :data:`FIG3_CLAIM` (the checker's own, :func:`repro.claimtables.same_rule_table`).

    ``method, kind, mean, diff, low, high, n, reference`` and ``level, interval, claim, status`` from
    ``{method: summary}`` (kind: method, control or oracle): the summaries go through :func:`aggregate_metrics`
    as the aggregate's do, so ``reference`` is metrics.json's best baseline (highest mean C-index) and
    ``diff`` the mean over the (repeat, fold) units of ``method - reference``. ``low``/``high`` are the
    interval the claim's verdict is decided on (TMEvolve's row: the claim's own; every other run: the
    same check, no claim): the checker's expanded-percentile bootstrap over the units at the claim's
    level, widened by Nadeau and Bengio's correction for the folds' overlap, with the claim's seed. NaN
    for the reference itself and where the checker forms none (fewer units than
    :func:`repro.stats.intervals.min_units`), with why in ``interval``. ``claims``: the paper's claims
    (:func:`repro.claims.load_claims`).
    """
    from repro.claimtables import same_rule_table

    missing = [m for m in methods if m not in summaries]
    if missing:
        raise ValueError(f"tmevolve fig3: no survival summary of {missing} (have {sorted(summaries)})")
    metrics = aggregate_metrics({"survival": summaries}, {"methods": methods})
    best = metrics["best_baseline"].get("survival")
    if best is None:
        raise ValueError(f"tmevolve fig3: none of {methods} is a baseline with a C-index ({BASELINES})")
    claim = next((c for c in claims if c.id == FIG3_CLAIM), None)
    if claim is None or (claim.metric, claim.rhs) != ("survival.tmevolve", "best_baseline.survival"):
        raise ValueError(f"tmevolve fig3 draws claim {FIG3_CLAIM} (survival.tmevolve against "
                         f"best_baseline.survival); the claims give {claim}")
    ref = best["method"]
    rows = same_rule_table(claim, metrics, [f"survival.{m}" for m in methods]).set_index("metric")
    out = []
    for m in methods:
        r = rows.loc[f"survival.{m}"]
        kind = "oracle" if m in ORACLES else "control" if m.startswith(SHUFFLED) else "method"
        low, high, interval = (np.nan, np.nan, "none: the reference itself") if m == ref else \
            (r["low"], r["high"], r["interval"])
        out.append({"method": m, "kind": kind, "mean": summaries[m]["mean"], "diff": r["estimate"], "low": low,
                    "high": high, "n": r["n"], "reference": ref, "level": r["level"], "interval": interval,
                    "claim": r["claim"], "status": r["status"]})
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------------------------
# Oracles and random scores (version 2): the same units as the trained methods, no training


def slide_features(data: CohortData) -> pd.DataFrame:
    """Per slide, from the true patch types: the histogram (composition) and the tumour-lymphocyte
    adjacency on the 8-neighbour patch graph (arrangement): ``contact`` (share of lymphocyte patches
    with a tumour neighbour), ``tl_edges`` (tumour-lymphocyte edges per patch), ``t_exposed`` (share of
    tumour patches with a lymphocyte neighbour)."""
    names = list(data.tissue_types)
    if "tumour" not in names or "lymphocytes" not in names:
        raise ValueError(f"tmevolve oracles: tissue types {names} lack 'tumour' or 'lymphocytes'")
    t_id, l_id = names.index("tumour"), names.index("lymphocytes")
    hist_types = [i for i, n in enumerate(names) if n != "background"]
    rows = []
    for b in data.bags:
        pt = np.asarray(b.patch_types)
        known = pt >= 0
        row = {f"frac_{names[i]}": float((pt[known] == i).mean()) if known.any() else 0.0 for i in hist_types}
        nb = b.nbr8.numpy()
        nt = np.where(nb >= 0, pt[np.clip(nb, 0, None)], -1)                 # (N, 8) neighbour types
        is_t, is_l = pt == t_id, pt == l_id
        l_touch, t_touch = (nt == t_id).any(1) & is_l, (nt == l_id).any(1) & is_t
        row.update(contact=float(l_touch.sum() / max(is_l.sum(), 1)), t_exposed=float(t_touch.sum() / max(is_t.sum(), 1)),
                   tl_edges=float(((nt == l_id) & is_t[:, None]).sum() / max(b.n, 1)))
        rows.append(row)
    return pd.DataFrame(rows)


def ridge_cox(X: np.ndarray, time: np.ndarray, event: np.ndarray, penalty: float = 0.1) -> np.ndarray:
    """Coefficients of a Cox model with an L2 penalty ``penalty/2 * n * ||beta||^2`` (Breslow ties).

    Minimises the negative log partial likelihood divided by n plus the penalty (strictly convex, so
    it converges on any fold, also a tiny one where an unpenalised fit diverges).
    """
    from scipy.optimize import minimize

    order = np.argsort(-time, kind="stable")                   # decreasing time: risk sets are prefixes
    X, event = np.asarray(X, float)[order], np.asarray(event, float)[order]
    n = len(X)

    def loss(beta):
        eta = X @ beta
        m = eta.max()
        w = np.exp(eta - m)
        cum_w, cum_wx = np.cumsum(w), np.cumsum(w[:, None] * X, axis=0)
        ll = np.sum(event * (eta - m - np.log(cum_w)))
        grad = (event[:, None] * (X - cum_wx / cum_w[:, None])).sum(0)
        return -ll / n + 0.5 * penalty * beta @ beta, -grad / n + penalty * beta

    return minimize(loss, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B").x


def _fit_predict(task: str, X_tr: np.ndarray, train: pd.DataFrame, X_te: np.ndarray, n_classes: int) -> np.ndarray:
    """A linear model of ``task`` on slide features: ridge Cox (:func:`ridge_cox`), logistic (subtype), ridge (gene)."""
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(X_tr)
    X_tr, X_te = sc.transform(X_tr), sc.transform(X_te)
    if task == "survival":
        return X_te @ ridge_cox(X_tr, train.survival_months.to_numpy(), train.event.to_numpy())
    if task == "subtype":
        clf = LogisticRegression(max_iter=2000).fit(X_tr, train.subtype.to_numpy())
        out = np.zeros((len(X_te), n_classes))
        out[:, clf.classes_] = clf.predict_proba(X_te)
        return out
    return Ridge(alpha=1.0).fit(X_tr, train.gene_expr.to_numpy()).predict(X_te)


def oracle_summaries(data: CohortData, folds: pd.DataFrame, task: str, seeds: dict[tuple[int, int], int], *,
                     unit_features: dict[tuple[int, int], pd.DataFrame] | None = None) -> dict:
    """``{oracle: summary}`` of :data:`~repro.papers.tmevolve.grid.ORACLES` on every (repeat, fold) unit.

    - ``oracle_true``: the planted log hazard (survival only; the manifest's ``log_hazard``);
    - ``oracle_composition``: a linear model on the true patch-type histogram;
    - ``oracle_arrangement``: the same plus the tumour-lymphocyte adjacency features;
    - ``random``: scores drawn from the unit's seed.
    Each model is fitted on the unit's training folds and scored on its test fold, like the methods.
    ``unit_features``: each unit's slide features (:func:`slide_features` of other patch types, e.g.
    the classes a probe reads from the features) in place of those of the true patch types.
    """
    feats = slide_features(data)
    comp = [c for c in feats if c.startswith("frac_")][:-1]                  # drop one: the fractions sum to 1
    arr = comp + ["contact", "t_exposed", "tl_edges"]
    table = data.table.reset_index(drop=True)
    n_classes = int(table.subtype.max()) + 1 if "subtype" in table else 1
    records = {o: [] for o in ORACLES}
    for (r, f), seed in sorted(seeds.items()):
        split = fold_of(folds[folds.repeat == r], table)
        tr, te = np.flatnonzero(split != f), np.flatnonzero(split == f)
        t = TASKS.create(task).fit(table.iloc[tr], table)
        test = table.iloc[te].reset_index(drop=True)
        feats = unit_features[(r, f)] if unit_features is not None else feats
        scores = {"oracle_composition": _fit_predict(task, feats.iloc[tr][comp].to_numpy(), table.iloc[tr],
                                                     feats.iloc[te][comp].to_numpy(), n_classes),
                  "oracle_arrangement": _fit_predict(task, feats.iloc[tr][arr].to_numpy(), table.iloc[tr],
                                                     feats.iloc[te][arr].to_numpy(), n_classes)}
        rng = np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, 23]))
        scores["random"] = rng.dirichlet(np.ones(n_classes), len(te)) if task == "subtype" else rng.normal(size=len(te))
        if task == "survival" and "log_hazard" in table:
            scores["oracle_true"] = test.log_hazard.to_numpy()
        for o, sc in scores.items():
            records[o].append({"metric": t.metric(test, sc), "metric_name": t.metric_name, "id": unit_id(r, f),
                               "repeat": r, "fold": f, "seed": int(seed),
                               "diagnostics": {"n_train": len(tr), "n_test": len(te)}})
    return {o: summarize_folds(rec) for o, rec in records.items() if rec}


def encoder_probe(data: CohortData, folds: pd.DataFrame, seeds: dict[tuple[int, int], int], tasks: list[str], *,
                  patches_per_slide: int = 20) -> dict:
    """Does the tissue signal survive the encoder? A linear probe of tissue class, and the oracles on its classes.

    On every (repeat, fold) unit: a multinomial logistic regression from the patch features the
    models read (the prepared features: the encoder's, PCA-reduced and standardised) to the
    ground-truth tissue type, fitted on up to ``patches_per_slide`` patches of each training slide
    (drawn from the unit's seed), then

    - ``accuracy`` and ``per_class.<type>`` (recall) on every patch of the test fold's slides, beside
      ``majority`` (the share of the test patches' most common type: what a constant guess gets);
    - ``<task>.oracle_composition_predicted`` / ``oracle_arrangement_predicted``: the composition and
      arrangement oracles (:func:`oracle_summaries`) with every slide's patch types as the probe reads
      them (in-sample for the training slides' patches, out of sample for the test fold's), beside
      the same oracles on the true types (``oracle_composition``, ``oracle_arrangement``).

    Each value is a sample over the units (Nadeau-Bengio CV ratio attached). A cohort without
    ground-truth types gets ``{"note": ...}``.
    """
    from dataclasses import replace

    from sklearn.linear_model import LogisticRegression

    names = list(data.tissue_types)
    types = [np.asarray(b.patch_types, np.int64) for b in data.bags]
    if not any((t >= 0).any() for t in types):
        return {"note": "no ground-truth patch types in this cohort"}
    X = [b.x.numpy() for b in data.bags]
    table = data.table.reset_index(drop=True)
    ids, cv, acc, majority = [], [], [], []
    per_class: dict[str, dict[str, float]] = {}
    unit_features = {}
    for (r, f), seed in sorted(seeds.items()):
        split = fold_of(folds[folds.repeat == r], table)
        tr, te = np.flatnonzero(split != f), np.flatnonzero(split == f)
        rng = np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, 29]))
        picks = [(i, rng.permutation(np.flatnonzero(types[i] >= 0))[:patches_per_slide]) for i in tr]
        clf = LogisticRegression(max_iter=1000).fit(np.concatenate([X[i][p] for i, p in picks]),
                                                    np.concatenate([types[i][p] for i, p in picks]))
        pred = [clf.predict(x).astype(np.int16) if len(x) else np.zeros(0, np.int16) for x in X]
        y_te, p_te = np.concatenate([types[i] for i in te]), np.concatenate([pred[i] for i in te])
        known = y_te >= 0
        y_te, p_te = y_te[known], p_te[known]
        ids.append(unit_id(r, f))
        cv.append(len(te) / len(tr))
        acc.append(float((p_te == y_te).mean()))
        majority.append(float(np.bincount(y_te).max() / len(y_te)))
        for c in np.unique(y_te):
            per_class.setdefault(names[c], {})[ids[-1]] = float((p_te[y_te == c] == c).mean())
        unit_features[(r, f)] = slide_features(CohortData([replace(b, patch_types=p) for b, p in zip(data.bags, pred)],
                                                          data.table, names))
    ratio = float(np.mean(cv))
    out = {"accuracy": sample(acc, ids, "fold_seed", cv=ratio), "majority": sample(majority, ids, "fold_seed", cv=ratio),
           "per_class": {n: sample(list(v.values()), list(v.keys()), "fold_seed", cv=ratio) for n, v in per_class.items()},
           "patches_per_slide": int(patches_per_slide)}
    for task in tasks:
        true = oracle_summaries(data, folds, task, seeds)
        read = oracle_summaries(data, folds, task, seeds, unit_features=unit_features)
        out[task] = {**{o: true[o] for o in ("oracle_composition", "oracle_arrangement")},
                     **{f"{o}_predicted": read[o] for o in ("oracle_composition", "oracle_arrangement")}}
    return out

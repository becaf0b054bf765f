"""TMEvolve's experiments: the three tasks, one training fold, summaries, metrics.json, tables, the Fig. 3 trace.

- Tasks (registered in :data:`TASKS`, the ``{task}`` wildcard): ``survival`` (discrete-time NLL
  over 4 bins from quartiles of the training fold's uncensored times, C-index of
  ``risk = -sum S``; :mod:`repro.metrics.survival`), ``subtype`` (cross-entropy, macro one-vs-rest
  AUC), ``gene`` (MSE on the standardised target, Pearson r).
- :func:`train_fold`: one method on one task for one fold, with the preset's settings, through the
  shared MIL training loop (:func:`repro.methods.mil_train.fit_fold`).

Every function takes paths or plain data and returns data, so each pipeline script is one call.
``metrics.json`` layout (the claims address it by dotted path)::

    {task: {method: {mean, sd, folds, metric, [ari_q0, ari_final, ...]}},   # every run
     best_baseline: {task: {method, mean, sd}},
     ablation: {task: {drop: {variant: full - variant}, max_drop_other_than_randcon}},
     grid: {task: {"q{Q}_k{K}": mean}},
     ari: {q0, final, gain}}                                                    # main TMEvolve, survival
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pandas as pd
import torch
from scipy import stats
from sklearn.metrics import roc_auc_score

import repro.methods.tmevolve  # noqa: F401 - registers TMEvolve, its ablations and its grid as MIL models
from repro.claims import sample
from repro.io import atomic_path, read_json
from repro.methods.mil import create_mil_model
from repro.methods.mil_train import CohortData, FoldResult, fit_fold, load_prepared, region_ari, summarize_folds
from repro.methods.tmevolve_variants import grid_name
from repro.metrics.survival import concordance_index, discretize, nll_survival_loss, risk_from_logits, time_bins
from repro.registry import Registry

__all__ = ["TASKS", "train_fold", "train_seed", "save_fold", "check_paired", "summarize_fold_files",
           "aggregate_metrics", "make_tables", "trace_slide", "save_concepts", "load_concepts", "BASELINES",
           "read_summaries", "slide_thumbnail", "survival_bars"]

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
               concept_emb: np.ndarray | None = None, seed: int = 0, device: str = "cpu") -> FoldResult:
    """Train ``method`` on ``task`` on every fold but ``fold`` and predict ``fold``.

    ``cfg`` is the part of the preset training reads: ``epochs``, ``lr``, ``weight_decay``,
    ``model`` (kwargs of every model) and ``qk`` (TMEvolve's Q and K per task).
    """
    return fit_fold(method, TASKS.create(task), data, folds, fold, epochs=cfg["epochs"], lr=cfg["lr"],
                    weight_decay=cfg.get("weight_decay", 0.0), model_cfg=model_config(task, cfg),
                    model_kwargs={"concept_emb": concept_emb}, seed=seed, device=device)


# ----------------------------------------------------------------------------------------------
# Outputs of the DAG: fold files, summaries, metrics.json, tables, the Fig. 3 trace


def save_concepts(path: str | os.PathLike, names: list[str], texts: list[str], emb: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        np.savez(tmp, names=np.array(names), texts=np.array(texts), emb=emb.astype(np.float32))


def load_concepts(path: str | os.PathLike) -> np.ndarray:
    with np.load(path) as z:
        return z["emb"]


def train_seed(job, *, cohort: str, task: str, fold: int) -> int:
    """The seed of one (cohort, task, fold) training unit, the same for every method and ablation.

    It sets parameter init, dropout and the order of the slides; deriving it from the unit and not
    from the method name makes every comparison paired (a difference between two methods is not a
    difference between two seeds).
    """
    return job.seed_for("tmevolve_train", cohort=cohort, task=task, fold=int(fold))


def save_fold(result: FoldResult, model_path: str, *, method: str, task: str, fold: int, seed: int) -> dict:
    """Write the fold's weights (``.pt``); return its metric, predictions and diagnostics (for the JSON)."""
    with atomic_path(model_path) as tmp:
        torch.save({"state_dict": result.state_dict, "model_cfg": result.model_cfg, "method": method,
                    "in_dim": result.in_dim, "out_dim": result.out_dim}, tmp)
    return {"metric": result.metric, "metric_name": TASKS.get(task).metric_name, "method": method, "task": task,
            "fold": fold, "seed": int(seed), "diagnostics": result.diagnostics, "predictions": result.predictions.to_dict(orient="list")}


def summarize_fold_files(paths: list[str]) -> dict:
    return summarize_folds([read_json(p) for p in paths])


def aggregate_metrics(summaries: dict[str, dict[str, dict]], cfg: dict) -> dict:
    """The paper's ``metrics.json`` from ``{task: {method: summary}}``."""
    check_paired(summaries)
    out: dict = {task: dict(methods) for task, methods in summaries.items()}
    out["best_baseline"] = {}
    for task, methods in summaries.items():
        base = {m: s for m, s in methods.items() if m in BASELINES and s["mean"] == s["mean"]}
        if base:
            best = max(base, key=lambda m: base[m]["mean"])
            out["best_baseline"][task] = {"method": best, "mean": base[best]["mean"], "sd": base[best]["sd"],
                                          "per_unit": base[best].get("per_unit")}
    out["ablation"] = {}
    for task, methods in summaries.items():
        if "tmevolve" not in methods:
            continue
        drops = {v: methods["tmevolve"]["mean"] - methods[v]["mean"] for v in cfg.get("ablations", []) if v in methods}
        if drops:
            others = [d for v, d in drops.items() if v != "tmevolve_randcon"]
            out["ablation"][task] = {"drop": drops, "max_drop_other_than_randcon": max(others) if others else None}
            randcon = methods.get("tmevolve_randcon", {}).get("per_unit")
            if randcon:  # per fold: each other ablation's score minus random concepts' (paired by fold)
                out["ablation"][task]["other_minus_randcon"] = {
                    v: sample([a - b for a, b in zip(methods[v]["per_unit"]["values"], randcon["values"])],
                              methods[v]["per_unit"]["ids"], "fold")
                    for v in drops if v != "tmevolve_randcon" and methods[v].get("per_unit")}
    grid = cfg.get("grid", {})
    gtask = grid.get("task")
    if gtask in summaries:
        out["grid"] = {gtask: {f"q{q}_k{k}": summaries[gtask].get(grid_name(q, k), {}).get("mean")
                               for q in grid.get("Q", []) for k in grid.get("K", [])}}
    main = summaries.get("survival", {}).get("tmevolve", {})
    if "ari_q0" in main:
        out["ari"] = {"q0": main["ari_q0"], "final": main["ari_final"], "gain": main["ari_final"] - main["ari_q0"],
                      "q0_folds": main.get("ari_q0_per_unit"), "final_folds": main.get("ari_final_per_unit")}
    return out


def check_paired(summaries: dict[str, dict[str, dict]]) -> None:
    """Every method of a task was trained on the same folds with the same seeds, or a ``ValueError``.

    The claims compare methods fold by fold (paired); a method trained with other seeds (an old
    fold file, a changed seed rule) would make that comparison a comparison of seeds.
    """
    for task, methods in summaries.items():
        units = {m: tuple(zip(s["per_unit"]["ids"], s.get("seeds") or ())) for m, s in methods.items()
                 if s.get("per_unit")}
        if len(set(units.values())) > 1:
            ref = next(iter(units))
            odd = sorted(m for m, u in units.items() if u != units[ref])
            raise ValueError(f"tmevolve {task}: methods {odd} were not trained on the same folds and seeds as "
                             f"{ref!r}; rebuild their fold files (the seed of a fold must not depend on the method)")


def _fmt(s: dict | None) -> str:
    if not s or s.get("mean") is None or s["mean"] != s["mean"]:
        return "n/a"
    return f"{s['mean']:.3f} +- {s['sd']:.3f}"


def make_tables(metrics: dict, cfg: dict) -> dict[str, pd.DataFrame]:
    """Table 1 (methods x tasks), Table 3 (ablations x tasks), Table 4 (Q x K grid)."""
    tasks = cfg["tasks"]
    names = {t: TASKS.get(t).metric_name for t in tasks}
    t1 = pd.DataFrame([{"method": m, **{f"{t} ({names[t]})": _fmt(metrics.get(t, {}).get(m)) for t in tasks}}
                       for m in cfg["methods"]])
    t3 = pd.DataFrame([{"variant": m, **{f"{t} ({names[t]})": _fmt(metrics.get(t, {}).get(m)) for t in tasks}}
                       for m in ["tmevolve", *cfg["ablations"]]])
    grid = cfg["grid"]
    t4 = pd.DataFrame([{"Q": q, **{f"K={k}": _fmt(metrics.get(grid["task"], {}).get(grid_name(q, k)))
                                   for k in grid["K"]}} for q in grid["Q"]])
    return {"table1": t1, "table3": t3, "table4": t4}


def trace_slide(dataset_path: str, folds_path: str, model_path: str, concepts_path: str, *, fold: int,
                slide_index: int = 0) -> tuple[pd.DataFrame, dict]:
    """Run the fold's trained TMEvolve on one of its test slides and return per-patch maps.

    Returns a tidy DataFrame (``slide_id, gx, gy, truth, region_q0, region_final, response, flux``)
    and a dict of slide-level facts (slide id, Q, K, ARI at q = 0 and after evolution).
    """
    data = load_prepared(dataset_path)
    folds = pd.read_csv(folds_path, dtype={"slide_id": str})
    test_ids = set(folds.slide_id[folds.fold == fold])
    test = [b for b in data.bags if b.slide_id in test_ids]
    if not test:
        raise ValueError(f"{folds_path}: fold {fold} has no slides")
    bag = sorted(test, key=lambda b: -b.n)[min(slide_index, len(test) - 1)]   # the largest test slides first
    ckpt = torch.load(model_path, weights_only=False)
    model = create_mil_model(ckpt["method"], ckpt["in_dim"], ckpt["out_dim"], concept_emb=load_concepts(concepts_path),
                             **ckpt["model_cfg"])
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    with torch.no_grad():
        res = model(bag, trace=True)
    tr = res["trace"]
    flux = tr["flux"].norm(dim=-1).numpy() if "flux" in tr else np.zeros(bag.n)
    df = pd.DataFrame({"slide_id": bag.slide_id, "gx": bag.grid[:, 0].numpy().astype(int),
                       "gy": bag.grid[:, 1].numpy().astype(int), "truth": bag.patch_types.astype(int),
                       "region_q0": tr["S"][0].argmax(1).numpy(), "region_final": tr["S"][-1].argmax(1).numpy(),
                       "response": tr["a"].numpy(), "flux": flux})
    facts = {"slide_id": bag.slide_id, "Q": model.cfg.Q, "K": model.cfg.K, "tissue_types": data.tissue_types,
             "ari_q0": region_ari(tr["S"][0], bag.patch_types), "ari_final": region_ari(tr["S"][-1], bag.patch_types)}
    return df, facts


def read_summaries(paths: dict[str, str]) -> dict[str, dict[str, dict]]:
    """``{"task/method": path}`` -> ``{task: {method: summary}}``."""
    out: dict[str, dict[str, dict]] = {}
    for key, path in paths.items():
        task, method = key.split("/", 1)
        out.setdefault(task, {})[method] = read_json(path)
    return out


def slide_thumbnail(slides_dir: str, slide_id: str, max_size: int = 256) -> np.ndarray | None:
    """The slide's thumbnail through the WSI stage's reader, or None (no slide file, e.g. bags only)."""
    from pathlib import Path

    paths = sorted(Path(slides_dir).glob(f"{slide_id}.*"))
    if not paths:
        return None
    try:
        from repro.wsi.reader import open_slide
    except ImportError:
        return None
    with open_slide(paths[0]) as slide:
        return slide.thumbnail(max_size)


def survival_bars(paths: dict[str, str]) -> pd.DataFrame:
    """``method, mean, sd`` of the survival C-index from the per-method summaries."""
    rows = [{"method": m, "mean": read_json(p)["mean"], "sd": read_json(p)["sd"]} for m, p in paths.items()]
    return pd.DataFrame(rows)


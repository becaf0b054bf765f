"""One training loop for every slide-level MIL model and task, with k-fold cross-validation.

- Data: :func:`prepare_cohort` reads the WSI stage's bags (``repro.wsi.bags.load_bags``) and
  manifest, optionally reduces the patch features by PCA (fitted on all patches, no labels), and
  builds each slide's grid graph once; :func:`save_prepared` writes it (tensors and plain values) and
  :func:`load_prepared` gives :class:`CohortData` back (``weights_only=True``).
- Folds: :func:`make_folds`, stratified by subtype x event, fixed by a seed, shared by every task
  and method.
- Tasks: any object with the :class:`MILTask` surface (targets, loss, score and metric of one
  slide-level prediction task); a paper defines its own (TMEvolve's survival, subtype and gene
  tasks are in :mod:`repro.papers.tmevolve.experiment`).
- :func:`fit_fold`: Adam, batch of one slide, a fixed number of epochs, loss = task loss +
  the model's auxiliary loss (TMEvolve's balance term); then predictions on the held-out fold.
  The model is built by name from the MIL registry (:func:`repro.methods.mil.create_mil_model`).

Choices: no early stopping and no validation split (fixed epochs from the preset); the fold's
summary is mean +- sample sd (ddof = 1) over folds.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd
import torch

from repro.claims import sample
from repro.methods.mil import SlideBag, create_mil_model
from repro.missing import as_float
from repro.tableio import read_csv

__all__ = ["CohortData", "prepare_cohort", "save_prepared", "load_prepared", "make_folds", "fold_of", "MILTask", "fit_fold", "FoldResult",
           "summarize_folds", "region_ari", "tile_ari", "FIDELITY_KEYS"]

log = logging.getLogger(__name__)

MANIFEST_COLUMNS = ("slide_id", "survival_months", "event", "subtype", "gene_expr")
#: Per-slide mechanism diagnostics a traced model reports (``trace["stats"]``), averaged over test slides.
FIDELITY_KEYS = ("rho_rowsum_median", "rho_rowsum_mean", "rho_rowsum_nonzero", "flux_over_h_median",
                 "dirichlet_ratio", "spread_feature", "spread_spatial", "kappa_mean")


# ----------------------------------------------------------------------------------------------
# Data


@dataclass
class CohortData:
    bags: list[SlideBag]
    table: pd.DataFrame            # one row per bag, same order
    tissue_types: list[str]

    def subset(self, idx: np.ndarray) -> "CohortData":
        return CohortData([self.bags[i] for i in idx], self.table.iloc[idx].reset_index(drop=True), self.tissue_types)


def prepare_cohort(bags_path: str, manifest_path: str, *, pca_dim: int | None = None, knn_k: int = 8,
                   seed: int = 0) -> dict:
    """Read the WSI stage's outputs into one dict of arrays (torch-saveable), graphs included."""
    from repro.wsi.bags import load_bags, read_bag_attrs

    attrs = read_bag_attrs(bags_path)
    raw = load_bags(bags_path)
    table = read_csv(manifest_path)  # a damaged table: a ValueError naming it
    missing = [c for c in MANIFEST_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{manifest_path}: missing columns {missing}")
    table = table[table.slide_id.astype(str).isin(raw)].reset_index(drop=True)
    if len(table) < 2:
        raise ValueError(f"{manifest_path}: fewer than 2 slides with bags in {bags_path}")
    ids = table.slide_id.astype(str).tolist()
    feats = [np.asarray(raw[s].features, np.float32) for s in ids]
    if pca_dim and pca_dim < feats[0].shape[1]:
        from sklearn.decomposition import PCA

        pca = PCA(n_components=pca_dim, random_state=seed % (2**32)).fit(np.concatenate(feats))
        feats = [pca.transform(f).astype(np.float32) for f in feats]
        log.info("PCA %d -> %d keeps %.1f%% of the variance", raw[ids[0]].features.shape[1], pca_dim,
                 100 * pca.explained_variance_ratio_.sum())
    mu = np.concatenate(feats).mean(0)
    sd = np.concatenate(feats).std(0) + 1e-6
    step = int(attrs["patch_size_level0"])
    slides = []
    for s, f in zip(ids, feats):
        bag = SlideBag.from_arrays((f - mu) / sd, raw[s].coords, step, patch_types=raw[s].patch_types, k=knn_k,
                                   slide_id=s)
        slides.append({"slide_id": s, "x": bag.x, "grid": bag.grid, "nbr8": bag.nbr8, "knn": bag.knn,
                       "patch_types": torch.from_numpy(bag.patch_types.astype(np.int64)),
                       "coords": torch.from_numpy(np.asarray(raw[s].coords, np.int64))})
    types = attrs.get("tissue_types", [])
    return {"slides": slides, "table": table.to_dict(orient="list"), "tissue_types": list(types),
            "patch_size_level0": step}


def save_prepared(blob: dict, path: str | os.PathLike) -> None:
    """Write a :func:`prepare_cohort` dict (tensors and plain values: :func:`load_prepared` reads it with
    ``weights_only=True``), atomically."""
    from repro.io import save_torch

    save_torch(blob, path)


def load_prepared(path: str | os.PathLike) -> CohortData:
    """The :func:`prepare_cohort` dict written by :func:`save_prepared`, as :class:`CohortData`
    (``weights_only=True``: no code in the file runs; a damaged file is named)."""
    from repro.io import load_torch

    blob = load_torch(path)
    bags = [SlideBag(x=s["x"], grid=s["grid"], nbr8=s["nbr8"], knn=s["knn"],
                     patch_types=s["patch_types"].numpy().astype(np.int16), slide_id=s["slide_id"])
            for s in blob["slides"]]
    return CohortData(bags, pd.DataFrame(blob["table"]), list(blob["tissue_types"]))


def make_folds(table: pd.DataFrame, n_folds: int, seed: int) -> pd.DataFrame:
    """Fold of each slide (``slide_id, fold``), stratified by subtype x event, fixed by ``seed``."""
    strata = table.subtype.astype(str) + "_" + table.event.astype(str)
    counts = strata.value_counts()
    strata = strata.where(strata.map(counts) >= n_folds, "rare")           # tiny strata pooled
    if (strata.value_counts() < n_folds).any():
        strata = pd.Series("all", index=table.index)
    from sklearn.model_selection import StratifiedKFold   # here, not at import: scripts that only summarise stay light

    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed % (2**32))
    fold = np.zeros(len(table), np.int64)
    for k, (_, test) in enumerate(skf.split(np.zeros(len(table)), strata)):
        fold[test] = k
    return pd.DataFrame({"slide_id": table.slide_id.astype(str), "fold": fold})


# ----------------------------------------------------------------------------------------------
# Tasks


class MILTask(Protocol):
    """Targets, loss, score and metric of one slide-level prediction task (fitted on a training fold)."""

    name: str
    metric_name: str
    out_dim: int                   # set by fit

    def fit(self, train: pd.DataFrame, cohort: pd.DataFrame) -> "MILTask":
        """Learn what the targets need from the training fold (``cohort``: the label space only)."""

    def targets(self, table: pd.DataFrame) -> dict: ...

    def loss(self, out: torch.Tensor, tgt: dict, i: int) -> torch.Tensor:
        """The loss of slide ``i``'s output ``out``."""

    def score(self, outs: np.ndarray) -> np.ndarray:
        """Scores (risk, class probabilities, value) from the stacked outputs (n, out_dim)."""

    def metric(self, table: pd.DataFrame, score: np.ndarray) -> float: ...


# ----------------------------------------------------------------------------------------------
# Training


@dataclass
class FoldResult:
    metric: float
    predictions: pd.DataFrame
    state_dict: dict
    model_cfg: dict
    in_dim: int
    out_dim: int
    diagnostics: dict = field(default_factory=dict)


def region_ari(S: torch.Tensor, patch_types: np.ndarray) -> float:
    """Adjusted Rand index between argmax regions and the ground-truth patch types (known patches)."""
    known = patch_types >= 0
    if known.sum() < 2:
        return float("nan")
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(patch_types[known], S.argmax(1).numpy()[known]))


def tile_ari(bag: SlideBag, k: int) -> float:
    """ARI of the spatial-tile baseline: K regions by nearest farthest-point seed on the grid (space only).

    The regions TMEvolve would get with a spatial term alone; the ARI claim needs a margin over it.
    """
    from repro.methods.tmevolve import farthest_point_seeds

    seeds = farthest_point_seeds(bag.grid, k)
    S = -torch.cdist(bag.grid, bag.grid[seeds])                       # argmax = nearest seed
    return region_ari(S, bag.patch_types)


def fold_of(folds: pd.DataFrame, table: pd.DataFrame) -> np.ndarray:
    """The fold of every row of ``table`` (by ``slide_id``) in ``folds`` (``slide_id, fold``); NaN where absent."""
    return folds.set_index("slide_id").fold.reindex(table.slide_id.astype(str)).to_numpy()


def fit_fold(method: str, task: MILTask, data: CohortData, folds: pd.DataFrame, fold: int, *, epochs: int,
             lr: float, weight_decay: float = 0.0, model_cfg: dict[str, Any] | None = None,
             model_kwargs: dict[str, Any] | None = None, seed: int = 0, device: str = "cpu",
             heldout_curve: bool = False) -> FoldResult:
    """Train the registered MIL model ``method`` on every fold but ``fold`` and predict ``fold``.

    Parameters
    ----------
    method : registry key of :data:`repro.methods.mil.MIL_MODELS`.
    task : an unfitted :class:`MILTask`; it is fitted on the training folds.
    folds : ``slide_id, fold`` of every slide of ``data`` (:func:`make_folds`).
    epochs, lr, weight_decay : Adam, one slide per step, a fixed number of epochs.
    model_cfg : the model's settings (saved with the fold's weights to rebuild it).
    model_kwargs : other arguments of the model's factory (e.g. TMEvolve's ``concept_emb``).
    seed : parameter init, dropout and the order of the slides.
    heldout_curve : also record the held-out fold's task loss after every epoch
        (``diagnostics["heldout_loss_curve"]``); for an inner validation split, where it sets the
        training budget from training data (the outer test fold must never be used this way).
    """
    assigned = fold_of(folds, data.table)
    if np.isnan(assigned.astype(float)).any():
        raise ValueError("fit_fold: some slides have no fold in the folds table")
    train_idx, test_idx = np.flatnonzero(assigned != fold), np.flatnonzero(assigned == fold)
    if len(test_idx) == 0:
        raise ValueError(f"fit_fold: fold {fold} is empty")
    train, test = data.subset(train_idx), data.subset(test_idx)
    task.fit(train.table, data.table)
    # torch's parameter init and dropout draw from the default generator: fork it, seed it, restore it
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed % (2**63))
        return _train_and_predict(method, task, train, test, fold, epochs, lr, weight_decay, dict(model_cfg or {}),
                                  dict(model_kwargs or {}), seed, device, len(train_idx), len(test_idx),
                                  heldout_curve)


def _heldout_loss(model, task, bags, tgt) -> float:
    model.eval()
    with torch.no_grad():
        return float(np.mean([float(task.loss(model(b)["out"], tgt, i)) for i, b in enumerate(bags)]))


def _train_and_predict(method, task, train, test, fold, epochs, lr, weight_decay, mcfg, model_kwargs, seed, device,
                       n_train, n_test, heldout_curve=False):
    model = create_mil_model(method, train.bags[0].x.shape[1], task.out_dim, seed=seed, **model_kwargs,
                             **mcfg).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    tgt = task.targets(train.table)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    from repro.logs import progress

    tgt_heldout = task.targets(test.table) if heldout_curve else None
    curve, heldout = [], []   # mean task loss per epoch over the training (held-out) slides; aux loss excluded
    for epoch in progress(range(epochs), desc=f"{task.name}/{method}/fold{fold}", unit="epoch"):
        model.train()
        total = aux = 0.0
        for i in rng.permutation(len(train.bags)):
            res = model(train.bags[i])
            task_loss = task.loss(res["out"], tgt, int(i))
            loss = task_loss + res["aux_loss"]
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(task_loss.detach())
            aux += float(res["aux_loss"].detach())
        curve.append(total / len(train.bags))
        if heldout_curve:   # eval mode draws no random numbers: the training trajectory is unchanged
            heldout.append(_heldout_loss(model, task, test.bags, tgt_heldout))
        log.info("epoch %d task loss %.4f aux loss %.4f", epoch, curve[-1], aux / len(train.bags))
    train_s = time.perf_counter() - t0
    model.eval()
    outs, aris0, aris1, aris_tiles, stats = [], [], [], [], []
    t0 = time.perf_counter()
    with torch.no_grad():
        for bag in test.bags:
            res = model(bag, trace=True) if getattr(model, "supports_trace", False) else model(bag)
            outs.append(res["out"].numpy())
            if "trace" in res:
                aris0.append(region_ari(res["trace"]["S"][0], bag.patch_types))
                aris1.append(region_ari(res["trace"]["S"][-1], bag.patch_types))
                aris_tiles.append(tile_ari(bag, res["trace"]["S"][0].shape[1]))
                stats.append(res["trace"].get("stats", {}))
    infer_ms = 1000 * (time.perf_counter() - t0) / len(test.bags)
    outs = np.stack(outs)
    score = task.score(outs)
    metric = task.metric(test.table, score)
    pred = pd.DataFrame({"slide_id": test.table.slide_id.astype(str), "fold": fold})
    if score.ndim == 1:
        pred["score"] = score
    else:
        for c in range(score.shape[1]):
            pred[f"score_{c}"] = score[:, c]
    diag = {"train_s": train_s, "infer_ms_per_slide": infer_ms, "n_train": n_train, "n_test": n_test,
            "n_params": sum(p.numel() for p in model.parameters()), "train_loss_curve": curve}
    if heldout_curve:
        diag["heldout_loss_curve"] = heldout
    if aris0:
        diag.update(ari_q0=float(np.nanmean(aris0)), ari_final=float(np.nanmean(aris1)),
                    ari_tiles=float(np.nanmean(aris_tiles)))
    for key in FIDELITY_KEYS:
        vals = [s_[key] for s_ in stats if key in s_]
        if vals:
            diag[key] = float(np.nanmean(vals))
    log.info("%s %s fold %d: %s = %.4f (train %.1f s)", task.name, method, fold, task.metric_name, metric, train_s)
    return FoldResult(metric, pred, model.state_dict(), mcfg, train.bags[0].x.shape[1], task.out_dim, diag)


def summarize_folds(results: list[dict]) -> dict:
    """Mean, sample sd and per-fold values of each fold's ``metric`` and diagnostics.

    The folds whose metric is undefined (null) are left out of the mean and the sd; the sd of one fold left is
    undefined (NaN, null in the JSON; a table prints it as missing), not 0."""
    vals = np.array([as_float(r["metric"]) for r in results])  # an undefined metric (null) stays missing
    defined = int(np.count_nonzero(~np.isnan(vals)))
    ids = [r.get("id") or f"fold{r.get('fold', i)}" for i, r in enumerate(results)]
    unit = "fold_seed" if any("id" in r for r in results) else "fold"
    # the folds overlap in their training slides: the checker widens their intervals (Nadeau-Bengio)
    sizes = [(r["diagnostics"].get("n_test"), r["diagnostics"].get("n_train")) for r in results]
    cv = float(np.mean([t / n for t, n in sizes])) if all(t and n for t, n in sizes) else None
    out = {"mean": float(np.nanmean(vals)), "sd": float(np.nanstd(vals, ddof=1)) if defined > 1 else float("nan"),
           "folds": vals.tolist(), "metric": results[0]["metric_name"],
           "per_unit": sample(vals, ids, unit, cv=cv),
           "seeds": [r.get("seed") for r in results]}  # pairing across methods is checked on these
    for key in ("ari_q0", "ari_final", "ari_tiles", "infer_ms_per_slide", "train_s", "n_params", *FIDELITY_KEYS):
        if all(key in r["diagnostics"] for r in results):
            # a diagnostic a fold could not measure (nan; null once read back from its JSON), e.g. the region ARIs on
            # slides without ground-truth patch types: left out of the mean, and the key dropped if no fold has it
            per_fold = [as_float(r["diagnostics"][key]) for r in results]
            if np.isnan(per_fold).all():
                continue
            out[key] = float(np.nanmean(per_fold))
            if key.startswith("ari") or key in FIDELITY_KEYS:
                out[f"{key}_per_unit"] = sample(per_fold, ids, unit, cv=cv)
    curves = [r["diagnostics"].get("train_loss_curve") for r in results]
    if all(curves) and len({len(c) for c in curves}) == 1:   # the learning curve, averaged over folds
        out["train_loss_curve"] = np.mean(curves, axis=0).tolist()
    return out

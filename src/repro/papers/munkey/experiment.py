"""One unit of the munkey rebuild (regime x forget set x seed), the key-deletion sweep, aggregation, Table 1.

Per unit every method sees the same data, canaries, forget set and training seed (paired by seed):

- ``munkey``: the memory model trained on all training data, forget set's keys deleted (no update).
- ``knn``: K-nearest-neighbour vote over the same frozen keys, forget keys deleted.
- ``original``: the ordinary model, untouched (the floor: nothing forgotten).
- ``finetune``, ``neggrad``, ``random_labels``, ``scrub``, ``salun``: post-hoc baselines on the ordinary model.
- ``oracle``: the ordinary model retrained without the forget set (target of the post-hoc baselines);
  ``oracle_memory``: the memory model retrained without it (the paper's second oracle).

Per method: accuracy on the forget / retain / test sets (labels as trained on, canaries included),
loss-threshold MIA AUC (forget set vs the test set), shadow-model MIA AUC (``mia_shadow``: one shadow
per architecture, ordinary / memory / kNN, trained on a random half of the retain set with the other
half as its non-members), the share of forget-set canaries still predicted with their canary label
(the planted instance-specific signal), and the time to forget.
The average gap (SalUn / SCRUB convention) is the mean absolute difference from an oracle over
(forget acc, retain acc, test acc, MIA AUC). ``gap_plain`` uses the ordinary oracle for every
method; ``gap_own`` uses each model's own architecture's oracle (memory model and kNN: oracle_memory).

Deviations (besides the encoder and weight pathway of :mod:`repro.methods.munkey`): three regimes
(:mod:`repro.papers.munkey.synth`) stand in for the paper's six datasets; every image set gets 5%
planted canary labels; the gap is our definition above (mean |difference| over forget / retain /
test accuracy and loss-MIA AUC); whole-class forgetting (forget set ``class``) is our addition; five
post-hoc baselines, not the paper's nine.
"""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

import numpy as np
import pandas as pd
import torch

from repro.claims import put_sample
from repro.methods.munkey import (
    MemoryConfig,
    MemoryModel,
    PlainModel,
    knn_predict,
    predict_logits,
    train_model,
)
from repro.methods.unlearning import (
    ShadowAttack,
    UnlearnConfig,
    loss_mia_auc,
    mia_features,
    per_example_loss,
    unlearn,
)
from repro.papers.munkey.synth import forget_indices, make_regime
from repro.tablecells import mean_spread_of

__all__ = ["GAP_METRICS", "POST_HOC", "aggregate", "run_sweep", "run_unit", "table1"]

log = logging.getLogger(__name__)

GAP_METRICS = ("acc_forget", "acc_retain", "acc_test", "mia_auc")
POST_HOC = ("finetune", "neggrad", "random_labels", "scrub", "salun")
MEMORY_BASED = ("munkey", "knn", "oracle_memory")


def _evaluate(logits_of, reg, forget: np.ndarray, retain: np.ndarray, attack: ShadowAttack | None = None
              ) -> dict[str, float]:
    x, y = reg.x_train, reg.y_train
    lf, lr, lt = logits_of(x[forget]), logits_of(x[retain]), logits_of(reg.x_test)
    shadow = {} if attack is None else {"mia_shadow": attack.auc(mia_features(lf, y[forget]),
                                                                 mia_features(lt, reg.y_test))}
    def acc(lg, yy):
        return float((lg.argmax(1) == yy).float().mean())
    canary = reg.canary_train[forget]
    memorised = float((lf.argmax(1)[canary] == y[forget][canary]).float().mean()) if canary.any() else float("nan")
    return {"acc_forget": acc(lf, y[forget]), "acc_retain": acc(lr, y[retain]), "acc_test": acc(lt, reg.y_test),
            "mia_auc": loss_mia_auc(per_example_loss(lf, y[forget]), per_example_loss(lt, reg.y_test)),
            "canary_memorised": memorised} | shadow


def _knn_logits(keys, labels, alive, k, n_classes):
    def logits_of(q):  # log of smoothed vote shares, so that the MIA reads a loss
        votes = knn_predict(keys, labels, alive, q, k, n_classes)
        return torch.log((votes + 0.5) / (k + 0.5 * n_classes))
    return logits_of


def _weights_digest(model: torch.nn.Module) -> float:
    return float(sum(p.detach().double().sum() for p in model.parameters()))


def _shadow_attack(make, logits, x, y, retain: np.ndarray, seed: int) -> ShadowAttack:
    """Train a shadow (``make(x_in, y_in)`` -> model) on a random half of the retain set; fit the attack on it."""
    half = np.random.default_rng(seed).permutation(retain)
    s_in, s_out = np.sort(half[: len(half) // 2]), np.sort(half[len(half) // 2:])
    shadow = make(x[s_in], y[s_in])
    return ShadowAttack(mia_features(logits(shadow, x[s_in]), y[s_in]), mia_features(logits(shadow, x[s_out]), y[s_out]))


def regime_of(cfg: dict[str, Any], regime: str, data_seed: int, path: str | None = None):
    """The unit's data: ``cfg['data']`` holds the shared arguments and per-regime overrides (``data.<regime>``)."""
    data = dict(cfg.get("data", {}))
    own = {k: data.pop(k) for k in list(data) if isinstance(data[k], dict)}.get(regime, {})
    return make_regime(regime, data_seed, **(data | own), path=path)


def run_unit(cfg: dict[str, Any], regime: str, forget_set: str, data_seed: int, train_seed: int,
             path: str | None = None) -> dict[str, Any]:
    """Every method on one unit; returns ``{method: {metric: value}}`` plus the unit's description."""
    reg = regime_of(cfg, regime, data_seed, path)
    spec = cfg["forget_sets"][forget_set]
    forget = forget_indices(spec["kind"], reg.y_train, data_seed + 1, fraction=spec.get("fraction"))
    retain = np.setdiff1d(np.arange(len(reg.y_train)), forget)
    mcfg = MemoryConfig(**cfg.get("model", {}))
    ucfg = UnlearnConfig(**cfg.get("unlearn", {}))
    x, y, C = reg.x_train, reg.y_train, reg.n_classes

    def fresh_plain():
        torch.manual_seed(train_seed)
        return PlainModel(x.shape[1], C, mcfg)

    def fresh_memory(keys):
        torch.manual_seed(train_seed)
        return MemoryModel(keys, C, mcfg)

    def net(model, q):
        return predict_logits(model, q)
    attack_plain = _shadow_attack(lambda xs, ys: train_model(fresh_plain(), xs, ys, mcfg, train_seed), net, x, y,
                                  retain, train_seed + 1)
    attack_memory = _shadow_attack(lambda xs, ys: train_model(fresh_memory(xs), xs, ys, mcfg, train_seed), net, x, y,
                                   retain, train_seed + 1)
    attack_knn = _shadow_attack(lambda xs, ys: (xs, ys), lambda m, q: _knn_logits(
        m[0], m[1], torch.ones(len(m[0]), dtype=torch.bool), mcfg.k, C)(q), x, y, retain, train_seed + 1)

    out: dict[str, Any] = {}
    plain = train_model(fresh_plain(), x, y, mcfg, train_seed)
    out["original"] = _evaluate(lambda q: net(plain, q), reg, forget, retain, attack_plain) | {"time_s": 0.0}
    oracle = train_model(fresh_plain(), x[retain], y[retain], mcfg, train_seed)
    out["oracle"] = _evaluate(lambda q: net(oracle, q), reg, forget, retain, attack_plain) | {"time_s": 0.0}
    for name in cfg["baselines"]:
        model = copy.deepcopy(plain)
        seconds = unlearn(name, model, (x[retain], y[retain]), (x[forget], y[forget]), ucfg, train_seed, C)
        out[name] = _evaluate(lambda q, m=model: net(m, q), reg, forget, retain, attack_plain) | {"time_s": seconds}

    memory = train_model(fresh_memory(x), x, y, mcfg, train_seed)
    image_only = float((predict_logits(memory, reg.x_test, image_only=True).argmax(1) == reg.y_test).float().mean())
    canaries = np.flatnonzero(reg.canary_train)
    weights_fit = (float((predict_logits(memory, x[canaries], image_only=True).argmax(1) == y[canaries]).float().mean())
                   if len(canaries) else float("nan"))
    before = _weights_digest(memory)
    seconds = memory.delete(forget)
    out["munkey"] = _evaluate(lambda q: net(memory, q), reg, forget, retain, attack_memory) | {
        "time_s": seconds, "pathway_sensitivity": image_only, "canary_in_weights": weights_fit,
        "weights_changed": float(_weights_digest(memory) != before)}
    oracle_memory = train_model(fresh_memory(x[retain]), x[retain], y[retain], mcfg, train_seed)
    out["oracle_memory"] = _evaluate(lambda q: net(oracle_memory, q), reg, forget, retain, attack_memory) | {
        "time_s": 0.0}
    alive = torch.ones(len(x), dtype=torch.bool)
    alive[torch.as_tensor(forget)] = False
    start = time.perf_counter()
    knn_logits = _knn_logits(x, y, alive, mcfg.k, C)
    out["knn"] = _evaluate(knn_logits, reg, forget, retain, attack_knn) | {"time_s": time.perf_counter() - start}

    for name, res in out.items():
        own = out["oracle_memory"] if name in MEMORY_BASED else out["oracle"]
        res["gap_plain"] = float(np.mean([abs(res[m] - out["oracle"][m]) for m in GAP_METRICS]))
        res["gap_own"] = float(np.mean([abs(res[m] - own[m]) for m in GAP_METRICS]))
    log.info("%s/%s: %s", regime, forget_set, {k: round(v["gap_own"], 3) for k, v in out.items()})
    return {"regime": regime, "forget_set": forget_set, "n_forget": len(forget),
            "n_forget_canaries": int(reg.canary_train[forget].sum()), "methods": out}


def run_sweep(cfg: dict[str, Any], regime: str, data_seed: int, train_seed: int,
              path: str | None = None) -> list[dict[str, Any]]:
    """Forget accuracy and MIA AUC of MUNKEY vs the fraction of keys deleted, with the memory-model oracle."""
    reg = regime_of(cfg, regime, data_seed, path)
    mcfg = MemoryConfig(**cfg.get("model", {}))
    x, y, C = reg.x_train, reg.y_train, reg.n_classes
    torch.manual_seed(train_seed)
    trained = train_model(MemoryModel(x, C, mcfg), x, y, mcfg, train_seed)
    rows = []
    for fraction in cfg["sweep_fractions"]:
        forget = forget_indices("random", y, data_seed + 2, fraction=fraction)
        retain = np.setdiff1d(np.arange(len(y)), forget)
        memory = copy.deepcopy(trained)
        memory.delete(forget)
        torch.manual_seed(train_seed)
        oracle = train_model(MemoryModel(x[retain], C, mcfg), x[retain], y[retain], mcfg, train_seed)
        for method, model in (("munkey", memory), ("oracle_memory", oracle)):
            res = _evaluate(lambda q, m=model: predict_logits(m, q), reg, forget, retain)
            rows.append({"regime": regime, "fraction": float(fraction), "method": method,
                         "acc_forget": res["acc_forget"], "mia_auc": res["mia_auc"]})
    return rows


def aggregate(runs: dict[tuple[str, str, int], dict], sweeps: dict[tuple[str, int], list[dict]],
              cfg: dict[str, Any]) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """metrics.json (per-seed samples) and the tidy tables of every unit and of the sweep."""

    rows = [{"regime": r, "forget_set": f, "seed": s, "method": m, **vals}
            for (r, f, s), run in runs.items() for m, vals in run["methods"].items()]
    tidy = pd.DataFrame(rows).sort_values(["regime", "forget_set", "method", "seed"], kind="stable")
    sweep = pd.DataFrame([row | {"seed": s} for (r, s), rs in sweeps.items() for row in rs])
    metrics: dict[str, Any] = {}

    for (regime, fs), unit in tidy.groupby(["regime", "forget_set"], sort=True):
        wide = {m: g.set_index("seed") for m, g in unit.groupby("method")}
        seeds = sorted(wide["munkey"].index)
        for metric in (*GAP_METRICS, "mia_shadow", "gap_plain", "gap_own", "canary_memorised", "time_s"):
            for method, g in wide.items():
                vals = g.loc[seeds, metric]
                if vals.notna().all():
                    put_sample(metrics, (metric, regime, fs, method), vals, seeds, "seed")
        post = [wide[b].loc[seeds] for b in cfg["baselines"]]
        for gap in ("gap_own", "gap_plain"):
            best = np.min([p[gap].to_numpy() for p in post], axis=0)
            put_sample(metrics, (f"{gap}_margin", regime, fs), best - wide["munkey"].loc[seeds, gap].to_numpy(),
                seeds, "seed")
        fastest = np.min([p["time_s"].to_numpy() for p in post], axis=0)
        put_sample(metrics, ("forget_speedup_log10", regime, fs),
            np.log10(fastest / np.maximum(wide["munkey"].loc[seeds, "time_s"].to_numpy(), 1e-9)), seeds, "seed")
        put_sample(metrics, ("mia_excess", regime, fs), wide["munkey"].loc[seeds, "mia_auc"].to_numpy()
                   - wide["oracle_memory"].loc[seeds, "mia_auc"].to_numpy(), seeds, "seed")
        put_sample(metrics, ("weights_changed", regime, fs), wide["munkey"].loc[seeds, "weights_changed"],
            seeds, "seed")
        put_sample(metrics, ("test_acc_drop", regime, fs),
            wide["original"].loc[seeds, "acc_test"].to_numpy() - wide["munkey"].loc[seeds, "acc_test"].to_numpy(),
            seeds, "seed")
        for diag in ("pathway_sensitivity", "canary_in_weights"):
            put_sample(metrics, (diag, regime, fs), wide["munkey"].loc[seeds, diag], seeds, "seed")
    return metrics, tidy, sweep


def table1(tidy: pd.DataFrame) -> pd.DataFrame:
    """Per regime, forget set and method: mean +- sd over seeds of Table 1's columns.

    A seed without a value (NaN) is left out of its cell; a cell over one seed has no sd and one over none no
    mean: both print as missing (:func:`repro.tablecells.mean_spread_of`)."""

    cols = ["acc_forget", "acc_retain", "acc_test", "mia_auc", "mia_shadow", "canary_memorised", "gap_own", "gap_plain",
            "time_s"]
    rows = []
    for (regime, fs, method), g in tidy.groupby(["regime", "forget_set", "method"], sort=True):
        row = {"regime": regime, "forget_set": fs, "method": method, "n_seeds": len(g)}
        for c in cols:
            row[c] = mean_spread_of(g[c], "sd", fmt=".3g", spread_fmt=".2g", sep=" ± ")
        rows.append(row)
    return pd.DataFrame(rows)

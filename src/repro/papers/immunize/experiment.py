"""One unit of the immunize rebuild (a seed): per model and defence, immunize, then attack in three settings; the
estimator scaling; aggregation.

Per seed every model and defence sees the same split, immunization seed and attack data (paired by
seed); each model (``linear``, ``mlp``, ``transformer``; ``synth.released``) has its own released
extractor, shared by its defences. ``defend`` immunizes the release and records the harmful / benign probe Hessians'
extremal eigenvalues before and after, by Lanczos on Hessian-vector products and exactly
(Z^T Z / n, the closed form of a squared-loss linear probe on features Z = f_theta(X)), its seconds (the curvature
estimator's per-step check excluded) and that check's largest error (``estimator_err_train``: the relative error of the
extremal eigenvalues the defence's R_well / R_ill used, Lanczos against ``eigvalsh``, over the training steps).
``attack`` measures on the immunized extractor:

- (ii) open weights: a fresh five-way probe fine-tuned on harmful data (mode ``probe``: on frozen
  features; ``full``: probe and extractor together), per optimiser and learning rate (``full``: the
  model's ``full_grid`` where the preset gives one, else ``grid``); harmful test accuracy at each checkpoint; ``acc_auc`` = its mean over checkpoints (the
  area under the accuracy-vs-log-steps curve; lower = slower harmful fine-tuning);
- utility: benign five-way probe accuracy after the utility budget (Adam);
- downstream trainability: a new benign task (parity of a benign digit), same budget;
- (i) fine-tuning as a service: a ten-way head trained on ``n_user`` samples of which a share
  ``rate`` are harmful, the rest benign; harmful and benign test accuracy after the budget;
- (iii) unlearn -> immunize -> relearn: the pretrained ten-way head is unlearned by retraining it
  without the harmful classes (exact unlearning of the head; the extractor still carries the
  harmful features), the extractor is immunized, the head re-fit on benign data (deployment), and
  an attacker relearns from that head on ``relearn_n`` harmful examples; ``relearn_auc`` as above.

``rir``: the reference code's immunization gap ("relative immunization ratio", utils/log.py of
amberyzheng/model-immunization-cond-num), (kappa_H after / kappa_H before) / (kappa_B after /
kappa_B before) of the probe Hessians Z^T Z. DEVIATION: "before" is the released extractor's
features (theta0), not the raw inputs (the standardised digits have constant pixels, so the raw
kappa is infinite).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from repro.claims import put_sample
from repro.methods.immunization.curvature import exact_hessian, extremal_eigenvalues
from repro.methods.immunization.extractors import Extractor
from repro.methods.immunization.train import adversary, fit_head, immunize
from repro.papers.immunize.synth import BENIGN_CLASSES, HARMFUL_CLASSES, Tasks, make_tasks, released

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["setting_key", "rate_key", "defend", "attack", "run_unit", "run_scaling", "aggregate", "table1"]

log = logging.getLogger(__name__)


def setting_key(mode: str, optimizer: str, lr: float) -> str:
    """``probe_sgd_lr0p1``: a metrics key without dots (claims address metrics by dotted path)."""
    return f"{mode}_{optimizer}_lr{lr:g}".replace(".", "p").replace("-", "m")


def rate_key(rate: float) -> str:
    """``rate0p1``: the poison rate as a metrics key."""
    return f"rate{rate:g}".replace(".", "p").replace("-", "m")


def _probe_eigs(z: torch.Tensor, seed: int) -> dict[str, float]:
    """Extremal eigenvalues of the squared-loss probe Hessian on features z: Lanczos and exact."""
    loss = lambda w: 0.5 * ((z @ w) ** 2).mean()  # Hessian Z^T Z / n, whatever the target
    lo, hi = extremal_eigenvalues(loss, torch.zeros(z.shape[1], dtype=z.dtype), n_iter=z.shape[1], seed=seed)
    ev = np.linalg.eigvalsh((z.T @ z / z.shape[0]).numpy())
    return {"lanczos_min": lo, "lanczos_max": hi, "exact_min": float(ev[0]), "exact_max": float(ev[-1])}


def defend(cfg: dict[str, Any], method: str, tasks: Tasks, ext: Extractor, theta0: torch.Tensor, train_seed: int
           ) -> tuple[torch.Tensor, dict[str, Any]]:
    """(immunized extractor parameters, {time_s, eigenvalues before/after of the harmful and benign probe Hessians})."""
    xh, yh = tasks.split("train", "harmful")
    xb, yb = tasks.split("train", "benign")
    trace: dict[str, float] = {}
    theta, seconds = immunize(xh, yh - HARMFUL_CLASSES[0], xb, theta0, method=method, seed=train_seed,
                              extractor=ext, y_benign=yb - BENIGN_CLASSES[0], trace=trace, **cfg["immunize"])
    info: dict[str, Any] = {"method": method, "time_s": seconds, "estimator_err_max": trace.get("estimator_err_max", 0.0)}
    with torch.no_grad():
        for when, th in (("before", theta0), ("after", theta)):
            for which, x in (("harmful", xh), ("benign", xb)):
                info[f"{which}_{when}"] = _probe_eigs(ext.features(th, x), train_seed)
    log.info("%s %s: harmful kappa %.3g -> %.3g in %.2f s; curvature estimator's largest error in training %.2g",
             ext.kind, method, info["harmful_before"]["exact_max"] / info["harmful_before"]["exact_min"],
             info["harmful_after"]["exact_max"] / info["harmful_after"]["exact_min"], seconds,
             info["estimator_err_max"])
    return theta, info


def _acc(z, y, w, classes=None) -> float:
    cols = torch.as_tensor(classes if classes is not None else range(w.shape[1]))
    return float((cols[(z @ w)[:, cols].argmax(1)] == y).to(torch.float64).mean())


def attack(cfg: dict[str, Any], tasks: Tasks, ext: Extractor, theta: torch.Tensor, attack_seed: int) -> dict[str, Any]:
    """Every setting's measurements on extractor parameters ``theta`` (see the module docstring)."""
    adv, util, svc, rel = cfg["adversary"], cfg["utility"], cfg["service"], cfg["relearn"]
    xh, yh = tasks.split("train", "harmful")
    xh_t, yh_t = tasks.split("test", "harmful")
    xb, yb = tasks.split("train", "benign")
    xb_t, yb_t = tasks.split("test", "benign")
    h0 = HARMFUL_CLASSES[0]
    with torch.no_grad():
        zh, zh_t, zb, zb_t = (ext.features(theta, x) for x in (xh, xh_t, xb, xb_t))
    out: dict[str, Any] = {"open_weights": {}, "service": {}}
    for mode in adv["modes"]:
        grid = adv.get("full_grid", {}).get(ext.kind, adv["grid"]) if mode == "full" else adv["grid"]
        for optimizer, lrs in grid.items():
            for lr in lrs:
                if mode == "probe":
                    accs = adversary(zh, yh - h0, zh_t, yh_t - h0, optimizer=optimizer, lr=lr,
                                     checkpoints=adv["checkpoints"])
                else:
                    accs = adversary(xh, yh - h0, xh_t, yh_t - h0, optimizer=optimizer, lr=lr,
                                     checkpoints=adv["checkpoints"], theta=theta, extractor=ext)
                out["open_weights"][setting_key(mode, optimizer, lr)] = {
                    "mode": mode, "optimizer": optimizer, "lr": lr, "acc": accs, "acc_auc": float(np.mean(accs))}
    w = fit_head(zb, yb, len(BENIGN_CLASSES), util["steps"], util["lr"])
    out["benign_acc"] = _acc(zb_t, yb_t, w)
    parity = lambda y: (y % 2)
    w = fit_head(zb, parity(yb), 2, util["steps"], util["lr"])
    out["downstream_acc"] = _acc(zb_t, parity(yb_t), w)

    rng = np.random.default_rng(attack_seed)
    for rate in svc["rates"]:
        n_harm = int(round(rate * svc["n_user"]))
        ih = rng.permutation(len(yh))[:n_harm]
        ib = rng.permutation(len(yb))[: svc["n_user"] - n_harm]
        z = torch.cat([zh[ih], zb[ib]])
        y = torch.cat([yh[ih], yb[ib]])
        w = fit_head(z, y, 10, util["steps"], util["lr"])
        out["service"][rate_key(rate)] = {"rate": rate, "harmful_acc": _acc(zh_t, yh_t, w),
                                          "benign_acc": _acc(zb_t, yb_t, w)}
    # (iii) the head is unlearned (retrained without the harmful classes), re-fit on the immunized features
    head = fit_head(zb, yb, 10, util["steps"], util["lr"])
    ir = rng.permutation(len(yh))[: rel["n"]]
    accs = adversary(zh[ir], yh[ir], zh_t, yh_t, optimizer="adam", lr=rel["lr"], checkpoints=adv["checkpoints"],
                     w_init=head, classes=list(range(10)))
    out["relearn"] = {"acc": accs, "acc_auc": float(np.mean(accs)),
                      "unlearned_harmful_acc": _acc(zh_t, yh_t, head)}
    return out


def run_unit(cfg: dict[str, Any], data_seed: int, train_seed: int, attack_seed: int
             ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One seed: per model, the release, every defence and every attack; the estimator scaling.

    Returns (record, {"<model>/<method>": immunized parameters}). Every model and defence of the
    seed sees the same split, immunization seed and attack data (paired by seed).
    """
    tasks = make_tasks(data_seed, **cfg.get("data", {}))
    record: dict[str, Any] = {"checkpoints": cfg["adversary"]["checkpoints"], "models": {}}
    thetas: dict[str, np.ndarray] = {}
    for model in cfg["models"]:
        ext, theta0, diag = released(model, tasks, seed=train_seed, **cfg.get("release", {}).get(model, {}))
        log.info("release %s: %s", model, diag)
        rec: dict[str, Any] = {"release": diag, "methods": {}}
        for method in cfg["methods"]:
            theta, info = defend(cfg, method, tasks, ext, theta0, train_seed)
            rec["methods"][method] = {"defend": info, "attack": attack(cfg, tasks, ext, theta, attack_seed)}
            thetas[f"{model}/{method}"] = theta.numpy()
        record["models"][model] = rec
    record["scaling"] = run_scaling(cfg, tasks, train_seed)
    return record, thetas


def _mlp_loss(x: torch.Tensor, y: torch.Tensor, hidden: int):
    d, c = x.shape[1], int(y.max()) + 1
    n1 = d * hidden

    def loss(p):
        w1, w2 = p[:n1].reshape(d, hidden), p[n1:n1 + hidden * c].reshape(hidden, c)
        return F.cross_entropy(torch.tanh(x @ w1) @ w2, y)

    return loss, n1 + hidden * c


def run_scaling(cfg: dict[str, Any], tasks: Tasks, train_seed: int) -> list[dict[str, Any]]:
    """Per MLP width: parameters D, seconds and relative error of Lanczos extremal eigenvalues vs the exact Hessian."""
    sc = cfg["scaling"]
    x, y = tasks.x_train[: sc["n"]], tasks.y_train[: sc["n"]]
    warm, dim = _mlp_loss(x, y, sc["hidden"][0])  # first calls pay a one-off set-up: not the estimator's cost
    np.linalg.eigvalsh(exact_hessian(warm, torch.zeros(dim, dtype=x.dtype)).numpy())
    extremal_eigenvalues(warm, torch.zeros(dim, dtype=x.dtype), n_iter=2)
    rows = []
    for hidden in sc["hidden"]:
        loss, dim = _mlp_loss(x, y, hidden)
        params = torch.randn(dim, generator=torch.Generator().manual_seed(train_seed), dtype=x.dtype) / np.sqrt(x.shape[1])
        t0 = time.perf_counter()
        ev = np.linalg.eigvalsh(exact_hessian(loss, params).numpy())
        t_exact = time.perf_counter() - t0
        t0 = time.perf_counter()
        lo, hi = extremal_eigenvalues(loss, params, n_iter=sc["lanczos_iter"], seed=train_seed)
        t_lanczos = time.perf_counter() - t0
        rows.append({"hidden": hidden, "n_params": dim, "exact_s": t_exact, "lanczos_s": t_lanczos,
                     "exact_min": float(ev[0]), "exact_max": float(ev[-1]), "lanczos_min": lo, "lanczos_max": hi,
                     "rel_err_max": float(abs(hi - ev[-1]) / abs(ev[-1])),
                     "rel_err_min": float(abs(lo - ev[0]) / max(abs(ev[0]), abs(ev[-1])))})
    return rows


def aggregate(records: dict[int, dict], methods: list[str], models: list[str]
              ) -> tuple[dict[str, Any], "pd.DataFrame", "pd.DataFrame", "pd.DataFrame"]:
    """metrics.json (per-seed samples, per model under ``<model>.``) and tidy tables: per-unit scalars, curves, scaling."""
    import pandas as pd

    seeds = sorted(records)
    missing = [(mo, m, s) for s in seeds for mo in models for m in methods
               if m not in records[s].get("models", {}).get(mo, {}).get("methods", {})]
    if missing:
        raise ValueError(f"immunize aggregate: every model and defence needs every seed; missing {missing}")
    rows, curves = [], []
    for s in seeds:
        checkpoints = records[s]["checkpoints"]
        for mo in models:
            rel = records[s]["models"][mo]["release"]
            for m in methods:
                u = records[s]["models"][mo]["methods"][m]
                d, a = u["defend"], u["attack"]
                row = {"model": mo, "method": m, "seed": s, "n_params": rel["n_params"], "time_s": d["time_s"],
                       "estimator_err_train": d.get("estimator_err_max", np.nan),
                       "benign_acc": a["benign_acc"], "downstream_acc": a["downstream_acc"],
                       "relearn_auc": a["relearn"]["acc_auc"],
                       "unlearned_harmful_acc": a["relearn"]["unlearned_harmful_acc"]}
                for which in ("harmful", "benign"):
                    for when in ("before", "after"):
                        e = d[f"{which}_{when}"]
                        row[f"kappa_{which}_{when}"] = e["exact_max"] / e["exact_min"]
                        row[f"{which}_{when}_min"], row[f"{which}_{when}_max"] = e["exact_min"], e["exact_max"]
                        row[f"lanczos_err_{which}_{when}"] = max(
                            abs(e["lanczos_max"] - e["exact_max"]) / e["exact_max"],
                            abs(e["lanczos_min"] - e["exact_min"]) / e["exact_max"])
                row["rir"] = (row["kappa_harmful_after"] / row["kappa_harmful_before"]) / (
                    row["kappa_benign_after"] / row["kappa_benign_before"])
                base = {"model": mo, "method": m, "seed": s}
                for key, r in a["open_weights"].items():
                    row[f"auc_{key}"] = r["acc_auc"]
                    curves += [base | {"setting": key, "mode": r["mode"], "optimizer": r["optimizer"], "lr": r["lr"],
                                       "step": st, "harmful_acc": acc} for st, acc in zip(checkpoints, r["acc"])]
                curves += [base | {"setting": "relearn", "mode": "probe", "optimizer": "adam", "lr": np.nan, "step": st,
                                   "harmful_acc": acc} for st, acc in zip(checkpoints, a["relearn"]["acc"])]
                for key, r in a["service"].items():
                    row[f"service_harm_{key}"], row[f"service_benign_{key}"] = r["harmful_acc"], r["benign_acc"]
                rows.append(row)
    tidy = pd.DataFrame(rows).sort_values(["model", "method", "seed"], kind="stable").reset_index(drop=True)
    metrics: dict[str, Any] = {}
    for mo in models:
        # a model's settings: those it was attacked in (``full_grid`` may leave some out), in every seed and defence
        sub = tidy[tidy.model == mo]
        settings = sorted(c[4:] for c in tidy.columns if c.startswith("auc_") and sub[c].notna().any())
        gaps = [c for c in settings if sub[f"auc_{c}"].isna().any()]
        if gaps:
            raise ValueError(f"immunize aggregate: {mo} lacks settings {gaps} in some seeds or defences")
        wide = {m: g.set_index("seed").loc[seeds] for m, g in tidy[tidy.model == mo].groupby("method")}

        def put(path, values):
            put_sample(metrics, (mo, *path), values, seeds, "seed")

        for m, g in wide.items():
            for col in ("time_s", "benign_acc", "downstream_acc", "relearn_auc", "kappa_harmful_after",
                        "kappa_benign_after", "lanczos_err_harmful_after", "estimator_err_train", "rir"):
                put((col, m), g[col])
            for key in settings:
                put(("harmful_acc_auc", key, m), g[f"auc_{key}"])
            for col in (c for c in tidy.columns if c.startswith("service_")):
                put((col, m), g[col])
            if m != "none" and "none" in wide:
                none = wide["none"]
                for key in settings:
                    put(("slowdown_vs_none", m, key), none[f"auc_{key}"] - g[f"auc_{key}"])
                put(("benign_acc_drop", m), none["benign_acc"] - g["benign_acc"])
                put(("downstream_acc_drop", m), none["downstream_acc"] - g["downstream_acc"])
                put(("relearn_resistance", m), none["relearn_auc"] - g["relearn_auc"])
                put(("kappa_ratio", m), g["kappa_harmful_after"] / g["kappa_harmful_before"])
        if "ours" in wide and "condnum" in wide:
            for key in settings:
                put(("slowdown_vs_condnum", key), wide["condnum"][f"auc_{key}"] - wide["ours"][f"auc_{key}"])
    scal = pd.DataFrame([r | {"seed": s} for s in seeds for r in records[s]["scaling"]])
    slope = lambda col, s: float(np.polyfit(np.log(scal[scal.seed == s].n_params),
                                            np.log(scal[scal.seed == s][col]), 1)[0])
    put_sample(metrics, ("time_slope", "exact"), [slope("exact_s", s) for s in seeds], seeds, "seed")
    put_sample(metrics, ("time_slope", "lanczos"), [slope("lanczos_s", s) for s in seeds], seeds, "seed")
    put_sample(metrics, ("time_slope_gap",), [slope("exact_s", s) - slope("lanczos_s", s) for s in seeds], seeds, "seed")
    put_sample(metrics, ("lanczos_rel_err_max",), scal.groupby("seed").rel_err_max.max().loc[seeds], seeds, "seed")
    return metrics, tidy, pd.DataFrame(curves), scal


def table1(tidy: "pd.DataFrame") -> "pd.DataFrame":
    """Per model and defence: mean ± sd over seeds of utility, downstream trainability, cost, relearning and service columns.

    A seed without a value (NaN) is left out of its cell; a cell over one seed has no sd and one over none no
    mean: both print as missing (:func:`repro.tablecells.mean_spread_of`)."""
    import pandas as pd

    from repro.tablecells import mean_spread_of

    cols = ["benign_acc", "downstream_acc", "time_s", "relearn_auc", "kappa_harmful_after", "kappa_benign_after", "rir"]
    cols += sorted(c for c in tidy.columns if c.startswith("service_harm_"))
    rows = []
    for (model, method), g in tidy.groupby(["model", "method"], sort=False):
        row = {"model": model, "method": method, "n_params": int(g.n_params.iloc[0]), "n_seeds": len(g)}
        for c in cols:
            row[c] = mean_spread_of(g[c], "sd", fmt=".3g", spread_fmt=".2g", sep=" ± ")
        rows.append(row)
    return pd.DataFrame(rows)

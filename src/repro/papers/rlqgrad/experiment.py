"""The measurements of the RLQ-Grad rebuild: gradient agreement, barren-plateau variance, cost per
update, and the aggregation into ``results/rlqgrad/metrics.json`` and Tables 1-2.

- :func:`gradient_agreement`: backprop, parameter shift and adjoint on random circuits (complex128);
  the largest absolute difference of expectations and of vector-Jacobian products.
- :func:`gradient_variance`: Var over random initialisations (theta ~ U[0, 2 pi), input angles
  ~ U[0, 2 pi)) of dC/dtheta_k for the local cost C = <Z_0>, averaged over k (McClean et al. 2018,
  the barren-plateau curve). For ``rlqgrad`` the surrogate gradient is the update g sampled from a
  freshly initialised PPO policy at the state [theta, C, 0, 0].
- :func:`benchmark_update`: wall time and peak memory of one training update of each method (the
  same ``step`` the training loop runs) on a random batch; for RLQ-Grad also the proposal alone
  (policy forward + theta update) and the circuit forward pass it needs for its state and reward.
  Time is measured twice: wall clock, and the CPU time of the (single-threaded) job process;
  the two agree on an idle machine, and the speedups use CPU time because the machines this
  was built on were shared by several jobs at once (wall-clock ratios are kept as ``*_wall``).
- :func:`aggregate`: slopes of log10 variance vs n, speedups, accuracy differences, each with the
  per-unit sample behind it for the claims (per (n, seed), per seed, per timing repeat);
  :func:`variance_table` (Fig. 1: the variance curves, and each slope a claim judges with the
  claim's own interval), :func:`table1` (accuracy) and :func:`table2` (cost per update).

Choices: the cost for the variance curve is the local <Z_0> (the QNN reads <Z_q>); the slope is the
least-squares slope of log10(variance) against n; memory is the peak of live torch allocations made
during the update (:class:`repro.quantum.AllocationTracker`), in MB = 10^6 bytes.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np
import pandas as pd
import torch

from repro.claims import Claim, interval, interval_rows, require_paired, sample
from repro.stats.intervals import expanded_percentiles
from repro.methods.rlqgrad import RLQGradConfig, build_trainer, rl_state, rlqgrad_agent
from repro.quantum.gradients import GRADIENTS
from repro.quantum.memory import AllocationTracker
from repro.quantum.simulator import Ansatz
from repro.seeding import torch_generator

__all__ = ["gradient_agreement", "gradient_variance", "benchmark_update", "aggregate", "variance_table", "table1", "table2",
           "GRADIENT_METHODS"]

log = logging.getLogger(__name__)

GRADIENT_METHODS = ("backprop", "parameter_shift", "adjoint")
MB = 1e6


def _grads(method: str, ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor, w: torch.Tensor, dtype):
    x, theta = x.clone().requires_grad_(True), theta.clone().requires_grad_(True)
    e = GRADIENTS.get(method)(ansatz, x, theta, dtype)
    gx, gt = torch.autograd.grad((e * w).sum(), (x, theta))
    return e.detach(), gx, gt


def gradient_agreement(*, max_qubits: int, n_layers: int, n_circuits: int, batch: int, seed: int) -> dict[str, Any]:
    """Largest |difference| between the three methods (complex128) on random circuits, n = 1..max_qubits."""
    gen = torch_generator(seed)
    worst = 0.0
    per_n = {}
    for n in range(1, max_qubits + 1):
        ansatz = Ansatz(n, n_layers)
        diff_n = 0.0
        for _ in range(n_circuits):
            x = torch.rand(batch, n, generator=gen, dtype=torch.float64) * 2 * math.pi
            theta = ansatz.random_theta(gen)
            w = torch.randn(batch, n, generator=gen, dtype=torch.float64)
            ref = _grads("backprop", ansatz, x, theta, w, torch.complex128)
            for method in GRADIENT_METHODS[1:]:
                out = _grads(method, ansatz, x, theta, w, torch.complex128)
                diff_n = max(diff_n, *(float((a - b).abs().max()) for a, b in zip(out, ref)))
        per_n[f"n{n}"] = diff_n
        worst = max(worst, diff_n)
    log.info("gradient agreement up to n=%d: max |diff| = %.3g", max_qubits, worst)
    return {"max_abs_diff": worst, "per_n": per_n, "max_qubits": max_qubits, "n_layers": n_layers,
            "n_circuits": n_circuits}


def gradient_variance(method: str, cfg: RLQGradConfig, *, n_inits: int, seed: int) -> dict[str, Any]:
    """Variance over ``n_inits`` random initialisations of the (surrogate) gradient of <Z_0>."""
    ansatz = Ansatz(cfg.n_qubits, cfg.n_layers)
    gen = torch_generator(seed)
    rows = []
    for i in range(n_inits):
        theta = ansatz.random_theta(gen)
        x = torch.rand(1, cfg.n_qubits, generator=gen, dtype=torch.float64) * 2 * math.pi
        if method == "rlqgrad":
            with torch.no_grad():
                c = float(GRADIENTS.get("none")(ansatz, x, theta)[0, 0])
            agent = rlqgrad_agent(ansatz.n_params, cfg, seed=seed + 1000 + i)
            g = agent.act(rl_state(theta, c, 0.0, torch.zeros(ansatz.n_params)))[0]
        else:
            w = torch.zeros(1, cfg.n_qubits, dtype=torch.float64)
            w[0, 0] = 1.0  # C = <Z_0>
            g = _grads(method, ansatz, x, theta, w, torch.complex128)[2]
        rows.append(g.reshape(-1).double())
    grads = torch.stack(rows)  # (inits, P)
    var = grads.var(dim=0)  # per parameter, over initialisations
    return {"method": method, "n_qubits": cfg.n_qubits, "n_layers": cfg.n_layers, "n_inits": n_inits,
            "mean_variance": float(var.mean()), "variance_first_param": float(var[0]),
            "mean_abs_gradient": float(grads.abs().mean()),
            "mean_variance_boot": _init_bootstrap(grads.numpy(), seed)}


#: Resamples of the initialisations behind one variance estimate (its sampling error).
N_INIT_BOOT = 1000


def _init_bootstrap(grads: np.ndarray, seed: int) -> list[float]:
    """``mean_variance`` recomputed on ``N_INIT_BOOT`` resamples of the initialisations (rows).

    The initialisations are the variance's units: the claim is about the variance over the
    distribution of random parameters, which the run estimates from ``n_inits`` draws. Resample i
    uses the same generator stream in every job, but the jobs' draws are independent, so the
    resamples of two jobs combine as independent draws.
    """
    n = grads.shape[0]
    idx = np.random.default_rng([seed, 0x1417]).integers(0, n, size=(N_INIT_BOOT, n))
    return [float(grads[i].var(axis=0, ddof=1).mean()) for i in idx]


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float], count: int) -> tuple[float, float]:
    """(wall, CPU) seconds per call since ``start``."""
    wall, cpu = _clocks()
    return (wall - start[0]) / count, (cpu - start[1]) / count


def _timed_repeats(trainer, z, y, reps: int, steps_per_repeat: int, time_cap_s: float) -> dict[str, Any]:
    """Time ``reps`` repeats of ``steps_per_repeat`` updates each (fewer once ``time_cap_s`` is spent).

    Returns the mean wall and CPU seconds per update over all timed updates, their number, and the
    CPU seconds per update of each repeat (the units of the speedup claims).
    """
    start = _clocks()
    cpu_by_repeat, done = [], 0
    for _ in range(reps):
        rep_start = _clocks()
        for _ in range(steps_per_repeat):
            trainer.step(z, y)
        done += steps_per_repeat
        cpu_by_repeat.append(_since(rep_start, steps_per_repeat)[1])
        if time.perf_counter() - start[0] > time_cap_s:
            break
    step_s, step_cpu_s = _since(start, done)
    return {"step_s": step_s, "step_cpu_s": step_cpu_s, "steps_timed": done, "step_cpu_s_by_repeat": cpu_by_repeat}


def benchmark_update(method: str, cfg: RLQGradConfig, *, reps: int, time_cap_s: float, n_classes: int,
                     seed: int) -> dict[str, Any]:
    """Wall time and peak memory of one update of ``method`` (a random batch of ``cfg.batch_size``).

    RLQ-Grad's cost is averaged over whole rollouts, so it includes its share of the PPO
    optimisation; its proposal (policy forward + theta update) and the circuit forward pass are
    timed alone as well. One timing repeat is one update of a gradient method, and one whole
    rollout (``cfg.rollout`` updates, one PPO optimisation) of RLQ-Grad; ``reps`` repeats are timed
    (fewer once ``time_cap_s`` is spent). ``seed`` (the batch and the initialisation) should be the
    same for every method at one ``n`` (the workflow derives it from ``n`` only).
    """
    gen = torch_generator(seed)
    z = torch.randn(cfg.batch_size, cfg.pca_dim, generator=gen, dtype=cfg.real_dtype)
    y = torch.randint(n_classes, (cfg.batch_size,), generator=gen)
    trainer = build_trainer(method, in_dim=cfg.pca_dim, n_classes=n_classes, cfg=cfg, total_steps=10**6, seed=seed)
    trainer.step(z, y)  # warm-up (and, for RLQ-Grad, the first action)
    timed = _timed_repeats(trainer, z, y, reps, cfg.rollout if method == "rlqgrad" else 1, time_cap_s)
    with AllocationTracker() as tracker:
        for _ in range(cfg.rollout if method == "rlqgrad" else 1):  # a whole rollout: includes one PPO optimisation
            trainer.step(z, y)
    out = {"method": method, "n_qubits": cfg.n_qubits, "n_layers": cfg.n_layers, "batch_size": cfg.batch_size,
           "dtype": cfg.dtype, "n_params_circuit": trainer.model.ansatz.n_params, **timed,
           "step_peak_mb": tracker.peak_bytes / MB, "step_max_alloc_mb": tracker.max_alloc_bytes / MB}
    with torch.no_grad():
        fwd_start = _clocks()
        for _ in range(3):
            trainer.model(z)
        out["forward_s"], out["forward_cpu_s"] = _since(fwd_start, 3)
    if method == "rlqgrad":
        state = rl_state(trainer.model.theta, 1.0, 0.5, trainer.prev_update)
        n_prop = 50
        prop_start = _clocks()
        for _ in range(n_prop):
            trainer.propose(state)
        out["proposal_s"], out["proposal_cpu_s"] = _since(prop_start, n_prop)
        with AllocationTracker() as tracker:
            trainer.propose(state)
        out["proposal_peak_mb"] = tracker.peak_bytes / MB
    log.info("%s n=%d: %.4g s (CPU %.4g s) per update, peak %.3g MB", method, cfg.n_qubits, out["step_s"],
             out["step_cpu_s"], out["step_peak_mb"])
    return out


# --------------------------------------------------------------------------------------------
# aggregation
# --------------------------------------------------------------------------------------------
def _slope(ns: np.ndarray, values: np.ndarray) -> float:
    if len(ns) < 2:
        return float("nan")
    return float(np.polyfit(ns, np.log10(values), 1)[0])


def _same_seed_per_unit(records: list[dict], unit: list[str], what: str) -> None:
    """Every method of one unit (e.g. dataset, n, seed) must have run with the same seed (pairing)."""
    seeds: dict[str, dict[tuple, int]] = {}
    for r in records:
        if "seed_used" in r:
            seeds.setdefault(r["method"], {})[tuple(r[k] for k in unit)] = r["seed_used"]
    require_paired(seeds, f"rlqgrad {what}", same_units=False)


def _variance_metrics(variance: list[dict]) -> tuple[dict, pd.DataFrame]:
    """Slopes of log10 variance on n: per method the summary (over seed means) and the per-(n, seed)
    sample (x = n) that the claims regress; the decay over the qubit range per seed."""
    _same_seed_per_unit(variance, ["n_qubits", "seed_index"], "variance")
    var_df = pd.DataFrame(variance).sort_values(["method", "n_qubits"])
    if "seed_index" not in var_df:
        var_df["seed_index"] = 0
    var_tab = (var_df.groupby(["method", "n_qubits"], as_index=False)
               .agg(mean_variance=("mean_variance", "mean"), seeds=("mean_variance", "size")))
    out: dict[str, Any] = {}
    decays, decays_by_seed = [], {}
    for method, grp in var_tab.groupby("method"):
        ns, vs = grp["n_qubits"].to_numpy(float), grp["mean_variance"].to_numpy(float)
        slope = _slope(ns, vs)
        decay = float(np.log10(vs[0]) - np.log10(vs[-1]))
        units = var_df[var_df["method"] == method].sort_values(["seed_index", "n_qubits"])
        out[method] = {"slope_log10_per_qubit": slope, "abs_slope_log10_per_qubit": abs(slope), "decay_orders": decay,
                       "by_n": {f"n{int(n)}": float(v) for n, v in zip(ns, vs)},
                       "per_unit": sample(np.log10(units["mean_variance"]),
                                          [f"n{int(n)}_seed{int(s)}" for n, s in zip(units["n_qubits"], units["seed_index"])],
                                          "n_seed", x=units["n_qubits"])}
        if method in GRADIENT_METHODS:
            decays.append(decay)
            # decay over the qubit range within each seed: log10 Var(n_min) - log10 Var(n_max)
            for seed, g in units.groupby("seed_index"):
                if g["n_qubits"].nunique() == len(ns):
                    d = float(np.log10(g["mean_variance"].iloc[0]) - np.log10(g["mean_variance"].iloc[-1]))
                    decays_by_seed.setdefault(int(seed), []).append(d)
    by_seed = {s: min(d) for s, d in sorted(decays_by_seed.items())}
    out["min_decay_orders_gradient_methods"] = _decay_evidence(var_df, decays, by_seed)
    return out, var_tab


def _decay_evidence(var_df: pd.DataFrame, decays: list[float], by_seed: dict[int, float]) -> dict[str, Any]:
    """The smallest decay over the qubit range among the gradient methods, with its interval over
    initialisations (seed x init units: each variance is a mean over random parameter draws).

    The decay of a method is log10 V(n_min) - log10 V(n_max), V averaged over seeds; its resamples
    combine the jobs' init resamples (independent draws at each n and seed). Records written before
    the resamples were kept fall back to the per-seed sample, which needs 6 seeds to decide.
    """
    fallback = {"over_seed_means": min(decays) if decays else float("nan"),
                "per_unit": sample(by_seed.values(), [f"seed{s}" for s in by_seed], "seed")}
    grad = var_df[var_df["method"].isin(GRADIENT_METHODS)]
    if grad.empty or "mean_variance_boot" not in grad or grad["mean_variance_boot"].isna().any():
        return fallback
    ns = sorted(grad["n_qubits"].unique())
    boots, estimates = [], []
    for _, g in grad.groupby("method"):
        ends = [g[g["n_qubits"] == n] for n in (ns[0], ns[-1])]
        if any(e.empty for e in ends) or set(ends[0]["seed_index"]) != set(ends[1]["seed_index"]):
            return fallback
        v = [np.mean(np.stack(e["mean_variance_boot"].to_list()), axis=0) for e in ends]  # (B,) per end
        boots.append(np.log10(v[0]) - np.log10(v[1]))
        estimates.append(float(np.log10(ends[0]["mean_variance"].mean()) - np.log10(ends[1]["mean_variance"].mean())))
    units = int(grad[grad["n_qubits"] == ns[0]].groupby("method")["n_inits"].sum().min())
    est = min(estimates)
    low, high = expanded_percentiles(np.min(boots, axis=0), units, around=est)
    return {"over_seed_means": est, "per_seed": fallback["per_unit"],
            **interval(est, low, high, units, "init",
                       method="bootstrap over initialisations (seed x init), min over gradient methods")}


def _speedup_metrics(cost: pd.DataFrame) -> tuple[dict, dict, dict]:
    """Time, memory and RLQ-Grad's speedups per n; the CPU-time speedups carry one ratio per timing
    repeat (repeat i of the method over repeat i of RLQ-Grad)."""
    time_, memory, speedup = {}, {}, {}
    for n, grp in cost.groupby("n_qubits"):
        row = grp.set_index("method")
        key = f"n{int(n)}"
        time_[key] = {m: float(row.loc[m, "step_cpu_s"]) for m in row.index}
        time_[key].update({f"{m}_wall": float(row.loc[m, "step_s"]) for m in row.index})
        memory[key] = {f"{m}_step_mb": float(row.loc[m, "step_peak_mb"]) for m in row.index}
        if "rlqgrad" not in row.index:
            continue
        rl = row.loc["rlqgrad"]
        memory[key]["rlqgrad_proposal_mb"] = float(rl["proposal_peak_mb"])
        time_[key]["rlqgrad_proposal"] = float(rl["proposal_cpu_s"])
        speedup[key] = {}
        for m in GRADIENT_METHODS:
            if m not in row.index:
                continue
            ratios = {"step": row.loc[m, "step_cpu_s"] / rl["step_cpu_s"],
                      "proposal": row.loc[m, "step_cpu_s"] / rl["proposal_cpu_s"],
                      "step_wall": row.loc[m, "step_s"] / rl["step_s"]}
            for what, ratio in ratios.items():
                name = f"rlqgrad_{what}_over_{m}" if what != "step_wall" else f"rlqgrad_step_over_{m}_wall"
                speedup[key][name] = float(ratio)
            mine, theirs = rl.get("step_cpu_s_by_repeat"), row.loc[m].get("step_cpu_s_by_repeat")
            if isinstance(mine, list) and isinstance(theirs, list):
                k = min(len(mine), len(theirs))
                per_repeat = np.asarray(theirs[:k], float) / np.asarray(mine[:k], float)
                speedup[key][f"rlqgrad_step_over_{m}"] = {
                    "ratio_of_means": float(ratios["step"]),
                    "per_unit": sample(per_repeat, [f"rep{i}" for i in range(k)], "repeat")}
    if len(cost):
        speedup["max_n"] = int(cost["n_qubits"].max())
    return time_, memory, speedup


def _accuracy_metrics(train: list[dict]) -> tuple[dict, pd.DataFrame]:
    """Accuracy per dataset, n and method; RLQ-Grad minus the strongest gradient baseline (the one
    with the highest mean accuracy over seeds) per seed, paired by seed (same init and data order)."""
    _same_seed_per_unit(train, ["dataset", "n_qubits", "seed_index"], "training")
    acc_df = pd.DataFrame(train)
    if "seed_index" not in acc_df:
        acc_df["seed_index"] = 0
    acc_tab = (acc_df.groupby(["dataset", "n_qubits", "method"], as_index=False)
               .agg(val_accuracy=("val_accuracy", "mean"), val_accuracy_sd=("val_accuracy", "std"),
                    seeds=("val_accuracy", "size"), s_per_update=("s_per_update", "mean")))
    out: dict[str, Any] = {}
    diffs, per_setting = [], {}
    for (dataset, n), grp in acc_tab.groupby(["dataset", "n_qubits"]):
        row = grp.set_index("method")["val_accuracy"]
        entry = {m: float(v) for m, v in row.items()}
        baselines = [m for m in GRADIENT_METHODS if m in row.index]
        if "rlqgrad" in row.index and baselines:
            best = max(baselines, key=lambda m: row[m])
            entry["best_gradient_method"] = best
            entry["rlqgrad_minus_best"] = float(row["rlqgrad"] - row[best])
            diffs.append(entry["rlqgrad_minus_best"])
            units = acc_df[(acc_df["dataset"] == dataset) & (acc_df["n_qubits"] == n)]
            by_seed = units.pivot_table(index="seed_index", columns="method", values="val_accuracy").dropna(
                subset=["rlqgrad", best])
            per_setting[f"{dataset}_n{int(n)}"] = sample(by_seed["rlqgrad"] - by_seed[best],
                                                         [f"seed{int(s)}" for s in by_seed.index], "seed")
        out.setdefault(dataset, {})[f"n{int(n)}"] = entry
    if diffs:
        out["rlqgrad_minus_best"] = per_setting  # one per-seed sample per dataset and n (each: true)
        out["rlqgrad_minus_best_range"] = {"min": min(diffs), "max": max(diffs)}
    return out, acc_tab


def aggregate(variance: list[dict], bench: list[dict], train: list[dict], agreement: dict,
              claims: list[Claim] | None = None) -> tuple[dict, dict]:
    """Metrics (nested dict for the claims, with the per-unit samples behind each compared number)
    and tidy tables (variance, cost, accuracy).

    Units: the variance curve of a method is one value per (n, seed), x = n (``variance.<method>``);
    its decay over the qubit range one value per seed; a speedup one ratio per timing repeat; an
    accuracy difference one value per training seed (the methods of a seed share the initialisation
    and the data order; a ``ValueError`` if the records say otherwise). With the paper's ``claims``
    the variance table carries each slope a claim judges, with that claim's interval
    (:func:`variance_table`).
    """
    _same_seed_per_unit(bench, ["n_qubits"], "benchmark")
    variance_metrics, var_tab = _variance_metrics(variance)
    cost = pd.DataFrame(bench).sort_values(["n_qubits", "method"])
    time_, memory, speedup = _speedup_metrics(cost)
    accuracy, acc_tab = _accuracy_metrics(train)
    metrics = {"agreement": agreement, "variance": variance_metrics, "speedup": speedup, "memory": memory,
               "time": time_, "accuracy": accuracy}
    tables = {"variance": variance_table(var_tab, metrics, claims or []),
              "cost": cost.drop(columns=["step_cpu_s_by_repeat"], errors="ignore"), "accuracy": acc_tab}
    return metrics, tables


#: The columns of :func:`variance_table` (Fig. 1's table), in order.
VARIANCE_COLUMNS = ["method", "quantity", "n_qubits", "value", "low", "high", "level", "n", "op", "threshold",
                    "tol", "interval", "claim", "status"]


def variance_table(var_tab: pd.DataFrame, metrics: dict, claims: list[Claim]) -> pd.DataFrame:
    """Fig. 1's table: one row per point it draws.

    ``quantity`` ``mean_variance``: the variance of a method at ``n_qubits``, mean over its ``n``
    seeds (no interval: not a claim's quantity). ``quantity`` ``slope``: the slope of log10 variance
    per qubit that a claim (``statistic: slope`` on ``variance.<method>``) judges, with the interval
    its verdict is decided on (:func:`repro.claims.interval_rows`: estimate, bounds at ``level``
    over ``n`` (qubits, seed) units, the claimed ``op``, ``threshold`` and ``tol``, the interval's
    kind and the verdict); NaN bounds where the units cannot give one, ``interval`` saying why.
    """
    curve = var_tab.rename(columns={"mean_variance": "value", "seeds": "n"}).assign(quantity="mean_variance")
    slope_claims = {c.id: c.metric.split(".", 1)[1] for c in claims
                    if c.statistic == "slope" and c.metric.startswith("variance.") and not c.each}
    rows = [{**row, "method": slope_claims[row["claim"]], "quantity": "slope", "value": row["estimate"]}
            for row in interval_rows(claims, metrics, list(slope_claims))]
    parts = [curve] + ([pd.DataFrame(rows).drop(columns=["estimate", "setting"])] if rows else [])
    out = pd.concat(parts, ignore_index=True).reindex(columns=VARIANCE_COLUMNS)
    return out.sort_values(["quantity", "method", "n_qubits"], na_position="last").reset_index(drop=True)


def table1(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 1: top-1 validation accuracy per dataset, n and method (mean and sd over seeds)."""
    acc = tables["accuracy"][["dataset", "n_qubits", "method", "val_accuracy", "val_accuracy_sd", "seeds", "s_per_update"]]
    return acc.sort_values(["dataset", "n_qubits", "method"]).reset_index(drop=True)


def table2(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 2: CPU time, wall time and peak memory per update at each n; RLQ-Grad's speedups (CPU time)."""
    cost = tables["cost"].copy()
    rl = cost[cost["method"] == "rlqgrad"].set_index("n_qubits")
    cost["rlqgrad_step_speedup"] = cost["step_cpu_s"] / cost["n_qubits"].map(rl["step_cpu_s"])
    cost["rlqgrad_proposal_speedup"] = cost["step_cpu_s"] / cost["n_qubits"].map(rl["proposal_cpu_s"])
    cols = ["n_qubits", "method", "n_params_circuit", "batch_size", "step_cpu_s", "step_s", "step_peak_mb",
            "forward_cpu_s", "rlqgrad_step_speedup", "rlqgrad_proposal_speedup"]
    return cost[cols].sort_values(["n_qubits", "method"]).reset_index(drop=True)

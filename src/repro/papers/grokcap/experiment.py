"""grokcap's experiment: one grid cell (task x width x seed), and all runs aggregated into the paper's quantities.

Drivers of "Model Capacity Determines Grokking through Competing Memorisation and Generalisation
Speeds" (arXiv 2605.09724) around the method of :mod:`repro.methods.grokking`:

- :func:`run_grokcap`: the ``grokcap_train`` job. It builds the run's :class:`GrokConfig` from the
  preset (strictly: an unknown key is an error naming ``grokcap.<scale>.<key>``), takes the seed
  replicate's data (:func:`repro.papers.grokcap.synth.seed_dataset`) for its task and trains.
- :func:`summarise`: the ``grokcap_aggregate`` job. T_mem(P) is ``t_train`` of the ``random``
  runs, T_gen(P) is ``t_val`` of the ``modular`` runs, in the runs' time unit (epochs under the
  reference definitions); per-width medians (a censored run counts at its cap), censored
  power-law fits, their crossing (empirical and fitted), the grokking threshold with a bootstrap
  over seed replicates of its ratio to each crossing (:func:`seed_bootstrap`), and the capacity
  slope, as ``results/grokcap/metrics.json``.
- :func:`runs_table`, :func:`curves_table`: the tidy tables behind Fig. 1 to 3 (``runs.csv``,
  ``curves.csv``).

See :mod:`repro.methods.grokking` for the choices the paper leaves open and the deviations.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from repro import claims
from repro.config import from_dict
from repro.missing import as_float
from repro.methods.grokking import (TASKS, GrokConfig, GrokTransformer, capacity_fit, count_parameters,
                                    crossing_point, fit_power_law, grokking_threshold, power_law_crossing,
                                    train_run)
from repro.papers.grokcap.synth import task_data
from repro.stats.intervals import min_units

__all__ = ["run_grokcap", "runs_table", "curves_table", "summarise", "seed_bootstrap"]


# ----------------------------------------------------------------------------------------------
# One grid cell
# ----------------------------------------------------------------------------------------------

def run_grokcap(cfg: dict[str, Any], *, task: str, width: int, replicate: int, data: dict[str, np.ndarray],
                seed: int, device: str = "cpu", where: str = "grokcap") -> dict[str, Any]:
    """One grid cell (task x width x seed): pick its data, train, return the run record.

    ``cfg`` holds the :class:`GrokConfig` keys of the preset (``width`` comes from the grid); an
    unknown key is a ``ValueError`` naming ``<where>.<key>``. ``data`` is the seed replicate's
    arrays (:func:`repro.papers.grokcap.synth.seed_dataset`), shared by the ``modular`` and
    ``random`` runs of that replicate (the random-label data of its ``labels`` kind). ``seed``
    drives initialisation, dropout and batch order.
    """
    gc = from_dict(GrokConfig, cfg, where, width=int(width))
    if int(data["p"]) != gc.p:
        raise ValueError(f"grokking: data were built for p={int(data['p'])}, config has p={gc.p}")
    P = count_parameters(GrokTransformer(gc.p + 2, gc.width, gc.depth, gc.heads, variant=gc.variant))
    n_capacity = math.ceil(gc.capacity_data_factor * P / math.log2(gc.p + 2))  # more bits than P can hold
    train, val = task_data(task, data, n_capacity=n_capacity)
    x_val, y_val = (None, None) if val is None else (val.x, val.y)
    n_classes = int(data["random_classes"]) if task == "random" else None  # reference labels: p + 2 classes
    out = train_run(gc, task, train.x, train.y, x_val, y_val, n_tokens=train.n_tokens, seed=seed,
                    n_classes=n_classes, device=device)
    out.update(seed=int(replicate), config=asdict(gc))
    return out


# ----------------------------------------------------------------------------------------------
# Aggregation: runs -> per-width timescales, fits, crossing, threshold, capacity
# ----------------------------------------------------------------------------------------------

def runs_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per run: task, width, seed, P, the times (NaN when censored) and their cap.

    ``t_train``, ``t_val`` and ``cap`` are in the run's ``time_unit`` (``epoch`` for the
    reference definitions, ``step`` for ours; records without one count steps); the times in steps
    sit beside them. All runs must share one unit.
    """
    rows = []
    for r in records:
        unit = r.get("time_unit", "step")
        rows.append({"task": r["task"], "width": int(r["width"]), "seed": int(r["seed"]), "P": int(r["P"]),
                     "variant": r.get("variant", "ours"), "time_unit": unit,
                     "n_train": int(r["n_train"]), "steps": int(r["steps"]), "max_steps": int(r["max_steps"]),
                     "cap": float(r.get("cap", r["max_steps"])),
                     "t_train": as_float(r["t_train"]), "t_val": as_float(r["t_val"]),
                     "t_train_step": as_float(r.get("t_train_step", r["t_train"] if unit == "step" else None)),
                     "t_val_step": as_float(r.get("t_val_step", r["t_val"] if unit == "step" else None)),
                     "train_acc": r["train_acc"], "val_acc": r["val_acc"], "bits": r["bits"],
                     "dataset_bits": r["dataset_bits"]})
    if not rows:
        raise ValueError("grokking: no runs to aggregate")
    df = pd.DataFrame(rows).sort_values(["task", "width", "seed"], kind="stable").reset_index(drop=True)
    timed = df[df.task != "capacity"]
    if timed.time_unit.nunique() > 1 or timed.variant.nunique() > 1:
        raise ValueError(f"grokking: runs mix definitions ({sorted(set(zip(timed.variant, timed.time_unit)))}); "
                         "rebuild them with one preset")
    return df


def _timescale(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per-width summary of one time column: censored runs count at the cap in the median."""

    out = []
    for width, g in df.groupby("width", sort=True):
        t = g[column].to_numpy(float)
        cens = np.isnan(t)
        filled = np.where(cens, g["cap"].to_numpy(float), t)
        med = float(np.median(filled))
        out.append({"width": int(width), "P": int(g["P"].iloc[0]), "n": int(len(t)), "n_censored": int(cens.sum()),
                    "median": med, "median_censored": bool(cens.sum() * 2 >= len(t)),
                    "mean": float(np.mean(t[~cens])) if (~cens).any() else math.nan,
                    "sd": float(np.std(t[~cens], ddof=1)) if (~cens).sum() > 1 else math.nan})
    return pd.DataFrame(out)


def _grokked(mod: pd.DataFrame, grok_delay_ratio: float) -> pd.Series:
    """Per modular run: both thresholds reached, validation at least ``grok_delay_ratio`` times later."""
    return (~mod.t_train.isna()) & (~mod.t_val.isna()) & (mod.t_val >= grok_delay_ratio * mod.t_train)


def _crossing_and_threshold(mod: pd.DataFrame, rnd: pd.DataFrame, grok_delay_ratio: float,
                            with_se: bool = True) -> dict[str, Any]:
    """Medians, censored power laws, both crossings and the grokking threshold of one set of runs."""
    tm, tg = _timescale(rnd, "t_train"), _timescale(mod, "t_val")
    fits = {name: fit_power_law(g.P, np.where(g[col].isna(), g.cap, g[col]), g[col].isna(), with_se=with_se)
            for name, g, col in (("t_mem", rnd, "t_train"), ("t_gen", mod, "t_val"))}
    both = tm.merge(tg, on=["width", "P"], suffixes=("_mem", "_gen"))
    known = both[~(both.median_censored_mem & both.median_censored_gen)]
    emp = crossing_point(known.P, known.median_mem, known.median_gen) if len(known) >= 2 else math.nan
    grokked = _grokked(mod, grok_delay_ratio).astype(float)
    frac = grokked.groupby(mod.width).mean()
    Pw = mod.groupby("width").P.first()
    thr = grokking_threshold(Pw.loc[frac.index].to_numpy(), frac.to_numpy())
    return {"t_mem": tm, "t_gen": tg, "fits": fits, "known": known, "empirical_P": emp,
            "power_law_P": power_law_crossing(fits["t_mem"], fits["t_gen"]), "frac": frac, "threshold": thr,
            "log10_ratio_empirical": _log10_ratio(thr["P"], emp),
            "log10_ratio_power_law": _log10_ratio(thr["P"], power_law_crossing(fits["t_mem"], fits["t_gen"]))}


def seed_bootstrap(mod: pd.DataFrame, rnd: pd.DataFrame, *, grok_delay_ratio: float, n_boot: int = 1000,
                   level: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """Percentile intervals of log10(threshold / crossing) from resampling seed replicates.

    A seed replicate (its data, and its modular and random-label runs at every width) is the unit:
    each resample draws as many replicates as there are, with replacement, and recomputes the
    medians, fits, crossings and threshold. A resample in which a quantity is undefined (no
    crossing in the grid, no grokking at the largest width) counts against both ends: the bounds
    are the order statistics of the defined values padded with that many -inf below and +inf above,
    so the interval is undefined (None) once more than ``(1 - level) / 2`` of the resamples are.
    From fewer seed replicates than :func:`repro.stats.intervals.min_units` asks at ``level`` (6 at
    95%) there is no interval either: a bootstrap of n units never leaves their range and covers
    the truth with probability at most 1 - 2^(1-n), the claims checker's rule for samples.
    """
    seeds = np.array(sorted(set(mod.seed) | set(rnd.seed)))
    rng = np.random.default_rng(seed)
    draws = {name: [] for name in ("log10_ratio_empirical", "log10_ratio_power_law")}
    by_seed = {s: (mod[mod.seed == s], rnd[rnd.seed == s]) for s in seeds}
    done: dict[tuple, dict[str, Any]] = {}  # a resample's quantities depend on its multiset of seeds only
    for _ in range(n_boot):
        pick = tuple(sorted(rng.choice(seeds, size=len(seeds), replace=True)))
        if pick not in done:
            m = pd.concat([by_seed[s][0] for s in pick], ignore_index=True)
            r = pd.concat([by_seed[s][1] for s in pick], ignore_index=True)
            done[pick] = _crossing_and_threshold(m, r, grok_delay_ratio, with_se=False)
        for name in draws:
            draws[name].append(done[pick][name])
    out: dict[str, Any] = {"n_boot": n_boot, "n_seeds": int(len(seeds)), "level": level}
    full = _crossing_and_threshold(mod, rnd, grok_delay_ratio)
    for name, values in draws.items():
        v = np.asarray(values, float)
        undefined = int(np.isnan(v).sum())
        ordered = np.r_[np.full(undefined, -np.inf), np.sort(v[~np.isnan(v)]), np.full(undefined, np.inf)]
        # the padded array has n_boot + undefined entries; pick the alpha/2 and 1 - alpha/2 ranks of the
        # n_boot draws (the defined values and the undefined ones, which could be anything)
        k = int(math.floor((1 - level) / 2 * n_boot))
        lo, hi = ordered[k], ordered[len(ordered) - 1 - k]
        est = full[name]
        ok = np.isfinite(lo) and np.isfinite(hi) and np.isfinite(est) and lo <= est <= hi
        if len(seeds) < min_units(level):
            ok = False
        why = ("" if ok else "undefined on the full data" if not np.isfinite(est) else
               f"{len(seeds)} seed replicates cannot give a {level:.0%} interval (at least {min_units(level)} "
               f"are needed): the evidence at this scale cannot decide" if len(seeds) < min_units(level) else
               f"undefined in {undefined} of {n_boot} resamples" if not (np.isfinite(lo) and np.isfinite(hi)) else
               "the estimate lies outside the percentile interval")
        out[name] = {"estimate": est, "n_undefined": undefined, "no_interval_because": why,
                     "interval": claims.interval(est, lo, hi, len(seeds), "seed", level=level,
                                                 method="percentile bootstrap over seed replicates") if ok else
                     claims.undecided(est, len(seeds), "seed", why) if np.isfinite(est) else None}
    return out


def summarise(records: list[dict[str, Any]], *, grok_delay_ratio: float = 2.0,
              paper_capacity: float = 2.16, n_boot: int = 1000) -> tuple[dict[str, Any], pd.DataFrame]:
    """The paper's quantities from all runs; returns ``(metrics, runs_table)``.

    T_mem(P) is ``t_train`` of the ``random`` runs, T_gen(P) is ``t_val`` of the ``modular`` runs,
    both in the runs' ``time_unit``; a run without a time is censored at its ``cap``. The empirical
    crossing uses per-width medians and skips widths where both medians are censored (their order
    is unknown). The ratio of the grokking threshold to each crossing gets a bootstrap interval over
    seed replicates (:func:`seed_bootstrap`).
    """
    df = runs_table(records)
    mod, rnd, cap = (df[df.task == t] for t in TASKS)
    timed = df[df.task != "capacity"]
    metrics: dict[str, Any] = {"n_runs": int(len(df)),
                               "variant": str(timed.variant.iloc[0]) if len(timed) else None,
                               "time_unit": str(timed.time_unit.iloc[0]) if len(timed) else None}
    if len(mod):
        df.loc[mod.index, "grokked"] = _grokked(mod, grok_delay_ratio).astype(float)
    if len(mod) and len(rnd):
        q = _crossing_and_threshold(mod, rnd, grok_delay_ratio)
        tm, tg, fits, thr, frac = q["t_mem"], q["t_gen"], q["fits"], q["threshold"], q["frac"]
        tt = _timescale(mod, "t_train")
        bound = _crossing_bound(q["known"])  # both NaN when the medians cross (the order changes sign)
        runs_per_width = df.loc[mod.index].groupby("width").grokked.agg(["sum", "count"])
        boot = seed_bootstrap(mod, rnd, grok_delay_ratio=grok_delay_ratio, n_boot=n_boot)
        metrics.update({
            "t_mem": {f"w{w}": rec for w, rec in zip(tm.width, tm.to_dict("records"))},
            "t_gen": {f"w{w}": rec for w, rec in zip(tg.width, tg.to_dict("records"))},
            "t_train_modular": {f"w{w}": rec for w, rec in zip(tt.width, tt.to_dict("records"))},
            "power_law": {name: {**fit, "b_interval": claims.interval(
                              fit["b"], fit["b_lo"], fit["b_hi"], fit["n"], "width_seed", method="fit (Wald)")}
                          for name, fit in fits.items()},
            "crossing": {"power_law_P": q["power_law_P"], "empirical_P": q["empirical_P"],
                         "empirical_P_upper_bound": bound["upper"], "empirical_P_lower_bound": bound["lower"]},
            "grokking": {"fraction": {f"w{w}": float(f) for w, f in frac.items()},
                         "frac_smallest_width": float(frac.iloc[0]), "frac_largest_width": float(frac.iloc[-1]),
                         # the same fractions as rates over seeds, for the claims' Wilson intervals
                         **{name: claims.rate(runs_per_width["sum"].iloc[i], runs_per_width["count"].iloc[i], "seed")
                            for name, i in (("smallest_width", 0), ("largest_width", -1))},
                         "threshold_P": thr["P"], "first_grokking_P": thr["first_P"],
                         "threshold_at_grid_edge": thr["at_grid_edge"], "delay_ratio": grok_delay_ratio},
            "threshold_vs_crossing": {
                name: {"estimate": boot[name]["estimate"], "n_undefined": boot[name]["n_undefined"],
                       "n_boot": boot["n_boot"], "interval": boot[name]["interval"],
                       "no_interval_because": boot[name]["no_interval_because"]}
                for name in ("log10_ratio_empirical", "log10_ratio_power_law")},
        })
    if len(cap):
        c = capacity_fit(cap.P.to_numpy(), cap.bits.to_numpy())
        train_bits = float(mod.dataset_bits.iloc[0]) if len(mod) else math.nan  # n_train log2 p
        metrics["capacity"] = {**c, "paper_bits_per_param": paper_capacity,
                               "interval": claims.interval(c["bits_per_param"], c["lo"], c["hi"], c["n"], "width_seed",
                                                           method="fit (Wald)"),
                               # the size at which the training set's labels fit in the fitted capacity
                               "P_to_memorise_train": train_bits / c["bits_per_param"] if c["bits_per_param"] > 0 else math.nan,
                               "mean_fraction_of_data_bits": float((cap.bits / cap.dataset_bits).mean()),
                               "n_hit_step_cap": int((cap.steps >= cap.max_steps).sum())}
    metrics["censoring"] = {t: {"n": int((df.task == t).sum()),
                                "n_censored": int(df[df.task == t][("t_val" if t == "modular" else "t_train")].isna().sum())}
                            for t in TASKS if (df.task == t).any()}
    return metrics, df


def _crossing_bound(known: pd.DataFrame) -> dict[str, float]:
    """Where medians that never cross place the crossing: below the grid or above it.

    When T_mem < T_gen at every width with a known order, any crossing lies below the smallest such
    P (``upper`` bound); when T_mem > T_gen everywhere, above the largest (``lower`` bound). A
    censored median is a lower bound, which keeps these orders valid.
    """
    bound = {"upper": math.nan, "lower": math.nan}
    if len(known):
        d = np.log(known.median_mem.to_numpy(float)) - np.log(known.median_gen.to_numpy(float))
        if np.all(d < 0):
            bound["upper"] = float(known.P.min())
        elif np.all(d > 0):
            bound["lower"] = float(known.P.max())
    return bound


def _log10_ratio(a: float, b: float) -> float:
    return math.log10(a / b) if np.isfinite(a) and np.isfinite(b) and a > 0 and b > 0 else math.nan


def curves_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The thinned accuracy curves of all runs, one row per (task, width, seed, step)."""
    rows = [{"task": r["task"], "width": int(r["width"]), "seed": int(r["seed"]), "P": int(r["P"]), **pt}
            for r in records for pt in r["curve"]]
    return pd.DataFrame(rows).sort_values(["task", "width", "seed", "step"], kind="stable").reset_index(drop=True)

"""Null sign symmetry of the mirror statistics across a grid of designs (groupfdr's Table 3).

The Gaussian mirror's FDR argument rests on one property: the statistic M_j of a null feature (or
block) is symmetric about 0, so #{null M <= -t} estimates #{null M >= t}. This module measures it
directly, on designs with n > P and P > n, correlation rho in {0, 0.5, 0.8}, weak and strong
signals, Gaussian and heavy-tailed (t_3) noise, for the group mirror (``group_gm``: blocks) and the
coordinate-wise mirror (``gm``: columns, evaluated at the column level, its own hypotheses).

Per replicate: the number of null statistics above and below 0 (and exactly 0: the lasso leaves
both copies out), and for every selection rule of :data:`repro.methods.mirror.SELECTION_RULES` and
every q, the FDP and power, all from ONE set of statistics (the rules differ only in the threshold).
Replicate r of a design has its data and its perturbations from seeds of (design, replicate), so
``group_gm`` and ``gm`` see the same data sets.

The summary per (design, method): mean positive and negative null counts, the mean per-replicate
difference pos - neg with its standard error over replicates (nulls within a replicate share the
data, so the replicate is the independent unit), and FDR / power with standard errors.
"""

from __future__ import annotations

import time

import numpy as np

from repro.methods.mirror import SELECTION_RULES, GaussianMirror, GroupGaussianMirror
from repro.papers.groupfdr.experiment import fdr_power_cells
from repro.papers.groupfdr.grid import SIM_KEYS
from repro.papers.groupfdr.synth import simulate_grouped

__all__ = ["symmetry_replicate", "run_design", "summarise", "SYMMETRY_METHODS"]

#: The mirrors whose null symmetry is measured, and the level of their hypotheses.
SYMMETRY_METHODS = {"group_gm": "group", "gm": "column"}


def symmetry_replicate(spec: dict, method: str, *, data_seed: int, method_seed: int, qs, rules=None,
                       **options) -> dict:
    """One replicate of one design: null sign counts, and FDP / power per (rule, q)."""
    if method not in SYMMETRY_METHODS:
        raise ValueError(f"method must be one of {sorted(SYMMETRY_METHODS)}, got {method!r}")
    sim = {k: spec[k] for k in SIM_KEYS if k in spec}
    data = simulate_grouped(**sim, rng=np.random.default_rng(data_seed))
    rules = list(rules or SELECTION_RULES.names())
    t0 = time.process_time()
    if SYMMETRY_METHODS[method] == "group":
        est = GroupGaussianMirror(data.groups, random_state=method_seed, **options).fit(data.X, data.y)
        is_true = np.isin(est.groups_, data.true_groups)
    else:
        est = GaussianMirror(random_state=method_seed, **options).fit(data.X, data.y)
        is_true = data.beta != 0
    cpu = time.process_time() - t0
    M = est.statistics_
    null = M[~is_true]
    out = {"null_pos": int((null > 0).sum()), "null_neg": int((null < 0).sum()), "null_zero": int((null == 0).sum()),
           "n_null": int(null.size), "cpu_s": cpu, "alpha": est.alpha_, "cells": []}
    for rule in rules:
        for q in qs:
            sel = SELECTION_RULES.get(rule)(M, q)
            false = int((~is_true[sel]).sum())
            out["cells"].append({"rule": rule, "q": float(q), "fdp": false / max(len(sel), 1),
                                 "power": (len(sel) - false) / max(int(is_true.sum()), 1),
                                 "n_false": false, "n_selected": int(len(sel))})
    return out


def run_design(spec: dict, *, data_seeds, method_seeds, qs, methods=tuple(SYMMETRY_METHODS),
               method_options: dict | None = None) -> dict:
    """Every replicate of one design for each method: ``{method: [replicate records]}``."""
    if len(data_seeds) != len(method_seeds):
        raise ValueError(f"{len(data_seeds)} data seeds but {len(method_seeds)} method seeds")
    out = {}
    for method in methods:
        opts = (method_options or {}).get(method, {})
        out[method] = [dict(symmetry_replicate(spec, method, data_seed=ds, method_seed=ms, qs=qs, **opts),
                            replicate=r)
                       for r, (ds, ms) in enumerate(zip(data_seeds, method_seeds))]
    return out


def _mean_se(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")


def summarise(design: str, spec: dict, records: dict) -> list[dict]:
    """One row per (method, rule, q): sign balance (shared by the rules), FDR and power +- se, CPU s."""
    rows = []
    for method, reps in records.items():
        diff_mean, diff_se = _mean_se([r["null_pos"] - r["null_neg"] for r in reps])
        base = {"design": design, "method": method, "n": spec["n"], "P": spec["p"] * spec["d"],
                "rho": spec.get("rho_within", 0.0), "amplitude": spec.get("amplitude"),
                "noise": spec.get("noise", "gaussian"), "replicates": len(reps),
                "null_pos": float(np.mean([r["null_pos"] for r in reps])),
                "null_neg": float(np.mean([r["null_neg"] for r in reps])),
                "null_zero": float(np.mean([r["null_zero"] for r in reps])),
                "sign_diff": diff_mean, "sign_diff_se": diff_se,
                "sign_z": diff_mean / diff_se if diff_se and np.isfinite(diff_se) and diff_se > 0 else 0.0,
                "cpu_s": float(np.mean([r["cpu_s"] for r in reps]))}
        cells = {}
        for r in reps:
            for c in r["cells"]:
                cells.setdefault((c["rule"], c["q"]), []).append((c["fdp"], c["power"]))
        for (rule, q), vals in sorted(cells.items()):
            fdr, fdr_se = _mean_se([v[0] for v in vals])
            power, power_se = _mean_se([v[1] for v in vals])
            rows.append({**base, "rule": rule, "q": q, "fdr": fdr, "fdr_se": fdr_se, "power": power,
                         "power_se": power_se})
    return rows


def table3(rows: list[dict], rule: str = "min_t") -> "pd.DataFrame":  # noqa: F821 - pandas is imported inside
    """One row per (design, method): null signs (+, -, 0 per replicate), the sign difference in standard
    errors, FDR and power +- se at each q under ``rule``, CPU s per replicate."""
    import pandas as pd

    df = pd.DataFrame(rows)
    df = df[df.rule == rule]
    out = []
    for (design, method), grp in df.groupby(["design", "method"], sort=False):
        first = grp.iloc[0]
        row = {"design": design, "method": method, "n": int(first.n), "P": int(first.P), "rho": first.rho,
               "amplitude": first.amplitude, "noise": first.noise, "replicates": int(first.replicates),
               "null +/-/0": f"{first.null_pos:.1f} / {first.null_neg:.1f} / {first.null_zero:.1f}",
               "(+ - -) / se": f"{first.sign_z:+.2f}", **fdr_power_cells(grp)}
        row["CPU s/rep"] = f"{first.cpu_s:.2f}"
        out.append(row)
    return pd.DataFrame(out)

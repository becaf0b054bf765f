"""The groupfdr experiment: replicate chunks, the aggregate metrics, the block-size-1 check, the tables.

A setting (config ``settings.<name>``) fixes a simulator call; a job runs one method on the
replicates of one chunk. The data of replicate r of a setting come from a seed shared by every
method (the script passes ``job.seed_for("groupfdr_data", setting=..., replicate=r)``), and so does a
method's own randomness (mirror draws, knockoffs: ``job.seed_for("groupfdr_method", setting=...,
replicate=r)``), never the method's name: every method, variant and baseline sees the same data
sets, and two mirror variants the same perturbations, so every comparison is paired by replicate.
The library never sees the global seed.

Claims' evidence (:func:`aggregate`): ``fdr_control.<method>.<family>.fdp.<setting>_<qkey>`` is the
sample of per-replicate FDPs of one cell (:func:`repro.claims.sample`, unit ``replicate``), beside
``...q.<setting>_<qkey>``, the level it is checked against; ``power.<method>.<setting>`` is the
per-replicate power at q = 0.1 (:data:`POWER_Q`) in each setting flagged ``correlated`` (the power
claims' population).

Fig. 1 draws, for each quantity that a claim decides, the interval the claim is decided on
(:func:`figure_intervals`, from :func:`repro.claims.interval_rows`), and mean +- s.e. for the others;
the summary table says which each bar is.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from scipy import stats

from repro.claims import interval_rows, sample
from repro.methods.fdr_selectors import (MIRRORS, mirror_statistics, run_selector, same_statistics,
                                         select_from_statistics)
from repro.papers.groupfdr.grid import SIM_KEYS, replicates_of_chunk
from repro.papers.groupfdr.synth import simulate_grouped
from repro.seeding import job_seed

__all__ = ["run_chunk", "fdp_power", "aggregate", "q_key", "block1_check", "mc_margin", "real_data_table",
           "figure_intervals", "aggregate_files", "table1", "runtime_benchmark", "POWER_Q", "SE_INTERVAL"]

log = logging.getLogger(__name__)

#: The level at which the power claims compare methods (the aggregate's power samples).
POWER_Q = 0.1
#: What a bar that no claim decides is (the summary table's ``*_interval`` columns).
SE_INTERVAL = "mean +- s.e. over replicates, cut at 0 and 1"


def q_key(q: float) -> str:
    """'q10' for 0.1: dots would break the claims' dotted metric paths."""
    return f"q{round(q * 100):02d}"


def fdp_power(selected: np.ndarray, true_groups: np.ndarray) -> tuple[float, float]:
    """False discovery proportion (0 when nothing is selected) and power (share of true groups found)."""
    selected, true_groups = set(np.asarray(selected).tolist()), set(np.asarray(true_groups).tolist())
    false = len(selected - true_groups)
    fdp = false / max(len(selected), 1)
    power = len(selected & true_groups) / max(len(true_groups), 1)
    return fdp, power


def run_chunk(cfg: dict, setting: str, method: str, chunk: int, *, data_seeds: list[int],
              method_seeds: list[int], source: dict | None = None) -> dict:
    """Run ``method`` on the replicates of ``chunk`` of ``setting``; one record per replicate and q.

    ``cfg`` is the groupfdr preset, or the part of it that :func:`~repro.papers.groupfdr.grid.run_config`
    cuts for this job. ``data_seeds`` holds the data seed of each replicate of the chunk, in order (the same for every
    method: paired comparisons); ``method_seeds`` the seed of each replicate's method randomness (mirror
    draws, knockoffs), also shared by every method of the setting.

    A mirror method's output also holds its per-replicate statistics (``statistics``). ``source``, the
    output of this function for another mirror method with the same statistics (same fits, another
    selection rule: :data:`~repro.papers.groupfdr.grid.STATISTICS_SOURCE`), is reused instead of refitting:
    only the rule runs, and each record's ``runtime_s`` is the source's fit time (what the statistics cost).
    """
    spec = cfg["settings"][setting]
    sim = {k: spec[k] for k in SIM_KEYS if k in spec}
    method_cfg = dict(cfg.get("method_options", {}).get(method, {}))
    replicates = replicates_of_chunk(cfg, int(chunk))
    for name, seeds in (("data", data_seeds), ("method", method_seeds)):
        if len(seeds) != len(replicates):
            raise ValueError(f"chunk {chunk} of {setting} holds replicates {list(replicates)}, "
                             f"but {len(seeds)} {name} seeds were given")
    reuse = _source_statistics(cfg, setting, method, chunk, source, replicates, data_seeds, method_seeds)
    records, example, statistics = [], None, []
    for r, data_seed, method_seed in zip(replicates, data_seeds, method_seeds):
        data = simulate_grouped(**sim, rng=np.random.default_rng(data_seed))
        rng = np.random.default_rng(method_seed)
        if reuse is not None:
            M, runtime = np.asarray(reuse[r]["M"], dtype=float), float(reuse[r]["runtime_s"])
            out = {"stats": M if MIRRORS[method]["grouped"] else None,
                   "selected": select_from_statistics(method, data, M, cfg["qs"])}
        elif method in MIRRORS:
            t0 = time.perf_counter()
            M = mirror_statistics(method, data, rng, **method_cfg)
            runtime = time.perf_counter() - t0
            out = {"stats": M if MIRRORS[method]["grouped"] else None,
                   "selected": select_from_statistics(method, data, M, cfg["qs"])}
        else:
            t0 = time.perf_counter()
            out = run_selector(method, data, cfg["qs"], rng, **method_cfg)
            runtime = time.perf_counter() - t0
        if method in MIRRORS:
            statistics.append({"replicate": r, "data_seed": int(data_seed), "method_seed": int(method_seed),
                               "M": M, "runtime_s": runtime})
        for q in cfg["qs"]:
            fdp, power = fdp_power(out["selected"][q], data.true_groups)
            records.append({"replicate": r, "q": q, "fdp": fdp, "power": power,
                            "n_selected": len(out["selected"][q]), "runtime_s": runtime})
        if example is None and out["stats"] is not None:
            labels = np.unique(data.groups)
            example = {"replicate": r, "stats": out["stats"],
                       "is_true": np.isin(labels, data.true_groups)}
        log.info("%s %s replicate %d: %.2f s%s", setting, method, r, runtime,
                 f" (statistics of {source['method']})" if reuse is not None else "")
    result = {"setting": setting, "method": method, "chunk": int(chunk), "records": records, "example": example}
    if method in MIRRORS:
        result["statistics"] = statistics
        if reuse is not None:
            result["statistics_from"] = source["method"]
    return result


def _source_statistics(cfg, setting, method, chunk, source, replicates, data_seeds, method_seeds):
    """The per-replicate statistics of ``source`` (None when there is none), after checking that they
    are this method's statistics on this chunk's data: same setting, chunk, seeds and fit options."""
    if source is None:
        return None
    other = source.get("method")
    where = f"{setting}/{method} chunk {chunk}: the statistics of {other!r}"
    if method not in MIRRORS or other not in MIRRORS or not same_statistics(method, other):
        raise ValueError(f"{where} are not this method's statistics (only mirror selectors that differ "
                         "in the selection rule alone share them)")
    options = cfg.get("method_options", {})
    if options.get(method, {}) != options.get(other, {}):
        raise ValueError(f"{where}: method_options differ ({options.get(method, {})} vs {options.get(other, {})})")
    if source.get("setting") != setting or int(source.get("chunk", -1)) != int(chunk):
        raise ValueError(f"{where} come from {source.get('setting')}/chunk {source.get('chunk')}")
    by_rep = {int(s["replicate"]): s for s in source.get("statistics", [])}
    for r, ds, ms in zip(replicates, data_seeds, method_seeds):
        s = by_rep.get(r)
        if s is None or int(s["data_seed"]) != int(ds) or int(s["method_seed"]) != int(ms):
            raise ValueError(f"{where}: replicate {r} is missing or has other seeds (rerun {other})")
    return by_rep


def mc_margin(q: float, n_reps: int, z: float) -> float:
    """z * sqrt(q (1 - q) / R): an FDP lies in [0, 1], so if its mean is <= q its variance is at most
    q (1 - q) (Bhatia-Davis), and the mean over R replicates has standard error at most this / z."""
    return z * np.sqrt(q * (1 - q) / n_reps)


def aggregate(chunks: list[dict], cfg: dict) -> dict:
    """Mean FDR / power (with standard errors) per setting, method and q, and the claims' summaries."""
    import pandas as pd

    rows = [{"setting": c["setting"], "method": c["method"], **rec} for c in chunks for rec in c["records"]]
    df = pd.DataFrame(rows)
    table = (df.groupby(["setting", "method", "q"])
             .agg(fdr=("fdp", "mean"), fdr_se=("fdp", "sem"), power=("power", "mean"), power_se=("power", "sem"),
                  n_selected=("n_selected", "mean"), replicates=("replicate", "nunique"),
                  runtime_s=("runtime_s", "mean"))
             .reset_index())
    results: dict[str, Any] = {}
    for row in table.itertuples(index=False):
        results.setdefault(row.setting, {}).setdefault(row.method, {})[q_key(row.q)] = {
            "fdr": row.fdr, "fdr_se": row.fdr_se, "power": row.power, "power_se": row.power_se,
            "n_selected": row.n_selected, "replicates": int(row.replicates), "runtime_s": row.runtime_s}
    metrics = {"results": results, "fdr_control": {}, "power": {}, "power_gap": {}}
    # FDR control: a (setting, q) cell violates when FDR_hat > q + z sqrt(q(1-q)/R), z Bonferroni-corrected
    # (one-sided 5%) over the cells checked for that method.
    for method in sorted(df["method"].unique()):
        cells = table[(table.method == method)
                      & table.setting.map(lambda s: cfg["settings"][s].get("family") in ("linear", "nonlinear"))]
        for family in ("linear", "nonlinear"):
            fam = cells[cells.setting.map(lambda s: cfg["settings"][s].get("family") == family)]
            if fam.empty:
                continue
            z = stats.norm.isf(0.05 / len(fam))
            bound = fam.q + [mc_margin(q, r, z) for q, r in zip(fam.q, fam.replicates)]
            excess = fam.fdr - bound
            metrics["fdr_control"].setdefault(method, {})[family] = {
                "n_cells": len(fam), "z": z, "n_violations": int((excess > 0).sum()),
                "max_fdr_minus_bound": float(excess.max()), "max_fdr": float(fam.fdr.max()),
                "fdp": {_cell(s, q): _per_replicate(df, method, s, q, "fdp") for s, q in zip(fam.setting, fam.q)},
                "q": {_cell(s, q): float(q) for s, q in zip(fam.setting, fam.q)}}
    # Power under correlated grouped signals: settings flagged `correlated: true`, at q = POWER_Q.
    corr = [s for s, spec in cfg["settings"].items() if spec.get("correlated")]
    for method in sorted(df["method"].unique()):
        ran = [s for s in corr if ((df.method == method) & (df.setting == s) & np.isclose(df.q, POWER_Q)).any()]
        if ran:
            metrics["power"][method] = {s: _per_replicate(df, method, s, POWER_Q, "power") for s in ran}
    for other in ("gm", "group_knockoff", "bh", "knockoff"):
        gaps = []
        for s in corr:
            res = results.get(s, {})
            if "group_gm" in res and other in res and q_key(POWER_Q) in res[other]:
                gaps.append(res["group_gm"][q_key(POWER_Q)]["power"] - res[other][q_key(POWER_Q)]["power"])
        if gaps:
            metrics["power_gap"][f"group_gm_minus_{other}"] = {"min": float(min(gaps)), "mean": float(np.mean(gaps)),
                                                               "n_settings": len(gaps)}
    return metrics, table


def _cell(setting: str, q: float) -> str:
    return f"{setting}_{q_key(q)}"


def _per_replicate(df, method: str, setting: str, q: float, column: str) -> dict:
    """The per-replicate values of one (method, setting, q) cell as a claims sample (ids: replicate)."""
    cell = df[(df.method == method) & (df.setting == setting) & np.isclose(df.q, q)].sort_values("replicate")
    if cell.replicate.duplicated().any():
        raise ValueError(f"{setting}/{method} at q={q}: replicate(s) {sorted(set(cell.replicate[cell.replicate.duplicated()]))} "
                         "appear in two chunk files")
    return sample(cell[column], cell.replicate, "replicate")


def block1_check(n: int, p: int, *, rng: np.random.Generator, q: float = 0.1) -> dict:
    """Block size 1: the group code (partitioned-inverse FWL path, polar perturbation) against the
    Gaussian mirror computed feature by feature with full regressions; and the neural group statistic
    against the coordinate-wise formula on the same derivative matrix."""
    from repro.methods.mirror import block_statistic, gm_statistics, group_mirror_statistics, select_by_threshold

    data = simulate_grouped(n, p, 1, rho_within=0.0, rho_between=0.3, n_true=max(1, p // 5), amplitude=4.0, rng=rng)
    Z = rng.standard_normal(data.X.shape)
    M_gm, c_gm, _, _ = gm_statistics(data.X, data.y, Z)
    res = group_mirror_statistics(data.X, data.y, np.arange(p), Z, fit="ols")
    c_grp = np.array([C[0, 0] for C in res["C"]])
    D = rng.standard_normal((50, 2 * p))
    M_ngm_coord = np.linalg.norm(D[:, :p] + D[:, p:], axis=0) - np.linalg.norm(D[:, :p] - D[:, p:], axis=0)
    M_ngm_block = np.array([block_statistic(D[:, [j]], D[:, [p + j]]) for j in range(p)])
    same = np.array_equal(select_by_threshold(M_gm, q), select_by_threshold(res["M"], q))
    return {"gm_max_abs_diff": float(np.max(np.abs(M_gm - res["M"]))),
            "c_max_abs_diff": float(np.max(np.abs(c_gm - c_grp))),
            "ngm_max_abs_diff": float(np.max(np.abs(M_ngm_coord - M_ngm_block))),
            "same_selection": bool(same), "n": n, "p": p}


def real_data_table(design, methods: list[str], qs: list[float], *, n_draws: int, seed: int,
                    method_options: dict | None = None):
    """Run each method ``n_draws`` times (fresh mirror / knockoff draws) on a real lagged design.

    Mirror selectors that differ only in the rule (``group_gm``, ``group_gm_plus``) share one fit per draw.
    Returns a tidy DataFrame: one row per (method, q, group) with the selection frequency over the
    draws and the statistic of the first draw (NaN for coordinate methods).
    """
    import pandas as pd

    labels = np.unique(design.groups)
    rows, fitted = [], {}  # mirror statistics per (statistic, options, draw): the rule variants share them
    for method in methods:
        deterministic = method == "bh"
        counts = {q: np.zeros(len(labels)) for q in qs}
        first_stats = None
        draws = 1 if deterministic else n_draws
        opts = (method_options or {}).get(method, {})
        for k in range(draws):
            rng = np.random.default_rng(job_seed(seed, draw=k))  # draw k: the same for every method
            if method in MIRRORS:
                spec = MIRRORS[method]
                key = (spec["grouped"], spec["regression"], spec["norm"], repr(sorted(opts.items())), k)
                if key not in fitted:
                    fitted[key] = mirror_statistics(method, design, rng, **opts)
                M = fitted[key]
                out = {"stats": M if spec["grouped"] else None,
                       "selected": select_from_statistics(method, design, M, qs)}
            else:
                out = run_selector(method, design, qs, rng, **opts)
            if first_stats is None:
                first_stats = out["stats"]
            for q in qs:
                counts[q] += np.isin(labels, out["selected"][q])
        for q in qs:
            for g, lab in enumerate(labels):
                rows.append({"method": method, "q": q, "group": lab, "draws": draws,
                             "selection_frequency": counts[q][g] / draws,
                             "statistic": np.nan if first_stats is None else float(first_stats[g])})
    return pd.DataFrame(rows)


def figure_intervals(table, metrics: dict, claims):
    """``table`` (one row per setting, method and q, from :func:`aggregate`) with the interval Fig. 1
    draws around each of its quantities, and what that interval is.

    ``fdr_low``, ``fdr_high``, ``fdr_interval``: where an FDR claim checks the cell (its metric is
    ``fdr_control.<method>.<family>.fdp``, one setting per (setting, q) cell), the interval the claim
    is decided on (:func:`repro.claims.interval_rows`: bootstrap of the mean FDP over replicates,
    Bonferroni over the claim's cells), NaN where it has none at this scale (too few replicates for the
    level); elsewhere mean +- s.e. over replicates cut at 0 and 1 (:data:`SE_INTERVAL`).
    ``power_low``, ``power_high``, ``power_interval``: mean +- s.e. (no claim reads one method's power).
    ``power_gain`` with ``_low``, ``_high``, ``_interval`` and ``_of``: in the rows of a method that a
    power claim compares ``power_gain_of`` with (``power.<ours> > power.<this method>`` in each
    correlated setting, at q = :data:`POWER_Q`), the mean of the paired power differences and the
    claim's interval of it; NaN in the other rows. ``claims`` are the paper's claims
    (:func:`repro.claims.load_claims`); one whose metric this build lacks is skipped.
    """
    def drawn(claim) -> str | None:
        """'fdr' (fdr_control.<method>.<family>.fdp), 'gain' (power.<ours> > power.<other>) or None."""
        path = claim.metric.split(".")
        if not claim.each:
            return None
        if path[0] == "fdr_control" and path[-1] == "fdp":
            return "fdr"
        if path[0] == "power" and isinstance(claim.rhs, str) and claim.rhs.startswith("power."):
            return "gain"
        return None

    by_id = {c.id: c for c in claims}
    fdr_cells, gain_cells = {}, {}
    for r in interval_rows(list(claims), metrics, [c.id for c in claims if drawn(c)]):
        claim = by_id[r["claim"]]
        r = {**r, "interval": f"claim {claim.id}: {r['interval']}", "of": claim.metric.split(".")[1]}
        if drawn(claim) == "fdr":  # settings <setting>_<qkey>
            key, cells = (r["of"], r["setting"]), fdr_cells
        else:  # settings <setting>; the row of the compared method
            key, cells = (claim.rhs.split(".", 1)[1], r["setting"]), gain_cells
        if key in cells:
            raise ValueError(f"groupfdr: claims {cells[key]['claim']!r} and {claim.id!r} both decide "
                             f"{key[1]} of {key[0]}; Fig. 1 can draw one interval")
        cells[key] = r
    out = table.copy()
    cols = {c: [] for c in ("fdr_low", "fdr_high", "fdr_interval", "power_low", "power_high", "power_interval",
                            "power_gain", "power_gain_low", "power_gain_high", "power_gain_interval", "power_gain_of")}
    for row in table.itertuples(index=False):
        cell = fdr_cells.get((row.method, _cell(row.setting, row.q)))
        if cell is None:
            cell = {"low": np.clip(row.fdr - row.fdr_se, 0, 1), "high": np.clip(row.fdr + row.fdr_se, 0, 1),
                    "interval": SE_INTERVAL}
        cols["fdr_low"].append(cell["low"])
        cols["fdr_high"].append(cell["high"])
        cols["fdr_interval"].append(cell["interval"])
        cols["power_low"].append(np.clip(row.power - row.power_se, 0, 1))
        cols["power_high"].append(np.clip(row.power + row.power_se, 0, 1))
        cols["power_interval"].append(SE_INTERVAL)
        gain = gain_cells.get((row.method, row.setting)) if np.isclose(row.q, POWER_Q) else None
        if gain is None:
            for c in ("power_gain", "power_gain_low", "power_gain_high", "power_gain_interval", "power_gain_of"):
                cols[c].append(np.nan if c in ("power_gain", "power_gain_low", "power_gain_high") else "")
            continue
        cols["power_gain"].append(gain["estimate"])
        cols["power_gain_low"].append(gain["low"])
        cols["power_gain_high"].append(gain["high"])
        cols["power_gain_interval"].append(gain["interval"])
        cols["power_gain_of"].append(gain["of"])
    for c, values in cols.items():
        out[c] = values
    return out


def aggregate_files(run_paths: list[str], block1_path: str, cfg: dict, summary_path: str, claims=()) -> dict:
    """Read the chunk files, write the tidy summary CSV (one row per setting, method, q and sweep, with
    the interval Fig. 1 draws around each quantity: :func:`figure_intervals` of ``claims``, the paper's
    claims), and return the metrics dict (with the block-size-1 check under ``exactness``).

    The summary is written at full precision (shortest round-trip floats), so the bounds Fig. 1 draws
    are the claims' bounds to the last bit."""
    import pandas as pd

    from repro.tables import save_csv
    from repro.io import read_json

    metrics, table = aggregate([read_json(p) for p in run_paths], cfg)
    table = figure_intervals(table, metrics, claims)
    rows = []
    for row in table.to_dict("records"):
        sweeps = cfg["settings"][row["setting"]].get("sweeps") or {None: None}
        for sweep, x in sweeps.items():
            rows.append({**row, "sweep": sweep, "x": x})
    save_csv(pd.DataFrame(rows), summary_path, float_format=None)
    block1 = read_json(block1_path)
    block1.pop("provenance", None)
    metrics["exactness"] = block1
    return metrics


def fdr_power_cells(grp) -> dict[str, str]:
    """``FDR@q`` and ``power@q`` as 'mean +- se' for each q of one table row's summary rows."""
    cells = {}
    for r in grp.sort_values("q").itertuples():
        cells[f"FDR@{r.q:g}"] = f"{r.fdr:.3f} +- {r.fdr_se:.3f}"
        cells[f"power@{r.q:g}"] = f"{r.power:.3f} +- {r.power_se:.3f}"
    return cells


def table1(summary) -> "pd.DataFrame":  # noqa: F821 - pandas is imported inside
    """One row per setting and method; FDR and power at each q as 'mean +- se'."""
    import pandas as pd

    summary = summary.drop_duplicates(["setting", "method", "q"])
    rows = []
    for (setting, method), grp in summary.groupby(["setting", "method"], sort=True):
        row = {"setting": setting, "method": method, "replicates": int(grp.replicates.max()), **fdr_power_cells(grp)}
        row["s/replicate"] = f"{grp.runtime_s.mean():.2f}"
        rows.append(row)
    return pd.DataFrame(rows)


def runtime_benchmark(cfg: dict, *, seed: int) -> dict:
    """Wall time of one group-GM fit and one knockpy group-knockoff fit on the same data sets.

    The knockoff time includes the S-matrix (``sdp``) and knockoff sampling, as a user pays both.
    Reported as a ratio from one run; not a timed assertion. ``cfg`` is the groupfdr preset, or its
    part from :func:`~repro.papers.groupfdr.grid.runtime_config`.
    """
    spec = cfg["settings"][cfg["runtime_setting"]]
    sim = {k: spec[k] for k in SIM_KEYS if k in spec}
    variants = {"group_gm": ("group_gm", {}), "group_knockoff": ("group_knockoff", {"cache_smatrix": False}),
                "group_knockoff_cached_s": ("group_knockoff", {"cache_smatrix": True})}
    times = {k: [] for k in variants}
    for r in range(cfg["runtime_replicates"]):
        data = simulate_grouped(**sim, rng=np.random.default_rng(job_seed(seed, replicate=r)))
        for key, (method, extra) in variants.items():
            opts = {**cfg.get("method_options", {}).get(method, {}), **extra}
            t0 = time.perf_counter()
            run_selector(method, data, [0.1], np.random.default_rng(r), **opts)
            times[key].append(time.perf_counter() - t0)
    gm_t, ko_t = float(np.mean(times["group_gm"])), float(np.mean(times["group_knockoff"]))
    return {"setting": cfg["runtime_setting"], "replicates": cfg["runtime_replicates"],
            "n": sim["n"], "P": sim["p"] * sim["d"], "group_gm_s": gm_t, "group_knockoff_s": ko_t,
            "group_knockoff_cached_s": float(np.mean(times["group_knockoff_cached_s"])),
            "knockoff_over_gm": ko_t / gm_t}

"""mcpo figures: Fig. 1 (pass@1 and pass@k vs alpha), Fig. 2 (mode coverage and divergence vs alpha), Fig. 3
(the safety frontier of task (iii): harmful refusal vs benign over-refusal across alpha, per reference).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV): in Figs. 1 and 2 task
(i) in the top row, task (ii) (arithmetic, when built) in the bottom row. The curves are means over seeds
with their s.e. (cut at the metric's bounds): no claim reads one alpha's mean. The claims compare alphas
(and alpha = 0 with RLOO, and the two references) paired by seed: each figure draws, beside its curves,
the claims on its metrics as the checker compares them (the metric minus its right-hand side, per seed)
with the interval the verdict is decided on, from the aggregate's table
(:func:`repro.claimtables.claim_table`), none where too few seeds give one (the panel says so).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from repro.figures.claims import draw_claims, no_interval_text, relation_text
from repro.figures.style import (FLOOR, REFERENCE, Palette, interval_err, legend, n_text, not_built, not_built_figure,
                                 panel_letters, subplots)

__all__ = ["COLORS", "CURVE_BARS", "FIG1_CLAIMS", "FIG2_CLAIMS", "FIG2_PANELS", "FIG3_CLAIMS", "curve_table", "claim_rows",
           "fig1_table", "fig1", "fig2_table", "fig2", "frontier_table", "fig3"]

COLORS = Palette("mcpo", {"rloo": "#0072B2", "pi_star": REFERENCE, "pi_ref": FLOOR}, ours="mcpo")
#: How far left of alpha = 0 the reverse-KL baseline (an alpha = 0 method itself) is drawn.
RLOO_DODGE = 0.04
REFERENCES = {"rloo": "reverse-KL RLOO", "pi_star": "oracle pi*", "pi_ref": "floor pi_ref"}
#: What the curves' bars are (no claim reads one alpha's mean).
CURVE_BARS = "mean ± s.e. over seeds, cut at the metric's bounds"
#: The range each metric can take: a bar is cut there (pass rates, coverage, refusal rates and total variation
#: are shares; divergences and entropies are non-negative).
BOUNDS = {"kl_reverse": (0.0, math.inf), "kl_forward": (0.0, math.inf), "form_entropy": (0.0, math.inf),
          "reward": (-math.inf, math.inf)}
#: The claims each figure draws, per task, by id -> the slot's label (the quantity as the checker compares it:
#: the claim's metric minus its right-hand side, per seed).
FIG1_CLAIMS = {"bandit": {"pass1_favours_mode_seeking": "pass@1\nα0 − α1",
                          "passk_favours_mode_covering": "pass@k\nα1 − α0",
                          "alpha0_reproduces_reverse_kl_pass1": "pass@1\nα0 −\nRLOO"},
               "arithmetic": {"arithmetic_pass1_favours_mode_seeking": "pass@1\nα0 − α1",
                              "arithmetic_passk_favours_mode_covering": "pass@k\nα1 − α0",
                              "arithmetic_alpha0_reproduces_reverse_kl": "pass@1\nα0 −\nRLOO"}}
FIG2_CLAIMS = {"bandit": {"coverage_grows_toward_mode_covering": "coverage\nα1 − α0",
                          "alpha0_reproduces_reverse_kl_divergence": "KL(π‖π*)\n(nats)\nα0 − RLOO"},
               "arithmetic": {"arithmetic_coverage_grows_toward_mode_covering": "coverage\nα1 − α0",
                              "arithmetic_forms_kept_grow_toward_mode_covering": "form\nentropy\n(nats)\nα1 − α0"}}
FIG3_CLAIMS = {"safety_tradeoff_depends_on_reference": "slope in α",
               "safety_change_depends_on_reference": "change\nfrom π_ref"}
#: Every drawn claim's slot label, by id.
CLAIM_LABELS = {cid: label for drawn in (*FIG1_CLAIMS.values(), *FIG2_CLAIMS.values(), FIG3_CLAIMS)
                for cid, label in drawn.items()}


def curve_table(tidy: pd.DataFrame, metrics: list[str], task: str = "bandit") -> pd.DataFrame:
    """Mean and s.e. over seeds of each metric of ``task`` per method (alpha NaN for the references), long form,
    with ``low``/``high`` the s.e. bar cut at the metric's bounds (:data:`BOUNDS`, else [0, 1]) and ``interval``
    what it is (:data:`CURVE_BARS`).

    A method run on one seed has no s.e. (NaN: drawn without a bar)."""
    if "task" in tidy.columns:
        tidy = tidy[tidy.task == task].drop(columns="task")
    out = []
    for (method, metric), part in tidy.melt(id_vars=["seed", "method", "alpha"], value_vars=metrics,
                                            var_name="metric").groupby(["method", "metric"], sort=True):
        n = len(part)
        mean, se = part.value.mean(), part.value.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
        lo, hi = BOUNDS.get(metric, (0.0, 1.0))
        out.append({"task": task, "method": method, "alpha": part.alpha.iloc[0], "metric": metric, "mean": mean,
                    "se": se, "n_seeds": n, "low": np.clip(mean - se, lo, hi), "high": np.clip(mean + se, lo, hi),
                    "interval": CURVE_BARS})
    return pd.DataFrame(out).sort_values(["metric", "alpha", "method"], na_position="last").reset_index(drop=True)


def claim_rows(claims: pd.DataFrame, drawn: dict[str, str], task: str) -> pd.DataFrame:
    """The rows of a figure's table for the claims of ``drawn`` (id -> label) on ``task``, from ``claims`` (the
    aggregate's :func:`repro.claimtables.claim_table`), in ``drawn``'s order: ``metric`` the claim's metric
    (compared with its ``rhs``), ``mean`` the estimate, ``low``/``high`` the interval its verdict is decided on
    (NaN: none), ``n_seeds`` its seeds, ``label`` the slot's label; a claim the build lacks gives no row."""
    rows = claims.set_index("claim").reindex([c for c in drawn if c in set(claims["claim"])]).reset_index()
    return pd.DataFrame({"task": task, "method": "mcpo", "alpha": np.nan, "metric": rows["metric"],
                         "mean": rows["estimate"], "se": np.nan, "n_seeds": rows["n"], "low": rows["low"],
                         "high": rows["high"], "interval": rows["interval"], "claim": rows["claim"],
                         "label": [drawn[c].replace("\n", " ") for c in rows["claim"]], "rhs": rows["rhs"],
                         **{c: rows[c] for c in ("level", "op", "threshold", "tol", "status")}})


def _with_claims(curves: pd.DataFrame, claims: pd.DataFrame, drawn: dict[str, dict[str, str]]) -> pd.DataFrame:
    """A figure's table: the curves (``panel`` "curve") and, per task, the claims of ``drawn`` (``panel`` "claim")."""
    parts = [curves.assign(panel="curve")]
    parts += [claim_rows(claims, drawn[task], task).assign(panel="claim") for task in _rows(curves) if task in drawn]
    return pd.concat([p for p in parts if len(p)], ignore_index=True)


def _split(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A figure's table as (curves, claims)."""
    if "panel" not in table:
        return table, table.iloc[:0]
    return table[table["panel"] == "curve"], table[table["panel"] == "claim"]


def _claims_panel(ax, rows: pd.DataFrame, what: str, *, title: str = "claims", labels: dict | None = None) -> None:
    """The claims of one task (rows of :func:`claim_rows`) with the intervals their verdicts are decided on and
    their claimed relations (each slot labelled from ``labels``, default :data:`CLAIM_LABELS`); the x label gives
    n and why no interval is drawn."""
    if rows.empty:
        not_built(ax, "no claim's metric in this build")
        return
    rows = rows.reset_index(drop=True)
    labels = CLAIM_LABELS if labels is None else labels
    draw_claims(ax, rows.rename(columns={"mean": "estimate"}), colors=COLORS("mcpo"))
    ax.set_xticks(np.arange(len(rows)),
                  [f"{labels[r['claim']]}\n({relation_text(r, short=True)})" for _, r in rows.iterrows()])
    why = no_interval_text(rows.rename(columns={"mean": "estimate", "n_seeds": "n"}), "seed")
    ax.set_xlabel(f"paired by seed,{' ' if len(rows) > 1 else chr(10)}{n_text(rows['n_seeds'], 'seed')}" +
                  (f"\n{why}" if why else ""))
    ax.set_ylabel(what)
    ax.set_title(title)


def _bars(rows: pd.DataFrame) -> np.ndarray:
    return interval_err(rows["mean"], rows["low"], rows["high"])


def _panel(ax, table: pd.DataFrame, metric: str, label: str) -> None:
    part = table[table.metric == metric]
    curve = part[part.alpha.notna()].sort_values("alpha")
    ax.errorbar(curve.alpha, curve["mean"], yerr=_bars(curve), color=COLORS("mcpo"), marker="o", label="MCPO")
    for ref, name in REFERENCES.items():
        row = part[part.method == ref]
        if len(row):
            if ref == "rloo":  # at alpha = 0, drawn just left of MCPO's alpha = 0 so that neither hides the other
                ax.errorbar([-RLOO_DODGE], row["mean"], yerr=_bars(row), color=COLORS(ref), marker="s", ms=4,
                            linestyle="none", label=name)
            else:
                ax.axhline(row["mean"].iloc[0], color=COLORS(ref), linestyle="--", linewidth=0.8, label=name)
    ax.set_xlabel("alpha (0: reverse KL,\n1: forward KL)")
    ax.set_ylabel(label)


def _rows(table: pd.DataFrame) -> list[str]:
    return [t for t in ("bandit", "arithmetic") if t in set(table.task)]


TITLES = {"bandit": "task (i) bandit", "arithmetic": "task (ii) arithmetic\n(LM + LoRA)"}


def fig1_table(tidy: pd.DataFrame, claims: pd.DataFrame, k: int) -> pd.DataFrame:
    """Fig. 1's rows: pass@1 and pass@k of each task per method (``panel`` "curve", :func:`curve_table`) and the
    claims of :data:`FIG1_CLAIMS` with their intervals (``panel`` "claim", :func:`claim_rows`)."""
    curves = pd.concat([curve_table(tidy, ["pass1", f"pass{k}"], task) for task in ("bandit", "arithmetic")
                        if task in set(tidy.task)], ignore_index=True)
    return _with_claims(curves, claims, FIG1_CLAIMS)


def fig1(table: pd.DataFrame, k: int):
    """Per task (a row): pass@1 and pass@k against alpha, mean ± s.e. over seeds, with the reverse-KL baseline,
    the oracle and the floor; and the task's claims, paired by seed, with the intervals their verdicts take."""
    curves, claims = _split(table)
    tasks = _rows(curves)
    fig, axes = subplots(len(tasks), 3, width="text", height=0.9 + 2.1 * len(tasks), squeeze=False,
                         gridspec_kw={"width_ratios": [1, 1, 1.15]})
    for row, task in zip(axes, tasks):
        part = curves[curves.task == task]
        _panel(row[0], part, "pass1", "pass@1")
        _panel(row[1], part, f"pass{k}", f"pass@{k}")
        row[0].set_title(f"{TITLES[task]}\n{n_text(part.n_seeds, 'seed')}")
        _claims_panel(row[2], claims[claims.task == task], "claim: paired\ndifference")
    panel_letters(axes.flat)
    legend(fig, where="below", ncol=4, title="(curves) mean ± s.e. over seeds")
    return fig


def fig2_table(tidy: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2's rows: coverage and the divergences (task ii: the forms) of each task per method (``panel``
    "curve") and the claims of :data:`FIG2_CLAIMS` with their intervals (``panel`` "claim")."""
    metrics = {"bandit": ["coverage", "kl_reverse", "kl_forward"],
               "arithmetic": ["coverage", "form_tv", "form_entropy", "kl_reverse", "kl_forward"]}
    curves = pd.concat([curve_table(tidy, metrics[task], task) for task in metrics if task in set(tidy.task)],
                       ignore_index=True)
    return _with_claims(curves, claims, FIG2_CLAIMS)


#: Fig. 2's panels per task, in order: the metric (one quantity per axis), its axis label, and the claim on it
#: (drawn beneath it, in the metric's unit) with the slot's label, or None.
FIG2_PANELS = {"bandit": [("coverage", "mode coverage of pi*", "coverage_grows_toward_mode_covering", "α1 − α0"),
                          ("kl_reverse", "KL(pi || pi*) (nats)", "alpha0_reproduces_reverse_kl_divergence", "α0 − RLOO"),
                          ("kl_forward", "KL(pi* || pi) (nats)", None, None)],
               "arithmetic": [("coverage", "mode coverage of pi*", "arithmetic_coverage_grows_toward_mode_covering",
                               "α1 − α0"),
                              ("form_tv", "TV of forms to pi*'s", None, None),
                              ("form_entropy", "form entropy (nats)", "arithmetic_forms_kept_grow_toward_mode_covering",
                               "α1 − α0")]}
#: The unit of each metric's paired difference, for the claim's axis beneath it.
UNITS = {"coverage": "share of modes", "kl_reverse": "nats", "kl_forward": "nats", "form_tv": "TV",
         "form_entropy": "nats"}


def fig2(table: pd.DataFrame):
    """Per task (two rows): mode coverage and the divergences to pi* (task ii: the forms' distance to pi*'s and
    their entropy) against alpha, one quantity per axis, mean ± s.e. over seeds, with the reverse-KL baseline,
    the oracle and the floor; beneath a quantity that a claim reads, that claim, paired by seed, with the interval
    its verdict is decided on, in the quantity's unit (a quantity no claim reads has nothing beneath it)."""
    curves, claims = _split(table)
    tasks = _rows(curves)
    fig, axes = subplots(2 * len(tasks), 3, width="text", height=0.7 + 3.0 * len(tasks), squeeze=False,
                         gridspec_kw={"height_ratios": [1.6, 1.25] * len(tasks)})
    shown = []
    for t, task in enumerate(tasks):
        part, top, below = curves[curves.task == task], axes[2 * t], axes[2 * t + 1]
        beneath = []
        for ax, cx, (metric, label, cid, slot) in zip(top, below, FIG2_PANELS[task]):
            _panel(ax, part, metric, label)
            rows = claims[(claims.task == task) & (claims.claim == cid)] if cid else claims.iloc[:0]
            if rows.empty:  # no claim reads this quantity (or the build lacks its metric): nothing beneath it
                cx.remove()
                continue
            _claims_panel(cx, rows, f"claim: paired\ndifference ({UNITS[metric]})", title="claim",
                          labels={cid: slot})
            beneath.append(cx)
        top[0].set_title(f"{TITLES[task]}\n{n_text(part.n_seeds, 'seed')}")
        shown += [*top, *beneath]
    panel_letters(shown)
    legend(fig, where="below", ncol=4, title="(curves) mean ± s.e. over seeds")
    return fig


REFERENCE_STYLE = {"compliant": ("#0072B2", "compliant reference (no system message)"),
                   "cautious": ("#009E73", "cautious reference (refusal system message)")}


def frontier_table(tidy: pd.DataFrame, claims: pd.DataFrame | None = None) -> pd.DataFrame:
    """Task (iii): mean and s.e. over seeds of harmful refusal and over-refusal per reference and method
    (``panel`` "curve", :func:`curve_table`), and the claims of :data:`FIG3_CLAIMS` with their intervals
    (``panel`` "claim", :func:`claim_rows`; ``claims``: the aggregate's claim table)."""
    parts = [curve_table(tidy, ["harmful_refusal", "over_refusal"], task) for task in sorted(set(tidy.task))
             if task.startswith("safety_")]
    for part in parts:  # beside the task, as the table was before it had bounds
        part.insert(part.columns.get_loc("n_seeds") + 1, "reference", part["task"].str.removeprefix("safety_"))
    if not parts:
        return pd.DataFrame(columns=["task", "method", "alpha", "metric", "mean", "se", "n_seeds", "reference", "low",
                                     "high", "interval", "panel"])
    curves = pd.concat(parts, ignore_index=True).assign(panel="curve")
    if claims is None:
        return curves
    drawn = claim_rows(claims, FIG3_CLAIMS, "safety").assign(panel="claim")
    return pd.concat([curves, drawn], ignore_index=True) if len(drawn) else curves


def fig3(table: pd.DataFrame):
    """(a) Harmful refusal (y) vs benign over-refusal (x): MCPO across alpha per reference, with pi_ref and pi*,
    mean ± s.e. over seeds; (b) the claims: how the dial moves over-refusal under each reference, cautious minus
    compliant, paired by seed, with the intervals their verdicts take and the claimed band."""
    curves, claims = _split(table)
    if curves.empty:
        return not_built_figure("task (iii) safety is not in this preset", title="task (iii) safety frontier")
    fig, (ax, cx) = subplots(1, 2, width="text", height=3.0, gridspec_kw={"width_ratios": [1.9, 1]})
    for ref in sorted(set(curves.reference)):
        color, name = REFERENCE_STYLE.get(ref, ("#444444", ref))
        part = curves[curves.reference == ref]
        wide = part.pivot_table(index=["method"], columns="metric", values=["mean", "low", "high"])
        wide.columns = [f"{stat}_{metric}" for stat, metric in wide.columns]
        wide = wide.join(part.drop_duplicates("method").set_index("method")["alpha"])
        curve = wide[wide.alpha.notna()].sort_values("alpha")
        ax.errorbar(curve.mean_over_refusal, curve.mean_harmful_refusal,
                    xerr=interval_err(curve.mean_over_refusal, curve.low_over_refusal, curve.high_over_refusal),
                    yerr=interval_err(curve.mean_harmful_refusal, curve.low_harmful_refusal,
                                      curve.high_harmful_refusal),
                    color=color, marker="o", ms=3, capsize=2, label=f"MCPO, {name}")
        for alpha, x, y in zip(curve.alpha, curve.mean_over_refusal, curve.mean_harmful_refusal):
            ax.annotate(f"{alpha:g}", (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
        for method, marker in (("pi_ref", "s"), ("pi_star", "*")):
            if method in wide.index:
                ax.plot(wide.loc[method, "mean_over_refusal"], wide.loc[method, "mean_harmful_refusal"], marker=marker,
                        color=color, linestyle="none", ms=6, markerfacecolor="none" if method == "pi_ref" else color,
                        label=f"{REFERENCES[method]}, {ref}")
    ax.set_xlabel("benign over-refusal (lower is better)")
    ax.set_ylabel("harmful refusal (higher is better)")
    ax.set_title("safety frontier across alpha (labels)")
    _claims_panel(cx, claims, "claim: over-refusal,\ncautious − compliant")
    panel_letters([ax, cx])
    legend(fig, where="below", ncol=2, title=f"(a) mean ± s.e. over seeds, {n_text(curves.n_seeds, 'seed')}")
    return fig

"""mcpo figures: Fig. 1 (pass@1 and pass@k vs alpha), Fig. 2 (mode coverage and divergence vs alpha), Fig. 3
(the safety frontier of task (iii): harmful refusal vs benign over-refusal across alpha, per reference).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV): in Figs. 1 and 2 task
(i) in the top row, task (ii) (arithmetic, when built) in the bottom row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.figures.style import FLOOR, REFERENCE, Palette, legend, n_text, not_built_figure, panel_letters, subplots

__all__ = ["COLORS", "curve_table", "fig1", "fig2", "frontier_table", "fig3"]

COLORS = Palette("mcpo", {"rloo": "#0072B2", "pi_star": REFERENCE, "pi_ref": FLOOR}, ours="mcpo")
#: How far left of alpha = 0 the reverse-KL baseline (an alpha = 0 method itself) is drawn.
RLOO_DODGE = 0.04
REFERENCES = {"rloo": "reverse-KL RLOO", "pi_star": "oracle pi*", "pi_ref": "floor pi_ref"}


def curve_table(tidy: pd.DataFrame, metrics: list[str], task: str = "bandit") -> pd.DataFrame:
    """Mean and s.e. over seeds of each metric of ``task`` per method (alpha NaN for the references), long form.

    A method run on one seed has no s.e. (NaN: drawn without a bar)."""
    if "task" in tidy.columns:
        tidy = tidy[tidy.task == task].drop(columns="task")
    out = []
    for (method, metric), part in tidy.melt(id_vars=["seed", "method", "alpha"], value_vars=metrics,
                                            var_name="metric").groupby(["method", "metric"], sort=True):
        n = len(part)
        out.append({"task": task, "method": method, "alpha": part.alpha.iloc[0], "metric": metric,
                    "mean": part.value.mean(), "se": part.value.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan,
                    "n_seeds": n})
    return pd.DataFrame(out).sort_values(["metric", "alpha", "method"], na_position="last").reset_index(drop=True)


def _panel(ax, table: pd.DataFrame, metric: str, label: str) -> None:
    part = table[table.metric == metric]
    curve = part[part.alpha.notna()].sort_values("alpha")
    ax.errorbar(curve.alpha, curve["mean"], yerr=curve.se, color=COLORS("mcpo"), marker="o", label="MCPO")
    for ref, name in REFERENCES.items():
        row = part[part.method == ref]
        if len(row):
            if ref == "rloo":  # at alpha = 0, drawn just left of MCPO's alpha = 0 so that neither hides the other
                ax.errorbar([-RLOO_DODGE], row["mean"], yerr=row.se, color=COLORS(ref), marker="s", ms=4,
                            linestyle="none", label=name)
            else:
                ax.axhline(row["mean"].iloc[0], color=COLORS(ref), linestyle="--", linewidth=0.8, label=name)
    ax.set_xlabel("alpha (0: reverse KL,\n1: forward KL)")
    ax.set_ylabel(label)


def _rows(table: pd.DataFrame) -> list[str]:
    return [t for t in ("bandit", "arithmetic") if t in set(table.task)]


TITLES = {"bandit": "task (i) bandit", "arithmetic": "task (ii) arithmetic (LM + LoRA)"}


def fig1(table: pd.DataFrame, k: int):
    tasks = _rows(table)
    fig, axes = subplots(len(tasks), 2, width="text", height=0.5 + 2.0 * len(tasks), squeeze=False)
    for row, task in zip(axes, tasks):
        part = table[table.task == task]
        _panel(row[0], part, "pass1", "pass@1")
        _panel(row[1], part, f"pass{k}", f"pass@{k}")
        row[0].set_title(f"{TITLES[task]}\n{n_text(part.n_seeds, 'seed')}")
    panel_letters(axes.flat)
    legend(fig, where="right", title="mean ± s.e.\nover seeds")
    return fig


def fig2(table: pd.DataFrame):
    tasks = _rows(table)
    fig, axes = subplots(len(tasks), 2, width="text", height=0.6 + 2.0 * len(tasks), squeeze=False)
    for row, task in zip(axes, tasks):
        part = table[table.task == task]
        _panel(row[0], part, "coverage", "mode coverage of pi*")
        row[0].set_title(f"{TITLES[task]}\n{n_text(part.n_seeds, 'seed')}")
        lines = (("kl_reverse", "o", "KL(pi || pi*)"), ("kl_forward", "^", "KL(pi* || pi)"))
        if task == "arithmetic":
            lines = (("form_tv", "o", "TV of forms to pi*'s"), ("form_entropy", "^", "form entropy (nats)"))
        for metric, marker, name in lines:
            curve = part[(part.metric == metric) & part.alpha.notna()].sort_values("alpha")
            row[1].errorbar(curve.alpha, curve["mean"], yerr=curve.se, color=COLORS("mcpo"), marker=marker,
                            ls="-" if marker == "o" else "--", label=f"MCPO {name}")
            ref = part[(part.metric == metric) & (part.method == "pi_star")]
            if task == "arithmetic" and len(ref):
                row[1].axhline(ref["mean"].iloc[0], color=COLORS("pi_star"), linestyle=":" if marker == "o" else "-.",
                               linewidth=0.8,
                               marker=None, label=f"oracle pi* {name}")
        row[1].set_xlabel("alpha (0: reverse KL,\n1: forward KL)")
        row[1].set_ylabel("divergence to pi*" if task == "bandit" else "forms")
    panel_letters(axes.flat)
    legend(fig, where="below", ncol=3, title="mean ± s.e. over seeds")
    return fig


REFERENCE_STYLE = {"compliant": ("#0072B2", "compliant reference (no system message)"),
                   "cautious": ("#009E73", "cautious reference (refusal system message)")}


def frontier_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Task (iii): mean and s.e. over seeds of harmful refusal and over-refusal per reference and method."""
    parts = [curve_table(tidy, ["harmful_refusal", "over_refusal"], task).assign(reference=task[len("safety_"):])
             for task in sorted(set(tidy.task)) if task.startswith("safety_")]
    if not parts:
        return pd.DataFrame(columns=["task", "reference", "method", "alpha", "metric", "mean", "se", "n_seeds"])
    return pd.concat(parts, ignore_index=True)


def fig3(table: pd.DataFrame):
    """Harmful refusal (y) vs benign over-refusal (x): MCPO across alpha per reference, with pi_ref and pi*."""
    if table.empty:
        return not_built_figure("task (iii) safety is not in this preset", title="task (iii) safety frontier")
    fig, ax = subplots(width="text", height=2.8)
    for ref in sorted(set(table.reference)):
        color, name = REFERENCE_STYLE.get(ref, ("#444444", ref))
        part = table[table.reference == ref]
        wide = part.pivot_table(index=["method"], columns="metric", values=["mean", "se"])
        wide.columns = [f"{stat}_{metric}" for stat, metric in wide.columns]
        wide = wide.join(part.drop_duplicates("method").set_index("method")["alpha"])
        curve = wide[wide.alpha.notna()].sort_values("alpha")
        ax.errorbar(curve.mean_over_refusal, curve.mean_harmful_refusal, xerr=curve.se_over_refusal,
                    yerr=curve.se_harmful_refusal, color=color, marker="o", ms=3, capsize=2, label=f"MCPO, {name}")
        for alpha, x, y in zip(curve.alpha, curve.mean_over_refusal, curve.mean_harmful_refusal):
            ax.annotate(f"{alpha:g}", (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
        for method, marker in (("pi_ref", "s"), ("pi_star", "*")):
            if method in wide.index:
                ax.plot(wide.loc[method, "mean_over_refusal"], wide.loc[method, "mean_harmful_refusal"], marker=marker,
                        color=color, linestyle="none", ms=6, markerfacecolor="none" if method == "pi_ref" else color,
                        label=f"{REFERENCES[method]}, {ref}")
    ax.set_xlabel("benign over-refusal (lower is better)")
    ax.set_ylabel("harmful refusal (higher is better)")
    ax.set_title("task (iii) safety frontier across alpha (labels)")
    legend(ax, title=f"mean ± s.e. over seeds,\n{n_text(table.n_seeds, 'seed')}")
    return fig

"""grokcap Table 1: per width, P and the timescales; then the fits, crossing, threshold, capacity."""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["table"]


def _missing(value) -> bool:
    """A metric that was not measured (JSON null, or NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _f(value, spec: str = ".3f") -> str:
    """A number formatted, or "n/a" when missing."""
    return "n/a" if _missing(value) else format(value, spec)


def _fmt_time(entry: dict | None) -> str:
    if not entry:
        return ""
    med = f"{entry['median']:.0f}"
    if entry["median_censored"]:
        med = f">{med}"
    return f"{med} ({entry['n_censored']}/{entry['n']} censored)"


def table(metrics: dict) -> pd.DataFrame:
    rows = []
    t_mem, t_gen = metrics.get("t_mem", {}), metrics.get("t_gen", {})
    frac = (metrics.get("grokking") or {}).get("fraction", {})
    for key in sorted(set(t_mem) | set(t_gen), key=lambda k: int(k[1:])):
        entry = t_mem.get(key) or t_gen.get(key)
        rows.append({"quantity": f"width {key[1:]}", "P": _f(entry["P"], ",.0f"), "T_mem median": _fmt_time(t_mem.get(key)),
                     "T_gen median": _fmt_time(t_gen.get(key)),
                     "grokked fraction": "" if key not in frac else f"{frac[key]:.2f}"})
    for name in ("t_mem", "t_gen"):
        fit = (metrics.get("power_law") or {}).get(name)
        if fit and fit.get("b") is not None:
            rows.append({"quantity": f"{name} power law a P^b", "P": "",
                         "T_mem median": f"a = {_f(fit['a'], '.3g')}",
                         "T_gen median": f"b = {_f(fit['b'])} [{_f(fit['b_lo'])}, {_f(fit['b_hi'])}]",
                         "grokked fraction": f"{fit['n_censored']}/{fit['n']} censored"})
    cross = metrics.get("crossing") or {}
    grok = metrics.get("grokking") or {}
    empirical = _f(cross.get("empirical_P"), ",.0f")
    for key, side in (("empirical_P_upper_bound", "<"), ("empirical_P_lower_bound", ">")):
        if not _missing(cross.get(key)):  # the medians never cross in the grid: which side it lies on
            empirical = f"{side} {cross[key]:,.0f} (outside the grid)"
    for label, value in (("crossing, medians", empirical),
                         ("crossing, power laws", _f(cross.get("power_law_P"), ",.0f")),
                         ("grokking threshold", _f(grok.get("threshold_P"), ",.0f"))):
        rows.append({"quantity": label, "P": value, "T_mem median": "", "T_gen median": "", "grokked fraction": ""})
    cap = metrics.get("capacity")
    if cap:
        rows.append({"quantity": "capacity (bits/param)", "P": "",
                     "T_mem median": f"{_f(cap['bits_per_param'])} [{_f(cap['lo'])}, {_f(cap['hi'])}]",
                     "T_gen median": f"paper {cap['paper_bits_per_param']}", "grokked fraction": ""})
        rows.append({"quantity": "P to memorise the training set (its bits / C)", "P": _f(cap.get("P_to_memorise_train"), ",.0f"),
                     "T_mem median": "", "T_gen median": "", "grokked fraction": ""})
    return pd.DataFrame(rows)

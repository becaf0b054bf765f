"""grokcap Fig. 3: the capacity estimate, bits memorised on random labels against parameters."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["table", "build"]


def table(runs: pd.DataFrame) -> pd.DataFrame:
    cap = runs[runs.task == "capacity"]
    out = cap[["width", "seed", "P", "bits", "dataset_bits", "steps", "max_steps"]].copy()
    out["hit_step_cap"] = out.steps >= out.max_steps
    return out.reset_index(drop=True)


def build(df: pd.DataFrame, metrics: dict) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(3.6, 3.0))
    cap = metrics.get("capacity") or {}
    ax.scatter(df.P.to_numpy(float), df.bits.to_numpy(float), color="#D55E00", s=14, label="runs (random labels)", zorder=3)
    if len(df) and cap.get("bits_per_param") is not None:
        P = np.linspace(0, df.P.max() * 1.05, 50)
        interval = f" [{cap['lo']:.2f}, {cap['hi']:.2f}]" if cap.get("lo") is not None else ""
        ax.plot(P, cap["bits_per_param"] * P, color="#D55E00", ls="--",
                label=f"fit: {cap['bits_per_param']:.2f} bits/param{interval}")
        ax.plot(P, cap["paper_bits_per_param"] * P, color="0.4", ls=":",
                label=f"paper: {cap['paper_bits_per_param']:.2f} bits/param")
    ax.set(xlabel="parameters P", ylabel="bits memorised", title="Capacity")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig

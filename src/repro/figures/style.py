"""One figure style for every paper, and deterministic output.

:func:`save` writes a figure as a PDF whose bytes depend only on what was drawn (no creation date,
fixed producer) and, beside it under the same stem, the CSV of the numbers it plots. Tables go
through :func:`save_table` (CSV + Markdown). Each paper fixes its methods' colours in a
:class:`Palette` beside its figure builders; other names get a stable hashed colour.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.io import atomic_open, atomic_path

__all__ = ["apply_style", "Palette", "method_color", "mean_se", "save", "save_table", "markdown_table", "PALETTE"]

RC = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "lines.linewidth": 1.4,
    "lines.markersize": 4,
    "pdf.fonttype": 42,  # embed TrueType: editable text, and stable bytes
    "svg.hashsalt": "neurips26-repro",
    "path.simplify": False,
}

#: Okabe-Ito colour-blind-safe palette, extended.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
           "#882255", "#44AA99", "#999933", "#AA4499", "#6699CC", "#888888"]



class Palette:
    """One paper's fixed colours by method name; any other name gets a stable hashed colour.

    Each paper keeps its palette with its figure builders (``repro.papers.<key>.figures``), so
    generic names ("random", "full") mean one thing per paper and a new paper edits no shared list::

        COLORS = Palette({"tmevolve": "#D55E00", "abmil": "#0072B2"})
        ax.plot(x, y, color=COLORS("abmil"))
    """

    def __init__(self, colors: dict[str, str] | None = None) -> None:
        self.colors = dict(colors or {})

    def __call__(self, method: str) -> str:
        return self.colors.get(method) or method_color(method)

    def __contains__(self, method: object) -> bool:
        return method in self.colors


def mean_se(df: pd.DataFrame, by: list[str], col: str, *, name: str = "mean") -> pd.DataFrame:
    """Mean, standard error and count of ``col`` per group of ``by``: the error bars of a figure.

    One row per group, the groups as columns; a group of one unit gets s.e. 0 (drawn without a bar).
    ``name`` names the mean's column.
    """
    g = df.groupby(by)[col]
    out = pd.DataFrame({name: g.mean(), "se": g.std(ddof=1) / np.sqrt(g.count()), "n_seeds": g.count()})
    return out.reset_index().fillna({"se": 0.0})


def apply_style() -> None:
    plt.rcParams.update(RC)


def method_color(method: str) -> str:
    """A colour derived from a hash of ``method``'s name (stable across runs and machines)."""
    digest = int(hashlib.sha256(method.encode()).hexdigest(), 16)
    return PALETTE[digest % len(PALETTE)]


def _pdf_metadata(title: str) -> dict:
    return {"Title": title, "Creator": "neurips26-repro", "Producer": "neurips26-repro (matplotlib)",
            "CreationDate": None, "ModDate": None}


def save(fig: plt.Figure, table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``fig`` to ``path`` (PDF, deterministic bytes) and ``table`` as CSV under the same stem.

    ``table`` is the tidy DataFrame the figure plots, so a reader can check every number.
    """
    path = Path(path)
    if path.suffix != ".pdf":
        raise ValueError(f"figures are written as PDF; got {path}")
    save_csv(table, path.with_suffix(".csv"))
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="pdf", metadata=_pdf_metadata(path.stem))
    plt.close(fig)


def save_csv(table: pd.DataFrame, path: str | os.PathLike, float_format: str = "%.6g") -> None:
    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        table.to_csv(fh, index=False, float_format=float_format, lineterminator="\n")


def markdown_table(table: pd.DataFrame, float_format: str = "{:.3g}") -> str:
    """A GitHub-flavoured Markdown table (no extra dependency)."""
    def fmt(v):
        if isinstance(v, float):
            return "" if pd.isna(v) else float_format.format(v)
        return str(v)

    header = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    rows = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *rows]) + "\n"


def save_table(table: pd.DataFrame, stem: str | os.PathLike, *, title: str | None = None,
               float_format: str = "{:.3g}") -> None:
    """Write ``table`` as ``<stem>.csv`` and ``<stem>.md`` (with an optional title line)."""
    stem = Path(stem)
    if stem.suffix in {".csv", ".md"}:
        stem = stem.with_suffix("")
    save_csv(table, stem.with_suffix(".csv"))
    with atomic_open(stem.with_suffix(".md"), "w", encoding="utf-8") as fh:
        if title:
            fh.write(f"# {title}\n\n")
        fh.write(markdown_table(table, float_format))


apply_style()

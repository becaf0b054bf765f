"""Tables as files: CSV and GitHub-flavoured Markdown, written atomically.

Apart from :mod:`repro.figures.style` (which re-exports them for the figure builders) because the jobs
that compute a paper's results write tables too: what those jobs import is what the paper's verdicts
depend on (:mod:`repro.staleness`), and the figure style is not.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from repro.io import atomic_open

__all__ = ["save_csv", "markdown_table", "save_table"]


def save_csv(table: pd.DataFrame, path: str | os.PathLike, float_format: str = "%.6g") -> None:
    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        table.to_csv(fh, index=False, float_format=float_format, lineterminator="\n")


#: How a Markdown table prints a missing value (NaN, None, pd.NA): said, not left blank, so that a reader
#: does not take an empty cell for a formatting slip. The CSV beside it leaves the cell empty, as CSV readers expect.
MISSING = "n/a"


def markdown_table(table: pd.DataFrame, float_format: str = "{:.3g}") -> str:
    """A GitHub-flavoured Markdown table (no extra dependency); a missing value prints as :data:`MISSING`."""
    def fmt(v):
        if v is None or v is pd.NA or (isinstance(v, float) and v != v):
            return MISSING
        if isinstance(v, float):
            return float_format.format(v)
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


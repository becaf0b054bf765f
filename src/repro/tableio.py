"""Reading back the CSV tables jobs write (:func:`repro.tables.save_csv`, :func:`repro.tables.save_table`).

The project's other intermediates are read through :mod:`repro.io` (``read_json``, ``load_npz``,
``load_torch``, ``open_h5``); this is the same reader for a job's CSV table. ``pandas.read_csv`` alone
reads a table cut short without a word: the cut row's missing fields become NaN and its last number is
read as far as it got (``0.625`` cut to ``0.62``), so a figure drawn from a truncated table is wrong, not
failed; an empty file is an ``EmptyDataError`` and binary garbage a ``UnicodeDecodeError``, neither naming
the file. :func:`read_csv` refuses each of these with a ``ValueError`` that names the file, says how it is
damaged and says to delete it to rebuild (as :mod:`repro.io`'s readers do); a missing file stays a
``FileNotFoundError``.

What it checks, on what every job's table is: UTF-8 text, a header line, every row with as many fields
as the header (quoted fields read as the ``csv`` module reads them), and a last line that ends with a
line end (``save_csv`` ends every line with one). A table cut exactly at a line end is a whole table of
fewer rows, which no reader can tell from its bytes alone.

Only for tables a job of this workflow wrote: data a user supplies (a manifest, a leaderboard dump, an
edge list) has its own loader, which checks its columns and allows what such files may hold.
"""

from __future__ import annotations

import csv
import io
import os
from typing import Any

import pandas as pd

from repro.io import REBUILD

__all__ = ["read_csv"]


def _refuse(path: str | os.PathLike, what: str) -> ValueError:
    return ValueError(f"{path}: {what}; {REBUILD}")


def read_csv(path: str | os.PathLike, **kwargs: Any) -> pd.DataFrame:
    """The table a job wrote to ``path`` (``kwargs`` go to :func:`pandas.read_csv`: ``dtype``,
    ``float_precision``, ...); a damaged file is a ``ValueError`` naming it and how it is damaged."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _refuse(path, f"not a CSV table (not UTF-8 text: byte {err.start} is {raw[err.start]:#04x}; "
                            "corrupted)") from None
    if not text.strip():
        raise _refuse(path, "an empty CSV table (no header line: truncated to nothing)")
    if not text.endswith("\n"):
        raise _refuse(path, "a truncated CSV table (its last line has no line end)")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
        for row in reader:
            if row and len(row) != len(header):  # pandas skips blank lines too (a one-column table's empty cell)
                raise _refuse(path, f"a damaged CSV table (line {reader.line_num} has {len(row)} field(s), the "
                                    f"header {len(header)}; truncated or corrupted)")
    except csv.Error as err:
        raise _refuse(path, f"not a valid CSV table (line {reader.line_num}: {err}; truncated or corrupted)") from None
    try:
        return pd.read_csv(io.StringIO(text), **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as err:
        detail = str(err).strip().splitlines()[0][:200] if str(err).strip() else "no detail"
        raise _refuse(path, f"not a valid CSV table ({type(err).__name__}: {detail})") from None

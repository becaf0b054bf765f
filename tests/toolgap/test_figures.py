"""toolgap's figures: a missing rate is marked, never drawn as a bar of 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from repro.figures import lint
from repro.papers.toolgap.figures import fig1

TABLE = Path(__file__).resolve().parents[1] / "data" / "figures" / "toolgap_fig1.csv"


def test_a_missing_rate_is_marked_na_in_its_slot():
    table = pd.read_csv(TABLE)
    model, task = table.model.iloc[0], table.task.iloc[0]
    table.loc[(table.model == model) & (table.task == task), "rate"] = np.nan
    fig = fig1(table)
    ax = fig.axes[list(dict.fromkeys(table.task)).index(task)]
    marks = [t for t in ax.texts if t.get_text() == "n/a"]
    assert len(marks) == 1 and marks[0].get_position()[0] == list(dict.fromkeys(table.model)).index(model)
    assert sum(t.get_text() == "n/a" for a in fig.axes for t in a.texts) == 1  # the other slots have their bars
    assert lint.check(fig) == []


def test_no_mark_where_every_rate_is_there():
    fig = fig1(pd.read_csv(TABLE))
    assert not [t for ax in fig.axes for t in ax.texts if t.get_text() == "n/a"]

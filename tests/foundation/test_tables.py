"""Tables as files: a missing value is said in the Markdown and left empty in the CSV."""

import numpy as np
import pandas as pd

from repro.tables import MISSING, save_table


def test_a_missing_value_prints_as_missing_in_markdown_and_empty_in_csv(tmp_path):
    table = pd.DataFrame({"method": ["a", "b", None], "rate": [0.123456, np.nan, 2.0],
                          "n": pd.array([6, pd.NA, 3], dtype="Int64")})
    save_table(table, tmp_path / "t")
    rows = (tmp_path / "t.md").read_text().splitlines()[2:]
    assert rows == ["| a | 0.123 | 6 |", f"| b | {MISSING} | {MISSING} |", f"| {MISSING} | 2 | 3 |"]
    back = pd.read_csv(tmp_path / "t.csv")
    assert back["rate"].isna().tolist() == [False, True, False] and back["method"].isna().tolist() == [False, False, True]

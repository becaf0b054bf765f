"""The reader of the CSV tables jobs write (repro.tableio.read_csv): a table cut short at any byte but a line end,
an empty file and binary garbage are each a ValueError naming the file, where pandas alone reads a truncated
table as a shorter one with a wrong last number; an intact table reads as pandas reads it; a missing file stays
a FileNotFoundError. The workflow's scripts read the tables jobs wrote through it."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from repro.tableio import read_csv
from repro.tables import save_csv
from tests.conftest import REPO


@pytest.fixture
def table(tmp_path):
    """A job's table as save_csv writes it: quoted fields (a comma, a quote, a line end inside), a missing cell."""
    df = pd.DataFrame({"method": ["a", 'b, "quoted"', "c\nd"] * 3, "seed": range(9),
                       "value": np.linspace(0, 1, 9), "lo": [np.nan, *np.linspace(0, 1, 8)]})
    path = tmp_path / "results" / "tidy.csv"
    path.parent.mkdir()
    save_csv(df, path)
    return path


def test_an_intact_table_reads_as_pandas_reads_it(table):
    pd.testing.assert_frame_equal(read_csv(table), pd.read_csv(table))
    pd.testing.assert_frame_equal(read_csv(table, float_precision="round_trip"),
                                  pd.read_csv(table, float_precision="round_trip"))
    header_only = table.with_name("empty_table.csv")
    save_csv(pd.DataFrame({"method": [], "value": []}), header_only)
    assert list(read_csv(header_only).columns) == ["method", "value"] and read_csv(header_only).empty


def test_pandas_alone_reads_a_truncated_table_without_a_word(table):
    """The fault the reader exists for: a cut inside a row gives a wrong number and NaNs, no error."""
    raw = table.read_bytes()
    cut = raw.index(b"0.625") + len(b"0.62")
    table.write_bytes(raw[:cut])
    got = pd.read_csv(table)
    assert got["value"].iloc[-1] == pytest.approx(0.62) and np.isnan(got["lo"].iloc[-1])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(table))}: a truncated CSV table .*delete it to rebuild"):
        read_csv(table)


def test_every_cut_but_one_at_a_line_end_is_named(table):
    raw = table.read_bytes()
    for cut in range(len(raw)):
        table.write_bytes(raw[:cut])
        try:
            read_csv(table)
        except ValueError as err:
            assert str(err).startswith(f"{table}: ") and str(err).endswith("delete it to rebuild"), err
        else:  # a table cut at a line end outside a quoted field is a whole table of fewer rows
            assert raw[:cut].endswith(b"\n") and len(read_csv(table)) < 9, cut


@pytest.mark.parametrize("damage, what", [
    (b"", "an empty CSV table"),
    (b"\x00garbage\xff" * 50, "not UTF-8 text"),
    (b"method,seed,value\na,1,0.5\nb,2,0.5,7\n", "line 3 has 4 field(s), the header 3"),
    (b'method,value\n"a,1\n', "unexpected end of data"),
])
def test_a_damaged_table_is_a_value_error_naming_the_file(table, damage, what):
    table.write_bytes(damage)
    with pytest.raises(ValueError) as err:
        read_csv(table)
    msg = str(err.value)
    assert msg.startswith(f"{table}: ") and what in msg and msg.endswith("delete it to rebuild"), msg


def test_a_missing_table_stays_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_csv(tmp_path / "absent.csv")


#: Scripts that still read their tables with pandas alone, each with its reason.
PANDAS_READERS_LEFT = {
    "workflow/scripts/m2le/fig1.py": "m2le's scripts are changing elsewhere: moved to the reader with that change",
    "workflow/scripts/m2le/fig2.py": "as fig1.py",
    "workflow/scripts/m2le/table1.py": "as fig1.py",
}


def test_the_workflow_scripts_read_job_tables_through_the_reader():
    """A script reads tables a job wrote (a figure's tidy table, a cohort's folds); pandas' reader alone would draw
    or train on a truncated one."""
    offenders = [str(p.relative_to(REPO)) for p in sorted((REPO / "workflow/scripts").rglob("*.py"))
                 if "pd.read_csv(" in p.read_text(encoding="utf-8")]
    assert sorted(set(offenders) - set(PANDAS_READERS_LEFT)) == []

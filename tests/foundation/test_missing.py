"""repro.missing: an undefined number a job wrote (NaN, or an infinity) reads back from its JSON as missing."""

import math

import numpy as np

from repro.io import read_json, write_json
from repro.missing import as_float, is_missing


def test_an_undefined_number_written_to_json_reads_back_as_missing_and_a_number_as_itself(tmp_path):
    written = {"rate": math.nan, "loss": math.inf, "seeds": [0.25, np.nan, 2], "count": np.int64(3), "flag": True}
    write_json(tmp_path / "job.json", written)
    back = read_json(tmp_path / "job.json")
    assert back["rate"] is None and back["loss"] is None and back["seeds"][1] is None  # what a reader gets
    assert math.isnan(as_float(back["rate"])) and math.isnan(as_float(back["loss"]))
    values = [as_float(v) for v in back["seeds"]]
    assert values[0] == 0.25 and math.isnan(values[1]) and values[2] == 2.0
    assert as_float(back["count"]) == 3.0 and as_float(back["flag"]) == 1.0
    assert [is_missing(v) for v in (back["rate"], back["seeds"][0], math.nan, np.float64("nan"), 0.0, 0)] == \
        [True, False, True, True, False, False]

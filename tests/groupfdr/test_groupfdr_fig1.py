"""Fig. 1 draws, for each point a claim decides, the interval the claim is decided on.

The FDR claim decides the group mirror's mean FDP in each (setting, q) cell of the linear family, by a
bootstrap over replicates Bonferroni-corrected over the cells; the power claims decide the mean paired
power difference of the group mirror and each compared method in each correlated setting. The
summary table the aggregate writes carries those bounds (and mean +- s.e. for every other point, with
what each is), and the figure draws the table's bounds. 40 replicates per cell: enough for the
Bonferroni level of 6 cells (8 units needed at 99.2%), so every claim cell has an interval.
"""

import json

import numpy as np
import pandas as pd
import pytest

from repro.claims import evaluate, interval_rows, load_claims
from repro.figures.lint import check
from repro.io import write_json
from repro.papers.groupfdr.experiment import SE_INTERVAL, aggregate, aggregate_files, figure_intervals
from repro.papers.groupfdr.figures import fig1
from tests.conftest import REPO

CLAIMS = load_claims(REPO / "workflow/claims/groupfdr.yaml", REPO / "workflow/schemas/claims.schema.yaml")
CFG = {"settings": {"a": {"family": "linear", "correlated": True, "sweeps": {"correlation": 0.5, "amplitude": 5.0}},
                    "b": {"family": "linear", "sweeps": {"correlation": 0.0}},
                    "c": {"family": "linear", "correlated": True, "sweeps": {"amplitude": 3.0}}}}
METHODS = {"group_gm": 0.7, "gm": 0.4, "group_knockoff": 0.5}  # lowest power of each


def _chunks(reps=40, seed=0):
    rng = np.random.default_rng(seed)
    chunks = []
    for setting in CFG["settings"]:
        for method, low in METHODS.items():
            fdps, powers = rng.uniform(0, 0.2, reps), rng.uniform(low, 1, reps)
            records = [{"replicate": r, "q": q, "fdp": f, "power": p, "n_selected": 3, "runtime_s": 0.1}
                       for r, (f, p) in enumerate(zip(fdps, powers)) for q in (0.1, 0.2)]
            chunks.append({"setting": setting, "method": method, "chunk": 0, "records": records, "example": None})
    return chunks


@pytest.fixture(scope="module")
def built():
    metrics, table = aggregate(_chunks(), CFG)
    return metrics, figure_intervals(table, metrics, CLAIMS)


def _bounds(table, cols):
    return table[cols].to_numpy(dtype=float)


def test_fdr_points_of_the_claims_cells_carry_the_interval_the_claim_is_decided_on(built):
    metrics, table = built
    rows = {r["setting"]: r for r in interval_rows(CLAIMS, metrics, ["group_gm_fdr_control_linear"])}
    ours = table[table.method == "group_gm"]
    assert len(ours) == len(rows) == 6  # 3 settings x 2 q
    for row in ours.itertuples():
        cell = rows[f"{row.setting}_q{round(row.q * 100):02d}"]
        assert (row.fdr_low, row.fdr_high) == (cell["low"], cell["high"])
        assert row.fdr_interval == f"claim group_gm_fdr_control_linear: {cell['interval']}"
        assert row.fdr == pytest.approx(cell["estimate"], abs=1e-12)
        assert "Bonferroni over 6 settings" in row.fdr_interval and cell["level"] == pytest.approx(1 - 0.05 / 6)
    # every other method's FDR: mean +- s.e., cut at 0 and 1, and the table says so
    other = table[table.method != "group_gm"]
    assert (other.fdr_interval == SE_INTERVAL).all()
    np.testing.assert_allclose(_bounds(other, ["fdr_low", "fdr_high"]),
                               np.clip(np.c_[other.fdr - other.fdr_se, other.fdr + other.fdr_se], 0, 1))
    # the claims' interval is the wider one here: Bonferroni-corrected bootstrap against one s.e.
    assert ((ours.fdr_high - ours.fdr_low) > 2 * ours.fdr_se).all()


def test_power_gains_carry_the_power_claims_paired_intervals(built):
    metrics, table = built
    gains = table[table.power_gain.notna()]
    assert sorted(zip(gains.setting, gains.method)) == [("a", "gm"), ("a", "group_knockoff"), ("c", "gm"),
                                                       ("c", "group_knockoff")]  # correlated settings only
    assert (gains.q == 0.1).all() and (gains.power_gain_of == "group_gm").all()
    for other in ("gm", "group_knockoff"):
        rows = {r["setting"]: r for r in interval_rows(CLAIMS, metrics, [f"group_gm_power_vs_{other}"])}
        for row in gains[gains.method == other].itertuples():
            cell = rows[row.setting]
            assert (row.power_gain, row.power_gain_low, row.power_gain_high) == (cell["estimate"], cell["low"], cell["high"])
            ours = table[(table.method == "group_gm") & (table.setting == row.setting) & (table.q == row.q)]
            assert row.power_gain == pytest.approx(float(ours.power.iloc[0]) - row.power, abs=1e-12)  # paired = means
    assert (table.power_interval == SE_INTERVAL).all()


def test_the_summary_holds_the_bounds_the_claims_evaluation_reports_to_the_last_bit(tmp_path):
    """Through the files: the aggregate's summary CSV against the verdicts of metrics.json as the report reads it."""
    paths = []
    for i, chunk in enumerate(_chunks()):
        write_json(tmp_path / f"chunk{i}.json", chunk)
        paths.append(tmp_path / f"chunk{i}.json")
    write_json(tmp_path / "block1.json", {"gm_max_abs_diff": 0.0})
    metrics = aggregate_files(paths, tmp_path / "block1.json", CFG, tmp_path / "summary.csv", CLAIMS)
    write_json(tmp_path / "metrics.json", metrics)
    summary = pd.read_csv(tmp_path / "summary.csv", float_precision="round_trip").drop_duplicates(["setting", "method", "q"])
    stored = json.loads((tmp_path / "metrics.json").read_text())
    results = {r.claim.id: r for r in evaluate(CLAIMS, tmp_path / "metrics.json")}
    for cid, method, column in (("group_gm_fdr_control_linear", "group_gm", "fdr"),
                                ("group_gm_power_vs_gm", "gm", "power_gain")):
        rows = interval_rows(CLAIMS, stored, [cid])
        for cell in rows:
            setting, q = (cell["setting"].rsplit("_q", 1)[0], int(cell["setting"].rsplit("_q", 1)[1]) / 100) \
                if column == "fdr" else (cell["setting"], 0.1)
            row = summary[(summary.method == method) & (summary.setting == setting) & np.isclose(summary.q, q)]
            assert (row[f"{column}_low"].item(), row[f"{column}_high"].item()) == (cell["low"], cell["high"])
        shown = results[cid].interval  # the verdict's interval (its worst setting) is one of them
        assert (shown.low, shown.high) in {(c["low"], c["high"]) for c in rows}


def _drawn(ax) -> dict[str, np.ndarray]:
    """{label: (x, low, high) per point} of the error bars drawn in ``ax``."""
    out = {}
    for container in ax.containers:
        segments = np.array(container.lines[2][0].get_segments())  # (points, 2 ends, (x, y))
        out[container.get_label()] = np.c_[segments[:, 0, 0], segments[:, 0, 1], segments[:, 1, 1]]
    return out


def test_fig1_draws_the_tables_bounds(built):
    _, table = built
    rows = [{**r, "sweep": sweep, "x": x} for r in table.to_dict("records")
            for sweep, x in CFG["settings"][r["setting"]]["sweeps"].items()]
    tidy = pd.DataFrame(rows)
    fig = fig1(tidy, 0.1)
    assert not check(fig)  # the figure lint, with every claim interval drawn
    axes = np.array(fig.axes[:6]).reshape(3, 2)
    for col, sweep in enumerate(("correlation", "amplitude")):
        part = tidy[(tidy.sweep == sweep) & (tidy.q == 0.1)]
        for row, (key, frame) in enumerate((("fdr", part), ("power", part),
                                            ("power_gain", part[part.power_gain.notna()]))):
            drawn = _drawn(axes[row, col])
            for method, grp in frame.groupby("method"):
                grp = grp.sort_values("x")
                np.testing.assert_allclose(drawn[method][:, 1:], _bounds(grp, [f"{key}_low", f"{key}_high"]),
                                           rtol=1e-12, atol=1e-15)

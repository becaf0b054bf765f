"""metrics.json is only written from paired runs: every method of a task on the same units with the same seeds."""

import pytest

from repro.methods.mil_train import summarize_folds
from repro.papers.tmevolve.experiment import aggregate_metrics, unit_id

CFG = {"cohort": "spatial", "control_cohort": None, "ablations": [], "grid": {}}


def _summary(method, seeds, metric=0.6):
    return summarize_folds([{"metric": metric + 0.01 * i, "metric_name": "c_index", "method": method, "id": unit_id(r, f),
                             "repeat": r, "fold": f, "seed": seeds[(r, f)], "diagnostics": {}}
                            for i, (r, f) in enumerate(sorted(seeds))])


def test_paired_methods_aggregate_and_an_unpaired_one_is_refused_by_name():
    seeds = {(r, f): 1000 * r + f for r in range(2) for f in range(3)}
    paired = {"spatial": {"survival": {"mean": _summary("mean", seeds), "tmevolve": _summary("tmevolve", seeds, 0.7)}}}
    out = aggregate_metrics(paired, CFG)
    assert out["best_baseline"]["survival"]["method"] == "mean"
    odd = {**seeds, (1, 2): 99}                                   # one unit trained with another seed
    unpaired = {"spatial": {"survival": {"mean": _summary("mean", seeds), "tmevolve": _summary("tmevolve", odd)}}}
    with pytest.raises(ValueError, match="tmevolve survival: 'tmevolve' is not paired"):
        aggregate_metrics(unpaired, CFG)
    fewer = {k: v for k, v in seeds.items() if k != (0, 0)}        # a unit missing
    unpaired = {"spatial": {"survival": {"mean": _summary("mean", seeds), "abmil": _summary("abmil", fewer)}}}
    with pytest.raises(ValueError, match="other units"):
        aggregate_metrics(unpaired, CFG)
